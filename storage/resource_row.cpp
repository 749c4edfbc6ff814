#include "storage/resource_row.h"

#include <nlohmann/json.hpp>

#include "api/wire/persistent_resource_codec.h"
#include "services/cost/accrual.h"
#include "services/persistent_resources/resource_holdings.h"
#include "services/resource_names.h"
#include "storage/job_transition_sql.h"

namespace trainyard::storage {

std::string EncodeResourceSpec(const PersistentResource& resource) {
  PersistentResource spec = resource;
  spec.name.clear();
  spec.state = ResourceState::kUnspecified;
  spec.error.reset();
  spec.create_time.reset();
  spec.start_time.reset();
  spec.update_time.reset();
  spec.trainyard.reset();
  for (ResourcePool& pool : spec.resource_pools) pool.used_replica_count = 0;
  return EncodePersistentResource(spec).dump();
}

StatusOr<ResourceRecord> DecodeResourceRow(const pg::Result& r, int row) {
  ResourceRecord rec;
  rec.uid = r.GetInt64(row, 0);
  rec.project_number = r.GetInt64(row, 1);
  rec.project_id = std::string(r.Get(row, 2));
  rec.location = std::string(r.Get(row, 3));
  rec.resource_id = std::string(r.Get(row, 4));
  auto spec = nlohmann::json::parse(r.Get(row, 6), nullptr, false);
  TY_ASSIGN_OR_RETURN(rec.resource, DecodePersistentResource(spec, OutputOnlyFields::kKeep,
                                                             UnknownFields::kIgnore));
  PersistentResource& res = rec.resource;
  res.name = PersistentResourceName(rec.project_number, rec.location, rec.resource_id);
  res.state = static_cast<ResourceState>(r.GetInt64(row, 5));
  if (!r.IsNull(row, 7)) {
    res.error = RpcStatus{static_cast<int>(r.GetInt64(row, 7)), std::string(r.Get(row, 8))};
  }
  res.create_time = FromUnixMicros(r.GetInt64(row, 9));
  res.start_time = OptionalTime(r, row, 10);
  res.update_time = FromUnixMicros(r.GetInt64(row, 11));
  rec.version = r.GetInt64(row, 12);
  if (!r.IsNull(row, 13)) rec.operation_id = r.GetInt64(row, 13);
  ResourceFleetStatus& fleet = res.trainyard.emplace();
  if (!r.IsNull(row, 14)) {
    SchedulingStatus placed;
    DecodePlacement(r.Get(row, 14), placed);
    fleet.zone = placed.zone;
    fleet.pools = std::move(placed.pools);
  }
  rec.ready_at = OptionalTime(r, row, 15);
  rec.held_since = OptionalTime(r, row, 16);
  rec.hourly_price_micros = r.GetInt64(row, 17);
  fleet.hourly_price_usd = cost::Usd(rec.hourly_price_micros);
  if (!r.IsNull(row, 18)) {
    fleet.reason_code = std::string(r.Get(row, 18));
    fleet.reason_message = std::string(r.Get(row, 19));
  }
  if (!r.IsNull(row, 20)) {
    std::map<std::string, int64_t> busy;
    auto counts = nlohmann::json::parse(r.Get(row, 20), nullptr, false);
    if (counts.is_object()) {
      for (const auto& [pool_id, n] : counts.items()) {
        if (n.is_number_integer()) busy[pool_id] = n.get<int64_t>();
      }
    }
    SetUsedReplicaCounts(res, std::move(busy));
  }
  rec.cancel_requested = r.GetBool(row, 21);
  return rec;
}

}  // namespace trainyard::storage
