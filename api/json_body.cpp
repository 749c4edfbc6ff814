#include "api/json_body.h"

#include "api/wire/json_depth.h"

namespace trainyard::api {

StatusOr<nlohmann::json> ParseJsonBody(const HttpRequest& request, bool allow_empty) {
  const std::string& body = request.body;
  bool blank = body.find_first_not_of(" \t\r\n") == std::string::npos;
  if (blank) {
    if (allow_empty) return nlohmann::json::object();
    return InvalidArgument("Invalid JSON payload received. The request body is empty.");
  }
  if (!JsonDepthWithin(body, kMaxJsonDepth)) {
    return InvalidArgument("Invalid JSON payload received. Nesting deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels.");
  }
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return InvalidArgument("Invalid JSON payload received. The body is not valid JSON.");
  }
  // The Node SDK sends the JSON string "" as the body of operations :cancel.
  if (allow_empty && parsed.is_string() && parsed.get_ref<const std::string&>().empty()) {
    return nlohmann::json::object();
  }
  if (!parsed.is_object()) {
    return InvalidArgument("Invalid JSON payload received. Expected a JSON object.");
  }
  return parsed;
}

HttpResponse JsonResponse(const nlohmann::json& body) {
  HttpResponse out;
  out.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return out;
}

}  // namespace trainyard::api
