#pragma once
// A non-2xx reply becomes a Status, the one error currency of the SDK: the canonical code the body
// names (else the one the HTTP status implies), its message, its BadRequest field violations as
// violations(), and every other detail (ErrorInfo with the request id, …) as details().
#include <chrono>
#include <optional>
#include <string_view>

#include "services/status.h"

namespace trainyard::sdk {

// `body` is the Vertex error body {"error":{"code","message","status","details"}}; anything else
// (a proxy's HTML page, an empty body) still gives a Status from the HTTP status alone.
Status StatusFromHttpError(int http_status, std::string_view body);

// The google.rpc code a bare HTTP status stands for, as in google.rpc's HTTP mapping.
Code CodeForHttpStatus(int http_status);

// How long the server asked us to wait before trying again: a google.rpc.RetryInfo detail's
// retryDelay, else the Retry-After header's seconds (`retry_after`, empty when absent); nothing
// when it said neither.
std::optional<std::chrono::milliseconds> ServerRetryDelay(const Status& status,
                                                          std::string_view retry_after);

// "NOT_FOUND" -> Code::kNotFound; kUnknown for names google.rpc does not define.
Code ParseCodeName(std::string_view name);

}  // namespace trainyard::sdk
