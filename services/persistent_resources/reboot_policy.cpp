#include "services/persistent_resources/reboot_policy.h"

#include "services/model/duration_text.h"

namespace trainyard {

StatusOr<JobTransition> OnResourceReboot(const JobRecord& job, const std::string& resource_id,
                                         Duration boot, Timestamp now, int max_job_retries) {
  const JobSnapshot snapshot = SnapshotOf(job.id, job.version, job.job);
  const Scheduling* scheduling =
      job.job.job_spec.scheduling ? &*job.job.job_spec.scheduling : nullptr;
  const std::string what = "persistent resource " + resource_id + " is rebooting";
  const std::string back = " when the nodes are back (in " + ShortDuration(boot) + ")";
  auto fail = [&](const std::string& why) {
    const std::string message = what + "; " + why;
    return JobStateMachine::FailAdmitted(snapshot, now, message,
                                         RpcStatusOf(Code::kUnavailable, message));
  };
  if (scheduling != nullptr && scheduling->disable_retries) {
    return fail("scheduling.disableRetries is set, so the job is not restarted");
  }
  if (scheduling != nullptr && scheduling->restart_job_on_worker_restart) {
    if (job.attempt >= max_job_retries) {
      return fail("scheduling.restartJobOnWorkerRestart is set and the job was already retried " +
                  std::to_string(max_job_retries) + " times, so it fails");
    }
    const int attempt = job.attempt + 1;
    return JobStateMachine::StopForRepair(
        snapshot, now,
        what + "; scheduling.restartJobOnWorkerRestart is set, so the whole job restarts " +
            "(retry " + std::to_string(attempt) + " of " + std::to_string(max_job_retries) +
            ") from its last checkpoint" + back,
        JobRun{attempt, {}});
  }
  return JobStateMachine::StopForRepair(
      snapshot, now, what + "; every replica restarts in place from the last checkpoint" + back);
}

}  // namespace trainyard
