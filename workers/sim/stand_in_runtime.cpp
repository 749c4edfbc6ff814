#include "workers/sim/stand_in_runtime.h"

#include <charconv>

#include "services/workload_model.h"

namespace trainyard::sim {
namespace {

const std::vector<EnvVar>* PrimaryEnv(const CustomJob& job) {
  const auto& pools = job.job_spec.worker_pool_specs;
  if (pools.empty()) return nullptr;
  if (pools[0].container_spec) return &pools[0].container_spec->env;
  if (pools[0].python_package_spec) return &pools[0].python_package_spec->env;
  return nullptr;
}

std::optional<std::string> Knob(const CustomJob& job, std::string_view name) {
  if (const auto* env = PrimaryEnv(job)) {
    for (const EnvVar& var : *env) {
      if (var.name == name) return var.value;
    }
  }
  return std::nullopt;
}

// The knobs, else the compute model (services/workload_model.h), else the default. Jobs stored
// before a knob was validated fall back to the default rather than fail.
Duration RunTime(const CustomJob& job, const StandInTimings& timings) {
  auto estimate = EstimateWorkload(job.job_spec);
  if (estimate.ok() && *estimate) return (*estimate)->run;
  return timings.run;
}

int ExitCode(const CustomJob& job) {
  int code = 0;
  if (auto text = Knob(job, "TRAINYARD_SIM_EXIT_CODE")) {
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), code);
    if (ec != std::errc{} || end != text->data() + text->size()) code = 0;
  }
  return code;
}

Timestamp After(Timestamp now, Duration d) {
  return now + std::chrono::duration_cast<std::chrono::microseconds>(d);
}

}  // namespace

std::optional<std::string> PrimaryImage(const CustomJob& job) {
  for (const WorkerPoolSpec& wp : job.job_spec.worker_pool_specs) {
    if (wp.container_spec) return wp.container_spec->image_uri;
    if (wp.python_package_spec) return wp.python_package_spec->executor_image_uri;
  }
  return std::nullopt;
}

std::optional<RuntimeStep> NextStep(const CustomJob& job, Timestamp now,
                                    const StandInTimings& timings) {
  switch (job.state) {
    case JobState::kQueued:
      return std::nullopt;  // the scheduler admits jobs
    case JobState::kPending:
      return RuntimeStep{JobState::kRunning, "all replicas are running",
                         After(now, RunTime(job, timings)), std::nullopt};
    case JobState::kRunning: {
      int code = ExitCode(job);
      if (code == 0) {
        return RuntimeStep{JobState::kSucceeded, "the primary replica exited with status 0",
                           std::nullopt, std::nullopt};
      }
      std::string message = "The replica workerpool0-0 exited with a non-zero status of " +
                            std::to_string(code) + ".";
      return RuntimeStep{JobState::kFailed, message, std::nullopt, RpcStatus{3, message}};
    }
    case JobState::kCancelling:
      return RuntimeStep{JobState::kCancelled, "every replica stopped after the cancel",
                         std::nullopt, RpcStatus{1, "CANCELED"}};
    default:
      return std::nullopt;
  }
}

}  // namespace trainyard::sim
