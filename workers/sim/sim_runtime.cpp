#include "workers/sim/sim_runtime.h"

#include <algorithm>
#include <charconv>

#include "services/runtime/replica_plan.h"
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

int ExitCode(const CustomJob& job) {
  int code = 0;
  if (auto text = Knob(job, "TRAINYARD_SIM_EXIT_CODE")) {
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), code);
    if (ec != std::errc{} || end != text->data() + text->size()) code = 0;
  }
  return code;
}

// A replica's handle is the virtual time its work ends, in microseconds.
std::string EndHandle(Timestamp end) { return std::to_string(ToUnixMicros(end)); }

std::optional<Timestamp> EndOf(const std::string& handle) {
  int64_t micros = 0;
  auto [end, ec] = std::from_chars(handle.data(), handle.data() + handle.size(), micros);
  if (ec != std::errc{} || end != handle.data() + handle.size()) return std::nullopt;
  return FromUnixMicros(micros);
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

// The knobs, else the compute model, else the default. Jobs stored before a knob was validated
// fall back to the default rather than fail.
Duration SimRunTime(const CustomJob& job, const SimTimings& timings) {
  auto estimate = EstimateWorkload(job.job_spec);
  if (estimate.ok() && *estimate) return (*estimate)->run;
  return timings.run;
}

StatusOr<JobRun> SimRuntime::Launch(const JobRecord& job, int attempt, Timestamp now) {
  ReplicaPlanOptions options;
  options.project_number = job.project_number;
  options.job_id = job.id;
  TY_ASSIGN_OR_RETURN(std::vector<Replica> replicas, PlanReplicas(job.job, options));
  // A job stopped by a preemption or a repair resumes with the work it had left.
  const Timestamp end = After(now, job.run_remaining.value_or(SimRunTime(job.job, timings_)));
  JobRun run;
  run.attempt = attempt;
  for (const Replica& r : replicas) {
    run.replicas.push_back(
        ReplicaRun{r.task_name, ReplicaPhase::kRunning, std::nullopt, 0, EndHandle(end)});
  }
  return run;
}

StatusOr<Observation> SimRuntime::Observe(const JobRecord& job, Timestamp now) {
  Observation out;
  if (!job.run) return out;
  for (const ReplicaRun& r : job.run->replicas) {
    ReplicaObservation seen{r.task_name, r.phase, r.exit_code, r.handle};
    if (job.job.state == JobState::kCancelling) {
      seen.phase = ReplicaPhase::kExited;
      seen.exit_code = 128 + 15;  // SIGTERM
    } else if (std::optional<Timestamp> end = EndOf(r.handle)) {
      if (now >= *end) {
        seen.phase = ReplicaPhase::kExited;
        seen.exit_code = r.task_name == "workerpool0-0" ? ExitCode(job.job) : 0;
      } else {
        seen.phase = ReplicaPhase::kRunning;
        out.next_change = out.next_change ? std::min(*out.next_change, *end) : *end;
      }
    }
    out.replicas.push_back(std::move(seen));
  }
  return out;
}

StatusOr<std::string> SimRuntime::RestartReplica(const JobRecord& job, const ReplicaRun&,
                                                 Timestamp now) {
  // No checkpoints are modelled yet: a restarted replica does its work again.
  return EndHandle(After(now, SimRunTime(job.job, timings_)));
}

}  // namespace trainyard::sim
