#pragma once
// A request target as the listener receives it ("/v1/x?a=b", or absolute "http://host/v1/x?a=b"),
// decoded into our request's path and query. Pure, so it is tested apart from any socket.
#include <optional>
#include <string>
#include <string_view>

#include "api/http_types.h"

namespace trainyard::api {

// %XX escapes decoded (and '+' as a space in a query: HTML forms, curl --data-urlencode; a literal
// plus comes as %2B). None for an escape that is not two hex digits.
std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space);

// Fills request.path (decoded, dot segments left to the router) and request.query (decoded, the
// last value of a repeated name wins). False for a malformed escape.
bool ParseRequestTarget(std::string_view target, HttpRequest& request);

}  // namespace trainyard::api
