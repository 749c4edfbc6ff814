#pragma once
// Accelerator utilization of running jobs, host by host (services/telemetry/accelerator_model.h):
// per job for the API, and for every running job at once for /metrics. A job's hosts are the
// nodes it holds in pool and ordinal order, a multi-host TPU slice expanded into its hosts; a
// host whose duty cycle or tensor-core use is off the job's median by more than 0.15 is an
// outlier (with three hosts or more: two cannot say which one is off).
#include <optional>
#include <string>
#include <vector>

#include "services/admin/admin_repository.h"
#include "services/clock.h"
#include "services/fleet/fleet.h"
#include "services/jobs/job_repository.h"
#include "services/model/custom_job.h"
#include "services/status.h"
#include "services/telemetry/accelerator_model.h"

namespace trainyard {

struct HostUtilization {
  std::string host;  // the node's name; "…/host-K" for host K of a multi-host slice
  std::string zone;
  std::string machine_type;
  HostShape shape;
  HostSample sample;
  bool outlier = false;
};

struct JobUtilization {
  std::string name;  // projects/{number}/locations/{l}/customJobs/{id}
  JobState state = JobState::kUnspecified;
  Timestamp time{};
  std::vector<HostUtilization> hosts;  // empty unless RUNNING
  double median_duty_cycle = 0;
  double median_tensor_core_utilization = 0;
};

inline constexpr double kOutlierDistance = 0.15;

class UtilizationService {
 public:
  UtilizationService(ProjectRepository& projects, JobRepository& jobs, AdminRepository& admin,
                     const Fleet& fleet, const Clock& clock)
      : projects_(projects), jobs_(jobs), admin_(admin), fleet_(fleet), clock_(clock) {}

  // NOT_FOUND as a job get says it.
  StatusOr<JobUtilization> ForJob(const JobRef& ref);
  // Every RUNNING job that holds nodes.
  StatusOr<std::vector<JobUtilization>> Running();

 private:
  JobUtilization Build(const JobRecord& record, const std::vector<const NodeRecord*>& nodes,
                       Timestamp now) const;

  ProjectRepository& projects_;
  JobRepository& jobs_;
  AdminRepository& admin_;
  const Fleet& fleet_;
  const Clock& clock_;
};

}  // namespace trainyard
