#pragma once
// Typed errors become HTTP in one place: the Vertex error body with the canonical status.
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
// A refused token: the error body, with a Bearer challenge on a 401.
HttpResponse DeniedResponse(const Status& status, const std::string& request_id);

}  // namespace trainyard::api
