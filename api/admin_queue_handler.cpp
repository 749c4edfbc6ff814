#include "api/admin_queue_handler.h"

#include "api/json_body.h"
#include "api/query_params.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {
namespace {

constexpr int kDefaultJobsPerQueue = 100;
constexpr int kMaxJobsPerQueue = 1000;

}  // namespace

void AdminQueueHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/queues", Access::kFleetAdmin,
             [this](const HttpRequest& request, const RouteMatch&) -> StatusOr<HttpResponse> {
               std::string text = QueryOr(request, "jobsPerQueue", "jobs_per_queue");
               auto per_queue = ParsePageSize(text, kDefaultJobsPerQueue, kMaxJobsPerQueue);
               if (!per_queue.ok()) {
                 return InvalidField("jobsPerQueue",
                                     "must be a non-negative integer, got \"" + text + "\"");
               }
               auto queues = admin_.Queues(*per_queue);
               TY_RETURN_IF_ERROR(queues.status());
               return JsonResponse(EncodeQueues(*queues));
             });
  // The console's counts by state over a project's jobs: each stops at the cap ("at least").
  router.Add("GET", "/trainyard/v1/projects/{project}/locations/{location}/jobCounts",
             Access::kProjectViewer,
             [this](const HttpRequest&, const RouteMatch& match) -> StatusOr<HttpResponse> {
               auto counts =
                   admin_.JobStateCounts(match.params.at("project"), match.params.at("location"));
               TY_RETURN_IF_ERROR(counts.status());
               return JsonResponse(EncodeStateCounts(*counts, AdminService::kStateCountCap));
             });
}

}  // namespace trainyard::api
