#pragma once
// The web console's files as the binary carries them (api/embed_console.cmake): each with its
// content type, an ETag (a prefix of its SHA-256) and its gzip form.
#include <span>
#include <string_view>

namespace trainyard::api {

struct ConsoleAsset {
  std::string_view name;  // "index.html", "app.js"
  std::string_view content_type;
  std::string_view etag;  // quoted, as the header carries it
  std::string_view raw;
  std::string_view gzip;
};

std::span<const ConsoleAsset> ConsoleAssets();

}  // namespace trainyard::api
