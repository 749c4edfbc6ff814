#pragma once
// A persistent_resources row as the stores read and write it.
#include <string>
#include <vector>

#include "services/persistent_resources/resource_repository.h"
#include "storage/pg.h"
#include "storage/row_codec.h"

namespace trainyard::storage {

// Every column the domain needs, plus the replicas jobs occupy on the resource's nodes per fleet
// pool (for usedReplicaCount). Selected FROM persistent_resources r JOIN projects p.
#define TY_RESOURCE_COLUMNS \
  "r.uid, r.project_number, p.project_id, r.location, r.resource_id, r.state, "              \
  "r.resource::text, r.error_code, r.error_message, " TY_MICROS("r.create_time") ", "        \
  TY_MICROS("r.start_time") ", " TY_MICROS("r.update_time") ", r.version, r.operation_id, "  \
  "r.placement::text, " TY_MICROS("r.ready_at") ", " TY_MICROS("r.held_since") ", "          \
  "r.hourly_price_micros, r.sched_code, r.sched_message, "                                   \
  "(SELECT json_object_agg(b.pool_id, b.n)::text FROM (SELECT pool_id, count(*) AS n "       \
  "FROM nodes WHERE resource_uid = r.uid AND job_id IS NOT NULL GROUP BY pool_id) b), "        \
  "COALESCE((SELECT cancel_requested FROM operations o WHERE o.id = r.operation_id), false)"
// A resource's name as the wire has it, from the columns of `r` ("r." or "" for the table itself).
#define TY_RESOURCE_NAME(r)                                   \
  "'projects/' || " r "project_number || '/locations/' || " r \
  "location || "                                              \
  "'/persistentResources/' || " r "resource_id"
#define TY_RESOURCE_FROM \
  " FROM persistent_resources r JOIN projects p ON p.number = r.project_number"

StatusOr<ResourceRecord> DecodeResourceRow(const pg::Result& r, int row);

// The resource's stored wire form: the spec fields (name, state, error and times are columns).
std::string EncodeResourceSpec(const PersistentResource& resource);

}  // namespace trainyard::storage
