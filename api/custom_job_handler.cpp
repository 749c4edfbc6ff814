#include "api/custom_job_handler.h"

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
  auto bind = [this](StatusOr<HttpResponse> (CustomJobHandler::*fn)(const HttpRequest&,
                                                                    const RouteMatch&)) {
    return [this, fn](const HttpRequest& r, const RouteMatch& m) { return (this->*fn)(r, m); };
  };
  router.Add("POST", parent, Access::kProjectEditor, bind(&CustomJobHandler::Create));
  router.Add("GET", parent, Access::kProjectViewer, bind(&CustomJobHandler::List));
  router.Add("GET", job, Access::kProjectViewer, bind(&CustomJobHandler::Get));
  router.Add("DELETE", job, Access::kProjectEditor, bind(&CustomJobHandler::Delete));
  router.Add("POST", job + ":cancel", Access::kProjectEditor, bind(&CustomJobHandler::Cancel));
}

StatusOr<HttpResponse> CustomJobHandler::Create(const HttpRequest& request,
                                                const RouteMatch& match) {
  auto body = ParseJsonBody(request, /*allow_empty=*/false);
  TY_RETURN_IF_ERROR(body.status());
  auto job =
      DecodeCustomJob(*body, OutputOnlyFields::kIgnore, UnknownFields::kReject, Version(match));
  TY_RETURN_IF_ERROR(job.status());
  auto created = jobs_.Create(Parent(match), std::move(job).value(), request.request_id);
  TY_RETURN_IF_ERROR(created.status());
  return JsonResponse(EncodeCustomJob(*created, Version(match)));
}

StatusOr<HttpResponse> CustomJobHandler::Get(const HttpRequest&, const RouteMatch& match) {
  auto view = jobs_.Read(Job(match));
  TY_RETURN_IF_ERROR(view.status());
  HttpResponse out;
  out.body =
      *rendered_.Render(view->job(), view->status ? &*view->status : nullptr, Version(match));
  return out;
}

StatusOr<HttpResponse> CustomJobHandler::List(const HttpRequest& request, const RouteMatch& match) {
  ListJobsRequest list;
  list.parent = Parent(match);
  auto page_size =
      ParsePageSize(QueryOr(request, "pageSize", "page_size"), kDefaultPageSize, kMaxPageSize);
  TY_RETURN_IF_ERROR(page_size.status());
  list.page_size = *page_size;

  std::string filter_text = QueryOr(request, "filter", "filter");
  auto filter = ParseJobFilter(filter_text);
  TY_RETURN_IF_ERROR(filter.status());
  list.filter = std::move(filter).value();

  std::string token = QueryOr(request, "pageToken", "page_token");
  if (!token.empty()) {
    auto cursor = DecodePageToken(token, PageScope(request, filter_text));
    TY_RETURN_IF_ERROR(cursor.status());
    list.after = *cursor;
  }
  auto mask = ParseFieldMask(QueryOr(request, "readMask", "read_mask"), CustomJobFields());
  TY_RETURN_IF_ERROR(mask.status());

  auto result = jobs_.List(list);
  TY_RETURN_IF_ERROR(result.status());
  if (mask->paths.empty()) {
    // The page's text from each job's (ended ones' kept rendered), as dump() would write it.
    HttpResponse page;
    std::string& body = page.body;
    body.reserve(result->jobs.size() * 2048 + 128);
    body += '{';
    if (!result->jobs.empty()) {
      body += "\"customJobs\":[";
      for (size_t i = 0; i < result->jobs.size(); ++i) {
        if (i > 0) body += ',';
        body += *rendered_.Render(result->jobs[i], Version(match));
      }
      body += ']';
    }
    if (result->next) {
      if (!result->jobs.empty()) body += ',';
      body += "\"nextPageToken\":";
      body +=
          nlohmann::json(EncodePageToken(*result->next, PageScope(request, filter_text))).dump();
    }
    body += '}';
    return page;
  }
  nlohmann::json out = nlohmann::json::object();
  if (!result->jobs.empty()) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const CustomJob& job : result->jobs) {
      jobs.push_back(ApplyFieldMask(EncodeCustomJob(job, Version(match)), *mask));
    }
    out["customJobs"] = std::move(jobs);
  }
  if (result->next)
    out["nextPageToken"] = EncodePageToken(*result->next, PageScope(request, filter_text));
  return JsonResponse(out);
}

StatusOr<HttpResponse> CustomJobHandler::Cancel(const HttpRequest& request,
                                                const RouteMatch& match) {
  // gcloud sends `{}` or nothing; either is fine, anything else is still checked for validity.
  auto body = ParseJsonBody(request, /*allow_empty=*/true);
  TY_RETURN_IF_ERROR(body.status());
  Status cancelled = jobs_.Cancel(Job(match));
  TY_RETURN_IF_ERROR(cancelled);
  return JsonResponse(nlohmann::json::object());
}

StatusOr<HttpResponse> CustomJobHandler::Delete(const HttpRequest&, const RouteMatch& match) {
  auto op = jobs_.Delete(Job(match));
  TY_RETURN_IF_ERROR(op.status());
  return JsonResponse(EncodeOperation(*op));
}

}  // namespace trainyard::api
