#pragma once
// What capacity costs an hour (docs/capacity-model.md, "Prices"): the on-demand list price of a
// node from what it carries, each consumption model's discount on it, and a placement's price in
// micro-dollars. Pure, and below the catalog: a machine type's figures come in as a PricedNode
// (services/fleet/fleet.h's ListPricePerNodeHour looks them up by name).
#include <cstdint>
#include <optional>
#include <string_view>

#include "services/model/consumption_model.h"
#include "services/model/custom_job.h"

namespace trainyard::cost {

// On-demand list price of one accelerator-hour: a GPU by its type, a TPU chip by its family
// ("v5e", "v5p", "v4", "v6e", "7x"; "v2" and "v3" for cloud-tpu). us-central1, approximate; the
// figures without a public list price (GB200, TPU7x) are planning values, each with its reason in
// price.cpp and docs/capacity-model.md.
double GpuHourPrice(AcceleratorType type);
double TpuChipHourPrice(std::string_view family);
// A machine without accelerators: per vCPU-hour (n1-standard-1's us-central1 on-demand rate).
inline constexpr double kVcpuHourPrice = 0.0475;

// `on_demand` under `model`: CUD 37% (1y) / 55% (3y) off, DWS calendar mode and flex-start about
// half, spot 60% off GPUs and 65% off TPUs. term matters for reservations only.
double Discounted(double on_demand, ConsumptionModel model, std::string_view term, bool tpu);

// A node as its price sees it: what its machine type carries (services/jobs/catalog.h).
struct PricedNode {
  bool tpu = false;
  std::string_view tpu_family;                          // TPU hosts
  int tpu_chips = 0;                                    // TPU hosts: chips on the host
  AcceleratorType gpu = AcceleratorType::kUnspecified;  // built-in GPUs, and how many
  int gpus = 0;
  int vcpus = 0;  // what a node without accelerators is priced by
};

// List price of one node-hour under `model`: its accelerators (or vCPUs) at list price, discounted.
double NodeHourPrice(const PricedNode& node, ConsumptionModel model, std::string_view term);
// An attached-accelerator node: `count` GPUs of `attached` on a VM shaped `vm` (nullopt: a shape
// the catalog lacks, priced at nothing), the GPUs discounted only on spot; or for TPU_V2/TPU_V3 a
// cloud-tpu host of `count` TensorCores (two a chip), the VM not counted.
double AttachedNodeHourPrice(const std::optional<PricedNode>& vm, AcceleratorType attached,
                             int count, ConsumptionModel model);

// What `nodes` nodes at `price_per_node_hour` dollars cost an hour, in micro-dollars: the node
// price is cut to whole micro-dollars first (a placement's hourly_price_micros, summed over its
// pools).
int64_t NodesHourlyMicros(double price_per_node_hour, int64_t nodes);

}  // namespace trainyard::cost
