#pragma once
// Query parameters the list-style endpoints share: camelCase or snake_case names, and pageSize.
#include <string>

#include "api/http_types.h"
#include "services/status.h"

namespace trainyard::api {

// The value of `camel` or else `snake`; "" when neither is present.
std::string QueryOr(const HttpRequest& request, const char* camel, const char* snake);

// "" or "0" → default_size; larger than max_size → max_size (as Vertex coerces); anything but a
// non-negative integer → INVALID_ARGUMENT naming pageSize.
StatusOr<int> ParsePageSize(const std::string& text, int default_size, int max_size);

}  // namespace trainyard::api
