#pragma once
// Simulated accelerator telemetry: what Cloud Monitoring shows for a TPU VM (duty_cycle,
// tensorcore_utilization, memory_used / memory_total) and DCGM for a GPU host
// (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, DCGM_FI_DEV_FB_USED), with the host's
// CPU and network, derived from the job's workload model. Pure: the same inputs give the same
// sample, so a scrape and an API read of the same minute agree.
//
// A run starts with a warm-up (initialisation, compilation, the input pipeline filling: little
// accelerator work), then trains; every checkpoint interval it stops for a save (accelerators
// idle, the network busy writing). In training the duty cycle is high and tensor-core use tracks
// MFU. Memory holds the optimizer state sharded over every chip of the job (16 bytes a parameter:
// bf16 weights and gradients, fp32 master weights and two Adam moments) plus activations. Hosts of
// a multi-host job exchange gradients every step (ring all-reduce of bf16 gradients).
//
// A straggler (TRAINYARD_SIM_SLOW_HOST) computes at a share of its peers' speed; the job is
// synchronous, so its peers wait for it at every step: they show a duty cycle cut to that share
// while the straggler stays busy, and everyone's tensor-core use and network fall with it. The
// slow host is the one whose duty cycle stands out from the job's median.
#include <cstdint>
#include <string>

#include "services/jobs/workload_model.h"
#include "services/time.h"

namespace trainyard {

struct HostShape {
  bool tpu = false;
  std::string accelerator;  // "NVIDIA_H100_MEGA_80GB", "TPU v5p"; "" for a CPU-only host
  int chips = 0;            // accelerators on this host
  double chip_memory_bytes = 0;
  double nic_bytes_per_second = 0;
};

struct HostSample {
  double duty_cycle = 0;               // share of time the accelerators ran work, 0..1
  double tensor_core_utilization = 0;  // share of the tensor/matrix units' peak, 0..1
  double memory_used_bytes = 0;        // over the host's chips
  double memory_total_bytes = 0;
  double host_cpu_utilization = 0;      // 0..1
  double network_bytes_per_second = 0;  // sent plus received
};

struct GangRun {
  int hosts = 1;                   // in the job
  int total_chips = 0;             // over every host
  Duration running_for{};          // since the job entered RUNNING
  Duration checkpoint_interval{};  // 0: never checkpoints
  uint64_t seed = 0;               // the job's id: per-host variation that is stable per job
};

HostSample SimulateHost(const HostShape& shape, const UtilizationKnobs& knobs, const GangRun& run,
                        int host, Timestamp now);

}  // namespace trainyard
