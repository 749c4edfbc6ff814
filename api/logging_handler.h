#pragma once
// Cloud Logging v2 `POST /v2/entries:list`, the call `gcloud ai custom-jobs stream-logs` makes on
// its api_endpoint_overrides/logging host, served for custom job logs only. Outside /v1: the path
// is Logging's own.
#include "api/router.h"
#include "services/logs/job_log_service.h"

namespace trainyard::api {

class LoggingHandler {
 public:
  explicit LoggingHandler(JobLogService& logs) : logs_(logs) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> ListEntries(const HttpRequest& request);

  JobLogService& logs_;
};

}  // namespace trainyard::api
