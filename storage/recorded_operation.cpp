#include "storage/recorded_operation.h"

#include "api/wire/persistent_resource_codec.h"

namespace trainyard::storage {

Operation RecordedOperation(const ResourceChange& change) {
  Operation op = change.operation;
  if (op.done && change.respond_with_resource) {
    PersistentResource shown = change.record.resource;
    shown.trainyard.reset();
    op.response_json = EncodePersistentResourceResponse(shown).dump();
  }
  return op;
}

std::string RunningResponse(const ResourceRecord& record, Timestamp now) {
  PersistentResource shown = record.resource;
  shown.state = ResourceState::kRunning;
  if (!shown.start_time) shown.start_time = now;
  shown.update_time = now;
  shown.trainyard.reset();
  return EncodePersistentResourceResponse(shown).dump();
}

}  // namespace trainyard::storage
