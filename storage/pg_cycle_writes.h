#pragma once
// A cycle commit's writes on PostgreSQL (services/scheduler/cycle_commit.h): each a
// compare-and-set inside the commit's transaction, batched so the common path stays at two round
// trips for every hold and admission of a cycle.
#include "services/scheduler/cycle_commit.h"
#include "storage/pg.h"

namespace trainyard::storage {

class PgCycleWrites final : public CycleWrites {
 public:
  PgCycleWrites(pg::Transaction& tx, const Fleet& fleet) : tx_(tx), fleet_(fleet) {}

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
  pg::Transaction& tx_;
  const Fleet& fleet_;
};

}  // namespace trainyard::storage
