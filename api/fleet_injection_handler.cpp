#include "api/fleet_injection_handler.h"

#include <charconv>

#include "api/json_body.h"
#include "api/wire/json_reader.h"

namespace trainyard::api {
namespace {

using json = nlohmann::json;

StatusOr<FaultInjection> DecodeInjection(FaultKind kind, const json& body) {
  FaultInjection out;
  out.kind = kind;
  ObjectReader r(body, FieldPath("injection"));
  r.GetString("node", &out.node);
  if (kind == FaultKind::kSpotPreemption) {
    r.GetString("pool", &out.pool_id);
    r.GetString("zone", &out.zone);
    int64_t count = 0;
    if (r.GetInt64("count", &count)) out.count = count;
    auto fraction = body.find("fraction");
    if (fraction != body.end() && !fraction->is_null()) {
      r.Skip("fraction");
      if (!fraction->is_number()) {
        r.Fail(InvalidField("fraction", "must be a number in (0, 1]"));
      } else {
        out.fraction = fraction->get<double>();
      }
    }
  }
  TY_RETURN_IF_ERROR(r.Finish());
  return out;
}

json EncodeInjection(const FaultInjection& f) {
  json out = {{"name", "fleet/injections/" + std::to_string(f.id)},
              {"kind", FaultKindName(f.kind)},
              {"requestTime", FormatTimestamp(f.request_time)},
              {"state", f.apply_time ? "APPLIED" : "PENDING"}};
  if (!f.node.empty()) out["node"] = f.node;
  if (!f.pool_id.empty()) out["pool"] = f.pool_id;
  if (!f.zone.empty()) out["zone"] = f.zone;
  if (f.count) out["count"] = *f.count;
  if (f.fraction) out["fraction"] = *f.fraction;
  if (f.apply_time) out["applyTime"] = FormatTimestamp(*f.apply_time);
  if (!f.outcome.empty()) out["outcome"] = f.outcome;
  return out;
}

}  // namespace

void FleetInjectionHandler::Register(Router& router) {
  router.Add("POST", "/trainyard/v1/fleet:injectNodeFailure", Access::kFleetAdmin,
             [this](const HttpRequest& r, const RouteMatch&) -> StatusOr<HttpResponse> {
               return Inject(FaultKind::kNodeFailure, r);
             });
  router.Add("POST", "/trainyard/v1/fleet:injectSpotPreemption", Access::kFleetAdmin,
             [this](const HttpRequest& r, const RouteMatch&) -> StatusOr<HttpResponse> {
               return Inject(FaultKind::kSpotPreemption, r);
             });
  router.Add("GET", "/trainyard/v1/fleet/injections/{injection}", Access::kFleetAdmin,
             [this](const HttpRequest& r, const RouteMatch& m) -> StatusOr<HttpResponse> {
               return Get(r, m);
             });
}

StatusOr<HttpResponse> FleetInjectionHandler::Inject(FaultKind kind, const HttpRequest& request) {
  auto body = ParseJsonBody(request, /*allow_empty=*/false);
  TY_RETURN_IF_ERROR(body.status());
  auto decoded = DecodeInjection(kind, *body);
  TY_RETURN_IF_ERROR(decoded.status());
  auto stored = injector_.Inject(std::move(decoded).value());
  TY_RETURN_IF_ERROR(stored.status());
  return JsonResponse(EncodeInjection(*stored));
}

StatusOr<HttpResponse> FleetInjectionHandler::Get(const HttpRequest&, const RouteMatch& match) {
  const std::string& text = match.params.at("injection");
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    return NotFound("fault injection " + text + " not found");
  }
  auto found = injector_.Get(id);
  TY_RETURN_IF_ERROR(found.status());
  return JsonResponse(EncodeInjection(*found));
}

}  // namespace trainyard::api
