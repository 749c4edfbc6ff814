#include "sdk/http_error.h"

#include <nlohmann/json.hpp>
#include <string>

#include "services/model/duration_text.h"

namespace trainyard::sdk {
namespace {

constexpr std::string_view kBadRequestType = "type.googleapis.com/google.rpc.BadRequest";

void AddViolations(const nlohmann::json& detail, Status& status) {
  auto violations = detail.find("fieldViolations");
  if (violations == detail.end() || !violations->is_array()) return;
  for (const auto& v : *violations) {
    if (!v.is_object()) continue;
    status.WithViolation(v.value("field", ""), v.value("description", ""));
  }
}

}  // namespace

Code CodeForHttpStatus(int http_status) {
  switch (http_status) {
    case 400:
      return Code::kInvalidArgument;
    case 401:
      return Code::kUnauthenticated;
    case 403:
      return Code::kPermissionDenied;
    case 404:
      return Code::kNotFound;
    case 409:
      return Code::kAborted;
    case 416:
      return Code::kOutOfRange;
    case 429:
      return Code::kResourceExhausted;
    case 499:
      return Code::kCancelled;
    case 501:
      return Code::kUnimplemented;
    case 503:
      return Code::kUnavailable;
    case 504:
      return Code::kDeadlineExceeded;
    default:
      break;
  }
  if (http_status >= 200 && http_status < 300) return Code::kOk;
  if (http_status >= 400 && http_status < 500) return Code::kFailedPrecondition;
  if (http_status >= 500) return Code::kInternal;
  return Code::kUnknown;
}

Code ParseCodeName(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Code::kUnauthenticated); ++i) {
    if (name == CodeName(static_cast<Code>(i))) return static_cast<Code>(i);
  }
  return Code::kUnknown;
}

Status StatusFromHttpError(int http_status, std::string_view body) {
  Code code = CodeForHttpStatus(http_status);
  if (code == Code::kOk) code = Code::kUnknown;  // a 2xx is not an error; say so rather than lie
  std::string fallback = "HTTP " + std::to_string(http_status);
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || !parsed.contains("error") || !parsed["error"].is_object()) {
    return Status(code,
                  body.empty() ? fallback : fallback + ": " + std::string(body.substr(0, 200)));
  }
  const nlohmann::json& error = parsed["error"];
  if (auto name = error.find("status"); name != error.end() && name->is_string()) {
    Code named = ParseCodeName(name->get<std::string>());
    if (named != Code::kOk) code = named;
  }
  std::string message = fallback;
  if (auto m = error.find("message"); m != error.end() && m->is_string()) message = *m;
  Status status(code, std::move(message));
  if (auto details = error.find("details"); details != error.end() && details->is_array()) {
    for (const auto& detail : *details) {
      if (!detail.is_object()) continue;
      if (detail.value("@type", "") == kBadRequestType) {
        AddViolations(detail, status);
      } else {
        status.WithDetail(detail.dump());
      }
    }
  }
  return status;
}

std::optional<std::chrono::milliseconds> ServerRetryDelay(const Status& status,
                                                          std::string_view retry_after) {
  using std::chrono::milliseconds;
  for (const std::string& detail : status.details()) {
    nlohmann::json any = nlohmann::json::parse(detail, nullptr, /*allow_exceptions=*/false);
    if (any.is_object() && any.value("@type", "") == "type.googleapis.com/google.rpc.RetryInfo" &&
        any.contains("retryDelay") && any["retryDelay"].is_string()) {
      if (auto d = ParseDurationText(any["retryDelay"].get<std::string>())) {
        return std::chrono::ceil<milliseconds>(*d);
      }
    }
  }
  int64_t seconds = 0;
  if (retry_after.empty() || retry_after.size() > 6) return std::nullopt;
  for (char c : retry_after) {
    if (c < '0' || c > '9') return std::nullopt;  // an HTTP-date: not worth a clock here
    seconds = seconds * 10 + (c - '0');
  }
  return milliseconds(seconds * 1000);
}

}  // namespace trainyard::sdk
