#pragma once
// GET /openapi.json: the OpenAPI 3 description of every route the server answers (api/openapi.json,
// compiled in by api/embed_openapi.cmake; docs/api.md). Public like the health checks: it describes
// the API and holds no data.
#include <string_view>

#include "api/router.h"

namespace trainyard::api {

// The document's text as the binary carries it (generated from api/openapi.json).
std::string_view OpenApiDocument();

// The route's handler: the document, as JSON.
StatusOr<HttpResponse> ServeOpenApi(const HttpRequest& request, const RouteMatch& match);

}  // namespace trainyard::api
