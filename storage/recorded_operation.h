#pragma once
// How a persistent resource's change records its operation, in either store.
#include "services/persistent_resources/resource_repository.h"

namespace trainyard::storage {

// `change.operation` as it is recorded: a born-finished one answers with the resource.
Operation RecordedOperation(const ResourceChange& change);

}  // namespace trainyard::storage
