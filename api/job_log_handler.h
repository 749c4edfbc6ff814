#pragma once
// GET /trainyard/v1/projects/{p}/locations/{l}/customJobs/{id}/logs?task=&pageSize=&pageToken=
// &after=<insertId>: a job's log for curl and the SDK, oldest first; NOT_FOUND for an unknown job.
#include "api/router.h"
#include "services/logs/job_log_service.h"

namespace trainyard::api {

class JobLogHandler {
 public:
  explicit JobLogHandler(JobLogService& logs) : logs_(logs) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> List(const HttpRequest& request, const RouteMatch& match);

  JobLogService& logs_;
};

}  // namespace trainyard::api
