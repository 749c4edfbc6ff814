#pragma once
#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "services/status.h"

namespace trainyard::api {

inline constexpr int kMaxJsonDepth = 64;

// Parses a request body as a JSON object. Depth is checked on the bytes first, so a hostile body
// never reaches the parser. An empty body is `{}` when allow_empty (custom verbs, ":cancel").
StatusOr<nlohmann::json> ParseJsonBody(const HttpRequest& request, bool allow_empty);

HttpResponse JsonResponse(const nlohmann::json& body);

}  // namespace trainyard::api
