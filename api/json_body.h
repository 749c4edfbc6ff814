#pragma once
#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "api/wire/json_depth.h"
#include "services/status.h"

namespace trainyard::api {

using ::trainyard::kMaxJsonDepth;

// Parses a request body as a JSON object. Depth is checked on the bytes first, so a hostile body
// never reaches the parser. An empty body is `{}` when allow_empty (custom verbs, ":cancel").
StatusOr<nlohmann::json> ParseJsonBody(const HttpRequest& request, bool allow_empty);

HttpResponse JsonResponse(const nlohmann::json& body);

}  // namespace trainyard::api
