#pragma once
// A job as the scheduler sees it: its rank, its gang shape and its quota demand, derived once from
// the CustomJob when it enters the queue. Planning uses counts only: a GPU/CPU pool counts nodes,
// a TPU pool counts whole slices (docs/scheduler.md, "Design").
#include <array>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/jobs/priority_label.h"
#include "services/jobs/workload_model.h"
#include "services/model/custom_job.h"
#include "services/model/persistent_resource.h"
#include "services/status.h"

namespace trainyard {

// Optional label with the job's expected run time ("3600s"), tighter than scheduling.timeout, so
// backfill can plan around it.
inline constexpr std::string_view kExpectedRuntimeLabel = "trainyard-expected-runtime";

struct GangPool {
  std::string machine_type;
  bool cpu_only = false;  // no GPU and no TPU: elastic CPU capacity can hold it
  // GPUs attached to an N1 machine (T4, V100, P100, P4), per replica, or cloud-tpu's generation
  // and cores; none otherwise.
  AcceleratorType attached = AcceleratorType::kUnspecified;
  int attached_count = 0;
  int type_id = -1;   // the scheduler's number for its pool type (Scheduler::UpsertPending sets it)
  int tpu_chips = 0;  // TPU: chips per slice; matched against the pool's slice shape
  int64_t units = 0;  // nodes, or slices for TPU
  std::string quota_metric;  // without the PREEMPTIBLE_ prefix
  int64_t quota_amount = 0;
};

struct QuotaDemand {
  std::string
      metric;  // "NVIDIA_H100_MEGA_80GB", "TPU_V5P", "CPUS"; "PREEMPTIBLE_" added per flavor
  int64_t amount = 0;
  // A pending job's: the scheduler's numbers for its project's account of the metric, plain and
  // PREEMPTIBLE_ (Scheduler::UpsertPending sets them), so a quota check reads no names.
  std::array<int, 2> accounts = {-1, -1};
};

struct SchedulerJob {
  // What every cycle reads of every job it walks comes first: one cache line with the scheduler's
  // own bookkeeping of the entry (a deep queue is walked by pointer, and misses dominate).
  int64_t id = 0;
  int64_t version = 0;
  // Its place in its queue's order: its create time, or its last requeue where the scheduler
  // orders requeued jobs by their eviction (SchedulerConfig::requeue_timestamp).
  Timestamp queue_time{};
  int priority = kDefaultPriority;
  SchedulingStrategy strategy = SchedulingStrategy::kUnspecified;
  std::string project_id;
  std::string region;
  ReservationAffinityType affinity = ReservationAffinityType::kUnspecified;
  std::vector<std::string> reservations;  // SPECIFIC_RESERVATION: the names (last path segment)
  // Every evaluation reads these two, so the scheduler keeps a pending job's on its own memory
  // (Scheduler::JobArena); a copy of the job gets the heap's.
  std::pmr::vector<GangPool> pools;
  std::pmr::vector<QuotaDemand> quota;    // summed over the pools, without the PREEMPTIBLE_ prefix
  std::optional<Timestamp> dws_deadline;  // FLEX_START: FAILED after this; none = wait forever
  // When a job that ran and was requeued (a preemption, a failed node) entered the queue again;
  // none for its first wait. A flex-start request is made anew then, its wait counted from it.
  std::optional<Timestamp> requeued_at;
  Duration expected_runtime = kDefaultJobTimeout;
  // How often it saves its state (TRAINYARD_CHECKPOINT_INTERVAL; 0: never): what a preemption
  // would make it redo.
  Duration checkpoint_interval = kDefaultCheckpointInterval;
  // How long its emergency save takes (TRAINYARD_EMERGENCY_CHECKPOINT_TIME): a victim whose save
  // fits in the termination grace keeps its progress up to its notice.
  std::optional<Duration> emergency_checkpoint;
  std::string image_uri;  // the first pool's image: nodes that have it cached skip the pull
  std::string shape;      // equal shapes get one verdict per cycle
  // jobSpec.persistentResourceId as ResourceKey: the job runs only on that resource's nodes, and
  // its quota and cost are the resource's.
  std::string on_resource;

  // When its DWS request was made: its first queueing, or its last requeue.
  Timestamp DwsRequestTime() const { return requeued_at.value_or(queue_time); }
};

struct PlacedPool {
  int pool = 0;  // index into Fleet::pools
  int64_t units = 0;
  std::string machine_type;  // what runs there (an elastic pool holds many types)
  int attached_gpus = 0;     // accelerators of each node on an attached pool (GPUs, TPU cores)
  // In a pool of blocks (blockSize): the units it holds in each block, (block, units). Empty
  // where the pool has none, or where which nodes it holds is not known.
  std::vector<std::pair<int, int64_t>> block_units = {};  // "= {}": brace-inits may leave it out
};

struct Placement {
  std::string zone;
  std::pmr::vector<PlacedPool> pools;  // in worker-pool order (Scheduler::running_arena_)
};

// An admitted job (PENDING or RUNNING): it holds its placement until it ends.
struct RunningJob {
  int64_t id = 0;
  std::string project_id;
  std::string region;
  int priority = kDefaultPriority;
  Timestamp admitted_at{};
  // When its current run began RUNNING; none while its nodes boot and pull (nothing to lose yet,
  // and exempt from reclaim: the exemption counts from here, not from admission).
  std::optional<Timestamp> running_since;
  Duration checkpoint_interval{};
  std::optional<Duration> emergency_checkpoint;  // SchedulerJob::emergency_checkpoint
  Timestamp expected_end{};
  Placement placement;
  std::vector<QuotaDemand> quota;  // with the PREEMPTIBLE_ prefix already applied
  std::string on_resource;         // on a persistent resource's nodes (SchedulerJob::on_resource)
};

// How the scheduler names a persistent resource: "<project id>/<location>/<resource id>".
std::string ResourceKey(const std::string& project_id, const std::string& region,
                        const std::string& resource_id);

// A persistent resource as the scheduler places it: a gang of its pools (replicaCount nodes
// each) that holds its nodes for as long as it lives. Its key is HoldKey(uid)
// (services/scheduler/workload_key.h), so it never meets a job's.
StatusOr<SchedulerJob> MakeResourceHolder(int64_t uid, int64_t version,
                                          const std::string& project_id, const std::string& region,
                                          const PersistentResource& resource);

// Builds the scheduler's view of a validated job. queue_time is its create time (its place in
// the queue's order by default); `queued_since`, when the job last entered QUEUED, sets
// requeued_at if later.
StatusOr<SchedulerJob> MakeSchedulerJob(int64_t id, int64_t version, const std::string& project_id,
                                        const std::string& region, const CustomJob& job,
                                        std::optional<Timestamp> queued_since = std::nullopt);

// The units `nodes` (a placed pool's node names) hold in each block of `pool` (blockSize), as
// PlacedPool::block_units counts them; empty for a pool without blocks.
std::vector<std::pair<int, int64_t>> BlockUnitsOf(const CapacityPool& pool,
                                                  const std::vector<std::string>& nodes);

// The admitted form of `job` on `placement`: quota charged per pool under the flavor it got.
RunningJob MakeRunningJob(const SchedulerJob& job, const Placement& placement, const Fleet& fleet,
                          Timestamp admitted_at,
                          std::optional<Timestamp> running_since = std::nullopt);

// The work `job` would redo if stopped at `now`: what it ran since its last checkpoint (all it
// ran, for a job that never checkpoints); nothing while it has not started.
// With `grace` to wind down in: a job whose emergency save fits in it loses nothing.
Duration WorkLostIfStopped(const RunningJob& job, Timestamp now, Duration grace = Duration{});

// Whether capacity of `model` is charged to preemptible quota (SPOT and DWS, as in Compute Engine).
bool UsesPreemptibleQuota(ConsumptionModel model);
std::string QuotaMetricFor(const std::string& metric, ConsumptionModel model);
std::string PreemptibleQuotaMetric(const std::string& metric);

}  // namespace trainyard
