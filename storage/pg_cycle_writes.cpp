#include "storage/pg_cycle_writes.h"

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "storage/job_change_notify.h"
#include "storage/job_transition_sql.h"
#include "storage/node_moves.h"
#include "storage/row_codec.h"
#include "storage/state_sql.h"

namespace trainyard::storage {
namespace {

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

// Verdicts annotate QUEUED jobs only: they are not transitions, so the version stays. A position
// of 0 is none reported yet. Its one row: how many jobs it wrote.
const StateSql kVerdicts(
    "WITH v AS (UPDATE custom_jobs j SET sched_code = d.code, sched_message = d.msg, "
    "queue_position = NULLIF(d.pos, 0) "
    "FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]) AS d(id, code, msg, pos) "
    "WHERE j.id = d.id AND j.state = :job_queued RETURNING j.id), "
    "n AS (" TY_NOTIFY_JOBS_OF("v") ") SELECT count(*) FROM v WHERE (SELECT count(*) FROM n) >= 0");

const StateSql kVerdictEvents(
    "INSERT INTO job_events (job_id, time, from_state, to_state, reason) "
    "SELECT d.id, " TY_TS("$3") ", j.state, j.state, d.reason FROM unnest($1::bigint[], "
    "$2::text[]) AS d(id, reason) JOIN custom_jobs j ON j.id = d.id AND j.state = :job_queued");

// Victims told to stop keep running through their grace and say so (a note: state and version
// stay), with an event.
const StateSql kVictimNotices(
    "WITH v AS (UPDATE custom_jobs j SET sched_code = d.code, sched_message = d.msg "
    "FROM unnest($1::bigint[], $2::text[], $4::text[]) AS d(id, msg, code) "
    "WHERE j.id = d.id AND j.state IN (:job_pending, :job_running) RETURNING j.id, j.state, d.msg), "
    "n AS (" TY_NOTIFY_JOBS_OF("v") ") "
    "INSERT INTO job_events (job_id, time, from_state, to_state, reason) "
    "SELECT id, " TY_TS("$3") ", state, state, msg FROM v WHERE (SELECT count(*) FROM n) >= 0");

// A victim as it is now, locked for the preemption: its requeue is a compare-and-set on this.
constexpr const char* kLockVictim =
    "SELECT version, state, start_time IS NOT NULL FROM custom_jobs WHERE id = $1::bigint "
    "FOR UPDATE";

}  // namespace

Status PgCycleWrites::ReadFree(const std::vector<FreeNodesRead>& reads, FreeByPool& free,
                               NodeStatesRead& states) {
  const Fleet& fleet = fleet_;
  pg::Transaction& tx = tx_;
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

Status PgCycleWrites::Mark() { return tx_.Exec("SAVEPOINT admission").status(); }

Status PgCycleWrites::RollbackToMark() {
  return tx_.Exec("ROLLBACK TO SAVEPOINT admission").status();
}

Status PgCycleWrites::ReleaseMark() { return tx_.Exec("RELEASE SAVEPOINT admission").status(); }

StatusOr<std::optional<JobSnapshot>> PgCycleWrites::LockJob(int64_t id) {
  TY_ASSIGN_OR_RETURN(pg::Result r, tx_.Exec(kLockVictim, {std::to_string(id)}));
  if (r.rows() == 0) return std::optional<JobSnapshot>();
  return std::optional<JobSnapshot>(
      JobSnapshot{id, r.GetInt64(0, 0), static_cast<JobState>(r.GetInt64(0, 1)), r.GetBool(0, 2)});
}

StatusOr<bool> PgCycleWrites::ApplyTransition(const StateUpdate& update) {
  StateUpdate based = update;
  TY_RETURN_IF_ERROR(ReadTransitionBases(tx_.connection(), {&based}));
  pg::Statement transition = TransitionStatement(based);
  TY_ASSIGN_OR_RETURN(pg::Result applied, tx_.Exec(transition.sql, transition.params));
  if (applied.affected() != 1) return false;
  for (const pg::Statement& nodes : TransitionNodeStatements({&based})) {
    TY_RETURN_IF_ERROR(tx_.Exec(nodes.sql, nodes.params).status());
  }
  return true;
}

StatusOr<NodeMoveBatch> PgCycleWrites::MoveNodes(const NodeMoveBatch& moves,
                                                 const std::vector<StateUpdate*>& admitting,
                                                 Timestamp now) {
  // One statement a kind of move, and the admitted rows the transitions are computed from
  // (storage/job_transition_sql.h), all in one round trip.
  const std::pair<NodeWrite, const std::vector<NodeMove>*> kinds[] = {
      {NodeWrite::kHoldForResource, &moves.holds},
      {NodeWrite::kClaimForJob, &moves.claims},
      {NodeWrite::kUnclaim, &moves.unclaims},
      {NodeWrite::kUnhold, &moves.unholds},
  };
  std::vector<pg::Statement> batch;
  for (const auto& [write, list] : kinds) {
    if (!list->empty()) batch.push_back(NodeMovesStatement(write, *list, now));
  }
  const std::optional<pg::Statement> bases = TransitionBasesStatement(admitting);
  if (bases) batch.push_back(*bases);
  NodeMoveBatch applied;
  if (batch.empty()) return applied;
  TY_ASSIGN_OR_RETURN(std::vector<pg::Result> results, tx_.connection().ExecBatch(batch));
  if (bases) TakeTransitionBases(results.back(), admitting);
  std::vector<NodeMove>* into[] = {&applied.holds, &applied.claims, &applied.unclaims,
                                   &applied.unholds};
  size_t next = 0;
  for (size_t i = 0; i < std::size(kinds); ++i) {
    if (kinds[i].second->empty()) continue;
    *into[i] = SortNodeMoves(*kinds[i].second, results[next++]).applied;
  }
  return applied;
}

StatusOr<Admitted> PgCycleWrites::Admit(const std::vector<HoldPlan>& holds,
                                        const std::vector<StateUpdate>& jobs, Timestamp now) {
  // The holds' one statement each, the jobs' all in one (storage/job_transition_sql.h), its rows
  // the jobs admitted.
  std::vector<pg::Statement> admits;
  for (const HoldPlan& plan : holds) {
    admits.push_back(kPlaceResource.With(
        {std::to_string(plan.resource_uid), std::to_string(plan.version),
         EncodePlacement(plan.placement), MicrosParam(plan.ready_at), MicrosParam(now),
         std::to_string(plan.placement.hourly_price_micros)}));
  }
  if (!jobs.empty()) admits.push_back(TransitionsStatement(jobs));
  Admitted out;
  if (admits.empty()) return out;
  TY_ASSIGN_OR_RETURN(std::vector<pg::Result> admitted, tx_.connection().ExecBatch(admits));
  for (size_t i = 0; i < holds.size(); ++i) {
    if (admitted[i].affected() == 1) out.resources.insert(holds[i].resource_uid);
  }
  if (!jobs.empty()) {
    const pg::Result& rows = admitted.back();
    for (int i = 0; i < rows.rows(); ++i) out.jobs.insert(rows.GetInt64(i, 0));
  }
  return out;
}

StatusOr<int> PgCycleWrites::FailHolds(const std::vector<HoldFailure>& failures, Timestamp now) {
  int failed = 0;
  for (const HoldFailure& f : failures) {
    pg::Params params = {std::to_string(f.resource_uid), f.message, MicrosParam(now),
                         std::to_string(f.version),
                         std::to_string(static_cast<int>(Code::kResourceExhausted))};
    TY_RETURN_IF_ERROR(tx_.Exec(kFailResourceOperation.With(params)).status());
    TY_ASSIGN_OR_RETURN(pg::Result r, tx_.Exec(kFailResource.With(params)));
    failed += static_cast<int>(r.affected());
  }
  return failed;
}

StatusOr<int> PgCycleWrites::FailJobs(std::vector<StateUpdate>& failures) {
  std::vector<StateUpdate*> failing;
  for (StateUpdate& update : failures) failing.push_back(&update);
  TY_RETURN_IF_ERROR(ReadTransitionBases(tx_.connection(), failing));
  int failed = 0;
  for (const StateUpdate& update : failures) {
    pg::Statement fail = TransitionStatement(update);
    TY_ASSIGN_OR_RETURN(pg::Result r, tx_.Exec(fail.sql, fail.params));
    failed += static_cast<int>(r.affected());
  }
  return failed;
}

Status PgCycleWrites::WriteNotices(const std::vector<PreemptionNotice>& notices, Timestamp now) {
  std::vector<int64_t> ids;
  std::vector<std::string> messages, codes;
  for (const PreemptionNotice& n : notices) {
    ids.push_back(n.job_id);
    messages.push_back(n.message);
    codes.push_back(n.code);
  }
  return tx_
      .Exec(kVictimNotices.With(
          {NumberArray(ids), TextArray(messages), MicrosParam(now), TextArray(codes)}))
      .status();
}

Status PgCycleWrites::WriteHoldVerdicts(const std::vector<HoldVerdict>& verdicts) {
  std::vector<int64_t> uids;
  std::vector<std::string> codes, messages;
  for (const HoldVerdict& v : verdicts) {
    uids.push_back(v.resource_uid);
    codes.emplace_back(ReasonCodeName(v.verdict.code));
    messages.push_back(v.verdict.message);
  }
  return tx_
      .Exec(kResourceVerdicts.With({NumberArray(uids), TextArray(codes), TextArray(messages)}))
      .status();
}

StatusOr<int> PgCycleWrites::WriteVerdicts(const std::vector<VerdictUpdate>& verdicts,
                                           Timestamp now) {
  std::vector<int64_t> ids, positions, event_ids;
  std::vector<std::string> codes, messages, event_reasons;
  for (const VerdictUpdate& v : verdicts) {
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
  TY_ASSIGN_OR_RETURN(pg::Result written,
                      tx_.Exec(kVerdicts.With({NumberArray(ids), TextArray(codes),
                                               TextArray(messages), NumberArray(positions)})));
  if (!event_ids.empty()) {
    TY_RETURN_IF_ERROR(tx_.Exec(kVerdictEvents.With({NumberArray(event_ids),
                                                     TextArray(event_reasons), MicrosParam(now)}))
                           .status());
  }
  return static_cast<int>(written.GetInt64(0, 0));
}

}  // namespace trainyard::storage
