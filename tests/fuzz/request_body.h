#pragma once
// What the server makes of a request body's bytes before any handler sees them (api/json_body).
#include <cstddef>
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "api/json_body.h"

namespace trainyard::fuzz {

inline std::optional<nlohmann::json> ParseRequestBody(const uint8_t* data, size_t size) {
  api::HttpRequest request;
  request.body.assign(reinterpret_cast<const char*>(data), size);
  auto body = api::ParseJsonBody(request, /*allow_empty=*/false);
  if (!body.ok()) return std::nullopt;
  return std::move(body).value();
}

}  // namespace trainyard::fuzz
