#include "services/telemetry/accelerator_model.h"

#include <algorithm>
#include <chrono>

namespace trainyard {
namespace {

constexpr auto kWarmUp = std::chrono::seconds(90);
constexpr auto kCheckpointSave = std::chrono::seconds(20);
constexpr double kGpuMfu = 0.4;  // as services/jobs/workload_model.cpp
constexpr double kTpuMfu = 0.5;
constexpr double kOptimizerBytesPerParam = 16;
constexpr double kInputBytesPerSecond = 200e6;  // tokenized text or images, per host

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A value in [-1, 1] fixed per (job, host, minute, what): the samples wander a little over time
// and differ a little between hosts, but a re-read of the same minute gives the same figure.
double Jitter(const GangRun& run, int host, Timestamp now, uint64_t what) {
  const auto minute = std::chrono::duration_cast<std::chrono::minutes>(now.time_since_epoch());
  uint64_t h = Mix(run.seed ^ Mix(static_cast<uint64_t>(host) ^
                                  Mix(static_cast<uint64_t>(minute.count()) ^ Mix(what))));
  return static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 52) - 1.0;
}

double Clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

}  // namespace

HostSample SimulateHost(const HostShape& shape, const UtilizationKnobs& knobs, const GangRun& run,
                        int host, Timestamp now) {
  HostSample s;
  s.memory_total_bytes = shape.chip_memory_bytes * shape.chips;
  const double mfu = knobs.mfu.value_or(shape.tpu ? kTpuMfu : kGpuMfu);
  double duty = shape.tpu ? 0.93 : 0.97;
  double tensor = std::min(0.95, mfu * 1.15);
  // Every host reads its input; hosts of a multi-host job also exchange gradients.
  const double input = std::min(0.02 * shape.nic_bytes_per_second, kInputBytesPerSecond);
  double network = input;
  if (run.hosts > 1 && knobs.params && knobs.step_time && knobs.step_time->count() > 0) {
    // Ring all-reduce of bf16 gradients: 2 (N-1)/N of them out and as much in, every step.
    const double gradient = 2 * *knobs.params;
    const double per_step = 2 * 2 * gradient * (run.hosts - 1) / run.hosts;
    network += std::min(0.9 * shape.nic_bytes_per_second,
                        per_step / std::chrono::duration<double>(*knobs.step_time).count());
  } else if (run.hosts > 1) {
    network += 0.35 * shape.nic_bytes_per_second;  // the step time unknown: a typical share
  }
  if (knobs.slow_host && *knobs.slow_host < run.hosts) {
    const double f = knobs.slow_factor;
    if (host == *knobs.slow_host) {
      duty = 0.99;  // never waits: everyone waits for it
    } else {
      duty *= f;
    }
    tensor *= f;
    network *= f;
  }
  double memory_share = 0.78;
  if (knobs.params && run.total_chips > 0 && shape.chip_memory_bytes > 0) {
    const double state = kOptimizerBytesPerParam * *knobs.params / run.total_chips;
    memory_share = std::min(0.94, state / shape.chip_memory_bytes + 0.25);
  }
  double cpu = 0.12 + 0.08 * duty;

  const Duration since_checkpoint =
      run.checkpoint_interval.count() > 0 ? run.running_for % run.checkpoint_interval : Duration{};
  if (run.running_for < kWarmUp) {
    const double filled = std::chrono::duration<double>(run.running_for) / kWarmUp;
    duty = 0.25;
    tensor = 0.02;
    cpu = 0.65;
    network = 0.05 * shape.nic_bytes_per_second;
    memory_share *= filled;
  } else if (run.checkpoint_interval.count() > 0 && run.running_for >= run.checkpoint_interval &&
             since_checkpoint < kCheckpointSave) {
    duty = 0.05;
    tensor = 0;
    cpu = 0.4;
    network = 0.6 * shape.nic_bytes_per_second;
  }
  if (shape.chips == 0) {  // a CPU-only host: no accelerator figures
    duty = tensor = memory_share = 0;
  }
  s.duty_cycle = Clamp01(duty + 0.01 * Jitter(run, host, now, 1));
  s.tensor_core_utilization = Clamp01(tensor + 0.02 * Jitter(run, host, now, 2));
  s.memory_used_bytes =
      s.memory_total_bytes * Clamp01(memory_share + 0.01 * Jitter(run, host, now, 3));
  s.host_cpu_utilization = Clamp01(cpu + 0.02 * Jitter(run, host, now, 4));
  s.network_bytes_per_second = std::max(0.0, network * (1 + 0.03 * Jitter(run, host, now, 5)));
  if (shape.chips == 0) s.duty_cycle = s.tensor_core_utilization = 0;
  return s;
}

}  // namespace trainyard
