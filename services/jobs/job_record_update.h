#pragma once
// What an applied transition does to a job's record: the rules storage/job_transition_sql.cpp
// writes as one UPDATE, for the stores that keep jobs in memory (storage/memory/, which
// `simulate` runs on). Whether a transition applies (the version, the state, the lease) is the
// store's check; this only writes. tests/integration/storage/job_record_update_test.cpp applies
// the same transitions through both and compares the records.
#include "services/jobs/job_repository.h"

namespace trainyard {

void ApplyToRecord(const JobTransition& t, JobRecord& record);

}  // namespace trainyard
