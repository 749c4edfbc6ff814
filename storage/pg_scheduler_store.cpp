#include "storage/pg_scheduler_store.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "services/fleet/node_state.h"
#include "services/jobs/job_state_machine.h"
#include "services/scheduler/admission_planner.h"
#include "storage/job_row.h"
#include "storage/job_transition_sql.h"
#include "storage/node_moves.h"
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
// keeps stays as it is until its holder gives it back).
constexpr const char* kSyncNodes =
    "INSERT INTO nodes (pool_id, ordinal, zone, machine_type, keep_warm, state, state_since) "
    "SELECT p.pool_id, g.ordinal, p.zone, p.machine_type, p.keep_warm, p.state, " TY_TS("$6") " "
    "FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::int[], $7::smallint[]) "
    "AS p(pool_id, zone, machine_type, keep_warm, nodes, state) "
    "CROSS JOIN LATERAL generate_series(0, p.nodes - 1) AS g(ordinal) "
    "ON CONFLICT (pool_id, ordinal) DO UPDATE SET keep_warm = EXCLUDED.keep_warm "
    "WHERE nodes.keep_warm IS DISTINCT FROM EXCLUDED.keep_warm";

// Only transactions below the snapshot's xmin: every one of them has finished, so no row can
// still appear behind the cursor (migrations/0006_change_xid.sql). ORDER BY names the table's
// columns: a bare change_xid is the output column, change_xid::text, whose order puts "10" before
// "9", and a cursor that jumped ahead of a row would never come back for it.
constexpr const char* kChanges =
    "SELECT " TY_JOB_COLUMNS
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

// The bounded read of one pool's free nodes held by one holder (FreeNodesRead): the lowest $3
// of each of READY and DELETED, and every READY one caching one of $4's images. A statement a
// read, with the pool and the holder as values the planner can estimate with (over an unnest of
// reads, or with `resource_uid IS NOT DISTINCT FROM $2`, it guessed one row and sorted the whole
// pool); $2 is the holder's uid, or 0 for the pool's own nodes.
#define TY_LOWEST_FREE_NODES(HOLDER)                                                          \
  "(SELECT pool_id, ordinal, state, array_to_json(image_cache)::text, $2::bigint FROM nodes " \
  "WHERE pool_id = $1 AND job_id IS NULL AND " HOLDER                                         \
  " AND state = :node_ready "                                                                 \
  "ORDER BY ordinal LIMIT $3::bigint) UNION "                                                 \
  "(SELECT pool_id, ordinal, state, array_to_json(image_cache)::text, $2::bigint FROM nodes " \
  "WHERE pool_id = $1 AND job_id IS NULL AND " HOLDER                                         \
  " AND state = :node_deleted "                                                               \
  "ORDER BY ordinal LIMIT $3::bigint) UNION "                                                 \
  "(SELECT pool_id, ordinal, state, array_to_json(image_cache)::text, $2::bigint FROM nodes " \
  "WHERE pool_id = $1 AND job_id IS NULL AND " HOLDER                                         \
  " AND state = :node_ready "                                                                 \
  "AND image_cache && $4::text[])"
const StateSql kLowestFreeNodes(TY_LOWEST_FREE_NODES("resource_uid IS NULL AND $2::bigint = 0"));
const StateSql kLowestHeldNodes(TY_LOWEST_FREE_NODES("resource_uid = $2::bigint"));
#undef TY_LOWEST_FREE_NODES

const StateSql kFreeNodes(
    "SELECT pool_id, ordinal, state, array_to_json(image_cache)::text, "
    "COALESCE(resource_uid, 0) FROM nodes "
    "WHERE pool_id = ANY($1::text[]) AND job_id IS NULL AND state IN (:node_ready, :node_deleted)");

constexpr const char* kResourcesByUid =
    "SELECT " TY_RESOURCE_COLUMNS TY_RESOURCE_FROM " WHERE r.uid = ANY($1::bigint[])";
constexpr const char* kResourceStamps =
    "SELECT r.uid, r.version, COALESCE(o.cancel_requested, false) FROM persistent_resources r "
    "LEFT JOIN operations o ON o.id = r.operation_id";

// The resource's hold placed: a compare-and-set on its version while it is PROVISIONING.
const StateSql
    kPlaceResource("UPDATE persistent_resources SET placement = $3::jsonb, ready_at = " TY_TS(
        "$4") ", "
              "held_since = " TY_TS(
                  "$5") ", hourly_price_micros = $6::bigint, sched_code = NULL, "
                        "sched_message = NULL, version = version + 1 "
                        "WHERE uid = $1::bigint AND version = $2::bigint AND state = "
                        ":resource_provisioning");

// Why a resource is not placed yet: not a change, so the version stays.
const StateSql kResourceVerdicts(
    "UPDATE persistent_resources r SET sched_code = d.code, sched_message = d.msg "
    "FROM unnest($1::bigint[], $2::text[], $3::text[]) AS d(uid, code, msg) "
    "WHERE r.uid = d.uid AND r.state = :resource_provisioning AND r.placement IS NULL");

// A resource that can never be placed, after the fleet's neverFitsTimeout: ERROR, and its
// operation ends with the same error (RESOURCE_EXHAUSTED, like a stockout).
// $5: the error's code (RESOURCE_EXHAUSTED).
const StateSql kFailResourceOperation(
    "UPDATE operations SET done = true, error_code = $5::int, error_message = $2, "
    "progress_message = '', update_time = " TY_TS("$3") " WHERE NOT done AND id = (SELECT "
    "operation_id FROM persistent_resources WHERE uid = $1::bigint AND version = $4::bigint "
    "AND state = :resource_provisioning)");
const StateSql kFailResource(
    "UPDATE persistent_resources SET state = :resource_error, error_code = $5::int, "
    "error_message = $2, update_time = " TY_TS("$3") ", operation_id = NULL, sched_code = NULL, "
    "sched_message = NULL, version = version + 1 "
    "WHERE uid = $1::bigint AND version = $4::bigint AND state = :resource_provisioning");

// Verdicts annotate QUEUED jobs ($5) only: they are not transitions, so the version stays. A
// position of 0 is none reported yet.
const StateSql kVerdicts(
    "UPDATE custom_jobs j SET sched_code = d.code, sched_message = d.msg, "
    "queue_position = NULLIF(d.pos, 0) "
    "FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) AS d(id, code, msg, pos) "
    "WHERE j.id = d.id AND j.state = :job_queued");

const StateSql kVerdictEvents(
    "INSERT INTO job_events (job_id, time, from_state, to_state, reason) "
    "SELECT d.id, " TY_TS("$3") ", j.state, j.state, d.reason FROM unnest($1::bigint[], "
    "$2::text[]) AS d(id, reason) JOIN custom_jobs j ON j.id = d.id AND j.state = :job_queued");

// Victims told to stop keep running through their grace and say so (a note: state and version
// stay), with an event.
const StateSql kVictimNotices(
    "WITH n AS (UPDATE custom_jobs j SET sched_code = d.code, sched_message = d.msg "
    "FROM unnest($1::bigint[], $2::text[], $4::text[]) AS d(id, msg, code) "
    "WHERE j.id = d.id AND j.state IN (:job_pending, :job_running) RETURNING j.id, j.state, d.msg) "
    "INSERT INTO job_events (job_id, time, from_state, to_state, reason) "
    "SELECT id, " TY_TS("$3") ", state, state, msg FROM n");

// A victim as it is now, locked for the preemption: its requeue is a compare-and-set on this.
constexpr const char* kLockVictim =
    "SELECT version, state, start_time IS NOT NULL FROM custom_jobs WHERE id = $1::bigint "
    "FOR UPDATE";

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
  TY_RETURN_IF_ERROR(
      conn->Exec(kSyncNodes, {TextArray(ids), TextArray(zones), TextArray(machines), warm_array,
                              NumberArray(nodes), MicrosParam(now), NumberArray(states)})
          .status());
  // The node rows were just written (thousands on a fresh fleet): without statistics the planner
  // takes `pool_id = $1` for one row and walks a whole pool per node claim (1 ms each instead of
  // 0.2 ms, measured); autovacuum would analyze only later.
  TY_RETURN_IF_ERROR(conn->ExecScript("ANALYZE nodes").status());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kEpoch, {MicrosParam(now)}));
  return FromUnixMicros(r.GetInt64(0, 0));
}

StatusOr<std::vector<JobRecord>> PgSchedulerStore::JobChanges(const ChangeCursor& after,
                                                              int limit) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      conn->Exec(kChanges, {std::to_string(after.xid), std::to_string(after.seq),
                                            std::to_string(limit)}));
  return DecodeJobRows(r);
}

StatusOr<SchedulerStore::LiveJobs> PgSchedulerStore::ReadLiveJobs() {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  TY_ASSIGN_OR_RETURN(pg::Transaction tx,
                      pg::Transaction::Begin(*conn, pg::IsolationLevel::kRepeatableRead));
  std::vector<int> ended;
  for (JobState s : kTerminalJobStates) {
    ended.push_back(static_cast<int>(s));
  }
  LiveJobs out;
  TY_ASSIGN_OR_RETURN(pg::Result head, tx.Exec(kFeedHead));
  if (head.rows() > 0) {
    out.cursor.xid = std::strtoull(std::string(head.Get(0, 0)).c_str(), nullptr, 10);
    out.cursor.seq = head.GetInt64(0, 1);
  }
  TY_ASSIGN_OR_RETURN(pg::Result live, tx.Exec(kLiveJobs, {NumberArray(ended)}));
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

Status PgSchedulerStore::LoadFree(pg::Transaction& tx, const Fleet& fleet,
                                  const std::vector<FreeNodesRead>& reads, FreeByPool& free,
                                  NodeStatesRead& states) {
  std::vector<std::string> whole;
  std::vector<std::string> images;
  for (const FreeNodesRead& read : reads) {
    if (read.lowest == 0) whole.push_back(fleet.pools[read.pool].id);
    for (const std::string& image : read.images) {
      if (std::find(images.begin(), images.end(), image) == images.end()) images.push_back(image);
    }
  }
  std::map<std::pair<std::string, int64_t>, std::vector<FreeNode>> nodes;
  auto decode = [&nodes, &states](const pg::Result& r) {
    for (int i = 0; i < r.rows(); ++i) {
      FreeNode n;
      n.ordinal = r.GetInt64(i, 1);
      const auto state = static_cast<NodeState>(r.GetInt64(i, 2));
      n.warm = state == NodeState::kReady;
      states.insert_or_assign({std::string(r.Get(i, 0)), n.ordinal}, state);
      if (r.Get(i, 3) != "[]") {
        auto cache = nlohmann::json::parse(r.Get(i, 3), nullptr, false);
        if (cache.is_array()) {
          for (const auto& image : cache) {
            if (image.is_string()) n.image_cache.push_back(image.get<std::string>());
          }
        }
      }
      nodes[{std::string(r.Get(i, 0)), r.GetInt64(i, 4)}].push_back(std::move(n));
    }
  };
  if (!whole.empty()) {
    TY_ASSIGN_OR_RETURN(pg::Result r, tx.Exec(kFreeNodes.With({TextArray(whole)})));
    decode(r);
  }
  for (const FreeNodesRead& read : reads) {
    if (read.lowest == 0) continue;
    TY_ASSIGN_OR_RETURN(pg::Result r,
                        tx.Exec((read.holder == 0 ? kLowestFreeNodes : kLowestHeldNodes)
                                    .With({fleet.pools[read.pool].id, std::to_string(read.holder),
                                           std::to_string(read.lowest), TextArray(images)})));
    decode(r);
  }
  for (const FreeNodesRead& read : reads) {
    // Every holder read (of a whole pool: every one found, and the pool itself, 0, even when it
    // has none free); the keys of one pool are adjacent.
    const std::string& id = fleet.pools[read.pool].id;
    nodes[{id, read.holder}];
    auto it = read.lowest == 0 ? nodes.lower_bound({id, std::numeric_limits<int64_t>::min()})
                               : nodes.find({id, read.holder});
    for (; it != nodes.end() && it->first.first == id; ++it) {
      free.insert_or_assign({read.pool, it->first.second},
                            FreeUnits(fleet.pools[read.pool].hosts_per_unit, it->second,
                                      fleet.pools[read.pool].block_nodes));
      if (read.lowest != 0) break;
    }
  }
  return Status::Ok();
}

namespace {

// One admission's writes: its node moves (each a compare-and-set on the state the commit read the
// node in, storage/node_moves.h) and the job's transition, or the resource's placement.
struct PlannedWrites {
  int64_t job_id = 0;        // an admission's job…
  int64_t resource_uid = 0;  // …or a hold's resource
  // The nodes it chose, claimed (a job's) or held (a resource's) with the others' in one
  // statement: NodeStateMachine's move of each from the state LoadFree read it in. Not `whole`
  // when one has no such move (it was not read free): the admission is skipped.
  std::vector<NodeMove> moves;
  bool whole = true;
  pg::Statement admit;                // a hold's placement
  std::optional<StateUpdate> update;  // an admission's transition
  int64_t owner() const { return update ? job_id : resource_uid; }
};

std::vector<NodeMove> MovesOf(const std::vector<NodeClaim>& claims, NodeEvent event, int64_t owner,
                              int64_t holder, const NodeStatesRead& states, bool& whole) {
  std::vector<NodeMove> out;
  for (const NodeClaim& claim : claims) {
    for (int64_t ordinal : claim.ordinals) {
      auto it = states.find({claim.pool_id, ordinal});
      std::optional<NodeMove> move =
          it == states.end() ? std::nullopt
                             : PlanNodeMove(claim.pool_id, ordinal, it->second, event, owner);
      if (!move) {
        whole = false;
        continue;
      }
      move->holder = holder;
      out.push_back(std::move(*move));
    }
  }
  return out;
}

PlannedWrites WritesOf(const JobAdmissionPlan& plan, const NodeStatesRead& states) {
  PlannedWrites w;
  w.job_id = plan.job_id;
  w.moves =
      MovesOf(plan.claims, NodeEvent::kClaimed, plan.job_id, plan.resource_uid, states, w.whole);
  w.update = StateUpdate{plan.job_id, plan.version, plan.transition, {}, {}};
  return w;
}

PlannedWrites WritesOf(const HoldPlan& plan, const NodeStatesRead& states, Timestamp now) {
  const std::string uid = std::to_string(plan.resource_uid);
  PlannedWrites w;
  w.resource_uid = plan.resource_uid;
  // A hold takes the pools' own nodes (holder 0).
  w.moves = MovesOf(plan.claims, NodeEvent::kHeld, plan.resource_uid, 0, states, w.whole);
  w.admit = kPlaceResource.With({uid, std::to_string(plan.version), EncodePlacement(plan.placement),
                                 MicrosParam(plan.ready_at), MicrosParam(now),
                                 std::to_string(plan.placement.hourly_price_micros)});
  return w;
}

// The applied moves by owner.
std::unordered_map<int64_t, std::vector<NodeMove>> ByOwner(const NodeMovesApplied& moves) {
  std::unordered_map<int64_t, std::vector<NodeMove>> out;
  for (const NodeMove& m : moves.applied) out[m.owner].push_back(m);
  return out;
}

}  // namespace

StatusOr<bool> PgSchedulerStore::RequeueVictim(pg::Transaction& tx, const AdmissionPlanner& planner,
                                               const AdmissionDecision& a, int64_t victim,
                                               Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Result r, tx.Exec(kLockVictim, {std::to_string(victim)}));
  if (r.rows() == 0) return false;
  JobSnapshot snapshot{victim, r.GetInt64(0, 0), static_cast<JobState>(r.GetInt64(0, 1)),
                       r.GetBool(0, 2)};
  std::optional<JobTransition> transition = planner.PlanVictim(a, snapshot, now);
  // A victim that moved on meanwhile (cancelled, finished) is no victim: the admission waits.
  if (!transition) return false;
  StateUpdate update{victim, snapshot.version, std::move(*transition), {}, {}};
  TY_RETURN_IF_ERROR(ReadTransitionBases(tx.connection(), {&update}));
  pg::Statement requeue = TransitionStatement(update);
  TY_ASSIGN_OR_RETURN(pg::Result applied, tx.Exec(requeue.sql, requeue.params));
  if (applied.affected() != 1) return false;
  std::optional<pg::Statement> release = TransitionNodeStatement(update);
  if (release) TY_RETURN_IF_ERROR(tx.Exec(release->sql, release->params).status());
  return true;
}

Status PgSchedulerStore::AdmitPreempting(pg::Transaction& tx, const AdmissionPlanner& planner,
                                         const AdmissionDecision& a,
                                         const std::vector<FreeNodesRead>& cycle_reads,
                                         Timestamp now, FreeByPool& free, NodeStatesRead& states,
                                         CommitOutcome& outcome) {
  TY_RETURN_IF_ERROR(tx.Exec("SAVEPOINT admission").status());
  int preempted = 0;
  // What the rest of the commit sees as free goes back with the savepoint, as the memory store
  // never changes it for a preemption it skips.
  const FreeByPool free_before = free;
  const NodeStatesRead states_before = states;
  auto skip = [&]() -> Status {
    ++outcome.skipped;
    free = free_before;
    states = states_before;
    return tx.Exec("ROLLBACK TO SAVEPOINT admission").status();
  };
  for (int64_t victim : a.victims) {
    TY_ASSIGN_OR_RETURN(bool requeued, RequeueVictim(tx, planner, a, victim, now));
    if (!requeued) return skip();
    ++preempted;
  }
  // The victims' nodes are free now: see them. The pools are read again as the whole cycle
  // reads them, since a read replaces what `free` held of a pool: bounded by this admission's
  // units alone, it left nothing for the cycle's other admissions there, which were skipped.
  std::vector<FreeNodesRead> reads;
  for (const FreeNodesRead& read : cycle_reads) {
    for (const PlacedPool& pp : a.placement.pools) {
      if (pp.pool == read.pool) {
        reads.push_back(read);
        break;
      }
    }
  }
  TY_RETURN_IF_ERROR(LoadFree(tx, planner.fleet(), reads, free, states));
  std::optional<JobAdmissionPlan> plan = planner.PlanJob(a, now, free);
  if (!plan) return skip();
  PlannedWrites writes = WritesOf(*plan, states);
  if (!writes.whole) return skip();
  // A node that moved since it was read (a failure, another writer) loses the race: the savepoint
  // takes back the rest of the claim.
  TY_ASSIGN_OR_RETURN(NodeMovesApplied claimed,
                      ApplyNodeMoves(tx, NodeWrite::kClaimForJob, writes.moves, now));
  if (!claimed.lost.empty()) return skip();
  TY_RETURN_IF_ERROR(ReadTransitionBases(tx.connection(), {&*writes.update}));
  TY_ASSIGN_OR_RETURN(pg::Result job, tx.Exec(TransitionStatement(*writes.update)));
  if (job.affected() != 1) return skip();
  ++outcome.admitted;
  outcome.preempted += preempted;
  return tx.Exec("RELEASE SAVEPOINT admission").status();
}

Status PgSchedulerStore::AdmitAll(pg::Transaction& tx, const AdmissionPlanner& planner,
                                  const CycleResult& cycle, Timestamp now, FreeByPool& free,
                                  const NodeStatesRead& states, CommitOutcome& outcome) {
  std::vector<PlannedWrites> plans;
  auto add = [&](PlannedWrites writes) {
    if (writes.whole) {
      plans.push_back(std::move(writes));
    } else {
      ++outcome.skipped;
    }
  };
  for (const HoldDecision& h : cycle.holds) {
    if (std::optional<HoldPlan> plan = planner.PlanHold(h, now, free)) {
      add(WritesOf(*plan, states, now));
    } else {
      ++outcome.skipped;
    }
  }
  for (const AdmissionDecision& a : cycle.admissions) {
    if (!a.victims.empty()) continue;  // admitted already, one at a time
    if (std::optional<JobAdmissionPlan> plan = planner.PlanJob(a, now, free)) {
      add(WritesOf(*plan, states));
    } else {
      ++outcome.skipped;
    }
  }
  if (plans.empty()) return Status::Ok();
  // Round trip 1: every node move, the holds' in one statement and the admissions' in another. A
  // plan with a node that moved meanwhile (a failure) lost its race and is skipped.
  std::vector<NodeMove> holds, claims;
  for (const PlannedWrites& plan : plans) {
    std::vector<NodeMove>& into = plan.update ? claims : holds;
    into.insert(into.end(), plan.moves.begin(), plan.moves.end());
  }
  std::vector<pg::Statement> moves;
  if (!holds.empty()) moves.push_back(NodeMovesStatement(NodeWrite::kHoldForResource, holds, now));
  if (!claims.empty()) moves.push_back(NodeMovesStatement(NodeWrite::kClaimForJob, claims, now));
  // With them, the admitted rows the writes are computed from (storage/job_transition_sql.h).
  std::vector<StateUpdate*> admitting;
  for (PlannedWrites& plan : plans) {
    if (plan.update) admitting.push_back(&*plan.update);
  }
  const std::optional<pg::Statement> bases = TransitionBasesStatement(admitting);
  if (bases) moves.push_back(*bases);
  TY_ASSIGN_OR_RETURN(std::vector<pg::Result> moved, tx.connection().ExecBatch(moves));
  if (bases) {
    TakeTransitionBases(moved.back(), admitting);
    moved.pop_back();
  }
  size_t next = 0;
  const NodeMovesApplied held =
      holds.empty() ? NodeMovesApplied{} : SortNodeMoves(holds, moved[next++]);
  const NodeMovesApplied claimed =
      claims.empty() ? NodeMovesApplied{} : SortNodeMoves(claims, moved[next++]);
  const auto held_by = ByOwner(held);
  const auto claimed_by = ByOwner(claimed);
  auto applied_of = [&](const PlannedWrites& plan) -> const std::vector<NodeMove>* {
    const auto& by = plan.update ? claimed_by : held_by;
    auto it = by.find(plan.owner());
    return it == by.end() ? nullptr : &it->second;
  };
  std::vector<const PlannedWrites*> whole, undo;
  for (const PlannedWrites& plan : plans) {
    const std::vector<NodeMove>* applied = applied_of(plan);
    const size_t count = applied == nullptr ? 0 : applied->size();
    (count == plan.moves.size() ? whole : undo).push_back(&plan);
  }
  // Round trip 2: every admission, a compare-and-set on the job's (or resource's) version (a job
  // cancelled meanwhile is not admitted, and its nodes go back): the holds' one statement each,
  // the jobs' all in one (storage/job_transition_sql.h), its rows the jobs admitted.
  std::vector<pg::Statement> admits;
  std::vector<StateUpdate> updates;
  for (const PlannedWrites* plan : whole) {
    if (plan->update) {
      updates.push_back(*plan->update);
    } else {
      admits.push_back(plan->admit);
    }
  }
  if (!updates.empty()) admits.push_back(TransitionsStatement(updates));
  TY_ASSIGN_OR_RETURN(std::vector<pg::Result> admitted, tx.connection().ExecBatch(admits));
  std::unordered_set<int64_t> jobs_admitted;
  if (!updates.empty()) {
    const pg::Result& jobs = admitted.back();
    for (int i = 0; i < jobs.rows(); ++i) jobs_admitted.insert(jobs.GetInt64(i, 0));
  }
  size_t hold = 0;
  for (const PlannedWrites* plan : whole) {
    const bool done =
        plan->update ? jobs_admitted.contains(plan->job_id) : admitted[hold++].affected() == 1;
    if (done) {
      ++outcome.admitted;
    } else {
      undo.push_back(plan);
    }
  }
  if (undo.empty()) return Status::Ok();
  outcome.skipped += static_cast<int>(undo.size());
  // What the skipped ones moved goes back, each node from the state its move left it in (the
  // rows are this transaction's now: no other writer can have moved them).
  std::vector<NodeMove> unclaims, unholds;
  for (const PlannedWrites* plan : undo) {
    const std::vector<NodeMove>* applied = applied_of(*plan);
    if (applied == nullptr) continue;
    for (const NodeMove& m : *applied) {
      std::optional<NodeMove> back =
          PlanNodeMove(m.pool_id, m.ordinal, m.to,
                       plan->update ? NodeEvent::kUnclaimed : NodeEvent::kUnheld, m.owner);
      if (!back) return Internal("no way back for a node claimed in this commit");
      (plan->update ? unclaims : unholds).push_back(std::move(*back));
    }
  }
  std::vector<pg::Statement> backs;
  if (!unclaims.empty()) backs.push_back(NodeMovesStatement(NodeWrite::kUnclaim, unclaims, now));
  if (!unholds.empty()) backs.push_back(NodeMovesStatement(NodeWrite::kUnhold, unholds, now));
  if (backs.empty()) return Status::Ok();
  TY_ASSIGN_OR_RETURN(std::vector<pg::Result> gone_back, tx.connection().ExecBatch(backs));
  int rows = 0;
  for (const pg::Result& r : gone_back) rows += r.rows();
  if (rows != static_cast<int>(unclaims.size() + unholds.size())) {
    return Internal("a node claimed in this commit moved before it was given back");
  }
  return Status::Ok();
}

StatusOr<CommitOutcome> PgSchedulerStore::Commit(const AdmissionPlanner& planner,
                                                 const CycleResult& cycle, Timestamp now) {
  TY_ASSIGN_OR_RETURN(pg::Connection * conn, Connection());
  if (!leading_) return Aborted("not the scheduler leader");
  CommitOutcome outcome;
  TY_ASSIGN_OR_RETURN(pg::Transaction tx, pg::Transaction::Begin(*conn));
  FreeByPool free;
  NodeStatesRead states;
  const std::vector<FreeNodesRead> reads = planner.FreeNodesToRead(cycle);
  TY_RETURN_IF_ERROR(LoadFree(tx, planner.fleet(), reads, free, states));
  // Preemptions first, one at a time (at most 64 a cycle), since they free nodes; then the holds
  // and every other admission in two round trips.
  for (const AdmissionDecision& a : cycle.admissions) {
    if (!a.victims.empty()) {
      TY_RETURN_IF_ERROR(AdmitPreempting(tx, planner, a, reads, now, free, states, outcome));
    }
  }
  TY_RETURN_IF_ERROR(AdmitAll(tx, planner, cycle, now, free, states, outcome));
  for (const HoldFailure& f : cycle.hold_failures) {
    pg::Params params = {std::to_string(f.resource_uid), f.message, MicrosParam(now),
                         std::to_string(f.version),
                         std::to_string(static_cast<int>(Code::kResourceExhausted))};
    TY_RETURN_IF_ERROR(tx.Exec(kFailResourceOperation.With(params)).status());
    TY_ASSIGN_OR_RETURN(pg::Result r, tx.Exec(kFailResource.With(params)));
    outcome.failed += static_cast<int>(r.affected());
  }
  std::vector<StateUpdate> failures;
  for (const FailureDecision& f : cycle.failures) {
    TY_ASSIGN_OR_RETURN(JobTransition transition, planner.PlanFailure(f, now));
    failures.push_back(StateUpdate{f.job_id, f.version, std::move(transition), {}, {}});
  }
  std::vector<StateUpdate*> failing;
  for (StateUpdate& update : failures) failing.push_back(&update);
  TY_RETURN_IF_ERROR(ReadTransitionBases(tx.connection(), failing));
  for (const StateUpdate& update : failures) {
    pg::Statement fail = TransitionStatement(update);
    TY_ASSIGN_OR_RETURN(pg::Result r, tx.Exec(fail.sql, fail.params));
    outcome.failed += static_cast<int>(r.affected());
  }
  if (!cycle.notices.empty()) {
    std::vector<int64_t> ids;
    std::vector<std::string> messages, codes;
    for (const PreemptionNotice& n : cycle.notices) {
      ids.push_back(n.job_id);
      messages.push_back(n.message);
      codes.push_back(n.code);
    }
    TY_RETURN_IF_ERROR(tx.Exec(kVictimNotices.With({NumberArray(ids), TextArray(messages),
                                                    MicrosParam(now), TextArray(codes)}))
                           .status());
  }
  if (!cycle.hold_verdicts.empty()) {
    std::vector<int64_t> uids;
    std::vector<std::string> codes, messages;
    for (const HoldVerdict& v : cycle.hold_verdicts) {
      uids.push_back(v.resource_uid);
      codes.emplace_back(ReasonCodeName(v.verdict.code));
      messages.push_back(v.verdict.message);
    }
    TY_RETURN_IF_ERROR(
        tx.Exec(kResourceVerdicts.With({NumberArray(uids), TextArray(codes), TextArray(messages)}))
            .status());
  }
  if (!cycle.verdicts.empty()) {
    std::vector<int64_t> ids, positions, event_ids;
    std::vector<std::string> codes, messages, event_reasons;
    for (const VerdictUpdate& v : cycle.verdicts) {
      ids.push_back(v.job_id);
      codes.emplace_back(ReasonCodeName(v.verdict.code));
      messages.push_back(v.verdict.message);
      positions.push_back(v.verdict.position);
      if (v.code_changed && v.verdict.code != ReasonCode::kNotEvaluated) {
        event_ids.push_back(v.job_id);
        event_reasons.push_back(std::string(ReasonCodeName(v.verdict.code)) + ": " +
                                v.verdict.message.str());
      }
    }
    TY_ASSIGN_OR_RETURN(pg::Result r,
                        tx.Exec(kVerdicts.With({NumberArray(ids), TextArray(codes),
                                                TextArray(messages), NumberArray(positions)})));
    outcome.verdicts = static_cast<int>(r.affected());
    if (!event_ids.empty()) {
      TY_RETURN_IF_ERROR(tx.Exec(kVerdictEvents.With({NumberArray(event_ids),
                                                      TextArray(event_reasons), MicrosParam(now)}))
                             .status());
    }
  }
  TY_RETURN_IF_ERROR(tx.Commit());
  return outcome;
}

}  // namespace trainyard::storage
