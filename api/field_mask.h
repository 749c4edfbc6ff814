#pragma once
// readMask on list: keep only the named fields of each resource. Paths may be camelCase or
// snake_case ("job_spec.worker_pool_specs"), as the Node SDK sends whatever the caller wrote.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "services/status.h"

namespace trainyard::api {

struct FieldMask {
  std::vector<std::vector<std::string>> paths;  // camelCase segments
};

// `known_top_level` lists the resource's fields; an unknown first segment is an INVALID_ARGUMENT.
StatusOr<FieldMask> ParseFieldMask(const std::string& text,
                                   const std::vector<std::string>& known_top_level);
nlohmann::json ApplyFieldMask(const nlohmann::json& resource, const FieldMask& mask);

}  // namespace trainyard::api
