#include "cmd/simulate/simulation.h"

#include <algorithm>
#include <cctype>

#include "cmd/app/control_plane.h"
#include "cmd/app/memory_adapters.h"
#include "cmd/app/runtimes.h"
#include "services/jobs/catalog.h"
#include "services/resource_names.h"
#include "workers/failure_simulator.h"

namespace trainyard::simulate {
namespace {

using namespace std::chrono_literals;

// The cadence of passes between events while a run is live, as a server's loop passes: the
// failure simulator draws its hazards per pass, and DWS capacity steps and queue deadlines fall
// between events. A replay takes only the ones at which something may be decided (ReplayWakes).
constexpr std::chrono::microseconds kIdlePass = 60s;
// A run stops this long after the last arrival whatever is left (reported as it stands).
constexpr Duration kHorizon = std::chrono::hours(24 * 400);
constexpr const char* kOwner = "simulate";

// The first pass of the minute cadence from `now` (now + k minutes, k >= 1) at or after `at`: when
// a server-like loop passing every minute since `now` would first see `at` has come.
Timestamp OnCadence(Timestamp now, Timestamp at) {
  const int64_t minutes = at <= now ? 1 : (at - now + kIdlePass - 1us) / kIdlePass;
  return now + kIdlePass * std::max<int64_t>(1, minutes);
}

Timestamp At(Timestamp epoch, Duration offset) {
  return epoch + std::chrono::duration_cast<std::chrono::microseconds>(offset);
}

// The region the trace's jobs are created in: the fleet's first pool's.
std::string RegionOf(const Fleet& fleet) {
  return fleet.pools.empty() ? "us-central1" : fleet.pools.front().region;
}

// The series a capacity chart shows persistent resources' idle (but paid for) nodes as.
constexpr const char* kIdleResourceSeries = "RESOURCE_IDLE";

PersistentResource ResourceBody(const ResourcePlan& plan) {
  const MachineType* m = FindMachineType(plan.machine_type);
  PersistentResource r;
  r.display_name = plan.id;
  ResourcePool pool;
  pool.machine_spec.machine_type = plan.machine_type;
  pool.machine_spec.accelerator_type = m->accelerator;
  pool.machine_spec.accelerator_count = m->accelerator_count;
  pool.replica_count = plan.replicas;
  if (plan.min_replicas) {
    pool.autoscaling_spec = ResourceAutoscaling{*plan.min_replicas, *plan.max_replicas};
  }
  r.resource_pools.push_back(std::move(pool));
  return r;
}

// Whether the reconciler has work ahead for the resource without a job to wake it: nodes to boot
// or resize, or idle nodes it gives back past the fleet's resourceIdleTimeout.
bool ResourceSettling(const PersistentResource& r) {
  if (r.state == ResourceState::kError) return false;  // it holds nothing and never will
  if (r.state != ResourceState::kRunning) return true;
  for (const ResourcePool& pool : r.resource_pools) {
    if (pool.autoscaling_spec && pool.replica_count > pool.autoscaling_spec->min_replica_count) {
      return true;
    }
  }
  return false;
}

// An ended job keeps what the reports read (state, times, placement and its nodes, goodput, cost,
// the scheduling it asked for); its pools' specs and replicas go. Nothing reads them once a job
// has ended, and a log's 200,000 records then fit in memory.
void TrimEnded(JobRecord& r) {
  std::vector<WorkerPoolSpec>().swap(r.job.job_spec.worker_pool_specs);
  r.run.reset();
  if (r.job.trainyard) std::vector<ReplicaRun>().swap(r.job.trainyard->replicas);
}

}  // namespace

std::string ProjectIdOf(const std::string& trace_value) {
  if (IsProjectNumber(trace_value).ok()) return trace_value;
  std::string id = "p-";
  for (char c : trace_value) {
    const bool kept =
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':';
    id += kept ? c : '-';
  }
  return id.substr(0, 63);
}

void TraceCancels::Add(int64_t job_id, std::string project, Duration run) {
  pending_[job_id] = Pending{std::move(project), run};
}

std::vector<std::pair<int64_t, std::string>> TraceCancels::Due(storage::memory::MemoryDatabase& db,
                                                               Timestamp now) {
  std::vector<std::pair<int64_t, std::string>> due;
  if (pending_.empty()) return due;  // asked at every event time: most traces cancel nothing
  std::lock_guard lock(db.mu);
  for (auto it = pending_.begin(); it != pending_.end();) {
    const CustomJob& job = db.FindJobLocked(it->first)->record.job;
    if (IsTerminal(job.state)) {
      it = pending_.erase(it);
    } else if (job.start_time && At(*job.start_time, it->second.run) <= now) {
      due.emplace_back(it->first, it->second.project);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  return due;
}

std::optional<Timestamp> TraceCancels::Next(storage::memory::MemoryDatabase& db) const {
  std::optional<Timestamp> next;
  if (pending_.empty()) return next;
  std::lock_guard lock(db.mu);
  for (const auto& [id, p] : pending_) {
    const CustomJob& job = db.FindJobLocked(id)->record.job;
    if (!job.start_time || IsTerminal(job.state)) continue;
    const Timestamp at = At(*job.start_time, p.run);
    if (!next || at < *next) next = at;
  }
  return next;
}

Timestamp ReplayEpoch() { return FromUnixMicros(1'767'225'600'000'000); }

StatusOr<SimulationResult> RunScenario(const Scenario& scenario, const Trace& trace,
                                       const Progress& progress, ReplayWakes wakes) {
  SimulationResult result;
  // Each job's body is built as it arrives and goes to the store: built all at once before the
  // run, 200,000 of them held twice their memory until they arrived.
  std::vector<JobShape> shapes;
  shapes.reserve(trace.jobs.size());

  Fleet fleet = scenario.fleet;
  const Timestamp epoch = ReplayEpoch();
  ManualClock clock(epoch);
  SeededIds ids(scenario.seed);
  app::MemoryAdapters memory;
  // The simulator, as `serve --runtime=sim` makes it.
  TY_ASSIGN_OR_RETURN(app::RuntimeBundle runtime, app::SimulateRuntimes().Make("sim", fleet));
  app::ControlPlaneOptions options;
  options.scheduler.simulated_startup = runtime.simulated_startup;
  options.scheduler.config = scenario.scheduler;
  // A cycle with nothing new to look at returns at once (the same history: ReplayWakes).
  options.scheduler.config.skip_quiet_cycles = wakes == ReplayWakes::kWhenDecisionsMayChange;
  // Queue positions are for clients polling a job; a replay has none, and walking a deep queue for
  // them after every admission made a saturated replay's cost its depth times its passes. The
  // decisions and every verdict's reason are the same without them.
  options.scheduler.report_positions = false;
  options.external_capacity = runtime.capacity.get();
  options.executor.owner = kOwner;
  // Leases are a server's fence against another; here one process holds them all, and a pass that
  // takes long in wall time must not give them up.
  options.executor.lease = std::chrono::hours(24 * 365);
  // As `serve` with every role: the scheduler hands what it admits to the runtime beside it.
  options.scheduler.runtime_lease = LeaseGrant{kOwner, options.executor.lease};
  options.ids = &ids;
  TY_ASSIGN_OR_RETURN(
      std::unique_ptr<app::ControlPlane> plane,
      app::ControlPlane::Build(memory.ports(), fleet, clock, *runtime.runtime, options));
  const std::string region = RegionOf(fleet);
  // The scenario's persistent resources, created as a client creates them, before any job.
  for (size_t i = 0; i < scenario.resources.size(); ++i) {
    const ResourcePlan& plan = scenario.resources[i];
    auto created =
        plane->resources().Create(ParentRef{plan.project, region}, plan.id, ResourceBody(plan));
    if (!created.ok()) {
      return InvalidArgument(scenario.source + ": persistentResources[" + std::to_string(i) +
                             "]: " + created.status().message());
    }
  }
  std::map<std::string, std::string> model_of_pool;
  for (const CapacityPool& pool : fleet.pools) {
    model_of_pool[pool.id] = std::string(ConsumptionModelName(pool.model));
  }

  TraceCancels cancels;
  std::vector<int64_t> created;  // job ids, in trace order
  created.reserve(trace.jobs.size());
  size_t next = 0;
  int64_t ended = 0;
  Timestamp now = epoch;
  Duration next_progress = std::chrono::hours(24);
  Duration next_sample{};
  const Timestamp last_arrival = trace.jobs.empty() ? epoch : At(epoch, trace.jobs.back().submit);
  storage::memory::MemoryDatabase& db = memory.db();
  // Per event, reused: each pool's held nodes and slots, and each persistent resource's
  // (uid → held, busy).
  struct PoolCount {
    const std::string* pool;  // db.nodes' key: pools are never removed
    int64_t held = 0;
    int64_t slots = 0;
  };
  std::vector<PoolCount> pool_counts;
  int64_t trimmed_seq = 0;  // the change feed's position up to which ended jobs were trimmed
  std::map<int64_t, std::pair<int64_t, int64_t>> by_resource;

  for (;;) {
    clock.Set(now);
    while (next < trace.jobs.size() && At(epoch, trace.jobs[next].submit) <= now) {
      // The body goes to the store (the report keeps the shape, not the body).
      const std::string project = ProjectIdOf(trace.jobs[next].project);
      TY_ASSIGN_OR_RETURN(BuiltJob built, BuildJob(scenario, trace.jobs[next]));
      shapes.push_back(
          JobShape{std::move(built.machine_type), built.nodes, std::move(built.model)});
      auto job = plane->jobs().Create(ParentRef{project, region}, std::move(built.body), "");
      if (!job.ok()) {
        return InvalidArgument(scenario.workload.path + ":" +
                               std::to_string(trace.jobs[next].line) + ": " +
                               job.status().message());
      }
      created.push_back(std::stoll(job->name.substr(job->name.rfind('/') + 1)));
      if (trace.jobs[next].end == TraceEnd::kCancelled) {
        cancels.Add(created.back(), project, trace.jobs[next].duration);
      }
      ++next;
    }
    // The trace's users cancelled these after their recorded run: so does the replay.
    for (const auto& [id, project] : cancels.Due(db, now)) {
      TY_RETURN_IF_ERROR(
          plane->jobs().Cancel(JobRef{ParentRef{project, region}, std::to_string(id)}));
    }
    bool settled = false;
    for (int round = 0; round < kSettlePasses && !settled; ++round) {
      TY_ASSIGN_OR_RETURN(LoopStats stats, plane->scheduler().RunOnce());
      TY_ASSIGN_OR_RETURN(int moved, plane->executor().RunOnce());
      ++result.passes;
      settled = stats.changes == 0 && stats.committed.admitted == 0 && moved == 0;
    }
    if (!settled) ++result.unsettled_events;
    result.most_waiting = std::max(result.most_waiting,
                                   static_cast<int64_t>(plane->scheduler().core().pending_count()));

    // What is busy (paid for) now, until the next event: nodes jobs hold, and the nodes
    // persistent resources hold, busy or idle. Per pool in the store's order (the sums below add
    // in that order); the capacity chart's series only at the hour it samples, not at every event.
    const Duration elapsed = now - epoch;
    const bool sample_due = next_sample <= elapsed;
    std::map<std::string, int64_t> busy;
    pool_counts.clear();
    by_resource.clear();
    int64_t live = 0;
    bool resources_settling = false;  // booting, resizing, or able to shrink when idle
    bool node_timers = false;         // a node failing, repairing, noticed or going back
    std::optional<Timestamp> due;
    {
      std::lock_guard lock(db.mu);
      // The jobs changed since the last event time that have ended (a job changes again before
      // it ends, so it comes up again at its last change).
      for (auto it = db.changes.upper_bound(trimmed_seq); it != db.changes.end(); ++it) {
        trimmed_seq = it->first;
        JobRecord& r = db.FindJobLocked(it->second)->record;
        if (IsTerminal(r.job.state)) TrimEnded(r);
      }
      for (const auto& [pool_id, nodes] : db.nodes) {
        int64_t held = 0, idle_in_resource = 0;
        for (const auto& n : nodes) {
          held += n.job_id || n.resource_uid ? 1 : 0;
          idle_in_resource += n.resource_uid && !n.job_id ? 1 : 0;
          node_timers = node_timers || n.ready_at || n.preempt_at || n.state == NodeState::kFailed;
          if (n.resource_uid) {
            by_resource[*n.resource_uid].first += 1;
            by_resource[*n.resource_uid].second += n.job_id ? 1 : 0;
          }
        }
        pool_counts.push_back(PoolCount{&pool_id, held, static_cast<int64_t>(nodes.size())});
        if (sample_due) {
          busy[model_of_pool[pool_id]] += held - idle_in_resource;
          if (idle_in_resource > 0) busy[kIdleResourceSeries] += idle_in_resource;
        }
      }
      for (const auto& [uid, r] : db.resources) {
        resources_settling = resources_settling || ResourceSettling(r.record.resource);
      }
      live = db.live_jobs;
      if (!db.unclaimed.empty()) due = db.unclaimed.begin()->first;
      for (const auto& [owner, jobs] : db.owned) {
        if (!jobs.empty() && (!due || jobs.begin()->first < *due)) due = jobs.begin()->first;
      }
    }
    ended = static_cast<int64_t>(created.size()) - live;
    while (next_sample <= elapsed) {
      result.capacity.push_back(CapacitySample{next_sample, busy});
      next_sample += std::chrono::hours(1);
    }
    if (progress && elapsed >= next_progress) {
      progress(static_cast<int64_t>(created.size()), ended, elapsed);
      while (next_progress <= elapsed) next_progress += std::chrono::hours(24);
    }
    const bool done = next >= trace.jobs.size() && live == 0;
    if (done || now > At(last_arrival, kHorizon)) break;

    Timestamp then = Timestamp::max();
    if (next < trace.jobs.size()) then = At(epoch, trace.jobs[next].submit);
    // A termination grace under way ends: the cycle then admits its preemptor.
    if (auto grace = plane->scheduler().core().NextPreemptionDue();
        grace && (!due || *grace < *due)) {
      due = grace;
    }
    if (auto cancel = cancels.Next(db); cancel && (!due || *cancel < *due)) due = cancel;
    if (due) then = std::min(then, std::max(*due, now + 1us));
    if (live > 0 || resources_settling) {
      // The minute passes at which nothing time-driven is due would decide nothing: wake at the
      // first that may, as it would come on a minute's cadence from now (and no later than the
      // first past the horizon, where a run passing every minute stops).
      std::optional<Timestamp> driven;
      if (wakes == ReplayWakes::kEveryMinute || resources_settling || node_timers) {
        driven = now;
      } else {
        driven = plane->scheduler().core().NextTimeDrivenDecision(now);
        const auto draw = NextFleetDraw(plane->scheduler().core().fleet(), now);
        if (draw && (!driven || *draw < *driven)) driven = draw;
      }
      then = std::min(then, OnCadence(now, At(last_arrival, kHorizon) + 1us));
      if (driven) then = std::min(then, OnCadence(now, *driven));
    }
    const double dt = std::chrono::duration<double>(then - now).count();
    for (const PoolCount& p : pool_counts) result.busy_node_seconds[*p.pool] += p.held * dt;
    {
      std::lock_guard lock(db.mu);
      for (const auto& [uid, counts] : by_resource) {
        auto r = db.resources.find(uid);
        if (r == db.resources.end()) continue;
        ResourceUsage& usage = result.resources[r->second.record.resource_id];
        usage.held_node_seconds += static_cast<double>(counts.first) * dt;
        usage.busy_node_seconds += static_cast<double>(counts.second) * dt;
        usage.most_nodes = std::max(usage.most_nodes, counts.first);
      }
    }
    for (const PoolCount& p : pool_counts) result.node_seconds[*p.pool] += p.slots * dt;
    now = then;
  }
  result.simulated = now - epoch;
  result.quiet_cycles = plane->scheduler().core().quiet_cycles();
  if (progress) progress(static_cast<int64_t>(created.size()), ended, result.simulated);

  // The run is over: the result takes the store's jobs as they are (moving the map moves no job),
  // once nothing of the plane can look one up.
  plane.reset();
  {
    std::lock_guard lock(db.mu);
    result.records = db.TakeJobsLocked();
  }
  result.jobs.reserve(created.size());
  for (size_t i = 0; i < created.size(); ++i) {
    JobOutcome outcome;
    outcome.trace = &trace.jobs[i];
    outcome.built = std::move(shapes[i]);
    outcome.record = &result.records.at(created[i]).record;
    result.jobs.push_back(std::move(outcome));
  }
  return result;
}

}  // namespace trainyard::simulate
