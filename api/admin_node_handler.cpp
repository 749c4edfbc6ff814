#include "api/admin_node_handler.h"

#include "api/json_body.h"
#include "api/page_token.h"
#include "api/query_params.h"
#include "api/wire/admin_codec.h"

namespace trainyard::api {
namespace {

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;

}  // namespace

void AdminNodeHandler::Register(Router& router) {
  router.Add("GET", "/trainyard/v1/nodes", Access::kFleetAdmin,
             [this](const HttpRequest& request, const RouteMatch&) -> StatusOr<HttpResponse> {
               return List(request);
             });
}

StatusOr<HttpResponse> AdminNodeHandler::List(const HttpRequest& request) {
  NodeQuery query;
  query.pool = QueryOr(request, "pool", "pool");
  query.zone = QueryOr(request, "zone", "zone");
  std::string state = QueryOr(request, "state", "state");
  if (!state.empty()) {
    query.state = ParseNodeState(state);
    if (!query.state) {
      return InvalidField("state",
                          "must be PROVISIONING, READY, BUSY, PREEMPTED, FAILED, REPAIRING or "
                          "DELETED (got \"" +
                              state + "\")");
    }
  }
  auto page_size =
      ParsePageSize(QueryOr(request, "pageSize", "page_size"), kDefaultPageSize, kMaxPageSize);
  TY_RETURN_IF_ERROR(page_size.status());
  query.limit = *page_size;
  // A token only continues the listing it came from.
  const std::string filters = query.pool + "|" + query.zone + "|" + state;
  std::string token = QueryOr(request, "pageToken", "page_token");
  if (!token.empty()) {
    auto cursor = DecodeNodePageToken(token, filters);
    TY_RETURN_IF_ERROR(cursor.status());
    query.after = *cursor;
  }
  auto page = admin_.Nodes(query);
  TY_RETURN_IF_ERROR(page.status());
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeRecord& node : page->nodes) nodes.push_back(EncodeNodeRecord(node));
  nlohmann::json out = {{"nodes", std::move(nodes)}};
  if (page->next) out["nextPageToken"] = EncodeNodePageToken(*page->next, filters);
  return JsonResponse(out);
}

}  // namespace trainyard::api
