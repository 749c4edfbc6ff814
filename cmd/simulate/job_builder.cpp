#include "cmd/simulate/job_builder.h"

#include <algorithm>

#include "services/jobs/catalog.h"

namespace trainyard::simulate {
namespace {

const PlacementRule* RuleFor(const Scenario& s, const TraceJob& job) {
  for (const PlacementRule& rule : s.placement) {
    if (!rule.projects.empty() &&
        std::find(rule.projects.begin(), rule.projects.end(), job.project) == rule.projects.end()) {
      continue;
    }
    if (job.gpus < rule.min_gpus || (rule.max_gpus > 0 && job.gpus > rule.max_gpus)) continue;
    return &rule;
  }
  return nullptr;
}

std::string SecondsText(Duration d) {
  return std::to_string(
             std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(d).count())) +
         "s";
}

}  // namespace

StatusOr<BuiltJob> BuildJob(const Scenario& s, const TraceJob& job) {
  BuiltJob built;
  const PlacementRule* rule = RuleFor(s, job);
  built.model = rule != nullptr ? rule->model : "STANDARD";
  if (job.body) {  // JSONL: as the user sent it
    built.body = *job.body;
    for (const WorkerPoolSpec& p : built.body.job_spec.worker_pool_specs) {
      if (!p.machine_spec) continue;
      if (built.machine_type.empty()) built.machine_type = p.machine_spec->machine_type;
      built.nodes += std::max<int64_t>(1, p.replica_count);
    }
    return built;
  }
  const std::string where = s.workload.path + ":" + std::to_string(job.line);
  const ResourcePlan* resource = nullptr;
  for (const ResourcePlan& r : s.resources) {
    if (rule != nullptr && r.id == rule->persistent_resource) resource = &r;
  }
  // On a persistent resource, the resource's machine type: whole nodes of it as a gang.
  const std::vector<std::string> shapes =
      resource != nullptr ? std::vector<std::string>{resource->machine_type} : s.shapes;
  const MachineType* largest = FindMachineType(shapes.back());
  const int64_t per_node_max = largest->accelerator_count;
  const MachineType* shape = nullptr;
  if (job.nodes > 0) {
    const int64_t per_node = (job.gpus + job.nodes - 1) / job.nodes;
    for (const std::string& name : shapes) {
      const MachineType* m = FindMachineType(name);
      if (m->accelerator_count >= per_node) {
        shape = m;
        break;
      }
    }
    built.nodes = job.nodes;
    if (shape == nullptr) {
      return InvalidArgument(where + ": no shape has " + std::to_string(per_node) +
                             " GPUs a node (" + std::to_string(job.gpus) + " GPUs on " +
                             std::to_string(job.nodes) + " nodes); the largest, " + shapes.back() +
                             ", has " + std::to_string(per_node_max));
    }
  } else if (job.gpus <= per_node_max) {
    for (const std::string& name : shapes) {
      const MachineType* m = FindMachineType(name);
      if (m->accelerator_count >= job.gpus) {
        shape = m;
        break;
      }
    }
    built.nodes = 1;
  } else {
    shape = largest;
    built.nodes = (job.gpus + per_node_max - 1) / per_node_max;
  }
  built.machine_type = std::string(shape->name);
  if (resource != nullptr && built.nodes > resource->MostNodes()) {
    return InvalidArgument(where + ": needs " + std::to_string(built.nodes) + " nodes of " +
                           built.machine_type + "; persistent resource " + resource->id +
                           " holds at most " + std::to_string(resource->MostNodes()));
  }

  CustomJob& body = built.body;
  body.display_name = job.id.empty() ? "trace-" + std::to_string(job.line) : "trace-" + job.id;
  body.labels["trace-line"] = std::to_string(job.line);
  for (int64_t replicas : {int64_t{1}, built.nodes - 1}) {
    if (replicas <= 0) continue;
    WorkerPoolSpec pool;
    pool.machine_spec = MachineSpec{};
    pool.machine_spec->machine_type = built.machine_type;
    pool.machine_spec->accelerator_type = shape->accelerator;
    pool.machine_spec->accelerator_count = shape->accelerator_count;
    if (built.model == "ON_DEMAND") {
      pool.machine_spec->reservation_affinity =
          ReservationAffinity{ReservationAffinityType::kNoReservation, "", {}};
    }
    pool.replica_count = replicas;
    pool.container_spec = ContainerSpec{};
    pool.container_spec->image_uri = "trainyard/replay:trace";
    // A cancelled job's program would run on: the replay cancels it at its recorded run time.
    const Duration runs =
        job.end == TraceEnd::kCancelled ? job.duration + kCancelledJobSlack : job.duration;
    pool.container_spec->env.push_back({"TRAINYARD_SIM_DURATION", SecondsText(runs)});
    // A failed job's program exits 1 at its recorded run time, once (no retries below).
    if (job.end == TraceEnd::kFailed) {
      pool.container_spec->env.push_back({"TRAINYARD_SIM_EXIT_CODE", "1"});
    }
    for (const auto& [name, value] :
         {std::pair{"TRAINYARD_CHECKPOINT_INTERVAL", s.checkpoint_interval},
          std::pair{"TRAINYARD_CHECKPOINT_SAVE_TIME", s.checkpoint_save},
          std::pair{"TRAINYARD_CHECKPOINT_RESTORE_TIME", s.checkpoint_restore}}) {
      if (value) pool.container_spec->env.push_back({name, SecondsText(*value)});
    }
    body.job_spec.worker_pool_specs.push_back(std::move(pool));
  }
  if (resource != nullptr) body.job_spec.persistent_resource_id = resource->id;
  body.job_spec.scheduling = Scheduling{};
  Scheduling& sched = *body.job_spec.scheduling;
  if (built.model == "SPOT") {
    sched.strategy = SchedulingStrategy::kSpot;
  } else if (built.model == "SPOT_THEN_ON_DEMAND") {
    sched.strategy = SchedulingStrategy::kLowCost;
  } else if (built.model == "FLEX_START") {
    sched.strategy = SchedulingStrategy::kFlexStart;
    if (s.max_wait) sched.max_wait_duration = *s.max_wait;
  } else {
    sched.strategy = SchedulingStrategy::kStandard;
  }
  // What the user asked for is the job's limit (backfill plans with it); never below what it ran,
  // so the replay does not cut a job the trace's machine let finish, and never past the 7 days
  // Vertex (and the API) allows.
  if (job.requested) {
    sched.timeout = std::min(std::max(*job.requested, job.duration), kDefaultJobTimeout);
  }
  if (job.end == TraceEnd::kFailed) sched.disable_retries = true;
  return built;
}

}  // namespace trainyard::simulate
