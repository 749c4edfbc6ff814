#include "storage/pg_resource_fleet_store.h"

#include <map>

#include "services/cost/resource_cost.h"
#include "services/fleet/node_state.h"
#include "services/persistent_resources/resource_holdings.h"
#include "storage/job_row.h"
#include "storage/job_transition_sql.h"
#include "storage/node_moves.h"
#include "storage/operation_sql.h"
#include "storage/recorded_operation.h"
#include "storage/resource_row.h"
#include "storage/row_codec.h"
#include "storage/state_sql.h"

namespace trainyard::storage {
namespace {

// Compare-and-set on the version; $3 the time.
const StateSql kRunning(
    "UPDATE persistent_resources SET state = :resource_running, start_time = COALESCE(start_time, " TY_TS("$3") "), "
    "update_time = " TY_TS("$3") ", operation_id = NULL, version = version + 1 "
    "WHERE uid = $1::bigint AND version = $2::bigint");

// Booted nodes are READY for the resource's jobs (busy ones stay with their job); idle ones count
// as idle from now (autoscaling gives back nodes idle too long).
// Each node moves as NodeStateMachine's kResourceBooted says from the state it is in ($3, $4).
constexpr const char* kNodesReady =
    "UPDATE nodes SET state = m.to_state, state_since = " TY_TS("$2") " FROM " TY_EVENT_MOVES(
        "$3", "$4") " WHERE resource_uid = $1::bigint AND nodes.state = m.from_state "
                    "AND job_id IS NULL";

const StateSql kAutoscale(
    "UPDATE persistent_resources SET resource = $3::jsonb, state = :resource_updating, "
    "ready_at = NULL, "
    "update_time = " TY_TS("$4") ", version = version + 1 "
    "WHERE uid = $1::bigint AND version = $2::bigint AND state = :resource_running");

const StateSql kIdleNodes(
    "SELECT pool_id, count(*) FROM nodes WHERE resource_uid = $1::bigint AND job_id IS NULL "
    "AND state = :node_ready AND state_since <= " TY_TS("$2") " GROUP BY pool_id");

const StateSql
    kReboot("UPDATE persistent_resources SET ready_at = " TY_TS("$3") ", update_time = " TY_TS(
        "$4") ", "
              "version = version + 1 WHERE uid = $1::bigint AND version = $2::bigint "
              "AND state = :resource_rebooting");

// Idle nodes boot again (kResourceReboot, $3, $4); the image cache is on disk and survives.
constexpr const char* kNodesReboot =
    "UPDATE nodes SET state = m.to_state, state_since = " TY_TS("$2") " FROM " TY_EVENT_MOVES(
        "$3", "$4") " WHERE resource_uid = $1::bigint AND nodes.state = m.from_state "
                    "AND job_id IS NULL";

// A job's nodes are down until $3, as after a failure (kFailed, $4, $5: then the failure
// simulator's REPAIRING and repair at ready_at, which resumes the job); the cache survives.
constexpr const char* kBusyNodesReboot =
    "UPDATE nodes SET state = m.to_state, state_since = " TY_TS("$2") ", ready_at = " TY_TS(
        "$3") ", preempt_at = NULL FROM " TY_EVENT_MOVES("$4", "$5")
    " WHERE resource_uid = $1::bigint AND job_id IS NOT NULL AND nodes.state = m.from_state";

const StateSql kJobsHoldingNodes("SELECT " TY_JOB_COLUMNS
                                 " FROM custom_jobs WHERE id IN (SELECT job_id FROM nodes "
                                 "WHERE resource_uid = $1::bigint AND job_id IS NOT NULL) "
                                 "AND state IN (:job_pending, :job_running)");

// Jobs that name the resource and have not ended ($4: the terminal states).
constexpr const char* kJobsOn =
    "SELECT p.project_id, j.location, j.id FROM custom_jobs j "
    "JOIN projects p ON p.number = j.project_number "
    "WHERE j.project_number = $1::bigint AND j.location = $2 "
    "AND j.job_spec->>'persistentResourceId' = $3 AND NOT (j.state = ANY($4::smallint[]))";

constexpr const char* kBusyNodes =
    "SELECT count(*) FROM nodes WHERE resource_uid = $1::bigint AND job_id IS NOT NULL";

// The nodes go back to their pools as a job's do (NodeStateMachine::GiveBack): reservation nodes
// stay warm, the rest are given back; down nodes stay down. Each read locked, then moved.
constexpr const char* kHeldNodes =
    "SELECT pool_id, ordinal, state, keep_warm FROM nodes WHERE resource_uid = $1::bigint "
    "FOR UPDATE";

// A shrinking pool gives back its highest idle nodes ($3 of them).
constexpr const char* kShrinkable =
    "SELECT pool_id, ordinal, state, keep_warm FROM nodes "
    "WHERE resource_uid = $1::bigint AND pool_id = $2 AND job_id IS NULL "
    "ORDER BY ordinal DESC LIMIT $3::int FOR UPDATE";

// A growing pool takes free nodes of its fleet pool ($1, $2 of them), warm ones first, locked:
// each is then held as NodeStateMachine's kHeld says (a warm one stays READY, a cold one boots).
const StateSql kGrowable(
    "SELECT pool_id, ordinal, state FROM nodes "
    "WHERE pool_id = $1 AND resource_uid IS NULL AND job_id IS NULL "
    "AND state IN (:node_ready, :node_deleted) "
    "ORDER BY state = :node_ready DESC, ordinal LIMIT $2::int FOR UPDATE");

// The nodes each pool holds now, for the placement.
constexpr const char* kHeld =
    "SELECT pool_id, ordinal FROM nodes WHERE resource_uid = $1::bigint ORDER BY pool_id, ordinal";

// The old price accrues up to now ($7, services/cost/resource_cost.h's HoldCostMicros of the row
// at $2); the new one bills from now.
const StateSql kResized(
    "UPDATE persistent_resources SET placement = $3::jsonb, cost_micros = cost_micros + $7::bigint, "
    "ready_at = " TY_TS("$4") ", held_since = " TY_TS("$6") ", "
    "hourly_price_micros = $5::bigint, sched_code = NULL, sched_message = NULL, "
    "version = version + 1 WHERE uid = $1::bigint AND version = $2::bigint "
    "AND state = :resource_updating");

constexpr const char* kResizeWaits =
    "UPDATE persistent_resources SET sched_code = $3, sched_message = $2 "
    "WHERE uid = $1::bigint";

// The row goes and its cost to date stays, in resource_costs_ended ($3: now; $4: what its current
// hold has cost by then, HoldCostMicros of the row at $2). One row either way, so the count says
// whether the delete applied.
constexpr const char* kDelete =
    "WITH gone AS (DELETE FROM persistent_resources WHERE uid = $1::bigint AND version = "
    "$2::bigint RETURNING *) "
    "INSERT INTO resource_costs_ended (uid, project_number, location, resource_id, "
    "consumption_model, hourly_price_micros, cost_micros, create_time, deleted_at) "
    "SELECT uid, project_number, location, resource_id, "
    TY_PLACEMENT_MODEL("placement") ", "
    "hourly_price_micros, cost_micros + $4::bigint, create_time, " TY_TS("$3") " FROM gone";

}  // namespace

StatusOr<bool> PgResourceFleetStore::MarkRunning(const ResourceRecord& record, Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  const std::string uid = std::to_string(record.uid);
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      tx.Exec(kRunning.With({uid, std::to_string(record.version), MicrosParam(now)})));
  if (r.affected() != 1) return false;
  // Idle ones only (the statement's job_id IS NULL): busy ones stay with their job.
  TY_RETURN_IF_ERROR(
      tx.Exec(kNodesReady,
              WithEventMoves({uid, MicrosParam(now)}, NodeEvent::kResourceBooted, NodeFacts{false}))
          .status());
  if (record.operation_id) {
    TY_RETURN_IF_ERROR(tx.Exec(kFinishOperation,
                               {std::to_string(*record.operation_id), RunningResponse(record, now),
                                std::nullopt, std::nullopt, MicrosParam(now)})
                           .status());
  }
  TY_RETURN_IF_ERROR(tx.Commit());
  return true;
}

StatusOr<bool> PgResourceFleetStore::StartReboot(const ResourceRecord& record, Timestamp ready_at,
                                                 Timestamp now,
                                                 const std::vector<StateUpdate>& stops) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  const std::string uid = std::to_string(record.uid);
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      tx.Exec(kReboot.With({uid, std::to_string(record.version),
                                            MicrosParam(ready_at), MicrosParam(now)})));
  if (r.affected() != 1) return false;
  for (StateUpdate stop : stops) {
    TY_RETURN_IF_ERROR(ReadTransitionBases(*conn, {&stop}));
    pg::Statement s = TransitionStatement(stop);
    TY_ASSIGN_OR_RETURN(pg::Result applied, tx.Exec(s.sql, s.params));
    if (applied.affected() != 1) {  // the job moved on meanwhile: next pass
      TY_RETURN_IF_ERROR(tx.Rollback());
      return false;
    }
    // A job that fails gives its nodes back first; they reboot with the idle ones.
    for (const pg::Statement& release : TransitionNodeStatements({&stop})) {
      TY_RETURN_IF_ERROR(tx.Exec(release.sql, release.params).status());
    }
  }
  TY_RETURN_IF_ERROR(
      tx.Exec(kNodesReboot,
              WithEventMoves({uid, MicrosParam(now)}, NodeEvent::kResourceReboot, NodeFacts{false}))
          .status());
  TY_RETURN_IF_ERROR(
      tx.Exec(kBusyNodesReboot, WithEventMoves({uid, MicrosParam(now), MicrosParam(ready_at)},
                                               NodeEvent::kFailed, NodeFacts{true}))
          .status());
  TY_RETURN_IF_ERROR(tx.Commit());
  return true;
}

StatusOr<std::vector<JobRecord>> PgResourceFleetStore::JobsHoldingNodes(
    const ResourceRecord& record) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      conn->Exec(kJobsHoldingNodes.With({std::to_string(record.uid)})));
  return DecodeJobRows(r);
}

namespace {

// Up to `count` of the pool's free nodes held for resource `uid` (kGrowable): the moves it
// applied; fewer than `count` when the pool has fewer free.
StatusOr<NodeMovesApplied> Grow(pg::Transaction& tx, int64_t uid, const std::string& pool_id,
                                int64_t count, Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Result free, tx.Exec(kGrowable.With({pool_id, std::to_string(count)})));
  std::vector<NodeMove> moves;
  for (int i = 0; i < free.rows(); ++i) {
    if (std::optional<NodeMove> move =
            PlanNodeMove(std::string(free.Get(i, 0)), free.GetInt64(i, 1),
                         static_cast<NodeState>(free.GetInt64(i, 2)), NodeEvent::kHeld, uid)) {
      moves.push_back(std::move(*move));
    }
  }
  return ApplyNodeMoves(tx, NodeWrite::kHoldForResource, moves, now);
}

// The nodes `read` (kHeldNodes' columns) given back by resource `uid`.
StatusOr<NodeMovesApplied> GiveBack(pg::Transaction& tx, int64_t uid, const pg::Result& read,
                                    Timestamp now) {
  std::vector<NodeMove> moves;
  for (int i = 0; i < read.rows(); ++i) {
    moves.push_back(PlanGiveBack(std::string(read.Get(i, 0)), read.GetInt64(i, 1),
                                 static_cast<NodeState>(read.GetInt64(i, 2)), read.GetBool(i, 3),
                                 uid));
  }
  return ApplyNodeMoves(tx, NodeWrite::kReleaseFromResource, moves, now);
}

}  // namespace

StatusOr<bool> PgResourceFleetStore::Resize(const ResourceRecord& record,
                                            const std::vector<PoolResize>& pools,
                                            Timestamp ready_at, Timestamp now, std::string& why) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  const std::string uid = std::to_string(record.uid);
  const ResourceFleetStatus& status = *record.resource.trainyard;
  for (const auto& [pool_id, nodes] : ResizeNodeDeltas(status, pools)) {
    const bool grow = nodes > 0;
    const int64_t count = grow ? nodes : -nodes;
    int64_t moved = 0;
    if (grow) {
      TY_ASSIGN_OR_RETURN(NodeMovesApplied held, Grow(tx, record.uid, pool_id, count, now));
      moved = static_cast<int64_t>(held.applied.size());
    } else {
      TY_ASSIGN_OR_RETURN(pg::Result idle,
                          tx.Exec(kShrinkable, {uid, pool_id, std::to_string(count)}));
      TY_ASSIGN_OR_RETURN(NodeMovesApplied back, GiveBack(tx, record.uid, idle, now));
      moved = static_cast<int64_t>(back.applied.size());
    }
    if (moved != count) {
      TY_RETURN_IF_ERROR(tx.Rollback());
      why = ResizeWaitReason(pool_id, count, moved, grow);
      TY_RETURN_IF_ERROR(conn->Exec(kResizeWaits, {uid, why, "NO_CAPACITY"}).status());
      return false;
    }
  }
  TY_ASSIGN_OR_RETURN(pg::Result held, tx.Exec(kHeld, {uid}));
  std::map<std::string, std::vector<int64_t>> ordinals;
  for (int i = 0; i < held.rows(); ++i) {
    ordinals[std::string(held.Get(i, 0))].push_back(held.GetInt64(i, 1));
  }
  const JobAdmission placement = ResizedPlacement(status, pools, ordinals);
  const int64_t price = placement.hourly_price_micros;
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      tx.Exec(kResized.With({uid, std::to_string(record.version), EncodePlacement(placement),
                             MicrosParam(ready_at), std::to_string(price), MicrosParam(now),
                             std::to_string(cost::HoldCostMicros(record.hourly_price_micros,
                                                                 record.held_since, now))})));
  if (r.affected() != 1) return false;
  TY_RETURN_IF_ERROR(tx.Commit());
  return true;
}

Status PgResourceFleetStore::ResizeWaits(const ResourceRecord& record, const std::string& code,
                                         const std::string& why) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  return conn->Exec(kResizeWaits, {std::to_string(record.uid), why, code}).status();
}

StatusOr<bool> PgResourceFleetStore::Autoscale(const ResourceRecord& record,
                                               const PersistentResource& resized, Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      conn->Exec(kAutoscale.With({std::to_string(record.uid), std::to_string(record.version),
                                  EncodeResourceSpec(resized), MicrosParam(now)})));
  return r.affected() == 1;
}

StatusOr<std::map<std::string, int64_t>> PgResourceFleetStore::IdleNodes(
    const ResourceRecord& record, Timestamp since) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(
      pg::Result r, conn->Exec(kIdleNodes.With({std::to_string(record.uid), MicrosParam(since)})));
  std::map<std::string, int64_t> out;
  for (int i = 0; i < r.rows(); ++i) out[std::string(r.Get(i, 0))] = r.GetInt64(i, 1);
  return out;
}

StatusOr<std::vector<JobRef>> PgResourceFleetStore::JobsOn(const ResourceRecord& record) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      conn->Exec(kJobsOn, {std::to_string(record.project_number), record.location,
                                           record.resource_id, TerminalJobStatesParam()}));
  std::vector<JobRef> out;
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back(JobRef{ParentRef{std::string(r.Get(i, 0)), std::string(r.Get(i, 1))},
                         std::string(r.Get(i, 2))});
  }
  return out;
}

StatusOr<bool> PgResourceFleetStore::Remove(const ResourceRecord& record, Timestamp now,
                                            const std::optional<RpcStatus>& error) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  const std::string uid = std::to_string(record.uid);
  TY_ASSIGN_OR_RETURN(pg::Result busy, tx.Exec(kBusyNodes, {uid}));
  if (busy.GetInt64(0, 0) > 0) return false;  // its jobs are still stopping
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      tx.Exec(kDelete, {uid, std::to_string(record.version), MicrosParam(now),
                                        std::to_string(cost::HoldCostMicros(
                                            record.hourly_price_micros, record.held_since, now))}));
  if (r.affected() != 1) return false;
  TY_ASSIGN_OR_RETURN(pg::Result held, tx.Exec(kHeldNodes, {uid}));
  TY_ASSIGN_OR_RETURN(NodeMovesApplied back, GiveBack(tx, record.uid, held, now));
  // Locked above: a node that moved anyway is a bug, not a race to retry.
  if (!back.lost.empty()) return Internal("a released node moved under its lock");
  if (record.operation_id) {
    pg::Params finish = {std::to_string(*record.operation_id), kEmptyResponseJson, std::nullopt,
                         std::nullopt, MicrosParam(now)};
    if (error) {
      finish[1] = std::nullopt;
      finish[2] = std::to_string(error->code);
      finish[3] = error->message;
    }
    TY_RETURN_IF_ERROR(tx.Exec(kFinishOperation, finish).status());
  }
  TY_RETURN_IF_ERROR(tx.Commit());
  return true;
}

}  // namespace trainyard::storage
