#include "storage/pg_resource_store.h"

#include "storage/operation_sql.h"
#include "storage/recorded_operation.h"
#include "storage/resource_row.h"
#include "storage/state_sql.h"

namespace trainyard::storage {
namespace {

constexpr const char* kInsert =
    "INSERT INTO persistent_resources (project_number, location, resource_id, state, resource, "
    "create_time, update_time, operation_id) VALUES ($1::bigint, $2, $3, $4::smallint, "
    "$5::jsonb, " TY_TS("$6") ", " TY_TS("$6") ", $7::bigint)";

constexpr const char* kGet =
    "SELECT " TY_RESOURCE_COLUMNS TY_RESOURCE_FROM
    " WHERE r.project_number = $1::bigint AND r.location = $2 AND r.resource_id = $3";

constexpr const char* kList =
    "SELECT " TY_RESOURCE_COLUMNS TY_RESOURCE_FROM
    " WHERE r.project_number = $1::bigint AND r.location = $2 "
    "AND ($4::bigint IS NULL OR (r.create_time, r.uid) < (" TY_TS("$4") ", $5::bigint)) "
    "ORDER BY r.create_time DESC, r.uid DESC LIMIT $3::int";

// A client's change: compare-and-set on the version. A reboot or resize forgets when the nodes
// were last ready: the fleet readies them again.
const StateSql kUpdate(
    "UPDATE persistent_resources SET state = $3::smallint, resource = $4::jsonb, "
    "update_time = " TY_TS("$5") ", operation_id = $6::bigint, version = version + 1, "
    "ready_at = CASE WHEN $3::smallint IN (:resource_rebooting, :resource_updating) "
    "THEN NULL ELSE ready_at END WHERE uid = $1::bigint AND version = $2::bigint");

}  // namespace

std::vector<pg::Statement> OperationStatements(const ResourceChange& change) {
  const Operation op = RecordedOperation(change);
  const std::optional<std::string>& response = op.response_json;
  std::vector<pg::Statement> out;
  out.push_back(pg::Statement{kInsertOperation,
                              {std::to_string(op.id), std::to_string(op.project_number),
                               op.location, op.parent, op.metadata_type, op.done ? "true" : "false",
                               response, MicrosParam(op.create_time), op.progress_message}});
  if (change.superseded_operation) {
    out.push_back(pg::Statement{kFinishOperation,
                                {std::to_string(*change.superseded_operation), std::nullopt,
                                 std::to_string(static_cast<int>(Code::kAborted)),
                                 change.superseded_message, MicrosParam(op.create_time)}});
  }
  return out;
}

Status PgResourceStore::Insert(const ResourceChange& change) {
  const ResourceRecord& rec = change.record;
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  for (const pg::Statement& s : OperationStatements(change)) {
    auto r = tx.Exec(s.sql, s.params);
    if (!r.ok()) {
      // A colliding random operation id: the caller draws another.
      if (r.status().code() == Code::kAlreadyExists) return Aborted("operation id collision");
      return r.status();
    }
  }
  auto inserted =
      tx.Exec(kInsert,
              {std::to_string(rec.project_number), rec.location, rec.resource_id,
               std::to_string(static_cast<int>(rec.resource.state)),
               EncodeResourceSpec(rec.resource), MicrosParam(*rec.resource.create_time),
               rec.operation_id ? std::optional(std::to_string(*rec.operation_id)) : std::nullopt});
  TY_RETURN_IF_ERROR(inserted.status());
  return tx.Commit();
}

StatusOr<ResourceRecord> PgResourceStore::Get(int64_t project_number, const std::string& location,
                                              const std::string& resource_id) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      conn->Exec(kGet, {std::to_string(project_number), location, resource_id}));
  if (r.rows() == 0) return NotFound("persistent resource not found");
  return DecodeResourceRow(r, 0);
}

StatusOr<std::vector<ResourceRecord>> PgResourceStore::List(const ListResourcesQuery& query) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      conn->Exec(
          kList,
          {std::to_string(query.project_number), query.location, std::to_string(query.limit + 1),
           query.after ? std::optional(MicrosParam(query.after->create_time)) : std::nullopt,
           query.after ? std::optional(std::to_string(query.after->id)) : std::nullopt}));
  std::vector<ResourceRecord> out;
  for (int i = 0; i < r.rows(); ++i) {
    TY_ASSIGN_OR_RETURN(ResourceRecord rec, DecodeResourceRow(r, i));
    out.push_back(std::move(rec));
  }
  return out;
}

StatusOr<std::optional<Operation>> PgResourceStore::Update(const ResourceChange& change) {
  const ResourceRecord& rec = change.record;
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      tx.Exec(kUpdate.With(
          {std::to_string(rec.uid), std::to_string(rec.version),
           std::to_string(static_cast<int>(rec.resource.state)), EncodeResourceSpec(rec.resource),
           MicrosParam(*rec.resource.update_time),
           rec.operation_id ? std::optional(std::to_string(*rec.operation_id)) : std::nullopt})));
  if (r.affected() != 1) return std::optional<Operation>();
  for (const pg::Statement& s : OperationStatements(change)) {
    TY_RETURN_IF_ERROR(tx.Exec(s.sql, s.params).status());
  }
  TY_RETURN_IF_ERROR(tx.Commit());
  return std::optional(RecordedOperation(change));
}

}  // namespace trainyard::storage
