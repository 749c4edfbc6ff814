#include "api/job_log_handler.h"

#include "api/json_body.h"
#include "api/page_token.h"
#include "api/query_params.h"
#include "api/wire/log_entry_codec.h"

namespace trainyard::api {
namespace {

constexpr int kDefaultPageSize = 100;

}  // namespace

void JobLogHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/projects/{project}/locations/{location}/customJobs/{job}/logs",
             Access::kProjectViewer,
             [this](const HttpRequest& request, const RouteMatch& match) -> StatusOr<HttpResponse> {
               return List(request, match);
             });
}

StatusOr<HttpResponse> JobLogHandler::List(const HttpRequest& request, const RouteMatch& match) {
  JobLogsRequest list;
  list.job = JobRef{ParentRef{match.params.at("project"), match.params.at("location")},
                    match.params.at("job")};
  std::string task = QueryOr(request, "task", "task_name");
  if (!task.empty()) list.task_name = task;
  std::string after = QueryOr(request, "after", "after");
  if (!after.empty()) {
    list.after = ParseInsertId(after);
    if (!list.after) {
      return InvalidField("after", "\"" + after + "\" is not an insertId of this job's log");
    }
  }
  auto size =
      ParsePageSize(QueryOr(request, "pageSize", "page_size"), kDefaultPageSize, kMaxLogPageSize);
  TY_RETURN_IF_ERROR(size.status());
  list.page_size = *size;
  const std::string fingerprint = task + "\n" + after;
  std::string token = QueryOr(request, "pageToken", "page_token");
  if (!token.empty()) {
    auto page_after = DecodeLogPageToken(token, fingerprint);
    TY_RETURN_IF_ERROR(page_after.status());
    list.page_after = *page_after;
  }
  auto page = logs_.ListJobLogs(list);
  TY_RETURN_IF_ERROR(page.status());
  nlohmann::json body =
      EncodeLogEntries(page->page.entries, page->project,
                       page->page.next ? EncodeLogPageToken(*page->page.next, fingerprint) : "");
  // Our own resource: an empty log is an empty list, not {}.
  if (!body.contains("entries")) body["entries"] = nlohmann::json::array();
  return JsonResponse(body);
}

}  // namespace trainyard::api
