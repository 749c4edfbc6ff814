#pragma once
// A cycle commit's writes in memory (services/scheduler/cycle_commit.h), each a compare-and-set
// as the PostgreSQL store's, under the database lock the caller holds for the whole commit. The
// savepoint keeps what each write after it replaced, and puts it back on a rollback.
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "services/scheduler/cycle_commit.h"
#include "storage/memory/memory_database.h"

namespace trainyard::storage::memory {

class MemoryCycleWrites final : public CycleWrites {
 public:
  MemoryCycleWrites(MemoryDatabase& db, const Fleet& fleet) : db_(db), fleet_(fleet) {}

  Status ReadFree(const std::vector<FreeNodesRead>& reads, FreeByPool& free,
                  NodeStatesRead& states) override;
  Status Mark() override;
  Status RollbackToMark() override;
  Status ReleaseMark() override;
  StatusOr<std::optional<JobSnapshot>> LockJob(int64_t id) override;
  StatusOr<bool> ApplyTransition(const StateUpdate& update) override;
  StatusOr<NodeMoveBatch> MoveNodes(const NodeMoveBatch& moves,
                                    const std::vector<StateUpdate*>& admitting,
                                    Timestamp now) override;
  StatusOr<Admitted> Admit(const std::vector<HoldPlan>& holds, const std::vector<StateUpdate>& jobs,
                           Timestamp now) override;
  StatusOr<int> FailHolds(const std::vector<HoldFailure>& failures, Timestamp now) override;
  StatusOr<int> FailJobs(std::vector<StateUpdate>& failures) override;
  Status WriteNotices(const std::vector<PreemptionNotice>& notices, Timestamp now) override;
  Status WriteHoldVerdicts(const std::vector<HoldVerdict>& verdicts) override;
  StatusOr<int> WriteVerdicts(const std::vector<VerdictUpdate>& verdicts, Timestamp now) override;

 private:
  // What the writes after Mark replaced, each as it was before the first of them.
  struct Saved {
    int64_t next_seq = 0;
    int64_t live_jobs = 0;
    std::map<int64_t, MemoryJob> jobs;
    std::map<std::pair<std::string, int64_t>, MemoryNode> nodes;
    std::map<int64_t, MemoryResource> resources;
  };
  // Keep a job (with its nodes), a node or a resource before a write under the mark changes it.
  void SaveJob(int64_t id);
  void SaveNode(const std::string& pool_id, int64_t ordinal);
  void SaveResource(int64_t uid);
  // The job back as `saved` was, filed again in the change feed and the action queues.
  void RestoreJob(int64_t id, const MemoryJob& saved);
  // NodeMoveBatch's kinds, each with what else its node must be and what else it writes
  // (storage/node_moves.h's NodeWrite).
  enum class MoveKind { kHold, kClaim, kUnclaim, kUnhold };
  // One move, if its node is still as read; then its state, time and owner.
  bool MoveNode(const NodeMove& move, MoveKind kind, Timestamp now);
  bool PlaceHold(const HoldPlan& plan, Timestamp now);

  MemoryDatabase& db_;
  const Fleet& fleet_;
  std::optional<Saved> saved_;
};

}  // namespace trainyard::storage::memory
