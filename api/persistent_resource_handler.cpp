#include "api/persistent_resource_handler.h"

#include "api/field_mask.h"
#include "api/json_body.h"
#include "api/page_token.h"
#include "api/query_params.h"
#include "api/wire/operation_codec.h"
#include "api/wire/persistent_resource_codec.h"

namespace trainyard::api {
namespace {

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 100;

ParentRef Parent(const RouteMatch& m) {
  return ParentRef{m.params.at("project"), m.params.at("location")};
}

ResourceRef Resource(const RouteMatch& m) {
  return ResourceRef{Parent(m), m.params.at("resource")};
}

ApiVersion Version(const RouteMatch& m) {
  auto it = m.params.find("version");
  return it != m.params.end() && it->second == "v1" ? ApiVersion::kV1 : ApiVersion::kV1beta1;
}

// A PersistentResource's fields: an updateMask path must start with one of them.
const std::vector<std::string>& ResourceFields() {
  static const std::vector<std::string> fields = {"name",
                                                  "displayName",
                                                  "resourcePools",
                                                  "state",
                                                  "error",
                                                  "createTime",
                                                  "startTime",
                                                  "updateTime",
                                                  "labels",
                                                  "network",
                                                  "reservedIpRanges",
                                                  "encryptionSpec",
                                                  "resourceRuntimeSpec",
                                                  "resourceRuntime",
                                                  "satisfiesPzs",
                                                  "satisfiesPzi"};
  return fields;
}

}  // namespace

void PersistentResourceHandler::Register(Router& router) {
  const std::string parent =
      "/{version}/projects/{project}/locations/{location}/persistentResources";
  const std::string resource = parent + "/{resource}";
  auto bind = [this](StatusOr<HttpResponse> (PersistentResourceHandler::*fn)(const HttpRequest&,
                                                                             const RouteMatch&)) {
    return [this, fn](const HttpRequest& r, const RouteMatch& m) { return (this->*fn)(r, m); };
  };
  router.Add("POST", parent, Access::kProjectAdmin, bind(&PersistentResourceHandler::Create));
  router.Add("GET", parent, Access::kProjectViewer, bind(&PersistentResourceHandler::List));
  router.Add("GET", resource, Access::kProjectViewer, bind(&PersistentResourceHandler::Get));
  router.Add("PATCH", resource, Access::kProjectAdmin, bind(&PersistentResourceHandler::Patch));
  router.Add("DELETE", resource, Access::kProjectAdmin, bind(&PersistentResourceHandler::Delete));
  router.Add("POST", resource + ":reboot", Access::kProjectAdmin,
             bind(&PersistentResourceHandler::Reboot));
}

StatusOr<HttpResponse> PersistentResourceHandler::Create(const HttpRequest& request,
                                                         const RouteMatch& match) {
  TY_ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, /*allow_empty=*/false));
  TY_ASSIGN_OR_RETURN(PersistentResource resource,
                      DecodePersistentResource(body, OutputOnlyFields::kIgnore,
                                               UnknownFields::kReject, Version(match)));
  TY_ASSIGN_OR_RETURN(Operation op, resources_.Create(Parent(match),
                                                      QueryOr(request, "persistentResourceId",
                                                              "persistent_resource_id"),
                                                      std::move(resource)));
  return JsonResponse(EncodeOperation(op));
}

StatusOr<HttpResponse> PersistentResourceHandler::Get(const HttpRequest&, const RouteMatch& match) {
  TY_ASSIGN_OR_RETURN(PersistentResource resource, resources_.Get(Resource(match)));
  return JsonResponse(EncodePersistentResource(resource, Version(match)));
}

StatusOr<HttpResponse> PersistentResourceHandler::List(const HttpRequest& request,
                                                       const RouteMatch& match) {
  ListResourcesRequest list;
  list.parent = Parent(match);
  TY_ASSIGN_OR_RETURN(list.page_size, ParsePageSize(QueryOr(request, "pageSize", "page_size"),
                                                    kDefaultPageSize, kMaxPageSize));
  std::string token = QueryOr(request, "pageToken", "page_token");
  if (!token.empty()) {
    TY_ASSIGN_OR_RETURN(list.after, DecodePageToken(token, PageScope(request, "")));
  }
  TY_ASSIGN_OR_RETURN(ListResourcesResult result, resources_.List(list));
  nlohmann::json out = nlohmann::json::object();
  if (!result.resources.empty()) {
    nlohmann::json items = nlohmann::json::array();
    for (const PersistentResource& r : result.resources) {
      items.push_back(EncodePersistentResource(r, Version(match)));
    }
    out["persistentResources"] = std::move(items);
  }
  if (result.next) out["nextPageToken"] = EncodePageToken(*result.next, PageScope(request, ""));
  return JsonResponse(out);
}

StatusOr<HttpResponse> PersistentResourceHandler::Patch(const HttpRequest& request,
                                                        const RouteMatch& match) {
  TY_ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, /*allow_empty=*/false));
  TY_ASSIGN_OR_RETURN(PersistentResource update,
                      DecodePersistentResource(body, OutputOnlyFields::kIgnore,
                                               UnknownFields::kReject, Version(match)));
  TY_ASSIGN_OR_RETURN(FieldMask mask, ParseFieldMask(QueryOr(request, "updateMask", "update_mask"),
                                                     ResourceFields(), "updateMask"));
  TY_ASSIGN_OR_RETURN(Operation op, resources_.Patch(Resource(match), update, MaskPaths(mask)));
  return JsonResponse(EncodeOperation(op));
}

StatusOr<HttpResponse> PersistentResourceHandler::Reboot(const HttpRequest& request,
                                                         const RouteMatch& match) {
  TY_RETURN_IF_ERROR(ParseJsonBody(request, /*allow_empty=*/true).status());
  TY_ASSIGN_OR_RETURN(Operation op, resources_.Reboot(Resource(match)));
  return JsonResponse(EncodeOperation(op));
}

StatusOr<HttpResponse> PersistentResourceHandler::Delete(const HttpRequest&,
                                                         const RouteMatch& match) {
  TY_ASSIGN_OR_RETURN(Operation op, resources_.Delete(Resource(match)));
  return JsonResponse(EncodeOperation(op));
}

}  // namespace trainyard::api
