#include "workers/sim/stand_in_runtime.h"

#include <algorithm>
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

// Vertex's scheduling.timeout: the longest a job may run, 7 days when unset (also FLEX_START's
// cap).
constexpr Duration kDefaultTimeout = std::chrono::hours(24 * 7);

Duration Timeout(const CustomJob& job) {
  return job.job_spec.scheduling && job.job_spec.scheduling->timeout
             ? *job.job_spec.scheduling->timeout
             : kDefaultTimeout;
}

// A job whose work outlasts its timeout runs until first start + timeout and then fails; a job
// that fits is never cut short (a repair that delays it does not count against it here).
bool OutlastsTimeout(const CustomJob& job, const StandInTimings& timings) {
  return RunTime(job, timings) > Timeout(job);
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
                                    const StandInTimings& timings,
                                    std::optional<Duration> remaining) {
  switch (job.state) {
    case JobState::kQueued:
      return std::nullopt;  // the scheduler admits jobs
    case JobState::kPending: {
      Timestamp end = After(now, remaining ? *remaining : RunTime(job, timings));
      if (OutlastsTimeout(job, timings)) {
        end = std::min(end, After(job.start_time.value_or(now), Timeout(job)));
      }
      return RuntimeStep{JobState::kRunning,
                         remaining ? "all replicas are running again, resuming from the last "
                                     "checkpoint"
                                   : "all replicas are running",
                         end, std::nullopt};
    }
    case JobState::kRunning: {
      if (OutlastsTimeout(job, timings)) {
        std::string message =
            "The job ran longer than its scheduling.timeout of " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(Timeout(job)).count()) +
            "s and was stopped.";
        return RuntimeStep{JobState::kFailed, message, std::nullopt, RpcStatus{4, message}};
      }
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
