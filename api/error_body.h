#pragma once
// Typed errors become HTTP in one place: the Vertex error body with the canonical status.
#include <chrono>
#include <string>

#include "api/http_types.h"
#include "services/status.h"

namespace trainyard::api {

int HttpStatusFor(Code code);

// {"error":{"code":<http>,"message":…,"status":"NOT_FOUND","details":[…]}}; every detail has @type.
HttpResponse ErrorResponse(const Status& status, const std::string& request_id);
// The same body for an HTTP status that no google.rpc code maps to (411, 413): the body's code is
// the HTTP status, as in every other error body.
HttpResponse ErrorResponse(const Status& status, const std::string& request_id, int http_status);
// A request refused before it did anything (429 over a limit, 503 while starting): the error body
// with google.rpc.RetryInfo and Retry-After, which tell every client it may send it again,
// creates included.
HttpResponse RetryLaterResponse(Status status, std::chrono::microseconds wait,
                                const std::string& request_id);
// A refused token: the error body, with a Bearer challenge on a 401.
HttpResponse DeniedResponse(const Status& status, const std::string& request_id);

}  // namespace trainyard::api
