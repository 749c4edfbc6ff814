#include "services/admin/admin_service.h"

#include <algorithm>
#include <tuple>

#include "services/cost/capacity_cost.h"
#include "services/jobs/job_service.h"
#include "services/scheduler/scheduler_job.h"

namespace trainyard {
namespace {

int64_t Count(const PoolNodeCounts& counts, NodeState state) {
  auto it = counts.by_state.find(state);
  return it == counts.by_state.end() ? 0 : it->second;
}

}  // namespace

StatusOr<FleetView> AdminService::FleetStatus() {
  TY_ASSIGN_OR_RETURN(auto counts, admin_.NodeCounts());
  Timestamp now = clock_.Now();
  FleetView view;
  view.name = fleet_.name;
  view.epoch = fleet_.epoch;
  for (const CapacityPool& pool : fleet_.pools) {
    PoolView p;
    p.pool = &pool;
    if (auto it = counts.find(pool.id); it != counts.end()) p.nodes = it->second;
    p.units_usable_now = pool.UnitsAvailableAt(now, fleet_.epoch);
    view.pools.push_back(std::move(p));
  }
  TY_ASSIGN_OR_RETURN(view.cohorts, CohortShares());
  return view;
}

StatusOr<std::vector<CohortShareView>> AdminService::CohortShares() {
  std::vector<std::string> pool_ids;
  for (const Cohort& c : fleet_.cohorts)
    pool_ids.insert(pool_ids.end(), c.pools.begin(), c.pools.end());
  TY_ASSIGN_OR_RETURN(auto held, admin_.NodesHeldByProject(pool_ids));
  std::vector<CohortShareView> out;
  for (const Cohort& cohort : fleet_.cohorts) {
    // Units each member holds per resource.
    std::map<std::string, std::map<std::string, int64_t>> used;
    for (const std::string& id : cohort.pools) {
      const CapacityPool* pool = fleet_.FindPool(id);
      for (const CohortMember& m : cohort.members) {
        auto it = held.find({id, m.project});
        if (pool != nullptr && it != held.end()) {
          used[CohortResource(*pool)][m.project] += it->second / pool->hosts_per_unit;
        }
      }
    }
    // Shares of what the cohort has now (a calendar reservation outside its window has nothing).
    const Cohort::Now now = cohort.At(fleet_.pools, clock_.Now(), fleet_.epoch);
    for (const auto& [resource, capacity] : now.capacity) {
      CohortShareView view{&cohort, resource, capacity, {}};
      int64_t nominal_sum = 0, borrowed_sum = 0, unused_sum = 0;
      for (const CohortMember& m : cohort.members) {
        CohortShareView::Member share{&m, now.Nominal(m, resource), used[resource][m.project], 0,
                                      0};
        share.borrowed = std::max<int64_t>(0, share.used - share.nominal);
        nominal_sum += share.nominal;
        borrowed_sum += share.borrowed;
        unused_sum += std::max<int64_t>(0, share.nominal - share.used);
        view.members.push_back(share);
      }
      const int64_t from_lenders = std::max<int64_t>(0, borrowed_sum - (capacity - nominal_sum));
      for (CohortShareView::Member& share : view.members) {
        const int64_t unused = std::max<int64_t>(0, share.nominal - share.used);
        if (unused_sum > 0) share.lent = from_lenders * unused / unused_sum;
      }
      out.push_back(std::move(view));
    }
  }
  return out;
}

StatusOr<NodePage> AdminService::Nodes(const NodeQuery& query) {
  if (!query.pool.empty() && fleet_.FindPool(query.pool) == nullptr) {
    return InvalidField("pool", "no pool \"" + query.pool + "\" in fleet " + fleet_.name +
                                    "; GET /v1/fleet lists the pool ids");
  }
  if (!query.zone.empty() &&
      std::none_of(fleet_.pools.begin(), fleet_.pools.end(),
                   [&](const CapacityPool& p) { return p.zone == query.zone; })) {
    return InvalidField("zone", "no zone \"" + query.zone + "\" in fleet " + fleet_.name);
  }
  TY_ASSIGN_OR_RETURN(std::vector<NodeRecord> rows, admin_.ListNodes(query));
  NodePage page;
  if (static_cast<int>(rows.size()) > query.limit) {
    rows.resize(query.limit);
    page.next = NodeCursor{rows.back().pool_id, rows.back().ordinal};
  }
  page.nodes = std::move(rows);
  return page;
}

StatusOr<std::vector<ReservationView>> AdminService::Reservations() {
  TY_ASSIGN_OR_RETURN(auto counts, admin_.NodeCounts());
  Timestamp now = clock_.Now();
  std::vector<ReservationView> out;
  for (const CapacityPool& pool : fleet_.pools) {
    if (pool.model != ConsumptionModel::kReservation) continue;
    ReservationView r;
    r.pool = &pool;
    r.usable_now = pool.UnitsAvailableAt(now, fleet_.epoch) > 0;
    r.nodes_total = pool.nodes();
    if (auto it = counts.find(pool.id); it != counts.end()) {
      const PoolNodeCounts& c = it->second;
      r.nodes_busy = c.with_job;
      // Free: booted and unheld, or with no VM yet (a reservation holds capacity, not VMs).
      r.nodes_free = Count(c, NodeState::kReady) + Count(c, NodeState::kDeleted);
    }
    // Neither: preempted, failed, repairing, or booting again after a repair.
    r.nodes_down = std::max<int64_t>(0, r.nodes_total - r.nodes_busy - r.nodes_free);
    out.push_back(r);
  }
  return out;
}

StatusOr<std::vector<QueueView>> AdminService::Queues(int jobs_per_queue) {
  TY_ASSIGN_OR_RETURN(std::vector<QueueCount> counts, admin_.QueueCounts());
  TY_ASSIGN_OR_RETURN(std::vector<QueuedJobRecord> queued, admin_.QueuedJobs(jobs_per_queue));
  std::map<std::pair<std::string, std::string>, QueueView> queues;
  auto queue = [&](const std::string& project, const std::string& location) -> QueueView& {
    QueueView& q = queues[{project, location}];
    q.project_id = project;
    q.location = location;
    return q;
  };
  for (const QueueCount& c : counts) {
    QueueView& q = queue(c.project_id, c.location);
    switch (c.state) {
      case JobState::kQueued:
        q.queued += c.jobs;
        q.queued_by_reason[c.reason.empty() ? "NOT_EVALUATED" : c.reason] += c.jobs;
        break;
      case JobState::kPending:
        q.pending += c.jobs;
        break;
      case JobState::kRunning:
        q.running += c.jobs;
        break;
      case JobState::kCancelling:
        q.cancelling += c.jobs;
        break;
      default:
        break;
    }
  }
  for (QueuedJobRecord& record : queued) {
    QueuedJobView v;
    v.name = JobName(record.project_number, record.location, record.id);
    auto priority = ParsePriorityLabel(record.labels);  // validated at create
    v.priority = priority.ok() ? *priority : kDefaultPriority;
    QueueView& q = queue(record.project_id, record.location);
    v.record = std::move(record);
    q.jobs.push_back(std::move(v));
  }
  std::vector<QueueView> out;
  out.reserve(queues.size());
  for (auto& [key, q] : queues) out.push_back(std::move(q));
  return out;
}

// Both sides accrue when an admission ends (a run that goes on counts at its end), so a long run
// does not show its cost without its work.
std::optional<double> ModelCost::CostPerProductiveAcceleratorHour() const {
  return cost::PerProductiveAcceleratorHourMicros(accrued_micros, productive_accelerator_micros);
}

std::optional<double> ProjectCostView::CostPerProductiveAcceleratorHour() const {
  return cost::PerProductiveAcceleratorHourMicros(accrued_micros, productive_accelerator_micros);
}

StatusOr<ProjectCostView> AdminService::ProjectCosts(const std::string& project) {
  auto resolved = projects_.Resolve(project, /*create_if_missing=*/false);
  if (!resolved.ok() && resolved.status().code() == Code::kNotFound) {
    return NotFound("Project " + project + " not found.");
  }
  TY_RETURN_IF_ERROR(resolved.status());
  ProjectCostView view;
  view.project = *resolved;
  TY_ASSIGN_OR_RETURN(view.by_model, admin_.ProjectCosts(resolved->number, clock_.Now()));
  for (const ModelCost& m : view.by_model) {
    view.accrued_micros += m.accrued_micros;
    view.running_micros += m.running_micros;
    view.productive_accelerator_micros += m.productive_accelerator_micros;
  }
  TY_ASSIGN_OR_RETURN(view.resources, admin_.ResourceCosts(resolved->number, clock_.Now()));
  for (const ResourceCost& r : view.resources) {
    (r.deleted_at ? view.accrued_micros : view.running_micros) += r.total_micros;
  }
  return view;
}

StatusOr<std::vector<StateCount>> AdminService::JobStateCounts(const std::string& project,
                                                               const std::string& location) {
  auto resolved = projects_.Resolve(project, /*create_if_missing=*/false);
  if (!resolved.ok() && resolved.status().code() == Code::kNotFound) {
    return std::vector<StateCount>{};
  }
  TY_RETURN_IF_ERROR(resolved.status());
  return admin_.StateCounts(resolved->number, location, kStateCountCap);
}

StatusOr<std::vector<JobEvent>> AdminService::JobEvents(const JobRef& ref) {
  TY_ASSIGN_OR_RETURN(JobKey key, ResolveJobRef(projects_, ref));
  auto events = admin_.JobEvents(key.project_number, ref.parent.location, key.id);
  if (!events.ok() && events.status().code() == Code::kNotFound) return JobNotFound(ref);
  return events;
}

}  // namespace trainyard
