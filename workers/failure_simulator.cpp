#include "workers/failure_simulator.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "services/fleet/failure_model.h"
#include "services/fleet/startup_model.h"
#include "services/jobs/job_record_update.h"
#include "services/jobs/job_state_machine.h"
#include "services/jobs/workload_model.h"
#include "services/log.h"
#include "services/scheduler/verdict_text.h"

namespace trainyard {
namespace {

// Hazards missed while no leader ran are drawn for at most this many ticks (a week), so a
// database left alone for months does not stall the first pass.
constexpr int64_t kMaxCatchUpTicks = 7 * 24 * 60;
constexpr int kInjectionBatch = 100;

Timestamp Later(Timestamp t, Duration d) {
  return t + std::chrono::duration_cast<std::chrono::microseconds>(d);
}

bool IsLive(NodeState state) {
  return state == NodeState::kProvisioning || state == NodeState::kReady ||
         state == NodeState::kBusy;
}

bool Holds(JobState state) { return state == JobState::kPending || state == JobState::kRunning; }

// A RUNNING job whose run ended by `at` finished before the fault reached it: the runtime
// completes it, and the fault only hits the node.
bool FinishedBy(const JobRecord& record, Timestamp at, bool run_ends_known) {
  return run_ends_known && record.job.state == JobState::kRunning && record.next_action_at &&
         *record.next_action_at <= at;
}

std::vector<std::string> PoolIds(const Fleet& fleet,
                                 const std::function<bool(const CapacityPool&)>& wanted) {
  std::vector<std::string> ids;
  for (const CapacityPool& pool : fleet.pools) {
    if (wanted(pool)) ids.push_back(pool.id);
  }
  return ids;
}

// How many different values `ids` holds (it is sorted on the way).
int64_t CountDistinct(std::vector<int64_t>& ids) {
  std::sort(ids.begin(), ids.end());
  return std::unique(ids.begin(), ids.end()) - ids.begin();
}

// `items` in the order of their draws, each drawn once (a comparator that draws would hash both
// sides of every comparison); equal draws keep the items' order.
template <typename T, typename Draw>
void SortByDraw(std::vector<T>& items, const Draw& draw) {
  std::vector<std::pair<double, size_t>> keyed;
  keyed.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) keyed.push_back({draw(items[i]), i});
  std::sort(keyed.begin(), keyed.end());
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (const auto& [key, i] : keyed) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
}

// The nodes of the first `excess` of a pool's live `units` (unit → its nodes) in the order of
// `draw` of each unit: whole units go, a TPU slice with all its hosts.
template <typename Draw>
std::vector<NodeRef> ExcessUnitsNodes(const std::map<int64_t, std::vector<NodeRef>>& units,
                                      int64_t excess, const Draw& draw) {
  std::vector<int64_t> order;
  for (const auto& [unit, nodes] : units) order.push_back(unit);
  SortByDraw(order, draw);
  std::vector<NodeRef> out;
  for (size_t i = 0; i < order.size() && static_cast<int64_t>(i) < excess; ++i) {
    const std::vector<NodeRef>& nodes = units.at(order[i]);
    out.insert(out.end(), nodes.begin(), nodes.end());
  }
  return out;
}

// A reclaim notice for `node` at `at`: `why` (ending in "node ") names it and says when it goes.
SpotNotice ReclaimNotice(const NodeRef& node, Timestamp at, const std::string& why) {
  return {node, at,
          why + NodeName(node.pool_id, node.ordinal) + " is reclaimed at " + ClockText(at)};
}

constexpr const char* kSpotPreemptionWhy = "spot preemption notice: node ";

std::string NodesText(const std::vector<SpotNotice>& notices) {
  std::string out;
  for (size_t i = 0; i < notices.size(); ++i) {
    out += (i > 0 ? ", " : "") + NodeName(notices[i].node.pool_id, notices[i].node.ordinal);
  }
  return out;
}

}  // namespace

std::optional<Timestamp> NextFleetDraw(const Fleet& fleet, Timestamp now) {
  std::optional<Timestamp> next;
  for (const CapacityPool& pool : fleet.pools) {
    // DrawHazards: ticks with a hazard, or with a spot fall (ShrinkSpot), are drawn as they end.
    const bool spot = pool.model == ConsumptionModel::kSpot;
    if (fleet.NodeFailureRate(pool) > 0 ||
        (spot && (pool.spot_preemptions_per_node_hour > 0 || !pool.capacity_steps.empty()))) {
      return now;
    }
    if (!pool.window_end) continue;
    // EndWindows: from the window's notice on, for as long as it looks.
    const Timestamp notice = Later(*pool.window_end, -fleet.spot_notice);
    if (now >= Later(*pool.window_end, kHazardTick * kMaxCatchUpTicks)) continue;
    if (now >= notice) return now;
    if (!next || notice < *next) next = notice;
  }
  return next;
}

StatusOr<FailureStepStats> FailureSimulator::Step(Timestamp now) {
  FailureStepStats stats;
  TY_RETURN_IF_ERROR(store_.StartRepairs(now));
  TY_RETURN_IF_ERROR(FinishRepairs(now, stats));
  TY_RETURN_IF_ERROR(store_.GiveBackPreempted(now));
  TY_RETURN_IF_ERROR(ApplyInjections(now, stats));
  TY_RETURN_IF_ERROR(DrawHazards(now, stats));
  TY_RETURN_IF_ERROR(EndWindows(now, stats));
  TY_RETURN_IF_ERROR(YieldSpotToOnDemand(now, stats));
  TY_RETURN_IF_ERROR(ReclaimDue(now, stats));
  if (stats.notices + stats.reclaimed + stats.failed + stats.repaired + stats.injections > 0) {
    LogJson(LogLevel::kInfo, "fleet_failures",
            {{"notices", stats.notices},
             {"reclaimed", stats.reclaimed},
             {"failed", stats.failed},
             {"repaired", stats.repaired},
             {"injections", stats.injections}});
  }
  return stats;
}

StatusOr<std::map<int64_t, JobRecord>> FailureSimulator::JobsOn(
    const std::vector<NodeStatus>& nodes) {
  std::vector<int64_t> ids;
  for (const NodeStatus& n : nodes) {
    if (n.job_id) ids.push_back(*n.job_id);
  }
  return store_.Jobs(ids);
}

Status FailureSimulator::FinishRepairs(Timestamp now, FailureStepStats& stats) {
  TY_ASSIGN_OR_RETURN(std::vector<NodeStatus> due, store_.RepairsDue(now));
  TY_ASSIGN_OR_RETURN(auto jobs, JobsOn(due));
  for (const NodeStatus& n : due) {
    Repair repair;
    repair.node = n.node;
    repair.at = n.ready_at.value_or(now);
    auto job = n.job_id ? jobs.find(*n.job_id) : jobs.end();
    if (job != jobs.end() && job->second.job.state == JobState::kPending &&
        !job->second.next_action_at) {
      // The repaired node is a new VM: it pulls the image again before the replicas restart.
      auto image = PrimaryImage(job->second.job.job_spec);
      Duration pull = fleet_.ImagePullTime(image.value_or(""));
      const JobRecord& record = job->second;
      auto resume = JobStateMachine::ResumeAfterRepair(
          SnapshotOf(record.id, record.version, record.job), repair.at, Later(repair.at, pull),
          "node " + NodeName(n.node.pool_id, n.node.ordinal) +
              " repaired; all replicas restart after the image pull (" + ShortDuration(pull) + ")");
      if (resume.ok())
        repair.job =
            StateUpdate{record.id, record.version, std::move(*resume), {}, BasisOf(record), {}};
    }
    TY_ASSIGN_OR_RETURN(bool done, store_.FinishRepair(repair));
    stats.repaired += done;
  }
  return Status::Ok();
}

Status FailureSimulator::ApplyInjections(Timestamp now, FailureStepStats& stats) {
  TY_ASSIGN_OR_RETURN(std::vector<FaultInjection> pending,
                      store_.PendingInjections(kInjectionBatch));
  for (const FaultInjection& injection : pending) {
    if (injection.kind == FaultKind::kNodeFailure) {
      // The fleet file may have changed since the request: a node it no longer has is not live.
      auto ref = FindNode(fleet_, injection.node);
      bool live = false;
      if (ref) {
        auto node = store_.Node(*ref);
        if (!node.ok() && node.status().code() != Code::kNotFound) return node.status();
        live = node.ok() && IsLive(node->state);
      }
      if (!live) {
        TY_RETURN_IF_ERROR(store_.FinishInjection(
            {injection.id, "node " + injection.node + " has no running VM; nothing failed"}, now));
      } else {
        TY_ASSIGN_OR_RETURN(
            bool applied,
            Fail(*ref, now,
                 InjectionDone{injection.id,
                               "node " + injection.node + " FAILED; repaired at " +
                                   ClockText(Later(now, DrawRepair(fleet_, ref->pool_id,
                                                                   ref->ordinal, now)))}));
        if (!applied) continue;  // its job moved on meanwhile: next pass
        ++stats.failed;
      }
      ++stats.injections;
      continue;
    }
    TY_ASSIGN_OR_RETURN(std::vector<SpotNotice> notices, PickNotices(injection, now));
    std::string outcome = notices.empty() ? "no live spot node to preempt"
                                          : "preemption notice given to " + NodesText(notices);
    TY_RETURN_IF_ERROR(
        store_.GiveNotices(notices, now, std::nullopt, InjectionDone{injection.id, outcome}));
    stats.notices += static_cast<int>(notices.size());
    ++stats.injections;
  }
  return Status::Ok();
}

StatusOr<std::vector<SpotNotice>> FailureSimulator::PickNotices(const FaultInjection& injection,
                                                                Timestamp now) {
  std::vector<std::string> pools;
  std::optional<NodeRef> only;
  if (!injection.node.empty()) {
    only = FindNode(fleet_, injection.node);
    if (only) pools.push_back(only->pool_id);
  } else {
    for (const CapacityPool& pool : fleet_.pools) {
      bool in =
          injection.pool_id.empty() ? pool.zone == injection.zone : pool.id == injection.pool_id;
      if (in && pool.model == ConsumptionModel::kSpot) pools.push_back(pool.id);
    }
  }
  TY_ASSIGN_OR_RETURN(std::vector<NodeStatus> live, store_.LiveNodes(pools));
  if (only) {
    std::erase_if(live, [&](const NodeStatus& n) { return n.node.ordinal != only->ordinal; });
  }
  // Which nodes: an order drawn from the fleet's seed and the injection's id, so a replayed
  // scenario hits the same ones.
  SortByDraw(live, [&](const NodeStatus& n) {
    return HazardDraw(fleet_.seed, HazardStream::kInjectionPick, n.node.pool_id, n.node.ordinal,
                      injection.id);
  });
  size_t n = live.size();
  if (injection.count) n = std::min<size_t>(n, static_cast<size_t>(*injection.count));
  if (injection.fraction) {
    n = std::min(n, static_cast<size_t>(std::ceil(*injection.fraction * live.size())));
  }
  std::vector<SpotNotice> notices;
  Timestamp preempt_at = Later(now, fleet_.spot_notice);
  for (size_t i = 0; i < n; ++i) {
    notices.push_back(ReclaimNotice(live[i].node, preempt_at, kSpotPreemptionWhy));
  }
  return notices;
}

Status FailureSimulator::DrawHazards(Timestamp now, FailureStepStats& stats) {
  TY_ASSIGN_OR_RETURN(std::optional<int64_t> drawn, store_.HazardTick());
  const int64_t last = CompletedTicks(fleet_.epoch, now) - 1;  // the last completed tick
  int64_t first = drawn ? *drawn + 1 : 0;
  if (last < first) return Status::Ok();
  first = std::max(first, last - kMaxCatchUpTicks + 1);
  // A node is at risk from the first tick that ends after it came up.
  auto from = [&](const NodeStatus& n) {
    return std::max(first, CompletedTicks(fleet_.epoch, n.since));
  };

  bool all_applied = true;
  auto failing = [this](const CapacityPool& p) { return fleet_.NodeFailureRate(p) > 0; };
  TY_ASSIGN_OR_RETURN(std::vector<NodeStatus> fragile, store_.LiveNodes(PoolIds(fleet_, failing)));
  for (const NodeStatus& n : fragile) {
    const CapacityPool* pool = fleet_.FindPool(n.node.pool_id);
    auto hit = FirstHit(fleet_.seed, HazardStream::kNodeFailure, n.node.pool_id, n.node.ordinal,
                        fleet_.NodeFailureRate(*pool), from(n), last);
    if (!hit) continue;
    TY_ASSIGN_OR_RETURN(bool applied, Fail(n.node, TickEnd(fleet_.epoch, *hit), std::nullopt));
    all_applied = all_applied && applied;
    stats.failed += applied;
  }

  auto spot = [](const CapacityPool& p) {
    return p.model == ConsumptionModel::kSpot && p.spot_preemptions_per_node_hour > 0;
  };
  TY_ASSIGN_OR_RETURN(std::vector<NodeStatus> at_risk, store_.LiveNodes(PoolIds(fleet_, spot)));
  std::vector<SpotNotice> notices;
  for (const NodeStatus& n : at_risk) {
    const CapacityPool* pool = fleet_.FindPool(n.node.pool_id);
    auto hit = FirstHit(fleet_.seed, HazardStream::kSpotPreemption, n.node.pool_id, n.node.ordinal,
                        pool->spot_preemptions_per_node_hour, from(n), last);
    if (!hit) continue;
    Timestamp preempt_at = Later(TickEnd(fleet_.epoch, *hit), fleet_.spot_notice);
    notices.push_back(ReclaimNotice(n.node, preempt_at, kSpotPreemptionWhy));
  }
  TY_RETURN_IF_ERROR(ShrinkSpot(first, last, notices));
  // A failure that lost a race is drawn again next pass: keep the tick where it was.
  TY_RETURN_IF_ERROR(store_.GiveNotices(
      notices, now, all_applied ? std::optional<int64_t>(last) : std::nullopt, std::nullopt));
  stats.notices += static_cast<int>(notices.size());
  return Status::Ok();
}

Status FailureSimulator::ShrinkSpot(int64_t first, int64_t last, std::vector<SpotNotice>& notices) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  const Duration tick = kHazardTick;
  std::set<std::pair<std::string, int64_t>> noticed;
  for (const SpotNotice& n : notices) noticed.insert({n.node.pool_id, n.node.ordinal});
  for (const CapacityPool& pool : fleet_.pools) {
    // An on-demand stockout stops new VMs only: the ones running keep running.
    if (pool.model != ConsumptionModel::kSpot) continue;
    for (const CapacityDrop& drop : DropsIn(pool.capacity_steps, first * tick, (last + 1) * tick)) {
      const Timestamp at = fleet_.epoch + duration_cast<microseconds>(drop.at);
      TY_ASSIGN_OR_RETURN(std::vector<NodeStatus> live, store_.LiveNodes({pool.id}));
      // Whole units go (a TPU slice is all its hosts): those live at the fall, in an order drawn
      // from the fleet's seed and the fall, until what is left fits.
      std::map<int64_t, std::vector<NodeRef>> units;
      for (const NodeStatus& n : live) {
        if (n.since <= at) units[n.node.ordinal / pool.hosts_per_unit].push_back(n.node);
      }
      int64_t excess = static_cast<int64_t>(units.size()) - drop.units_left;
      if (excess <= 0) continue;
      const std::vector<NodeRef> going = ExcessUnitsNodes(units, excess, [&](int64_t unit) {
        return HazardDraw(fleet_.seed, HazardStream::kSpotShrink, pool.id, unit, drop.period);
      });
      const Timestamp preempt_at = Later(at, fleet_.spot_notice);
      const std::string why = "spot capacity of " + pool.zone + " " + pool.machine_type +
                              " fell to " + std::to_string(drop.units_left) + " of " +
                              std::to_string(pool.units) + " at " + ClockText(at) + ": node ";
      for (const NodeRef& node : going) {
        if (!noticed.insert({node.pool_id, node.ordinal}).second) continue;
        notices.push_back(ReclaimNotice(node, preempt_at, why));
      }
    }
  }
  return Status::Ok();
}

Status FailureSimulator::EndWindows(Timestamp now, FailureStepStats& stats) {
  std::vector<SpotNotice> notices;
  for (const CapacityPool& pool : fleet_.pools) {
    // From the notice on (a leader that was down catches up for a week), not per hazard minute:
    // the notice comes on time whatever the tick, and a node given one is not read again.
    if (!pool.window_end || now < Later(*pool.window_end, -fleet_.spot_notice) ||
        now >= Later(*pool.window_end, kHazardTick * kMaxCatchUpTicks)) {
      continue;
    }
    TY_ASSIGN_OR_RETURN(std::vector<NodeStatus> live, store_.LiveNodes({pool.id}));
    for (const NodeStatus& n : live) {
      if (!n.job_id) continue;  // an idle node just stops being offered
      notices.push_back({n.node, *pool.window_end,
                         "reservation " + pool.reservation + "'s window ends at " +
                             ClockText(*pool.window_end) + ": node " +
                             NodeName(n.node.pool_id, n.node.ordinal) + " is stopped then",
                         std::string(kWindowEndNotice)});
    }
  }
  if (notices.empty()) return Status::Ok();
  TY_RETURN_IF_ERROR(store_.GiveNotices(notices, now, std::nullopt, std::nullopt));
  stats.notices += static_cast<int>(notices.size());
  return Status::Ok();
}

Status FailureSimulator::YieldSpotToOnDemand(Timestamp now, FailureStepStats& stats) {
  std::vector<SpotNotice> notices;
  for (const ZoneCapacity& zone : fleet_.zone_capacity) {
    if (zone.spot_pool < 0 || zone.on_demand_pool < 0) continue;
    const CapacityPool& spot = fleet_.pools[zone.spot_pool];
    const CapacityPool& on_demand = fleet_.pools[zone.on_demand_pool];
    // Both pools' live nodes in one read, split here.
    TY_ASSIGN_OR_RETURN(std::vector<NodeStatus> live, store_.LiveNodes({on_demand.id, spot.id}));
    std::vector<int64_t> on_demand_units;
    std::vector<int64_t> spot_units;
    for (const NodeStatus& n : live) {
      if (n.node.pool_id == on_demand.id) {
        on_demand_units.push_back(n.node.ordinal / on_demand.hosts_per_unit);
      } else {
        spot_units.push_back(n.node.ordinal / spot.hosts_per_unit);
      }
    }
    const int64_t left =
        SpotUnitsLeft(zone, spot.units, now - fleet_.epoch, CountDistinct(on_demand_units));
    const int64_t excess = CountDistinct(spot_units) - left;
    if (excess <= 0) continue;  // most passes: spot fits, and its nodes are not grouped
    std::map<int64_t, std::vector<NodeRef>> units;
    for (const NodeStatus& n : live) {
      if (n.node.pool_id == spot.id) units[n.node.ordinal / spot.hosts_per_unit].push_back(n.node);
    }
    // Which units go: an order drawn from the seed and the minute, as a fall's.
    const int64_t tick = CompletedTicks(fleet_.epoch, now);
    const std::vector<NodeRef> going = ExcessUnitsNodes(units, excess, [&](int64_t unit) {
      return HazardDraw(fleet_.seed, HazardStream::kSpotShrink, spot.id, unit, -1 - tick);
    });
    const Timestamp preempt_at = Later(now, fleet_.spot_notice);
    const std::string why = "on-demand demand in " + zone.zone + " took the " + zone.machine_type +
                            " capacity spot had (" + std::to_string(left) + " of " +
                            std::to_string(spot.units) + " left to spot): node ";
    for (const NodeRef& node : going) {
      notices.push_back(ReclaimNotice(node, preempt_at, why));
    }
  }
  if (notices.empty()) return Status::Ok();
  TY_RETURN_IF_ERROR(store_.GiveNotices(notices, now, std::nullopt, std::nullopt));
  stats.notices += static_cast<int>(notices.size());
  return Status::Ok();
}

Status FailureSimulator::ReclaimDue(Timestamp now, FailureStepStats& stats) {
  TY_ASSIGN_OR_RETURN(std::vector<NodeStatus> due, store_.NoticesDue(now));
  TY_ASSIGN_OR_RETURN(auto jobs, JobsOn(due));
  std::set<int64_t> restarted;  // one restart per job, however many of its nodes go
  for (const NodeStatus& n : due) {
    Reclaim reclaim;
    reclaim.node = n.node;
    reclaim.at = n.preempt_at.value_or(now);
    auto job = n.job_id ? jobs.find(*n.job_id) : jobs.end();
    if (job != jobs.end() && FinishedBy(job->second, reclaim.at, run_ends_known_)) continue;
    if (job != jobs.end() && Holds(job->second.job.state)) {
      if (!restarted.insert(job->first).second) continue;  // released with the first one
      const JobRecord& record = job->second;
      bool disable =
          record.job.job_spec.scheduling && record.job.job_spec.scheduling->disable_retries;
      SpotPreemptionOutcome outcome = AfterSpotPreemption(record.spot_restarts, disable,
                                                          NodeName(n.node.pool_id, n.node.ordinal));
      const JobSnapshot snapshot = SnapshotOf(record.id, record.version, record.job);
      // A workload that saves its state when the notice comes keeps everything up to the notice,
      // if the save fits in it.
      std::optional<Timestamp> saved_at;
      if (auto save = EmergencyCheckpointTime(record.job.job_spec);
          save.ok() && *save && **save <= fleet_.spot_notice) {
        saved_at =
            reclaim.at - std::chrono::duration_cast<std::chrono::microseconds>(fleet_.spot_notice);
      }
      // A calendar reservation's window that ended is no spot reclaim: the job goes back to the
      // queue without spending a restart.
      const CapacityPool* pool = fleet_.FindPool(n.node.pool_id);
      const bool window_ended =
          pool != nullptr && pool->window_end && reclaim.at >= *pool->window_end;
      auto transition =
          window_ended ? JobStateMachine::Requeue(
                             snapshot, reclaim.at,
                             "reservation " + pool->reservation + "'s window ended " + "at " +
                                 ClockText(*pool->window_end) + "; back in the queue",
                             /*spot=*/false, saved_at)
          : outcome.restart ? JobStateMachine::Requeue(snapshot, reclaim.at, outcome.message,
                                                       /*spot=*/true, saved_at)
                            : JobStateMachine::Stockout(snapshot, reclaim.at, outcome.message);
      if (!transition.ok()) continue;  // moved on since it was read; looked at again next pass
      reclaim.job =
          StateUpdate{record.id, record.version, std::move(*transition), {}, BasisOf(record), {}};
    }
    TY_ASSIGN_OR_RETURN(bool done, store_.ReclaimNode(reclaim));
    stats.reclaimed += done;
  }
  return Status::Ok();
}

StatusOr<bool> FailureSimulator::Fail(const NodeRef& ref, Timestamp at,
                                      std::optional<InjectionDone> injection) {
  TY_ASSIGN_OR_RETURN(NodeStatus node, store_.Node(ref));
  NodeFailure failure;
  failure.node = ref;
  failure.at = at;
  // Each failure's repair is its own draw (a reboot, or a replacement host that takes longer).
  const Duration repair = DrawRepair(fleet_, ref.pool_id, ref.ordinal, at);
  failure.repaired_at = Later(at, repair);
  failure.injection = std::move(injection);
  if (node.job_id) {
    TY_ASSIGN_OR_RETURN(auto jobs, store_.Jobs({*node.job_id}));
    auto job = jobs.find(*node.job_id);
    if (job != jobs.end() && Holds(job->second.job.state) &&
        !FinishedBy(job->second, at, run_ends_known_)) {
      const JobRecord& record = job->second;
      TY_ASSIGN_OR_RETURN(
          JobTransition stop,
          JobStateMachine::StopForRepair(
              SnapshotOf(record.id, record.version, record.job), at,
              "node " + NodeName(ref.pool_id, ref.ordinal) +
                  " failed; the whole gang stops and restarts when it is repaired (repair takes " +
                  ShortDuration(repair) + "), keeping its progress"));
      failure.job =
          StateUpdate{record.id, record.version, std::move(stop), {}, BasisOf(record), {}};
    }
  }
  return store_.FailNode(failure);
}

}  // namespace trainyard
