#pragma once
// The web console (api/console/) at /console/, on the API's own origin so it needs no CORS: public,
// as the page holds no data (its API calls carry the caller's token); revalidated by ETag, sent
// gzipped when the browser asks, and under a Content-Security-Policy that lets it load nothing
// from elsewhere.
#include <optional>

#include "api/http_types.h"

namespace trainyard::api {

// The answer for a GET of /console or below it; nullopt for any other request.
std::optional<HttpResponse> ServeConsole(const HttpRequest& request);

}  // namespace trainyard::api
