#pragma once
// CustomJob <-> proto3 JSON, the one definition used by the server (request bodies, responses),
// storage (the spec is stored as JSON) and the SDK. Decoding is strict like Vertex: unknown fields
// at any depth are INVALID_ARGUMENT (gcloud forwards --config YAML keys unchecked, so a silently
// dropped snake_case or misplaced key would change the job). Nothing here throws.
#include <nlohmann/json.hpp>
#include <string>

#include "api/wire/json_reader.h"
#include "services/model/custom_job.h"
#include "services/status.h"

namespace trainyard {

// What DecodeCustomJob does with output-only fields (name, state, error, createTime, startTime,
// endTime, updateTime, webAccessUris, satisfiesPzs, satisfiesPzi). Either way they are parsed and
// type-checked, as Vertex's front end parses the whole body before the service looks at it.
enum class OutputOnlyFields {
  // Create requests: Vertex accepts output-only fields sent by a client and ignores them (the Node
  // SDK always sends "webAccessUris":{}), so they are dropped from the result.
  kIgnore,
  // Responses read by the SDK, and round trips: every field of the model is kept.
  kKeep,
};

// Keys the model does not know. The server rejects them like Vertex; the SDK reads responses of a
// possibly newer server and keeps their raw JSON next to the typed value instead.
enum class UnknownFields {
  kReject,
  kIgnore,
};

// The API surface a body belongs to (/v1 or /v1beta1 in the path). v1beta1 is a superset: its
// MachineSpec also has multihostGpuNodeCount and minGpuDriverVersion. Decoding for kV1 rejects
// them as unknown names, exactly as real v1 does; encoding for kV1 leaves them out, since a v1
// client's schema has no place for them. Storage and the SDK use kV1beta1 so nothing is lost.
enum class ApiVersion {
  kV1,
  kV1beta1,
};

// The body must be a JSON object. `{}` entries of workerPoolSpecs decode to placeholder pools
// (WorkerPoolSpec::IsPlaceholder), keeping the positions of later pools. Error paths are rooted
// at 'custom_job' (messages) and at the body (violations, e.g. "jobSpec.workerPoolSpecs[0]").
// With kKeep the output-only `trainyard` object is decoded into CustomJob::trainyard as well.
StatusOr<CustomJob> DecodeCustomJob(const nlohmann::json& body,
                                    OutputOnlyFields output_only = OutputOnlyFields::kIgnore,
                                    UnknownFields unknown = UnknownFields::kReject,
                                    ApiVersion version = ApiVersion::kV1beta1);

// A CustomJobSpec on its own (as storage keeps it), just as strict. `path` is its camelCase path
// inside a CustomJob, normally "jobSpec"; errors are reported relative to it.
StatusOr<CustomJobSpec> DecodeCustomJobSpec(const nlohmann::json& spec, std::string path,
                                            ApiVersion version = ApiVersion::kV1beta1);

// lowerCamelCase proto3 JSON with defaults omitted (false, "", 0, empty lists and maps, unset
// messages); a message that is set but empty is `{}`. int64 as strings, int32 as numbers, enums as
// names, Timestamps and Durations formatted. Placeholder pools encode as `{}`; every other pool
// carries its effective replicaCount ("1" when the model says 0 = not sent). jobSpec is always
// present. Decode(Encode(x)) gives back x, up to that replicaCount default.
nlohmann::json EncodeCustomJob(const CustomJob& job, ApiVersion version = ApiVersion::kV1beta1);
nlohmann::json EncodeCustomJobSpec(const CustomJobSpec& spec,
                                   ApiVersion version = ApiVersion::kV1beta1);
// The job's `trainyard` object alone, as EncodeCustomJob writes it: the one part of a job that
// moves with the clock while nothing else about it changes (cost and goodput accrue to now).
nlohmann::json EncodeSchedulingStatus(const SchedulingStatus& status);

// google.rpc.Status as embedded in a resource or an Operation; `details` is accepted and dropped.
StatusOr<RpcStatus> DecodeRpcStatus(const nlohmann::json& body,
                                    UnknownFields unknown = UnknownFields::kReject);

// {"code":n,"message":…} with the rpc code; defaults omitted, no "status" key.
nlohmann::json EncodeRpcStatus(const RpcStatus& status);

// The messages a persistent resource shares with jobs, for its codec.
void ReadMachineSpecMessage(ObjectReader& r, MachineSpec* spec, ApiVersion version);
void ReadDiskSpecMessage(ObjectReader& r, DiskSpec* spec);
void ReadEncryptionSpecMessage(ObjectReader& r, EncryptionSpec* spec);
nlohmann::json EncodeMachineSpecMessage(const MachineSpec& spec, ApiVersion version);
nlohmann::json EncodeDiskSpecMessage(const DiskSpec& spec);
// Trainyard's `placement` object (zone and pools with their nodes), on jobs and resources.
nlohmann::json EncodePlacementStatus(const std::string& zone,
                                     const std::vector<PlacedPoolStatus>& pools);

}  // namespace trainyard
