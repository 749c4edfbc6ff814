#pragma once
// Request validation for persistentResources.create and patch: the rules Vertex enforces, checked
// before anything is stored; the first violated rule is an INVALID_ARGUMENT naming its field.
#include <string>

#include "services/model/persistent_resource.h"
#include "services/status.h"

namespace trainyard {

// Fills in what Vertex defaults (pool ids, an autoscaled pool's replicaCount) and checks the rest.
Status ValidatePersistentResource(PersistentResource& resource);

// The id in ?persistentResourceId=: required, [a-z]([a-z0-9-]{0,61}[a-z0-9])?.
Status ValidatePersistentResourceId(const std::string& id);

}  // namespace trainyard
