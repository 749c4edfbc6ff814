#pragma once
// Request validation for customJobs.create: every rule Vertex enforces (or that we enforce where
// Vertex is vague, with the reason in the message), checked before anything is stored.
#include "services/model/custom_job.h"
#include "services/status.h"

namespace trainyard {

// OK, or INVALID_ARGUMENT for the FIRST violated rule, carrying exactly one FieldViolation whose
// field is the camelCase JSON path (e.g. jobSpec.workerPoolSpecs[1].machineSpec.acceleratorCount)
// and whose description says what is allowed. Checks run in this order: displayName, labels, each
// worker pool in index order, jobSpec.scheduling, rules spanning pools (TPU, FLEX_START, SPOT),
// the remaining jobSpec fields, then the simulator's run-time knobs in workerPoolSpecs[0].env
// (services/jobs/workload_model.h). Output-only fields are ignored.
Status ValidateCustomJob(const CustomJob& job);

}  // namespace trainyard
