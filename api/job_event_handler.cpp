#include "api/job_event_handler.h"

#include "api/error_body.h"
#include "api/json_body.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {

void JobEventHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/projects/{project}/locations/{location}/customJobs/{job}/events",
             [this](const HttpRequest& request, const RouteMatch& match) {
               JobRef ref{ParentRef{match.params.at("project"), match.params.at("location")},
                          match.params.at("job")};
               auto events = admin_.JobEvents(ref);
               if (!events.ok()) return ErrorResponse(events.status(), request.request_id);
               return JsonResponse(EncodeJobEvents(*events));
             });
}

}  // namespace trainyard::api
