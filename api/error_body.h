#pragma once
// Typed errors become HTTP in one place: the Vertex error body with the canonical status.
#include <string>

#include "api/http_types.h"
#include "services/status.h"

namespace trainyard::api {

int HttpStatusFor(Code code);

// {"error":{"code":<http>,"message":…,"status":"NOT_FOUND","details":[…]}}; every detail has @type.
HttpResponse ErrorResponse(const Status& status, const std::string& request_id);

}  // namespace trainyard::api
