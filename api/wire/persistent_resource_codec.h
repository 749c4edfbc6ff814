#pragma once
// PersistentResource <-> proto3 JSON, as strict as the CustomJob codec (unknown fields are
// INVALID_ARGUMENT naming them; output-only fields are accepted and dropped on create). Used by
// the server, storage (the resource is stored in its wire form) and the SDK. Nothing here throws.
#include <nlohmann/json.hpp>

#include "api/wire/custom_job_codec.h"
#include "services/model/persistent_resource.h"
#include "services/status.h"

namespace trainyard {

StatusOr<PersistentResource> DecodePersistentResource(
    const nlohmann::json& body, OutputOnlyFields output_only = OutputOnlyFields::kIgnore,
    UnknownFields unknown = UnknownFields::kReject, ApiVersion version = ApiVersion::kV1beta1);

// lowerCamelCase, defaults omitted, int64 counts as strings. With the Trainyard `trainyard`
// object when the resource has one.
nlohmann::json EncodePersistentResource(const PersistentResource& resource,
                                        ApiVersion version = ApiVersion::kV1beta1);

// The resource as an operation's response: its JSON with the Any @type first.
nlohmann::json EncodePersistentResourceResponse(const PersistentResource& resource);

}  // namespace trainyard
