#include "services/admin/admin_metrics.h"

namespace trainyard {

Status WriteQueueDepth(AdminService& admin, metrics::Exposition& e) {
  TY_ASSIGN_OR_RETURN(std::vector<QueueView> queues, admin.Queues(0));
  e.Family("trainyard_jobs", "gauge",
           "Unfinished custom jobs by project, location and state (QUEUED waits for capacity, "
           "PENDING boots and pulls, RUNNING runs, CANCELLING stops).");
  for (const QueueView& q : queues) {
    const std::pair<const char*, int64_t> states[] = {{"JOB_STATE_QUEUED", q.queued},
                                                      {"JOB_STATE_PENDING", q.pending},
                                                      {"JOB_STATE_RUNNING", q.running},
                                                      {"JOB_STATE_CANCELLING", q.cancelling}};
    for (const auto& [state, count] : states) {
      e.Sample("trainyard_jobs",
               {{"project", q.project_id}, {"location", q.location}, {"state", state}},
               static_cast<double>(count));
    }
  }
  return Status::Ok();
}

}  // namespace trainyard
