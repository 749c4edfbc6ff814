#include "api/job_utilization_handler.h"

#include "api/json_body.h"
#include "api/wire/utilization_codec.h"

namespace trainyard::api {

void JobUtilizationHandler::Register(Router& router) {
  router.Add("GET",
             "/trainyard/v1/projects/{project}/locations/{location}/customJobs/{job}/utilization",
             Access::kProjectViewer,
             [this](const HttpRequest&, const RouteMatch& match) -> StatusOr<HttpResponse> {
               JobRef ref{ParentRef{match.params.at("project"), match.params.at("location")},
                          match.params.at("job")};
               TY_ASSIGN_OR_RETURN(JobUtilization u, utilization_.ForJob(ref));
               return JsonResponse(EncodeJobUtilization(u));
             });
}

}  // namespace trainyard::api
