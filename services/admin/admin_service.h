#pragma once
// The read-only admin view: the fleet as configured joined with its nodes' live states, the
// reservations, the queues with the scheduler's verdicts, costs per project and a job's events.
#include <optional>
#include <string>
#include <vector>

#include "services/admin/admin_repository.h"
#include "services/clock.h"
#include "services/fleet/fleet.h"
#include "services/jobs/job_repository.h"

namespace trainyard {

struct PoolView {
  const CapacityPool* pool = nullptr;  // into the service's Fleet
  PoolNodeCounts nodes;
  int units_usable_now = 0;  // calendar windows and DWS steps applied; in use or not
};

// One resource of a cohort (services/fleet/fleet.h) as it is used now, per member: its nominal
// share, what it uses, what of that it borrows (beyond its nominal) and what of its unused nominal
// others borrow (the borrowing beyond the cohort's unassigned capacity, split over the lenders by
// their unused nominal).
struct CohortShareView {
  const Cohort* cohort = nullptr;
  std::string resource;
  int64_t capacity = 0;
  struct Member {
    const CohortMember* member = nullptr;
    int64_t nominal = 0;
    int64_t used = 0;
    int64_t borrowed = 0;
    int64_t lent = 0;
  };
  std::vector<Member> members;
};

struct FleetView {
  std::string name;
  Timestamp epoch{};
  std::vector<PoolView> pools;  // fleet file order (zones in order, pools within)
  std::vector<CohortShareView> cohorts;
};

struct NodePage {
  std::vector<NodeRecord> nodes;
  std::optional<NodeCursor> next;
};

struct ReservationView {
  const CapacityPool* pool = nullptr;
  bool usable_now = false;  // inside its window (CUD reservations always are)
  int64_t nodes_total = 0;
  int64_t nodes_busy = 0;  // held by a job
  int64_t nodes_free = 0;  // unheld: READY, or no VM yet (DELETED)
  int64_t nodes_down = 0;  // neither: preempted, failed, repairing, rebooting
};

struct QueuedJobView {
  QueuedJobRecord record;
  std::string name;  // projects/{number}/locations/{l}/customJobs/{id}
  int priority = 0;
};

struct QueueView {
  std::string project_id;
  std::string location;
  int64_t queued = 0;
  int64_t pending = 0;  // admitted, nodes booting or image pulling
  int64_t running = 0;
  int64_t cancelling = 0;
  std::map<std::string, int64_t> queued_by_reason;  // QUEUED jobs by the scheduler's reason code
  std::vector<QueuedJobView> jobs;                  // QUEUED, by queue position
};

struct ProjectCostView {
  Project project;
  int64_t accrued_micros = 0;
  int64_t running_micros = 0;
  std::vector<ModelCost> by_model;
  std::vector<ResourceCost> resources;  // in running_micros too
  int64_t productive_accelerator_micros = 0;
  // What the project's ended admissions and deleted persistent resources cost over its jobs'
  // productive accelerator-hours (both accrue as admissions end): nullopt before any.
  std::optional<double> CostPerProductiveAcceleratorHour() const;
};

class AdminService {
 public:
  AdminService(AdminRepository& admin, ProjectRepository& projects, const Fleet& fleet,
               const Clock& clock)
      : admin_(admin), projects_(projects), fleet_(fleet), clock_(clock) {}

  StatusOr<FleetView> FleetStatus();
  // INVALID_ARGUMENT naming `pool` or `zone` when the fleet has no such pool or zone.
  StatusOr<NodePage> Nodes(const NodeQuery& query);
  StatusOr<std::vector<ReservationView>> Reservations();
  StatusOr<std::vector<QueueView>> Queues(int jobs_per_queue);
  StatusOr<ProjectCostView> ProjectCosts(const std::string& project);
  // The project's jobs in `location` by state, each count stopping at kStateCountCap (a project
  // never seen has none).
  static constexpr int64_t kStateCountCap = 10000;
  StatusOr<std::vector<StateCount>> JobStateCounts(const std::string& project,
                                                   const std::string& location);
  StatusOr<std::vector<JobEvent>> JobEvents(const JobRef& ref);
  // For /metrics: unfinished jobs by queue, state, consumption model and reason; and per
  // consumption model the cost and time of every job, to now.
  StatusOr<std::vector<QueueCount>> JobCounts() { return admin_.QueueCounts(); }
  StatusOr<std::vector<ModelTotals>> FleetTotals() { return admin_.FleetTotals(clock_.Now()); }

 private:
  StatusOr<std::vector<CohortShareView>> CohortShares();

  AdminRepository& admin_;
  ProjectRepository& projects_;
  const Fleet& fleet_;
  const Clock& clock_;
};

}  // namespace trainyard
