#pragma once
// customJobs: create, get, list, cancel, delete; and the operations they return.
#include "api/rendered_job_cache.h"
#include "api/router.h"
#include "services/jobs/job_service.h"

namespace trainyard::api {

class CustomJobHandler {
 public:
  explicit CustomJobHandler(JobService& jobs) : jobs_(jobs) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> Create(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Get(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> List(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Cancel(const HttpRequest& request, const RouteMatch& match);
  StatusOr<HttpResponse> Delete(const HttpRequest& request, const RouteMatch& match);

  JobService& jobs_;
  RenderedJobCache rendered_;  // ended jobs' JSON, for pages and polls
};

}  // namespace trainyard::api
