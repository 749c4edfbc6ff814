#include "storage/pg_fault_injection_store.h"

#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

constexpr const char* kInsert =
    "INSERT INTO fault_injections (kind, node, pool_id, zone, count, fraction, request_time) "
    "VALUES ($1, $2, $3, $4, $5::int, $6::double precision, " TY_TS("$7") ") RETURNING id";

constexpr const char* kGet =
    "SELECT " TY_INJECTION_COLUMNS " FROM fault_injections WHERE id = $1::bigint";

std::optional<std::string> Text(const std::string& value) {
  if (value.empty()) return std::nullopt;
  return value;
}

}  // namespace

FaultInjection DecodeFaultInjection(const pg::Result& r, int row) {
  FaultInjection f;
  f.id = r.GetInt64(row, 0);
  f.kind = ParseFaultKind(r.Get(row, 1)).value_or(FaultKind::kNodeFailure);
  if (!r.IsNull(row, 2)) f.node = std::string(r.Get(row, 2));
  if (!r.IsNull(row, 3)) f.pool_id = std::string(r.Get(row, 3));
  if (!r.IsNull(row, 4)) f.zone = std::string(r.Get(row, 4));
  if (!r.IsNull(row, 5)) f.count = r.GetInt64(row, 5);
  if (!r.IsNull(row, 6)) f.fraction = r.GetDouble(row, 6);
  f.request_time = FromUnixMicros(r.GetInt64(row, 7));
  f.apply_time = OptionalTime(r, row, 8);
  if (!r.IsNull(row, 9)) f.outcome = std::string(r.Get(row, 9));
  return f;
}

StatusOr<FaultInjection> PgFaultInjectionStore::Insert(const FaultInjection& request) {
  pg::Params params = {
      std::string(FaultKindName(request.kind)),
      Text(request.node),
      Text(request.pool_id),
      Text(request.zone),
      request.count ? std::optional<std::string>(std::to_string(*request.count)) : std::nullopt,
      request.fraction ? std::optional<std::string>(std::to_string(*request.fraction))
                       : std::nullopt,
      MicrosParam(request.request_time),
  };
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kInsert, params));
  FaultInjection stored = request;
  stored.id = r.GetInt64(0, 0);
  return stored;
}

StatusOr<FaultInjection> PgFaultInjectionStore::Get(int64_t id) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kGet, {std::to_string(id)}));
  if (r.rows() == 0) return NotFound("fault injection " + std::to_string(id) + " not found");
  return DecodeFaultInjection(r, 0);
}

}  // namespace trainyard::storage
