#pragma once
// Typed resources as the SDK returns them: the model type decoded by the server's own codec
// (api/wire), plus the raw JSON the server sent, which keeps every field the model does not know
// (a newer server's additions) for callers that need them and for `--json` output.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "services/model/custom_job.h"
#include "services/model/persistent_resource.h"
#include "services/status.h"

namespace trainyard::sdk {

struct Job {
  CustomJob job;  // job.trainyard holds the server's reason, queue position, placement, cost
  nlohmann::json raw;

  const std::string& name() const { return job.name; }
  JobState state() const { return job.state; }
};

// google.longrunning.Operation. metadata and response are Any values, kept as JSON (with @type).
struct Operation {
  std::string name;
  bool done = false;
  nlohmann::json metadata;                 // null when absent
  std::optional<nlohmann::json> response;  // set when done without error
  std::optional<RpcStatus> error;          // set when done with an error
  nlohmann::json raw;
};

// A persistent resource: the model decoded by the server's codec, plus the raw JSON.
struct PersistentResource {
  trainyard::PersistentResource resource;
  nlohmann::json raw;

  const std::string& name() const { return resource.name; }
  ResourceState state() const { return resource.state; }
};

// Decoders for response bodies; unknown fields are ignored by the typed part and kept in `raw`.
StatusOr<Job> DecodeJob(nlohmann::json body);
StatusOr<Operation> DecodeOperation(nlohmann::json body);
StatusOr<PersistentResource> DecodePersistentResource(nlohmann::json body);

// What a finished operation returns: its response, or its error as a Status.
StatusOr<nlohmann::json> OperationResult(const Operation& op);

// The job's id: the last segment of its name.
std::string JobId(const std::string& name);

}  // namespace trainyard::sdk
