#include "api/custom_job_handler.h"

#include "api/error_body.h"
#include "api/field_mask.h"
#include "api/filter_parser.h"
#include "api/json_body.h"
#include "api/page_token.h"
#include "api/query_params.h"
#include "api/wire/custom_job_codec.h"
#include "api/wire/operation_codec.h"

namespace trainyard::api {
namespace {

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 100;  // as Vertex: larger values are coerced down

const std::vector<std::string>& CustomJobFields() {
  static const std::vector<std::string> fields = {
      "name",           "displayName",   "jobSpec",      "state",       "error",
      "createTime",     "startTime",     "endTime",      "updateTime",  "labels",
      "encryptionSpec", "webAccessUris", "satisfiesPzs", "satisfiesPzi"};
  return fields;
}

ParentRef Parent(const RouteMatch& m) {
  return ParentRef{m.params.at("project"), m.params.at("location")};
}

JobRef Job(const RouteMatch& m) { return JobRef{Parent(m), m.params.at("job")}; }

// The wire version a route speaks: /v1 knows only v1 fields, as real v1 does; /v1beta1 and our
// own console (/ui, which shows everything we store) speak the v1beta1 superset.
ApiVersion Version(const RouteMatch& m) {
  auto it = m.params.find("version");
  return it != m.params.end() && it->second == "v1" ? ApiVersion::kV1 : ApiVersion::kV1beta1;
}

}  // namespace

void CustomJobHandler::Register(Router& router) {
  const std::string parent = "/{version}/projects/{project}/locations/{location}/customJobs";
  const std::string job = parent + "/{job}";
  auto bind = [this](HttpResponse (CustomJobHandler::*fn)(const HttpRequest&, const RouteMatch&)) {
    return [this, fn](const HttpRequest& r, const RouteMatch& m) { return (this->*fn)(r, m); };
  };
  router.Add("POST", parent, bind(&CustomJobHandler::Create));
  router.Add("GET", parent, bind(&CustomJobHandler::List));
  router.Add("GET", job, bind(&CustomJobHandler::Get));
  router.Add("DELETE", job, bind(&CustomJobHandler::Delete));
  router.Add("POST", job + ":cancel", bind(&CustomJobHandler::Cancel));
}

HttpResponse CustomJobHandler::Create(const HttpRequest& request, const RouteMatch& match) {
  auto body = ParseJsonBody(request, /*allow_empty=*/false);
  if (!body.ok()) return ErrorResponse(body.status(), request.request_id);
  auto job =
      DecodeCustomJob(*body, OutputOnlyFields::kIgnore, UnknownFields::kReject, Version(match));
  if (!job.ok()) return ErrorResponse(job.status(), request.request_id);
  auto created = jobs_.Create(Parent(match), std::move(job).value(), request.request_id);
  if (!created.ok()) return ErrorResponse(created.status(), request.request_id);
  return JsonResponse(EncodeCustomJob(*created, Version(match)));
}

HttpResponse CustomJobHandler::Get(const HttpRequest& request, const RouteMatch& match) {
  auto job = jobs_.Get(Job(match));
  if (!job.ok()) return ErrorResponse(job.status(), request.request_id);
  return JsonResponse(EncodeCustomJob(*job, Version(match)));
}

HttpResponse CustomJobHandler::List(const HttpRequest& request, const RouteMatch& match) {
  auto fail = [&](const Status& s) { return ErrorResponse(s, request.request_id); };
  ListJobsRequest list;
  list.parent = Parent(match);
  auto page_size =
      ParsePageSize(QueryOr(request, "pageSize", "page_size"), kDefaultPageSize, kMaxPageSize);
  if (!page_size.ok()) return fail(page_size.status());
  list.page_size = *page_size;

  std::string filter_text = QueryOr(request, "filter", "filter");
  auto filter = ParseJobFilter(filter_text);
  if (!filter.ok()) return fail(filter.status());
  list.filter = std::move(filter).value();

  std::string token = QueryOr(request, "pageToken", "page_token");
  if (!token.empty()) {
    auto cursor = DecodePageToken(token, filter_text);
    if (!cursor.ok()) return fail(cursor.status());
    list.after = *cursor;
  }
  auto mask = ParseFieldMask(QueryOr(request, "readMask", "read_mask"), CustomJobFields());
  if (!mask.ok()) return fail(mask.status());

  auto result = jobs_.List(list);
  if (!result.ok()) return fail(result.status());
  nlohmann::json out = nlohmann::json::object();
  if (!result->jobs.empty()) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const CustomJob& job : result->jobs) {
      jobs.push_back(ApplyFieldMask(EncodeCustomJob(job, Version(match)), *mask));
    }
    out["customJobs"] = std::move(jobs);
  }
  if (result->next) out["nextPageToken"] = EncodePageToken(*result->next, filter_text);
  return JsonResponse(out);
}

HttpResponse CustomJobHandler::Cancel(const HttpRequest& request, const RouteMatch& match) {
  // gcloud sends `{}` or nothing; either is fine, anything else is still checked for validity.
  auto body = ParseJsonBody(request, /*allow_empty=*/true);
  if (!body.ok()) return ErrorResponse(body.status(), request.request_id);
  Status cancelled = jobs_.Cancel(Job(match));
  if (!cancelled.ok()) return ErrorResponse(cancelled, request.request_id);
  return JsonResponse(nlohmann::json::object());
}

HttpResponse CustomJobHandler::Delete(const HttpRequest& request, const RouteMatch& match) {
  auto op = jobs_.Delete(Job(match));
  if (!op.ok()) return ErrorResponse(op.status(), request.request_id);
  return JsonResponse(EncodeOperation(*op));
}

}  // namespace trainyard::api
