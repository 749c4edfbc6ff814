#pragma once
// Field masks: readMask on list keeps only the named fields of each resource; updateMask on patch
// names the fields to change. Paths may be camelCase or
// snake_case ("job_spec.worker_pool_specs"), as the Node SDK sends whatever the caller wrote.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "services/status.h"

namespace trainyard::api {

struct FieldMask {
  std::vector<std::vector<std::string>> paths;  // camelCase segments
};

// `known_top_level` lists the resource's fields; an unknown first segment is an INVALID_ARGUMENT
// naming `parameter` (readMask on list, updateMask on patch).
StatusOr<FieldMask> ParseFieldMask(const std::string& text,
                                   const std::vector<std::string>& known_top_level,
                                   const std::string& parameter = "readMask");
// "resourcePools.replicaCount": a path's camelCase segments joined again.
std::vector<std::string> MaskPaths(const FieldMask& mask);
nlohmann::json ApplyFieldMask(const nlohmann::json& resource, const FieldMask& mask);

}  // namespace trainyard::api
