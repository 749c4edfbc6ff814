#include "storage/pg_job_store.h"

#include <algorithm>
#include <unordered_set>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "api/wire/custom_job_codec.h"
#include "storage/job_filter_sql.h"
#include "storage/job_row.h"
#include "storage/job_transition_sql.h"
#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

std::string MicrosText(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

constexpr const char* kInsertJob =
    "WITH j AS (INSERT INTO custom_jobs (id, project_number, location, display_name, state, "
    "job_spec, labels, encryption_spec, create_time, update_time, next_action_at, request_id, "
    "state_since, checkpoint_interval_us, checkpoint_save_us, checkpoint_restore_us) "
    "VALUES ($1::bigint, $2::bigint, $3, $4, $5::smallint, $6::json, $7::jsonb, $8::jsonb, "
    TY_TS("$9") ", " TY_TS("$9") ", " TY_TS("$10") ", $11, " TY_TS("$9") ", $13::bigint, "
    "$14::bigint, $15::bigint) "
    "RETURNING id) "
    "INSERT INTO job_events (job_id, time, from_state, to_state, reason) "
    "SELECT id, " TY_TS("$9") ", $12::smallint, $5::smallint, 'created' FROM j";

constexpr const char* kGetJob =
    "SELECT " TY_JOB_COLUMNS
    " FROM custom_jobs "
    "WHERE id = $1::bigint AND project_number = $2::bigint AND location = $3";

// A job's events and log lines go with it (no foreign key cascades: migrations/0020 and 0021).
constexpr const char* kDeleteWithOperation =
    "WITH d AS (DELETE FROM custom_jobs WHERE id = $1::bigint AND project_number = $2::bigint "
    "AND location = $3 AND version = $4::bigint RETURNING id), "
    "events AS (DELETE FROM job_events WHERE job_id IN (SELECT id FROM d)) "
    "INSERT INTO operations (id, project_number, location, parent, metadata_type, done, response, "
    "create_time, update_time) SELECT $5::bigint, $2::bigint, $3, $6, $7, true, $8::jsonb, " TY_TS(
        "$9") ", " TY_TS("$9") " FROM d";
// In a statement after the job's delete: an append that locked the job first (FOR KEY SHARE,
// storage/pg_job_log_store.cpp) has committed by then and this statement's snapshot sees its
// lines; one that comes later finds no job and stores nothing.
constexpr const char* kDeleteLogs =
    "WITH lines AS (DELETE FROM job_log_lines WHERE job_id = $1::bigint) "
    "DELETE FROM job_log_stats WHERE job_id = $1::bigint";

constexpr const char* kHeartbeat =
    "UPDATE custom_jobs SET lease_expires_at = now() + $2::bigint * interval '1 second' "
    "WHERE lease_owner = $1";

// Expired leases first (work a dead runtime held), then free jobs by when they are due, each
// through its own partial index (migrations/0016). Counts what it took by the lease's previous
// owner: none, us (a lease we let run out), another.
constexpr const char* kClaim =
    "WITH expired AS (SELECT id, lease_owner AS was FROM custom_jobs "
    "WHERE lease_owner IS NOT NULL AND lease_expires_at < now() AND next_action_at IS NOT NULL "
    "ORDER BY lease_expires_at LIMIT $2::int FOR UPDATE SKIP LOCKED), "
    "free AS (SELECT id, NULL::text AS was FROM custom_jobs "
    "WHERE next_action_at IS NOT NULL AND lease_owner IS NULL "
    "ORDER BY next_action_at LIMIT $2::int FOR UPDATE SKIP LOCKED), "
    "picked AS (SELECT * FROM expired UNION ALL SELECT * FROM free LIMIT $2::int), "
    "taken AS (UPDATE custom_jobs c SET lease_owner = $1, "
    "lease_expires_at = now() + $3::bigint * interval '1 second' "
    "FROM picked WHERE c.id = picked.id RETURNING picked.was) "
    "SELECT count(*), count(was), count(*) FILTER (WHERE was <> $1) FROM taken";

constexpr const char* kDue =
    "SELECT " TY_JOB_COLUMNS
    " FROM custom_jobs WHERE lease_owner = $1 "
    "AND next_action_at <= " TY_TS("$2") " ORDER BY next_action_at LIMIT $3::int";

constexpr const char* kNextDue =
    "SELECT " TY_MICROS("min(next_action_at)") " FROM custom_jobs WHERE lease_owner = $1";

constexpr const char* kByIds =
    "SELECT " TY_JOB_COLUMNS " FROM custom_jobs WHERE id = ANY($1::bigint[])";

constexpr const char* kReleaseAll =
    "UPDATE custom_jobs SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = $1 "
    "RETURNING id";

std::string LabelsJson(const std::map<std::string, std::string>& labels) {
  return nlohmann::json(labels).dump();
}

}  // namespace

Status PgJobStore::Insert(const JobRecord& record, const std::string& request_id) {
  const CustomJob& job = record.job;
  pg::Params params = {
      std::to_string(record.id),
      std::to_string(record.project_number),
      record.location,
      job.display_name,
      std::to_string(static_cast<int>(job.state)),
      EncodeCustomJobSpec(job.job_spec).dump(),
      LabelsJson(job.labels),
      job.encryption_spec
          ? std::optional<std::string>(
                nlohmann::json{{"kmsKeyName", job.encryption_spec->kms_key_name}}.dump())
          : std::nullopt,
      MicrosParam(*job.create_time),
      MicrosParam(record.next_action_at),
      request_id.empty() ? std::nullopt : std::optional<std::string>(request_id),
      std::to_string(static_cast<int>(JobState::kUnspecified)),  // a created job comes from none
      MicrosText(record.checkpoint_interval),
      MicrosText(record.checkpoint_cost.save),
      MicrosText(record.checkpoint_cost.restore),
  };
  return creates_.Commit({pg::Statement{kInsertJob, std::move(params)}});
}

StatusOr<JobRecord> PgJobStore::Get(int64_t project_number, const std::string& location,
                                    int64_t id) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      conn->Exec(kGetJob, {std::to_string(id), std::to_string(project_number), location}));
  if (r.rows() == 0) return NotFound("custom job not found");
  return DecodeJobRow(r, 0);
}

namespace {

struct ListSql {
  std::string sql;
  pg::Params params;
};

// A list's statement over `columns`: the page in create_time, id order, newest first, one row more
// than the page so the caller knows another exists.
ListSql ListStatement(const ListJobsQuery& query, const char* columns) {
  SqlFragment where;
  where.params = {std::to_string(query.project_number), query.location};
  std::string sql = std::string("SELECT ") + columns +
                    " FROM custom_jobs WHERE project_number = $1::bigint AND location = $2";
  if (query.after) {
    where.params.push_back(MicrosParam(query.after->create_time));
    where.params.push_back(std::to_string(query.after->id));
    sql += " AND (create_time, id) < (" TY_TS("$3") ", $4::bigint)";
  }
  if (query.filter) {
    SqlFragment filter;
    AppendFilterSql(*query.filter, static_cast<int>(where.params.size()) + 1, filter);
    sql += " AND " + filter.sql;
    for (auto& p : filter.params) where.params.push_back(std::move(p));
  }
  where.params.push_back(std::to_string(query.limit + 1));
  sql +=
      " ORDER BY create_time DESC, id DESC LIMIT $" + std::to_string(where.params.size()) + "::int";
  return ListSql{std::move(sql), pg::Params(where.params.begin(), where.params.end())};
}

}  // namespace

StatusOr<std::vector<JobRecord>> PgJobStore::List(const ListJobsQuery& query) {
  ListSql list = ListStatement(query, TY_JOB_COLUMNS);
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(list.sql, list.params));
  return DecodeJobRows(r);
}

StatusOr<std::vector<JobVersion>> PgJobStore::ListVersions(const ListJobsQuery& query) {
  ListSql list = ListStatement(query, "id, version");
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(list.sql, list.params));
  std::vector<JobVersion> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back(JobVersion{r.GetInt64(i, 0), r.GetInt64(i, 1)});
  }
  return out;
}

StatusOr<bool> PgJobStore::ApplyTransition(const StateUpdate& update) {
  TY_ASSIGN_OR_RETURN(std::vector<bool> applied, ApplyTransitions({update}));
  return static_cast<bool>(applied.front());
}

StatusOr<std::vector<bool>> PgJobStore::ApplyTransitions(const std::vector<StateUpdate>& updates) {
  std::vector<bool> applied;
  applied.reserve(updates.size());
  if (updates.empty()) return applied;
  // Two round trips for the whole pass: every compare-and-set in one statement, then the node
  // changes of those that applied; one commit. A job twice in one pass (never from the executor)
  // goes one statement a transition, in order, each seeing the one before.
  std::unordered_set<int64_t> ids;
  for (const StateUpdate& update : updates) ids.insert(update.id);
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  // The writes are computed from each row at its expected version: the caller's read (the
  // executor's), else one read here of every row that lacks it (a round trip more).
  std::vector<StateUpdate> read;
  const bool reads = std::any_of(updates.begin(), updates.end(), LacksBasis);
  if (reads) read = updates;
  const std::vector<StateUpdate>& ready = reads ? read : updates;
  if (ids.size() == updates.size()) {
    if (reads) {
      std::vector<StateUpdate*> lacking;
      for (StateUpdate& update : read) lacking.push_back(&update);
      TY_RETURN_IF_ERROR(ReadTransitionBases(*conn, lacking));
    }
    if (updates.size() > 1) {
      TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(TransitionsStatement(ready)));
      std::unordered_set<int64_t> moved;
      for (int i = 0; i < r.rows(); ++i) moved.insert(r.GetInt64(i, 0));
      for (const StateUpdate& update : updates) applied.push_back(moved.contains(update.id));
    } else {
      TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(TransitionStatement(ready.front())));
      applied.push_back(r.affected() == 1);
    }
  } else {
    // One at a time, each read after the one before applied.
    std::vector<StateUpdate> each = updates;
    for (StateUpdate& update : each) {
      TY_RETURN_IF_ERROR(ReadTransitionBases(*conn, {&update}));
      TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(TransitionStatement(update)));
      applied.push_back(r.affected() == 1);
    }
  }
  std::vector<const StateUpdate*> moved;
  for (size_t i = 0; i < updates.size(); ++i) {
    if (applied[i]) moved.push_back(&updates[i]);
  }
  std::vector<pg::Statement> nodes;
  if (ids.size() == updates.size()) {
    nodes = TransitionNodeStatements(moved);
  } else {
    for (const StateUpdate* update : moved) {  // in order: a job's second move follows its first
      for (pg::Statement& statement : TransitionNodeStatements({update})) {
        nodes.push_back(std::move(statement));
      }
    }
  }
  if (!nodes.empty()) TY_RETURN_IF_ERROR(conn->ExecBatch(nodes).status());
  TY_RETURN_IF_ERROR(tx.Commit());
  return applied;
}

Status PgJobStore::DeleteWithOperation(int64_t project_number, const std::string& location,
                                       int64_t id, int64_t expected_version, const Operation& op) {
  pg::Params params = {
      std::to_string(id),
      std::to_string(project_number),
      location,
      std::to_string(expected_version),
      std::to_string(op.id),
      op.parent,
      op.metadata_type,
      op.response_json,
      MicrosParam(op.create_time),
  };
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  TY_ASSIGN_OR_RETURN(pg::Result r, tx.Exec(kDeleteWithOperation, params));
  if (r.affected() == 0) return NotFound("custom job not found");
  TY_RETURN_IF_ERROR(tx.Exec(kDeleteLogs, {std::to_string(id)}).status());
  return tx.Commit();
}

StatusOr<int64_t> PgJobStore::Heartbeat(const std::string& owner, std::chrono::seconds lease) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kHeartbeat, {owner, std::to_string(lease.count())}));
  return r.affected();
}

StatusOr<ClaimCounts> PgJobStore::Claim(const std::string& owner, int limit,
                                        std::chrono::seconds lease) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kClaim, {owner, std::to_string(limit),
                                                        std::to_string(lease.count())}));
  return ClaimCounts{r.GetInt64(0, 0), r.GetInt64(0, 1), r.GetInt64(0, 2)};
}

StatusOr<std::vector<JobRecord>> PgJobStore::Due(const std::string& owner, Timestamp now,
                                                 int limit) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      conn->Exec(kDue, {owner, MicrosParam(now), std::to_string(limit)}));
  return DecodeJobRows(r);
}

StatusOr<std::optional<Timestamp>> PgJobStore::NextDue(const std::string& owner) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kNextDue, {owner}));
  return OptionalTime(r, 0, 0);
}

StatusOr<std::vector<JobRecord>> PgJobStore::ByIds(const std::vector<int64_t>& ids) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kByIds, {NumberArray(ids)}));
  return DecodeJobRows(r);
}

StatusOr<std::vector<int64_t>> PgJobStore::ReleaseAll(const std::string& owner) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kReleaseAll, {owner}));
  std::vector<int64_t> ids;
  ids.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) ids.push_back(r.GetInt64(i, 0));
  return ids;
}

}  // namespace trainyard::storage
