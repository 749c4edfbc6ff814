#include "api/operation_handler.h"

#include "api/json_body.h"
#include "api/page_token.h"
#include "api/query_params.h"
#include "api/wire/json_reader.h"
#include "api/wire/operation_codec.h"

namespace trainyard::api {
namespace {

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;

bool IsOperationParent(const std::string& collection) {
  return collection == "customJobs" || collection == "persistentResources";
}

// The operation a route names; NOT_FOUND for a collection that has no operations.
StatusOr<OperationRef> RefOf(const RouteMatch& match) {
  OperationRef ref;
  ref.parent = ParentRef{match.params.at("project"), match.params.at("location")};
  if (auto it = match.params.find("operation"); it != match.params.end()) {
    ref.operation_id = it->second;
  }
  if (auto it = match.params.find("collection"); it != match.params.end()) {
    if (!IsOperationParent(it->second)) {
      return NotFound("no operations under \"" + it->second + "\"");
    }
    ref.collection = it->second;
    ref.resource_id = match.params.at("resource");
  }
  return ref;
}

// :wait's timeout: ?timeout=30s or {"timeout":"30s"} (WaitOperationRequest); 60 s when absent.
StatusOr<std::chrono::milliseconds> WaitTimeout(const HttpRequest& request) {
  TY_ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, /*allow_empty=*/true));
  std::string text = QueryOr(request, "timeout", "timeout");
  if (text.empty() && body.contains("timeout") && body["timeout"].is_string()) {
    text = body["timeout"].get<std::string>();
  }
  if (text.empty()) return std::chrono::milliseconds(kMaxOperationWait);
  auto duration = ParseDuration(text);
  if (!duration.ok() || *duration < Duration::zero()) {
    return InvalidField(
        "timeout", "timeout is a duration such as \"30s\" (at most 60s; got \"" + text + "\")");
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(*duration);
}

}  // namespace

void OperationHandler::Register(Router& router) {
  auto bind = [this](StatusOr<HttpResponse> (OperationHandler::*fn)(const HttpRequest&,
                                                                    const RouteMatch&)) {
    return [this, fn](const HttpRequest& r, const RouteMatch& m) { return (this->*fn)(r, m); };
  };
  const std::string base = "/{version}/projects/{project}/locations/{location}";
  for (const std::string& parent : {base, base + "/{collection}/{resource}"}) {
    const std::string op = parent + "/operations/{operation}";
    router.Add("GET", parent + "/operations", Access::kProjectViewer,
               bind(&OperationHandler::List));
    router.Add("GET", op, Access::kProjectViewer, bind(&OperationHandler::Get));
    router.Add("DELETE", op, Access::kProjectAdmin, bind(&OperationHandler::Delete));
    router.Add("POST", op + ":cancel", Access::kProjectAdmin, bind(&OperationHandler::Cancel));
    router.Add("POST", op + ":wait", Access::kProjectViewer, bind(&OperationHandler::Wait));
  }
}

StatusOr<HttpResponse> OperationHandler::Get(const HttpRequest&, const RouteMatch& match) {
  TY_ASSIGN_OR_RETURN(OperationRef ref, RefOf(match));
  TY_ASSIGN_OR_RETURN(Operation op, operations_.Get(ref));
  return JsonResponse(EncodeOperation(op));
}

StatusOr<HttpResponse> OperationHandler::List(const HttpRequest& request, const RouteMatch& match) {
  TY_ASSIGN_OR_RETURN(OperationRef ref, RefOf(match));
  ListOperationsRequest list;
  list.parent = ref.parent;
  list.collection = ref.collection;
  list.resource_id = ref.resource_id;
  list.filter = QueryOr(request, "filter", "filter");
  TY_ASSIGN_OR_RETURN(list.page_size, ParsePageSize(QueryOr(request, "pageSize", "page_size"),
                                                    kDefaultPageSize, kMaxPageSize));
  std::string token = QueryOr(request, "pageToken", "page_token");
  if (!token.empty()) {
    TY_ASSIGN_OR_RETURN(list.after, DecodePageToken(token, PageScope(request, list.filter)));
  }
  TY_ASSIGN_OR_RETURN(ListOperationsResult result, operations_.List(list));
  nlohmann::json out = nlohmann::json::object();
  if (!result.operations.empty()) {
    nlohmann::json ops = nlohmann::json::array();
    for (const Operation& op : result.operations) ops.push_back(EncodeOperation(op));
    out["operations"] = std::move(ops);
  }
  if (result.next)
    out["nextPageToken"] = EncodePageToken(*result.next, PageScope(request, list.filter));
  return JsonResponse(out);
}

StatusOr<HttpResponse> OperationHandler::Cancel(const HttpRequest& request,
                                                const RouteMatch& match) {
  // The Node SDK's cancelOperation sends the JSON string "" as its body.
  if (request.body != "\"\"") {
    TY_RETURN_IF_ERROR(ParseJsonBody(request, /*allow_empty=*/true).status());
  }
  TY_ASSIGN_OR_RETURN(OperationRef ref, RefOf(match));
  TY_RETURN_IF_ERROR(operations_.Cancel(ref));
  return JsonResponse(nlohmann::json::object());
}

StatusOr<HttpResponse> OperationHandler::Delete(const HttpRequest&, const RouteMatch& match) {
  TY_ASSIGN_OR_RETURN(OperationRef ref, RefOf(match));
  TY_RETURN_IF_ERROR(operations_.Delete(ref));
  return JsonResponse(nlohmann::json::object());
}

StatusOr<HttpResponse> OperationHandler::Wait(const HttpRequest& request, const RouteMatch& match) {
  TY_ASSIGN_OR_RETURN(OperationRef ref, RefOf(match));
  TY_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, WaitTimeout(request));
  TY_ASSIGN_OR_RETURN(Operation op, operations_.Wait(ref, timeout));
  return JsonResponse(EncodeOperation(op));
}

}  // namespace trainyard::api
