#pragma once
// Turns a cycle's decisions into the writes a store applies: which nodes each admission takes,
// what it costs an hour, how long its nodes take to boot and pull the image, the names of an
// elastic pool's VMs, and each job's transition. Pure: a store reads the free nodes inside its
// transaction and hands them here, then applies the plan as compare-and-sets; a plan it cannot
// apply (a claim came back short, the job moved on) is skipped, never changed in SQL.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/jobs/job_repository.h"
#include "services/jobs/job_state_machine.h"
#include "services/scheduler/free_units.h"
#include "services/scheduler/scheduler.h"

namespace trainyard {

// The free units of each pool by who holds them, as a store read them for one commit: keyed by
// (fleet pool index, the persistent resource uid holding the nodes, 0 for none). Plans take from
// it, so admissions of one commit never choose the same node.
using FreeByPool = std::map<std::pair<int, int64_t>, FreeUnits>;

// What a commit must read of one pool's free nodes. A pool of single-host units without blocks
// needs only, for each holder its admissions take from, the `lowest` free nodes (the units they
// take together) of each of READY and DELETED and every READY one caching one of `images`: Take
// prefers cached warm units, then warm, then cold, lowest first, so it chooses from these exactly
// what it would from all (a 4,000-node pool was read whole at every commit, one admission or
// many). lowest 0: every free node of the pool, whoever holds it (slices and blocks).
struct FreeNodesRead {
  int pool = 0;
  int64_t holder = 0;  // the persistent resource uid holding the nodes, 0 for none
  int64_t lowest = 0;
  std::vector<std::string> images;
};

// The node slots an admission takes in one pool (elastic pools have none: their VMs are made).
struct NodeClaim {
  std::string pool_id;
  std::vector<int64_t> ordinals;
};

struct JobAdmissionPlan {
  int64_t job_id = 0;
  int64_t version = 0;
  int64_t resource_uid = 0;  // whose held nodes the claims take (0: the pools' own)
  std::vector<NodeClaim> claims;
  JobTransition transition;         // QUEUED → PENDING
  std::optional<LeaseGrant> lease;  // the runtime the job is handed to (none: one claims it)
};

struct HoldPlan {
  int64_t resource_uid = 0;
  int64_t version = 0;
  std::vector<NodeClaim> claims;
  JobAdmission placement;  // where it holds and what its nodes cost an hour
  Timestamp ready_at{};    // its cold nodes booted
};

class AdmissionPlanner {
 public:
  // simulated_startup: admitted work waits out the fleet's simulated boot and image pull before
  // the runtime starts it (the simulator); off for runtimes whose processes report their own
  // readiness.
  // runtime_lease: what an admission hands its job to (this process's runtime), if anything.
  AdmissionPlanner(const Fleet& fleet, bool simulated_startup,
                   std::optional<LeaseGrant> runtime_lease = std::nullopt)
      : fleet_(fleet),
        simulated_startup_(simulated_startup),
        runtime_lease_(std::move(runtime_lease)) {}

  const Fleet& fleet() const { return fleet_; }
  // The pools whose free nodes a store must read for `cycle`'s admissions and holds.
  std::vector<int> PoolsToRead(const CycleResult& cycle) const;
  std::vector<int> PoolsToRead(const AdmissionDecision& admission) const;
  // The same as reads a store can bound (FreeNodesRead), ordered by pool and holder.
  std::vector<FreeNodesRead> FreeNodesToRead(const CycleResult& cycle) const;
  std::vector<FreeNodesRead> FreeNodesToRead(const AdmissionDecision& admission) const;

  // nullopt: a pool is short of free units (the admission is skipped this cycle).
  std::optional<JobAdmissionPlan> PlanJob(const AdmissionDecision& a, Timestamp now,
                                          FreeByPool& free) const;
  std::optional<HoldPlan> PlanHold(const HoldDecision& h, Timestamp now, FreeByPool& free) const;
  // A victim of `a` as the store found it, locked: its requeue, or nullopt when it is no longer
  // running (cancelled or ended meanwhile: no victim, and the admission waits).
  std::optional<JobTransition> PlanVictim(const AdmissionDecision& a, const JobSnapshot& victim,
                                          Timestamp now) const;
  StatusOr<JobTransition> PlanFailure(const FailureDecision& f, Timestamp now) const;

 private:
  const Fleet& fleet_;
  bool simulated_startup_ = true;
  std::optional<LeaseGrant> runtime_lease_;
};

}  // namespace trainyard
