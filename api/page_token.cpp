#include "api/page_token.h"

#include <nlohmann/json.hpp>

#include "services/model/base64url.h"

namespace trainyard::api {
namespace {

// FNV-1a: a fingerprint, not a secret; it only has to tell filters apart.
uint64_t Fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

Status BadToken() {
  return InvalidField("pageToken",
                      "invalid page token; pass the nextPageToken of the previous page");
}

}  // namespace

std::string PageScope(const HttpRequest& request, const std::string& filter) {
  const std::string& path = request.path;
  const size_t after_version = path.find('/', 1);
  return (after_version == std::string::npos ? path : path.substr(after_version)) + "\n" + filter;
}

std::string EncodePageToken(const JobCursor& cursor, const std::string& filter) {
  nlohmann::json j = {
      {"t", ToUnixMicros(cursor.create_time)}, {"i", cursor.id}, {"f", Fingerprint(filter)}};
  return Base64UrlEncode(j.dump());
}

StatusOr<JobCursor> DecodePageToken(const std::string& token, const std::string& filter) {
  std::string raw;
  if (token.size() > 512 || !Base64UrlDecode(token, raw)) return BadToken();
  nlohmann::json j = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("t") || !j.contains("i") || !j.contains("f") ||
      !j["t"].is_number_integer() || !j["i"].is_number_integer() || !j["f"].is_number_unsigned()) {
    return BadToken();
  }
  if (j["f"].get<uint64_t>() != Fingerprint(filter)) {
    return InvalidField("pageToken", "the page token was issued for a different filter");
  }
  return JobCursor{FromUnixMicros(j["t"].get<int64_t>()), j["i"].get<int64_t>()};
}

std::string EncodeNodePageToken(const NodeCursor& cursor, const std::string& filter) {
  nlohmann::json j = {{"p", cursor.pool_id}, {"o", cursor.ordinal}, {"f", Fingerprint(filter)}};
  return Base64UrlEncode(j.dump());
}

StatusOr<NodeCursor> DecodeNodePageToken(const std::string& token, const std::string& filter) {
  std::string raw;
  if (token.size() > 1024 || !Base64UrlDecode(token, raw)) return BadToken();
  nlohmann::json j = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("p") || !j.contains("o") || !j.contains("f") ||
      !j["p"].is_string() || !j["o"].is_number_integer() || !j["f"].is_number_unsigned()) {
    return BadToken();
  }
  if (j["f"].get<uint64_t>() != Fingerprint(filter)) {
    return InvalidField("pageToken", "the page token was issued for different filters");
  }
  return NodeCursor{j["p"].get<std::string>(), j["o"].get<int64_t>()};
}

std::string EncodeLogPageToken(const InsertId& last, const std::string& filter) {
  nlohmann::json j = {{"a", FormatInsertId(last)}, {"f", Fingerprint(filter)}};
  return Base64UrlEncode(j.dump());
}

StatusOr<InsertId> DecodeLogPageToken(const std::string& token, const std::string& filter) {
  std::string raw;
  if (token.size() > 512 || !Base64UrlDecode(token, raw)) return BadToken();
  nlohmann::json j = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("a") || !j.contains("f") || !j["a"].is_string() ||
      !j["f"].is_number_unsigned()) {
    return BadToken();
  }
  if (j["f"].get<uint64_t>() != Fingerprint(filter)) {
    return InvalidField("pageToken", "the page token was issued for a different request");
  }
  std::optional<InsertId> last = ParseInsertId(j["a"].get<std::string>());
  if (!last) return BadToken();
  return *last;
}

}  // namespace trainyard::api
