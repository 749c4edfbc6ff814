#include "api/error_body.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace trainyard::api {

int HttpStatusFor(Code code) {
  switch (code) {
    case Code::kOk:
      return 200;
    case Code::kCancelled:
      return 499;
    case Code::kInvalidArgument:
    case Code::kFailedPrecondition:
    case Code::kOutOfRange:
      return 400;
    case Code::kUnauthenticated:
      return 401;
    case Code::kPermissionDenied:
      return 403;
    case Code::kNotFound:
      return 404;
    case Code::kAlreadyExists:
    case Code::kAborted:
      return 409;
    case Code::kResourceExhausted:
      return 429;
    case Code::kUnimplemented:
      return 501;
    case Code::kUnavailable:
      return 503;
    case Code::kDeadlineExceeded:
      return 504;
    case Code::kUnknown:
    case Code::kInternal:
    case Code::kDataLoss:
      return 500;
  }
  return 500;
}

HttpResponse ErrorResponse(const Status& status, const std::string& request_id) {
  using nlohmann::json;
  json details = json::array();
  json info = {{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
               {"reason", CodeName(status.code())},
               {"domain", "aiplatform.googleapis.com"},
               {"metadata", json::object()}};
  if (!request_id.empty()) info["metadata"]["requestId"] = request_id;
  details.push_back(std::move(info));
  if (!status.violations().empty()) {
    json violations = json::array();
    for (const auto& v : status.violations()) {
      violations.push_back({{"field", v.field}, {"description", v.description}});
    }
    details.push_back({{"@type", "type.googleapis.com/google.rpc.BadRequest"},
                       {"fieldViolations", std::move(violations)}});
  }
  for (const std::string& detail : status.details()) {
    json any = json::parse(detail, nullptr, /*allow_exceptions=*/false);
    if (!any.is_discarded()) details.push_back(std::move(any));
  }
  HttpResponse out;
  out.status = HttpStatusFor(status.code());
  json body = {{"error",
                {{"code", out.status},
                 {"message", status.message()},
                 {"status", CodeName(status.code())},
                 {"details", std::move(details)}}}};
  out.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return out;
}

HttpResponse ErrorResponse(const Status& status, const std::string& request_id, int http_status) {
  HttpResponse out = ErrorResponse(status, request_id);
  nlohmann::json body = nlohmann::json::parse(out.body);
  body["error"]["code"] = http_status;
  out.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out.status = http_status;
  return out;
}

HttpResponse RetryLaterResponse(Status status, std::chrono::microseconds wait,
                                const std::string& request_id) {
  char delay[32];
  std::snprintf(delay, sizeof(delay), "%.3fs", static_cast<double>(wait.count()) / 1e6);
  status.WithDetail(nlohmann::json{
      {"@type", "type.googleapis.com/google.rpc.RetryInfo"},
      {"retryDelay",
       delay}}.dump());
  HttpResponse response = ErrorResponse(status, request_id);
  // Whole seconds (RFC 9110), rounded up so that a client waiting this long finds it done.
  const int64_t seconds = (wait.count() + 999'999) / 1'000'000;
  response.headers.emplace_back("Retry-After", std::to_string(seconds));
  return response;
}

HttpResponse DeniedResponse(const Status& status, const std::string& request_id) {
  HttpResponse denied = ErrorResponse(status, request_id);
  if (status.code() == Code::kUnauthenticated) {
    denied.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"trainyard\"");
  }
  return denied;
}

}  // namespace trainyard::api
