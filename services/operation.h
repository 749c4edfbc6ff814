#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "services/model/custom_job.h"

namespace trainyard {

// A long-running operation. metadata_type and response are Any payloads: the type name
// ("google.cloud.aiplatform.v1.DeleteOperationMetadata") and the response's wire JSON text
// (with its @type), which the domain passes through without interpreting.
struct Operation {
  int64_t id = 0;
  int64_t project_number = 0;
  std::string location;
  std::string parent;  // "customJobs/123" when nested, "" when flat
  std::string metadata_type;
  bool done = false;
  std::optional<std::string> response_json;
  std::optional<RpcStatus> error;
  Timestamp create_time{};
  Timestamp update_time{};
};

inline constexpr const char* kEmptyResponseJson =
    R"({"@type":"type.googleapis.com/google.protobuf.Empty"})";

}  // namespace trainyard
