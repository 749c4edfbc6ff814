#include "storage/pg_operation_store.h"

#include "storage/operation_sql.h"

namespace trainyard::storage {
namespace {

constexpr const char* kGet =
    "SELECT " TY_OPERATION_COLUMNS
    " FROM operations WHERE id = $1::bigint AND project_number = $2::bigint AND location = $3";

// Newest first, keyset-paged on (create_time, id); $4 parent or NULL, $5 done or NULL.
constexpr const char* kList =
    "SELECT " TY_OPERATION_COLUMNS
    " FROM operations WHERE project_number = $1::bigint AND location = $2 "
    "AND ($4::text IS NULL OR parent = $4) AND ($5::boolean IS NULL OR done = $5::boolean) "
    "AND ($6::bigint IS NULL OR (create_time, id) < (" TY_TS("$6") ", $7::bigint)) "
    "ORDER BY create_time DESC, id DESC LIMIT $3::int";

constexpr const char* kRequestCancel =
    "UPDATE operations SET cancel_requested = true, update_time = " TY_TS("$4") " "
    "WHERE id = $1::bigint AND project_number = $2::bigint AND location = $3";

constexpr const char* kDelete =
    "DELETE FROM operations WHERE id = $1::bigint AND project_number = $2::bigint AND location = "
    "$3";

pg::Params Key(int64_t project_number, const std::string& location, int64_t id) {
  return {std::to_string(id), std::to_string(project_number), location};
}

}  // namespace

Operation DecodeOperationRow(const pg::Result& r, int row) {
  Operation op;
  op.id = r.GetInt64(row, 0);
  op.project_number = r.GetInt64(row, 1);
  op.location = std::string(r.Get(row, 2));
  op.parent = std::string(r.Get(row, 3));
  op.metadata_type = std::string(r.Get(row, 4));
  op.done = r.GetBool(row, 5);
  if (!r.IsNull(row, 6)) op.response_json = std::string(r.Get(row, 6));
  if (!r.IsNull(row, 7)) {
    op.error = RpcStatus{static_cast<int>(r.GetInt64(row, 7)), std::string(r.Get(row, 8))};
  }
  op.create_time = FromUnixMicros(r.GetInt64(row, 9));
  op.update_time = FromUnixMicros(r.GetInt64(row, 10));
  op.cancel_requested = r.GetBool(row, 11);
  op.progress_message = std::string(r.Get(row, 12));
  return op;
}

StatusOr<Operation> PgOperationStore::Get(int64_t project_number, const std::string& location,
                                          int64_t id) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kGet, Key(project_number, location, id)));
  if (r.rows() == 0) return NotFound("operation not found");
  return DecodeOperationRow(r, 0);
}

StatusOr<std::vector<Operation>> PgOperationStore::List(const ListOperationsQuery& query) {
  pg::Params params = {
      std::to_string(query.project_number),
      query.location,
      std::to_string(query.limit + 1),
      query.parent,
      query.done ? std::optional<std::string>(*query.done ? "true" : "false") : std::nullopt,
      query.after ? std::optional(MicrosParam(query.after->create_time)) : std::nullopt,
      query.after ? std::optional(std::to_string(query.after->id)) : std::nullopt};
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kList, params));
  std::vector<Operation> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(DecodeOperationRow(r, i));
  return out;
}

Status PgOperationStore::RequestCancel(int64_t project_number, const std::string& location,
                                       int64_t id, Timestamp now) {
  pg::Params params = Key(project_number, location, id);
  params.push_back(MicrosParam(now));
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kRequestCancel, params));
  if (r.affected() == 0) return NotFound("operation not found");
  return Status::Ok();
}

Status PgOperationStore::Delete(int64_t project_number, const std::string& location, int64_t id) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kDelete, Key(project_number, location, id)));
  if (r.affected() == 0) return NotFound("operation not found");
  return Status::Ok();
}

}  // namespace trainyard::storage
