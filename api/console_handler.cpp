#include "api/console_handler.h"

#include <algorithm>
#include <string_view>

#include "api/console_assets.h"
#include "api/error_body.h"

namespace trainyard::api {
namespace {

constexpr std::string_view kPrefix = "/console/";
// The console's own files and its API calls, nothing else: no inline script, no other origin.
constexpr const char* kPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const ConsoleAsset* Find(std::string_view name) {
  for (const ConsoleAsset& asset : ConsoleAssets()) {
    if (asset.name == name) return &asset;
  }
  return nullptr;
}

bool AcceptsGzip(const HttpRequest& request) {
  const std::string* accept = request.Header("accept-encoding");
  return accept != nullptr && accept->find("gzip") != std::string::npos;
}

}  // namespace

std::optional<HttpResponse> ServeConsole(const HttpRequest& request) {
  if (request.method != "GET") return std::nullopt;
  HttpResponse response;
  if (request.path == "/console") {
    response.status = 301;
    response.content_type = "text/plain; charset=utf-8";
    response.headers.emplace_back("Location", std::string(kPrefix));
    return response;
  }
  if (!request.path.starts_with(kPrefix)) return std::nullopt;
  std::string_view name = std::string_view(request.path).substr(kPrefix.size());
  if (name.empty()) name = "index.html";
  const ConsoleAsset* asset = Find(name);
  if (asset == nullptr) {
    return ErrorResponse(NotFound("the console has no file " + std::string(name)),
                         request.request_id);
  }
  response.headers.emplace_back("ETag", std::string(asset->etag));
  response.headers.emplace_back("Cache-Control", "no-cache");  // revalidate: the ETag answers
  response.headers.emplace_back("Vary", "Accept-Encoding");
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Referrer-Policy", "no-referrer");
  response.headers.emplace_back("Content-Security-Policy", kPolicy);
  if (const std::string* seen = request.Header("if-none-match");
      seen != nullptr && *seen == asset->etag) {
    response.status = 304;
    return response;
  }
  response.content_type = std::string(asset->content_type);
  if (AcceptsGzip(request)) {
    response.headers.emplace_back("Content-Encoding", "gzip");
    response.body = std::string(asset->gzip);
  } else {
    response.body = std::string(asset->raw);
  }
  return response;
}

}  // namespace trainyard::api
