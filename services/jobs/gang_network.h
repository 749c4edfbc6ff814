#pragma once
// What a multi-node GPU gang pays for its network (simulated capacity): each step's ring
// all-reduce of the gradients between nodes, at the machine type's GPU-to-GPU bandwidth, and more
// when the gang's nodes span several blocks (racks under a compact placement policy). The
// simulator stretches a gang's run by it (workers/sim); the scheduler says it when it spreads one.
//
// Data parallel, not overlapped with compute (an upper bound, as the Multislice DCN model in
// workload_model.h): a step's all-reduce moves 2 (n-1)/n of the bf16 gradients (2 bytes a
// parameter) over each node's GPU NICs, while its compute is 6 × params × tokens a step spread
// over every GPU. The parameters cancel, so the share needs no model size:
//   comm / compute = (n-1) × 16 × GPUs a node × delivered FLOP/s a GPU / (3 × tokens a step × b/s)
// docs/capacity-model.md ("Gang network") has the figures and their sources.
#include <optional>
#include <string_view>

#include "services/model/custom_job.h"

namespace trainyard {

// The GPU-to-GPU bandwidth of one node, in Gb/s, from Compute Engine's "Networking and GPU
// machines" page (cloud.google.com/compute/docs/gpus/gpu-network-bandwidth): A3 High 4 GPU NICs
// × 200 Gb/s with GPUDirect-TCPX (of its 1,000 Gb/s); A3 Mega 8 × 200 Gb/s with GPUDirect-TCPXO
// (of 1,800); A3 Ultra and A4 8 ConnectX-7 NICs, 3,200 Gb/s with GPUDirect RDMA (of 3,600). Other
// GPU machine types (A2, G2, smaller A3) have no GPU NICs: their whole per-VM bandwidth (the
// catalog's, 100 Gb/s at most). nullopt: not a GPU machine type.
std::optional<double> GpuNetworkGbps(std::string_view machine_type);

// Tokens a data-parallel step trains on when the job does not say (TRAINYARD_GLOBAL_BATCH_SIZE ×
// TRAINYARD_SEQ_LEN): Llama 2's global batch of 4M tokens (Touvron et al. 2023, "Llama 2", §2.2),
// the size most published recipes of its scale keep.
inline constexpr double kDefaultTokensPerStep = 4 * 1024 * 1024;

// How much longer the all-reduce takes when the gang spans `blocks` blocks than inside one:
// 1 + log2(blocks). Chosen, as Google publishes no figure: the second block halves the bandwidth
// the all-reduce gets (the links between blocks are shared by every rack of the block), and each
// doubling of the blocks adds one more level of a hierarchical (tree) all-reduce over those
// links; 2 blocks 2x, 3 blocks 2.58x, 4 blocks 3x. 1 for 0 (no blocks) or 1.
double CrossBlockFactor(int blocks);

// The all-reduce's time over the compute's, for the gang inside one block: 0 for a job on one
// node, without GPUs, on TPUs (ICI and DCN are workload_model's), or whose machine type has no
// figure.
double GangCommShare(const CustomJobSpec& spec);

// `run` stretched by the gang's network over `blocks` blocks. A modelled run (the compute model's:
// compute alone) pays the whole all-reduce, run × (1 + share × CrossBlockFactor); a measured one
// (TRAINYARD_SIM_DURATION, steps × step time, a trace's recorded run) already holds the
// all-reduce inside one block and pays only what crossing blocks adds,
// run × (1 + share × (CrossBlockFactor - 1)).
Duration WithGangNetwork(Duration run, const CustomJobSpec& spec, int blocks, bool modelled);

}  // namespace trainyard
