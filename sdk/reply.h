#pragma once
// Helpers the client's calls share (sdk/client.cpp, sdk/resource_calls.cpp).
#include <cpprest/base_uri.h>

#include <string>

#include "services/status.h"

namespace trainyard::sdk {

// A reply that does not decode is the server's fault or a version skew, not the caller's input.
template <typename T>
StatusOr<T> Decoded(StatusOr<T> value, const std::string& what) {
  if (value.ok()) return value;
  return Internal("the server's " + what + " did not decode: " + value.status().message());
}

inline std::string Encode(const std::string& query_value) {
  return web::uri::encode_data_string(query_value);
}

}  // namespace trainyard::sdk
