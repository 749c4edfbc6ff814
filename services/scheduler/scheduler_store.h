#pragma once
// What the scheduler's leader loop needs from storage: the fleet's nodes, the jobs that changed,
// one transaction per cycle, and leadership.
#include <map>
#include <string>
#include <vector>

#include "services/fleet/fleet.h"
#include "services/jobs/job_repository.h"
#include "services/persistent_resources/resource_repository.h"
#include "services/scheduler/admission_planner.h"
#include "services/scheduler/cycle_commit.h"
#include "services/scheduler/scheduler.h"

namespace trainyard {

// Where the scheduler is in the job change feed.
struct ChangeCursor {
  uint64_t xid = 0;
  int64_t seq = 0;
};

class SchedulerStore {
 public:
  virtual ~SchedulerStore() = default;
  // Whether this process leads (a session advisory lock on the store's own connection, which
  // also carries every commit: losing the connection loses the lead and fences the commits).
  virtual StatusOr<bool> TryLead() = 0;
  // Gives the lead up now (a stopping server), so a follower takes over at its next try rather
  // than when this process's connection closes.
  virtual Status Resign() = 0;
  // Creates the node slots of `fleet` that do not exist yet (reservations READY, the rest
  // DELETED) and returns the fleet's epoch, fixed at the first start.
  virtual StatusOr<Timestamp> SyncNodes(const Fleet& fleet, Timestamp now) = 0;
  // Jobs changed after `after` by transactions that have all finished, in (change_xid,
  // change_seq) order, at most `limit`: a cursor over them never skips a row that commits later.
  // Only a QUEUED job's record carries its spec and labels (JobRecord::without_spec on the
  // others): they never change, and the scheduler keeps each job's shape from the row that queued
  // it. No record carries its run, which the scheduler has no use for.
  virtual StatusOr<std::vector<JobRecord>> JobChanges(const ChangeCursor& after, int limit) = 0;
  // What a leader starts from (its first pass, or after a commit found the store moved): the jobs
  // that have not ended, as one consistent read, and the cursor from which the change feed
  // carries everything after it (a change already read may come again). An ended job is nothing
  // to a core that starts empty, so a long history costs a reload nothing to decode.
  struct LiveJobs {
    std::vector<JobRecord> jobs;  // in change order
    ChangeCursor cursor;
  };
  virtual StatusOr<LiveJobs> ReadLiveJobs() = 0;
  // Units out of service that no job holds (a TPU slice with any unhealthy host counts whole):
  // per pool id of the free capacity, and per persistent resource uid and pool id of what the
  // resource holds (its jobs cannot have them until they are repaired, nor while they still boot
  // for it).
  struct UnitsDownView {
    std::map<std::string, int64_t> pools;
    std::map<int64_t, std::map<std::string, int64_t>> resources;
  };
  virtual StatusOr<UnitsDownView> UnitsDown(const Fleet& fleet) = 0;
  // The persistent resources: the scheduler places their holds and gives their nodes to the jobs
  // that name them. What tells whether a resource changed since the leader last read it: its
  // version, and a cancel asked of its operation (which does not touch the resource's row). One
  // small row each, so the leader reads whole rows only for the resources that changed.
  struct ResourceStamp {
    int64_t uid = 0;
    int64_t version = 0;
    bool cancel_requested = false;
    bool operator==(const ResourceStamp&) const = default;
  };
  virtual StatusOr<std::vector<ResourceStamp>> ResourceStamps() = 0;
  virtual StatusOr<std::vector<ResourceRecord>> ResourcesByUid(
      const std::vector<int64_t>& uids) = 0;
  // Commits a cycle in one transaction: victims requeued and admissions placed on nodes,
  // failures, verdicts. CommitCycle decides every write over the store's CycleWrites; a decision
  // whose job moved on is skipped, not an error.
  virtual StatusOr<CommitOutcome> Commit(const AdmissionPlanner& planner, const CycleResult& cycle,
                                         Timestamp now) = 0;
};

}  // namespace trainyard
