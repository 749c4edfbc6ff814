#include "storage/pg_scheduler_store.h"

#include <algorithm>
#include <set>

#include "services/fleet/node_state.h"
#include "services/jobs/job_state_machine.h"
#include "services/scheduler/admission_planner.h"
#include "storage/job_row.h"
#include "storage/job_transition_sql.h"
#include "storage/pg_cycle_writes.h"
#include "storage/resource_row.h"
#include "storage/row_codec.h"
#include "storage/state_sql.h"

namespace trainyard::storage {
namespace {

constexpr const char* kTryLock = "SELECT pg_try_advisory_lock(hashtext('trainyard.scheduler'))";
constexpr const char* kUnlock = "SELECT pg_advisory_unlock(hashtext('trainyard.scheduler'))";

constexpr const char* kEpoch =
    "WITH i AS (INSERT INTO fleet_epoch (singleton, epoch) VALUES (true, " TY_TS("$1") ") "
    "ON CONFLICT (singleton) DO NOTHING RETURNING epoch) "
    "SELECT " TY_MICROS("epoch") " FROM i UNION ALL SELECT " TY_MICROS("epoch") " FROM fleet_epoch";

// One slot per node of each pool, new ones in NodeStateMachine::Initial's state ($7); existing
// slots keep their state and cache, and take the fleet file's keepBooted (a node it no longer
// keeps stays as it is until its holder gives it back). Only missing slots are inserted and only
// changed ones updated: an INSERT .. ON CONFLICT waits on every existing row another server's pass
// has locked, and a server starting beside a busy leader hit its lock_timeout and exited.
// Returns the slots inserted.
constexpr const char* kSyncNodes =
    "WITH p AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], "
    "$5::int[], $7::smallint[]) AS p(pool_id, zone, machine_type, keep_warm, nodes, state)), "
    "added AS (INSERT INTO nodes (pool_id, ordinal, zone, machine_type, keep_warm, state, "
    "state_since) SELECT p.pool_id, g.ordinal, p.zone, p.machine_type, p.keep_warm, p.state, " TY_TS(
        "$6") " FROM p CROSS JOIN LATERAL generate_series(0, p.nodes - 1) AS g(ordinal) "
              "WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.pool_id = p.pool_id AND n.ordinal = "
              "g.ordinal) ON CONFLICT (pool_id, ordinal) DO NOTHING RETURNING 1), "
              "kept AS (UPDATE nodes SET keep_warm = p.keep_warm FROM p WHERE nodes.pool_id = "
              "p.pool_id AND nodes.keep_warm IS DISTINCT FROM p.keep_warm RETURNING 1) "
              "SELECT (SELECT count(*) FROM added), (SELECT count(*) FROM kept)";

// Only transactions below the snapshot's xmin: every one of them has finished, so no row can
// still appear behind the cursor (migrations/0006_change_xid.sql). ORDER BY names the table's
// columns: a bare change_xid is the output column, change_xid::text, whose order puts "10" before
// "9", and a cursor that jumped ahead of a row would never come back for it. Only a queued job's
// spec and labels are read ($4: QUEUED), only a live job's placement ($5: the ended states), and
// never the run: the scheduler keeps each job's shape from its queued row, and decoding the JSON
// of every later change again was most of its thread's work.
constexpr const char* kChanges =
    "SELECT " TY_JOB_COLUMNS_OF("CASE WHEN state = $4::smallint THEN job_spec::text END",
                                "CASE WHEN state = $4::smallint THEN labels::text END",
                                "CASE WHEN state = ANY($5::smallint[]) THEN NULL "
                                "ELSE placement::text END",
                                "NULL::text")
    " FROM custom_jobs WHERE (change_xid, change_seq) > ($1::xid8, $2::bigint) "
    "AND change_xid < pg_snapshot_xmin(pg_current_snapshot()) "
    "ORDER BY custom_jobs.change_xid, custom_jobs.change_seq LIMIT $3::int";

// A reload, in one REPEATABLE READ snapshot: the jobs that have not ended ($1: the ended states),
// and the feed's last change from a finished transaction. Every change from a transaction below
// the snapshot's xmin is in the snapshot, so the feed resumes after that one; a later change
// already in the snapshot comes again, which applying by version makes harmless.
constexpr const char* kLiveJobs = "SELECT " TY_JOB_COLUMNS
                                  " FROM custom_jobs WHERE NOT (state = ANY($1::smallint[])) ORDER "
                                  "BY custom_jobs.change_xid, custom_jobs.change_seq";
constexpr const char* kFeedHead =
    "SELECT change_xid::text, change_seq FROM custom_jobs "
    "WHERE change_xid < pg_snapshot_xmin(pg_current_snapshot()) "
    "ORDER BY custom_jobs.change_xid DESC, custom_jobs.change_seq DESC LIMIT 1";

// A down node a persistent resource holds is the resource's loss, already out of the pool's free
// units through the resource's hold; so is one still booting for it (a resize that grew it): its
// jobs cannot have it before it is READY, and a core that counted it would admit onto it, see the
// claim come back short and read the whole change feed again.
const StateSql kUnhealthy(
    "SELECT pool_id, ordinal, COALESCE(resource_uid, 0) FROM nodes WHERE job_id IS NULL "
    "AND (state IN (:node_preempted, :node_failed, :node_repairing) "
    "OR (resource_uid IS NOT NULL AND state = :node_provisioning))");

constexpr const char* kResourcesByUid =
    "SELECT " TY_RESOURCE_COLUMNS TY_RESOURCE_FROM " WHERE r.uid = ANY($1::bigint[])";
constexpr const char* kResourceStamps =
    "SELECT r.uid, r.version, COALESCE(o.cancel_requested, false) FROM persistent_resources r "
    "LEFT JOIN operations o ON o.id = r.operation_id";

}  // namespace

StatusOr<pg::Connection*> PgSchedulerStore::Connection() {
  if (conn_ && conn_->broken()) {
    conn_.reset();
    leading_ = false;
  }
  if (!conn_) {
    TY_ASSIGN_OR_RETURN(conn_, pg::Connection::Connect(conninfo_, session_));
  }
  return conn_.get();
}

StatusOr<pg::Connection*> PgSchedulerStore::LeaderConnection() {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  if (!leading_) return Aborted("not the scheduler leader");
  return conn;
}

StatusOr<bool> PgSchedulerStore::TryLead() {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  if (leading_) return true;
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kTryLock));
  leading_ = r.GetBool(0, 0);
  return leading_;
}

Status PgSchedulerStore::Resign() {
  if (!leading_ || !conn_) return Status::Ok();
  leading_ = false;
  return conn_->Exec(kUnlock).status();
}

StatusOr<Timestamp> PgSchedulerStore::SyncNodes(const Fleet& fleet, Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  std::vector<std::string> ids, zones, machines, warm;
  std::vector<int> nodes, states;
  for (const CapacityPool& pool : fleet.pools) {
    if (pool.elastic) continue;  // no node rows: its VMs exist only while a job holds them
    states.push_back(static_cast<int>(NodeStateMachine::Initial(pool.keep_booted)));
    ids.push_back(pool.id);
    zones.push_back(pool.zone);
    machines.push_back(pool.machine_type);
    warm.push_back(pool.keep_booted ? "true" : "false");
    nodes.push_back(pool.nodes());
  }
  std::string warm_array = "{";
  for (size_t i = 0; i < warm.size(); ++i) warm_array += (i > 0 ? "," : "") + warm[i];
  warm_array += "}";
  TY_ASSIGN_OR_RETURN(
      pg::Result synced,
      conn->Exec(kSyncNodes, {TextArray(ids), TextArray(zones), TextArray(machines), warm_array,
                              NumberArray(nodes), MicrosParam(now), NumberArray(states)}));
  // New node rows (thousands on a fresh fleet): without statistics the planner takes
  // `pool_id = $1` for one row and walks a whole pool per node claim (1 ms each instead of
  // 0.2 ms, measured); autovacuum would analyze only later.
  if (synced.GetInt64(0, 0) > 0) TY_RETURN_IF_ERROR(conn->ExecScript("ANALYZE nodes").status());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kEpoch, {MicrosParam(now)}));
  return FromUnixMicros(r.GetInt64(0, 0));
}

StatusOr<std::vector<JobRecord>> PgSchedulerStore::JobChanges(const ChangeCursor& after,
                                                              int limit) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      conn->Exec(kChanges,
                 {std::to_string(after.xid), std::to_string(after.seq), std::to_string(limit),
                  std::to_string(static_cast<int>(JobState::kQueued)), TerminalJobStatesParam()}));
  return DecodeJobRows(r);
}

StatusOr<SchedulerStore::LiveJobs> PgSchedulerStore::ReadLiveJobs() {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx,
                      pg::Transaction::Begin(*conn, pg::IsolationLevel::kRepeatableRead));
  LiveJobs out;
  TY_ASSIGN_OR_RETURN(pg::Result head, tx.Exec(kFeedHead));
  if (head.rows() > 0) {
    out.cursor.xid = std::strtoull(std::string(head.Get(0, 0)).c_str(), nullptr, 10);
    out.cursor.seq = head.GetInt64(0, 1);
  }
  TY_ASSIGN_OR_RETURN(pg::Result live, tx.Exec(kLiveJobs, {TerminalJobStatesParam()}));
  TY_ASSIGN_OR_RETURN(out.jobs, DecodeJobRows(live));
  TY_RETURN_IF_ERROR(tx.Commit());
  return out;
}

StatusOr<std::vector<SchedulerStore::ResourceStamp>> PgSchedulerStore::ResourceStamps() {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kResourceStamps));
  std::vector<ResourceStamp> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back({r.GetInt64(i, 0), r.GetInt64(i, 1), r.GetBool(i, 2)});
  }
  return out;
}

StatusOr<std::vector<ResourceRecord>> PgSchedulerStore::ResourcesByUid(
    const std::vector<int64_t>& uids) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kResourcesByUid, {NumberArray(uids)}));
  std::vector<ResourceRecord> out;
  for (int i = 0; i < r.rows(); ++i) {
    TY_ASSIGN_OR_RETURN(ResourceRecord rec, DecodeResourceRow(r, i));
    out.push_back(std::move(rec));
  }
  return out;
}

StatusOr<SchedulerStore::UnitsDownView> PgSchedulerStore::UnitsDown(const Fleet& fleet) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kUnhealthy.With({})));
  // (resource uid, 0 for none) → pool → the units with an unhealthy host.
  std::map<int64_t, std::map<std::string, std::set<int64_t>>> units;
  for (int i = 0; i < r.rows(); ++i) {
    std::string pool_id(r.Get(i, 0));
    const CapacityPool* pool = fleet.FindPool(pool_id);
    if (pool == nullptr) continue;
    units[r.GetInt64(i, 2)][pool_id].insert(r.GetInt64(i, 1) / pool->hosts_per_unit);
  }
  UnitsDownView out;
  for (auto& [uid, pools] : units) {
    std::map<std::string, int64_t>& into = uid == 0 ? out.pools : out.resources[uid];
    for (auto& [pool_id, set] : pools) into[pool_id] = static_cast<int64_t>(set.size());
  }
  return out;
}

StatusOr<CommitOutcome> PgSchedulerStore::Commit(const AdmissionPlanner& planner,
                                                 const CycleResult& cycle, Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  if (!leading_) return Aborted("not the scheduler leader");
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  PgCycleWrites writes(tx, planner.fleet());
  TY_ASSIGN_OR_RETURN(CommitOutcome outcome, CommitCycle(planner, cycle, now, writes));
  TY_RETURN_IF_ERROR(tx.Commit());
  return outcome;
}

}  // namespace trainyard::storage
