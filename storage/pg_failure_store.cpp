#include "storage/pg_failure_store.h"

#include "services/fleet/failure_model.h"
#include "storage/job_change_notify.h"
#include "storage/job_row.h"
#include "storage/job_transition_sql.h"
#include "storage/node_moves.h"
#include "storage/pg_fault_injection_store.h"
#include "storage/row_codec.h"
#include "storage/state_sql.h"

namespace trainyard::storage {
namespace {

#define TY_NODE_COLUMNS                                                        \
  "pool_id, ordinal, state, job_id, " TY_MICROS("state_since") ", " TY_MICROS( \
      "preempt_at") ", " TY_MICROS("ready_at")

// $2 in these three: the live node states (LiveNodeStatesParam), $8 in kNotice.
constexpr const char* kLiveNodes =
    "SELECT " TY_NODE_COLUMNS
    " FROM nodes WHERE pool_id = ANY($1::text[]) AND state = ANY($2::smallint[]) "
    "AND preempt_at IS NULL ORDER BY pool_id, ordinal";

constexpr const char* kNode =
    "SELECT " TY_NODE_COLUMNS " FROM nodes WHERE pool_id = $1 AND ordinal = $2::int";

constexpr const char* kNoticesDue =
    "SELECT " TY_NODE_COLUMNS " FROM nodes WHERE preempt_at <= " TY_TS(
        "$1") " AND state = ANY($2::smallint[]) ORDER BY preempt_at, pool_id, ordinal";

const StateSql kRepairsDue("SELECT " TY_NODE_COLUMNS
                           " FROM nodes WHERE state = :node_repairing AND ready_at <= " TY_TS(
                               "$1") " ORDER BY ready_at, pool_id, ordinal");

constexpr const char* kJobs =
    "SELECT " TY_JOB_COLUMNS " FROM custom_jobs WHERE id = ANY($1::bigint[])";

constexpr const char* kPendingInjections =
    "SELECT " TY_INJECTION_COLUMNS
    " FROM fault_injections WHERE apply_time IS NULL ORDER BY id LIMIT $1::int";

constexpr const char* kFinishInjection =
    "UPDATE fault_injections SET apply_time = " TY_TS("$2") ", outcome = $3 "
    "WHERE id = $1::bigint AND apply_time IS NULL";

constexpr const char* kHazardTick = "SELECT tick FROM fleet_hazard_progress";

constexpr const char* kSaveHazardTick =
    "INSERT INTO fleet_hazard_progress (singleton, tick) VALUES (true, $1::bigint) "
    "ON CONFLICT (singleton) DO UPDATE SET tick = GREATEST(fleet_hazard_progress.tick, "
    "EXCLUDED.tick)";

// Locks the job on a node before the node itself: the runtime locks a job, then its nodes, and
// the same order here keeps the two from deadlocking.
constexpr const char* kLockJobOfNode =
    "SELECT 1 FROM custom_jobs WHERE id = (SELECT job_id FROM nodes WHERE pool_id = $1 "
    "AND ordinal = $2::int) FOR UPDATE";

// The node is marked; its job keeps running through the notice and says so (a note, not a
// transition: the job's state and version stay). $6: the admitted job states; $8: live nodes.
constexpr const char* kNotice =
    "WITH n AS (UPDATE nodes SET preempt_at = " TY_TS("$3") " WHERE pool_id = $1 "
          "AND ordinal = $2::int AND state = ANY($8::smallint[]) "
          "AND preempt_at IS NULL RETURNING job_id), "
          "j AS (UPDATE custom_jobs SET sched_code = $7, sched_message = $4 "
          "WHERE id = (SELECT job_id FROM n) AND state = ANY($6::smallint[]) RETURNING id, state), "
          "notified AS (" TY_NOTIFY_JOBS_OF("j") ") "
          "INSERT INTO job_events (job_id, time, from_state, to_state, reason) "
          "SELECT id, " TY_TS("$5") ", state, state, $4 FROM j "
          "WHERE (SELECT count(*) FROM notified) >= 0";

// The node moves as NodeStateMachine's event says from the state it is found in ($5, $6:
// EventMovesParams), the same for every statement below: none chooses a state of its own.
constexpr const char* kPreemptNode =
    "UPDATE nodes SET state = m.to_state, job_id = NULL, preempt_at = NULL, image_cache = '{}', "
    "state_since = " TY_TS("$3") ", ready_at = " TY_TS("$4") " FROM " TY_EVENT_MOVES(
        "$5", "$6") " WHERE pool_id = $1 AND ordinal = $2::int AND nodes.state = m.from_state";

// The repaired node is recreated: its image cache is gone.
constexpr const char* kFailNode =
    "UPDATE nodes SET state = m.to_state, state_since = " TY_TS("$3") ", ready_at = " TY_TS(
        "$4") ", preempt_at = NULL, image_cache = '{}' FROM " TY_EVENT_MOVES("$5", "$6")
    " WHERE pool_id = $1 AND ordinal = $2::int AND nodes.state = m.from_state";

// Every scheduler pass runs it, and nearly always no node is FAILED: with the states it moves
// from as literals it walks nodes_unwell, not the whole nodes table and its dead row versions
// (1 ms a pass with one client creating, every role; pg_stat_statements in docs/performance.md).
const std::string& StartRepairsSql() {
  static const std::string sql = "UPDATE nodes SET state = m.to_state, state_since = " TY_TS(
      "$1") " FROM " TY_EVENT_MOVES("$2", "$3") " WHERE nodes.state = m.from_state "
      "AND nodes.state IN (" + EventFromStatesSql(NodeEvent::kRepairStarted) + ")";
  return sql;
}

// A repaired node as it is now, locked, with what decides where NodeStateMachine's kRepaired
// takes it: its job, and whether it is warm (a keepBooted pool's, or a persistent resource's).
constexpr const char* kLockRepairedNode =
    "SELECT state, job_id IS NOT NULL, keep_warm OR resource_uid IS NOT NULL FROM nodes "
    "WHERE pool_id = $1 AND ordinal = $2::int FOR UPDATE";

// A reclaimed slot no job waits on is free again once its VM is gone ($2, $3: kPreemptedGone).
constexpr const char* kGiveBackPreempted =
    "UPDATE nodes SET state = m.to_state, state_since = ready_at, ready_at = NULL "
    "FROM " TY_EVENT_MOVES(
        "$2",
        "$3") " WHERE nodes.state = m.from_state AND job_id IS NULL AND ready_at <= " TY_TS("$1");

std::vector<NodeStatus> DecodeNodes(const pg::Result& r) {
  std::vector<NodeStatus> out;
  for (int i = 0; i < r.rows(); ++i) {
    NodeStatus n;
    n.node = NodeRef{std::string(r.Get(i, 0)), r.GetInt64(i, 1)};
    n.state = static_cast<NodeState>(r.GetInt64(i, 2));
    if (!r.IsNull(i, 3)) n.job_id = r.GetInt64(i, 3);
    n.since = FromUnixMicros(r.GetInt64(i, 4));
    n.preempt_at = OptionalTime(r, i, 5);
    n.ready_at = OptionalTime(r, i, 6);
    out.push_back(std::move(n));
  }
  return out;
}

pg::Params NodeParams(const NodeRef& node) { return {node.pool_id, std::to_string(node.ordinal)}; }

Status Finish(pg::Transaction& tx, const InjectionDone& done, Timestamp now) {
  return tx.Exec(kFinishInjection, {std::to_string(done.id), MicrosParam(now), done.outcome})
      .status();
}

std::string AdmittedStates() {
  return NumberArray(
      std::vector<int>{static_cast<int>(JobState::kPending), static_cast<int>(JobState::kRunning)});
}

// Applies the job's transition in `tx`; false when the job moved on (nothing written).
StatusOr<bool> ApplyJob(pg::Transaction& tx, StateUpdate update) {
  TY_RETURN_IF_ERROR(ReadTransitionBases(tx.connection(), {&update}));
  pg::Statement statement = TransitionStatement(update);
  TY_ASSIGN_OR_RETURN(pg::Result r, tx.Exec(statement.sql, statement.params));
  return r.affected() == 1;
}

}  // namespace

StatusOr<std::vector<FaultInjection>> PgFailureStore::PendingInjections(int limit) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kPendingInjections, {std::to_string(limit)}));
  std::vector<FaultInjection> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(DecodeFaultInjection(r, i));
  return out;
}

Status PgFailureStore::FinishInjection(const InjectionDone& done, Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  TY_RETURN_IF_ERROR(Finish(tx, done, now));
  return tx.Commit();
}

StatusOr<std::vector<NodeStatus>> PgFailureStore::LiveNodes(
    const std::vector<std::string>& pool_ids) {
  if (pool_ids.empty()) return std::vector<NodeStatus>{};
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      conn->Exec(kLiveNodes, {TextArray(pool_ids), LiveNodeStatesParam()}));
  return DecodeNodes(r);
}

StatusOr<NodeStatus> PgFailureStore::Node(const NodeRef& node) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kNode, NodeParams(node)));
  std::vector<NodeStatus> nodes = DecodeNodes(r);
  if (nodes.empty()) {
    return NotFound("node " + NodeName(node.pool_id, node.ordinal) + " has no slot");
  }
  return nodes.front();
}

StatusOr<std::vector<NodeStatus>> PgFailureStore::NoticesDue(Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      conn->Exec(kNoticesDue, {MicrosParam(now), LiveNodeStatesParam()}));
  return DecodeNodes(r);
}

StatusOr<std::vector<NodeStatus>> PgFailureStore::RepairsDue(Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kRepairsDue.With({MicrosParam(now)})));
  return DecodeNodes(r);
}

StatusOr<std::map<int64_t, JobRecord>> PgFailureStore::Jobs(const std::vector<int64_t>& ids) {
  std::map<int64_t, JobRecord> out;
  if (ids.empty()) return out;
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kJobs, {NumberArray(ids)}));
  TY_ASSIGN_OR_RETURN(std::vector<JobRecord> records, DecodeJobRows(r));
  for (JobRecord& record : records) out.emplace(record.id, std::move(record));
  return out;
}

StatusOr<std::optional<int64_t>> PgFailureStore::HazardTick() {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kHazardTick));
  if (r.rows() == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(r.GetInt64(0, 0));
}

Status PgFailureStore::GiveNotices(const std::vector<SpotNotice>& notices, Timestamp now,
                                   std::optional<int64_t> hazard_tick,
                                   const std::optional<InjectionDone>& injection) {
  if (notices.empty() && !hazard_tick && !injection) return Status::Ok();
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  for (const SpotNotice& notice : notices) {
    TY_RETURN_IF_ERROR(tx.Exec(kLockJobOfNode, NodeParams(notice.node)).status());
    TY_RETURN_IF_ERROR(
        tx.Exec(kNotice, {notice.node.pool_id, std::to_string(notice.node.ordinal),
                          MicrosParam(notice.preempt_at), notice.reason, MicrosParam(now),
                          AdmittedStates(), notice.code, LiveNodeStatesParam()})
            .status());
  }
  if (hazard_tick) {
    TY_RETURN_IF_ERROR(tx.Exec(kSaveHazardTick, {std::to_string(*hazard_tick)}).status());
  }
  if (injection) TY_RETURN_IF_ERROR(Finish(tx, *injection, now));
  return tx.Commit();
}

StatusOr<bool> PgFailureStore::ReclaimNode(const Reclaim& reclaim) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  // The job first, then its nodes (see kLockJobOfNode).
  if (reclaim.job) {
    TY_ASSIGN_OR_RETURN(bool applied, ApplyJob(tx, *reclaim.job));
    if (!applied) {
      TY_RETURN_IF_ERROR(tx.Rollback());
      return false;
    }
  }
  pg::Params node = NodeParams(reclaim.node);
  node.push_back(MicrosParam(reclaim.at));
  node.push_back(MicrosParam(
      reclaim.at + std::chrono::duration_cast<std::chrono::microseconds>(kPreemptedLinger)));
  TY_ASSIGN_OR_RETURN(
      pg::Result preempted,
      tx.Exec(kPreemptNode, WithEventMoves(std::move(node), NodeEvent::kReclaimed)));
  if (preempted.affected() != 1) {
    TY_RETURN_IF_ERROR(tx.Rollback());
    return false;
  }
  if (reclaim.job) {
    for (const pg::Statement& release : TransitionNodeStatements({&*reclaim.job})) {
      TY_RETURN_IF_ERROR(tx.Exec(release.sql, release.params).status());
    }
  }
  TY_RETURN_IF_ERROR(tx.Commit());
  return true;
}

StatusOr<bool> PgFailureStore::FailNode(const NodeFailure& failure) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  if (failure.job) {
    TY_ASSIGN_OR_RETURN(bool applied, ApplyJob(tx, *failure.job));
    if (!applied) {
      TY_RETURN_IF_ERROR(tx.Rollback());
      return false;
    }
  }
  pg::Params node = NodeParams(failure.node);
  node.push_back(MicrosParam(failure.at));
  node.push_back(MicrosParam(failure.repaired_at));
  TY_ASSIGN_OR_RETURN(pg::Result failed,
                      tx.Exec(kFailNode, WithEventMoves(std::move(node), NodeEvent::kFailed)));
  if (failed.affected() != 1) {
    TY_RETURN_IF_ERROR(tx.Rollback());
    return false;
  }
  if (failure.injection) TY_RETURN_IF_ERROR(Finish(tx, *failure.injection, failure.at));
  TY_RETURN_IF_ERROR(tx.Commit());
  return true;
}

Status PgFailureStore::StartRepairs(Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  return conn
      ->Exec(StartRepairsSql(), WithEventMoves({MicrosParam(now)}, NodeEvent::kRepairStarted))
      .status();
}

StatusOr<bool> PgFailureStore::FinishRepair(const Repair& repair) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  TY_RETURN_IF_ERROR(tx.Exec(kLockJobOfNode, NodeParams(repair.node)).status());
  TY_ASSIGN_OR_RETURN(pg::Result read, tx.Exec(kLockRepairedNode, NodeParams(repair.node)));
  std::optional<NodeMove> move;
  if (read.rows() == 1) {
    move = PlanNodeMove(repair.node.pool_id, repair.node.ordinal,
                        static_cast<NodeState>(read.GetInt64(0, 0)), NodeEvent::kRepaired, 0,
                        NodeFacts{read.GetBool(0, 1), read.GetBool(0, 2)});
  }
  // Not REPAIRING (repaired already, or never failed): nothing to do.
  if (!move) {
    TY_RETURN_IF_ERROR(tx.Rollback());
    return false;
  }
  TY_ASSIGN_OR_RETURN(NodeMovesApplied repaired,
                      ApplyNodeMoves(tx, NodeWrite::kRepaired, {*move}, repair.at));
  if (!repaired.lost.empty()) {
    TY_RETURN_IF_ERROR(tx.Rollback());
    return false;
  }
  if (repair.job) {
    // A job that moved on (cancelled, requeued) or still waits for another node stays as it is.
    TY_RETURN_IF_ERROR(ApplyJob(tx, *repair.job).status());
  }
  TY_RETURN_IF_ERROR(tx.Commit());
  return true;
}

Status PgFailureStore::GiveBackPreempted(Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, leader_.LeaderConnection());
  // No job waits on it (the statement's job_id IS NULL).
  return conn
      ->Exec(kGiveBackPreempted,
             WithEventMoves({MicrosParam(now)}, NodeEvent::kPreemptedGone, NodeFacts{false}))
      .status();
}

}  // namespace trainyard::storage
