#include "api/job_event_handler.h"

#include "api/json_body.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {

void JobEventHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/projects/{project}/locations/{location}/customJobs/{job}/events",
             Access::kProjectViewer,
             [this](const HttpRequest&, const RouteMatch& match) -> StatusOr<HttpResponse> {
               JobRef ref{ParentRef{match.params.at("project"), match.params.at("location")},
                          match.params.at("job")};
               auto events = admin_.JobEvents(ref);
               TY_RETURN_IF_ERROR(events.status());
               return JsonResponse(EncodeJobEvents(*events));
             });
}

}  // namespace trainyard::api
