#pragma once
// What the persistent-resource use cases need from storage. Every change that starts fleet work
// is written with its Operation (done: false) in one transaction; the fleet's side
// (services/persistent_resources/resource_fleet_store.h) finishes both together.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "services/jobs/job_repository.h"
#include "services/jobs/resource_lookup.h"
#include "services/model/operation.h"
#include "services/model/persistent_resource.h"
#include "services/status.h"

namespace trainyard {

// A resource row: the resource plus the bookkeeping that never goes on the wire.
struct ResourceRecord {
  int64_t uid = 0;  // the row's own number: nodes and the scheduler name the resource by it
  int64_t project_number = 0;
  std::string project_id;
  std::string location;
  std::string resource_id;
  PersistentResource resource;  // name, state and times filled in
  int64_t version = 1;
  std::optional<int64_t> operation_id;  // the unfinished operation the fleet is carrying out
  bool cancel_requested = false;        // a client asked to cancel that operation
  std::optional<Timestamp> ready_at;    // virtual time its held nodes finish booting
  std::optional<Timestamp> held_since;  // since when it holds nodes (billing)
  int64_t hourly_price_micros = 0;
};

struct ListResourcesQuery {
  int64_t project_number = 0;
  std::string location;
  int limit = 100;
  std::optional<JobCursor> after;  // keyset (create_time DESC, uid DESC)
};

// A change a client asks for: the row's new form (compare-and-set on expected_version) and the
// operation that reports it, written together.
struct ResourceChange {
  ResourceRecord record;  // version is the expected one; the store bumps it
  Operation operation;
  // A born-finished operation answers with the resource as this change leaves it (the store
  // encodes it); otherwise its response is the one set.
  bool respond_with_resource = false;
  // An unfinished operation this change ends (a delete ends the create it interrupts), with
  // ABORTED and this message.
  std::optional<int64_t> superseded_operation;
  std::string superseded_message;
};

class ResourceRepository : public ResourceLookup {
 public:
  ~ResourceRepository() override = default;
  // ALREADY_EXISTS when the id is taken in the location (or the operation id collides: the
  // message says which).
  virtual Status Insert(const ResourceChange& change) = 0;
  virtual StatusOr<ResourceRecord> Get(int64_t project_number, const std::string& location,
                                       const std::string& resource_id) = 0;
  StatusOr<PersistentResource> LookupResource(int64_t project_number, const std::string& location,
                                              const std::string& resource_id) final {
    auto record = Get(project_number, location, resource_id);
    if (!record.ok()) return record.status();
    return std::move(record->resource);
  }
  // Up to query.limit + 1 rows, newest first.
  virtual StatusOr<std::vector<ResourceRecord>> List(const ListResourcesQuery& query) = 0;
  // The operation as written (a born-finished one with its response); nullopt when the row moved
  // on meanwhile.
  virtual StatusOr<std::optional<Operation>> Update(const ResourceChange& change) = 0;
};

}  // namespace trainyard
