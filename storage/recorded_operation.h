#pragma once
// How a persistent resource's change records its operation, in either store.
#include "services/persistent_resources/resource_repository.h"

namespace trainyard::storage {

// `change.operation` as it is recorded: a born-finished one answers with the resource.
Operation RecordedOperation(const ResourceChange& change);

// The response of the operation that ends when `record`'s nodes have booted at `now`: the
// resource RUNNING (started then, unless it had started before).
std::string RunningResponse(const ResourceRecord& record, Timestamp now);

}  // namespace trainyard::storage
