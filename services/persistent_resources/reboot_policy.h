#pragma once
// What a persistent resource's reboot does to a job running on it, by the job's own scheduling
// settings (Vertex: Scheduling.restartJobOnWorkerRestart and disableRetries). Every node of the
// resource boots again, so every replica of the job goes down with it:
// - disableRetries: the job FAILED (UNAVAILABLE), nothing restarts;
// - restartJobOnWorkerRestart: the whole job is retried (a new attempt, at most max_job_retries),
//   resuming from its last checkpoint once the nodes are back;
// - neither: each replica restarts in place when its node is back, from the last checkpoint.
#include <string>

#include "services/jobs/job_repository.h"
#include "services/jobs/job_state_machine.h"

namespace trainyard {

StatusOr<JobTransition> OnResourceReboot(const JobRecord& job, const std::string& resource_id,
                                         Duration boot, Timestamp now, int max_job_retries);

}  // namespace trainyard
