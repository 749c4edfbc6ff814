#pragma once
// What an applied transition writes, computed once for both stores from the row it moves: the
// cost its admission ran up (services/cost/accrual.h), when the new state began, the time in the
// old state in its goodput bucket and, for a run that ends, the checkpoint split (SplitRun,
// services/model/goodput.h). The memory stores (storage/memory/, which `simulate` runs on) apply
// it to their record with ApplyToRecord; PostgreSQL writes the same values as plain parameters
// of its compare-and-set (storage/job_transition_sql.cpp). Whether a transition applies (the
// version, the state, the lease) is the store's check; this only computes.
// tests/integration/storage/job_transition_sql_test.cpp applies the same transitions through
// both and compares the records.
#include "services/jobs/job_repository.h"

namespace trainyard {

// The values of a transition's write that follow from the row it moves.
struct JobTransitionWrite {
  int64_t cost_micros = 0;
  std::optional<Timestamp> state_since;
  JobGoodput goodput;
  Duration checkpointed{};
  int spot_restarts = 0;  // one more after a spot preemption's restart
};

JobTransitionBasis BasisOf(const JobRecord& record);
JobTransitionWrite WriteOf(const JobTransition& t, const JobTransitionBasis& basis);

void ApplyToRecord(const JobTransition& t, JobRecord& record);

}  // namespace trainyard
