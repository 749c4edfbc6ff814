#pragma once
// A long-running operation (google.longrunning.Operation): born `done: false` in the transaction
// that records the change it describes, and finished — with a response or an error — by whoever
// carries the change out (services/operations/operation_repository.h).
#include <cstdint>
#include <optional>
#include <string>

#include "services/model/custom_job.h"

namespace trainyard {

// The metadata types our operations carry (google.cloud.aiplatform.v1.*).
inline constexpr const char* kDeleteOperationMetadata =
    "google.cloud.aiplatform.v1.DeleteOperationMetadata";
inline constexpr const char* kCreatePersistentResourceMetadata =
    "google.cloud.aiplatform.v1.CreatePersistentResourceOperationMetadata";
inline constexpr const char* kUpdatePersistentResourceMetadata =
    "google.cloud.aiplatform.v1.UpdatePersistentResourceOperationMetadata";
inline constexpr const char* kRebootPersistentResourceMetadata =
    "google.cloud.aiplatform.v1.RebootPersistentResourceOperationMetadata";

// metadata_type and response are Any payloads: the type name and the response's wire JSON text
// (with its @type), which the domain passes through without interpreting.
struct Operation {
  int64_t id = 0;
  int64_t project_number = 0;
  std::string location;
  std::string parent;  // "customJobs/123" or "persistentResources/pr-1" when nested, "" when flat
  std::string metadata_type;
  std::string progress_message;  // the metadata's progressMessage, where its type has one
  bool done = false;
  bool cancel_requested = false;  // a client asked; the work ends it as CANCELLED where it can
  std::optional<std::string> response_json;
  std::optional<RpcStatus> error;
  Timestamp create_time{};
  Timestamp update_time{};
};

inline constexpr const char* kEmptyResponseJson =
    R"({"@type":"type.googleapis.com/google.protobuf.Empty"})";

}  // namespace trainyard
