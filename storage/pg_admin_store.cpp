#include "storage/pg_admin_store.h"

#include <nlohmann/json.hpp>

#include "services/cost/accrual.h"
#include "services/cost/resource_cost.h"
#include "services/scheduler/scheduler_job.h"
#include "storage/resource_row.h"
#include "storage/row_codec.h"
#include "storage/state_sql.h"

namespace trainyard::storage {
namespace {

constexpr const char* kNodeCounts =
    "SELECT pool_id, state, count(*), count(job_id), count(resource_uid), "
    "count(*) FILTER (WHERE resource_uid IS NOT NULL AND job_id IS NOT NULL) FROM nodes "
    "GROUP BY 1, 2";

constexpr const char* kNodesHeldByProject =
    "SELECT n.pool_id, p.project_id, count(*) FROM nodes n "
    "JOIN custom_jobs j ON j.id = n.job_id JOIN projects p ON p.number = j.project_number "
    "WHERE n.pool_id = ANY($1::text[]) GROUP BY 1, 2";

// With the persistent resource that holds the node, by its name (DecodeNode reads the row).
#define TY_NODE_ROWS \
  "SELECT n.pool_id, n.ordinal, n.zone, n.machine_type, n.state, n.job_id, " TY_MICROS(         \
      "n.state_since") ", array_to_json(n.image_cache)::text, "                                  \
                       "CASE WHEN r.uid IS NULL THEN NULL ELSE " TY_RESOURCE_NAME(              \
                           "r.") " END FROM nodes n "                                           \
                       "LEFT JOIN persistent_resources r ON r.uid = n.resource_uid "

constexpr const char* kListNodes = TY_NODE_ROWS
    "WHERE ($1 = '' OR n.pool_id = $1) AND ($2 = '' OR n.zone = $2) "
    "AND ($3::smallint IS NULL OR n.state = $3::smallint) "
    "AND ($4::text IS NULL OR (n.pool_id, n.ordinal) > ($4::text, $5::int)) "
    "ORDER BY n.pool_id, n.ordinal LIMIT $6::int";

// A job's hosts in placement order: the pools' fleet order is not known here, pool id and ordinal
// are (and the same on every read).
constexpr const char* kNodesHeldByJobs = TY_NODE_ROWS
    "WHERE n.job_id IS NOT NULL AND ($1::bigint IS NULL OR n.job_id = $1::bigint) "
    "ORDER BY n.job_id, n.pool_id, n.ordinal";

// Non-terminal jobs per queue: QUEUED, PENDING, RUNNING, CANCELLING.
const StateSql kQueueCounts(
    "SELECT p.project_id, j.location, j.state, count(*), "
    TY_PLACEMENT_MODEL("j.placement") ", "
    "CASE WHEN j.state = :job_queued THEN COALESCE(j.sched_code, '') ELSE '' END "
    "FROM custom_jobs j JOIN projects p ON p.number = j.project_number "
    "WHERE j.state IN (:job_queued, :job_pending, :job_running, :job_cancelling) "
    "GROUP BY 1, 2, 3, 5, 6 ORDER BY 1, 2, 3, 5, 6");

// Per state, at most $3 index entries of custom_jobs_by_parent_state (migrations/0005).
constexpr const char* kStateCounts =
    "SELECT s.state, (SELECT count(*) FROM (SELECT 1 FROM custom_jobs j "
    "WHERE j.project_number = $1::bigint AND j.location = $2 AND j.state = s.state "
    "LIMIT $3::bigint) c) FROM generate_series(1, 11) AS s(state)";

// Jobs without a position yet (the scheduler has not seen them) come last, oldest first.
const StateSql kQueuedJobs(
    "SELECT id, project_id, project_number, location, display_name, "
    "COALESCE(labels->>$2, ''), " TY_MICROS("create_time") ", queue_position, "
    "COALESCE(sched_code, ''), COALESCE(sched_message, '') FROM ("
    "SELECT j.*, p.project_id, row_number() OVER (PARTITION BY j.project_number, j.location "
    "ORDER BY j.queue_position NULLS LAST, j.create_time, j.id) AS rank "
    "FROM custom_jobs j JOIN projects p ON p.number = j.project_number WHERE j.state = :job_queued) q "
    "WHERE rank <= $1::int ORDER BY project_id, location, rank");

// A job's cost goes to the consumption model of its (last) placement; a job queued again after a
// preemption has none, and its accrued cost goes to "". The running cost is not summed here: each
// open admission (not ended, admitted) comes back as [price, admitted µs] for services/cost's
// RunningMicros to round and add up at the caller's `now`. `ended`: the parameter that holds the
// ended states (TerminalJobStatesParam: the domain's one list, not spelled here).
#define TY_MODEL_SUMS(ended)      \
  TY_PLACEMENT_MODEL("placement") \
  ", count(*), COALESCE(sum(cost_micros), 0)::bigint, "                                        \
  "COALESCE(json_agg(json_build_array(hourly_price_micros, " TY_MICROS("admitted_at") ")) "     \
  "FILTER (WHERE admitted_at IS NOT NULL AND NOT (state = ANY(" ended "::smallint[]))), "      \
  "'[]')::text, "                                                                              \
  "COALESCE(sum(GREATEST(running_us - redone_us, 0) * accelerators::bigint), 0)::bigint "

const StateSql kProjectCosts("SELECT " TY_MODEL_SUMS(
    "$2") "FROM custom_jobs WHERE project_number = $1::bigint GROUP BY 1 "
          "ORDER BY 1");

// One pass over every job: /metrics reads it at each scrape.
const StateSql kFleetTotals("SELECT " TY_MODEL_SUMS(
    "$1") ", sum(waiting_us)::bigint, sum(starting_us)::bigint, "
          "sum(restarting_us)::bigint, sum(running_us)::bigint, sum(redone_us)::bigint, "
          "sum(checkpoint_saving_us)::bigint, sum(checkpoint_restoring_us)::bigint, "
          "sum(program_starting_us)::bigint FROM custom_jobs GROUP BY 1 ORDER BY 1");

// A live resource's cost to now is services/cost/resource_cost.h's, from its earlier holds and its
// current one (price and start); a deleted one's whole cost is in resource_costs_ended.
constexpr const char* kResourceCosts =
    "SELECT " TY_RESOURCE_NAME("") ", " TY_PLACEMENT_MODEL("placement") ", "
    "hourly_price_micros, cost_micros, " TY_MICROS("held_since") ", NULL::bigint, create_time, uid "
    "FROM persistent_resources WHERE project_number = $1::bigint AND held_since IS NOT NULL "
    "UNION ALL SELECT " TY_RESOURCE_NAME("") ", consumption_model, hourly_price_micros, "
    "cost_micros, NULL::bigint, " TY_MICROS("deleted_at") ", create_time, uid "
    "FROM resource_costs_ended WHERE project_number = $1::bigint AND cost_micros > 0 ORDER BY 7, 8";

// One row with NULL event columns when the job exists without events; none when it does not.
constexpr const char* kJobEvents =
    "SELECT " TY_MICROS("e.time") ", e.from_state, e.to_state, e.reason FROM custom_jobs j "
    "LEFT JOIN job_events e ON e.job_id = j.id "
    "WHERE j.id = $1::bigint AND j.project_number = $2::bigint AND j.location = $3 "
    "ORDER BY e.time, e.seq";

std::vector<std::string> TextList(std::string_view json_array) {
  std::vector<std::string> out;
  auto parsed = nlohmann::json::parse(json_array, nullptr, false);
  if (!parsed.is_array()) return out;
  for (const auto& v : parsed) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// TY_MODEL_SUMS' open admissions, [[price µ$, admitted µs], …].
std::vector<cost::OpenAdmission> DecodeOpenAdmissions(std::string_view json_array) {
  std::vector<cost::OpenAdmission> out;
  auto parsed = nlohmann::json::parse(json_array, nullptr, false);
  if (!parsed.is_array()) return out;
  for (const auto& a : parsed) {
    if (!a.is_array() || a.size() != 2) continue;
    out.push_back({a[0].get<int64_t>(), FromUnixMicros(a[1].get<int64_t>())});
  }
  return out;
}

// A row of TY_MODEL_SUMS as the model's cost at `now`.
ModelCost DecodeModelCost(const pg::Result& r, int row, Timestamp now) {
  return ModelCost{std::string(r.Get(row, 0)), r.GetInt64(row, 1), r.GetInt64(row, 2),
                   cost::RunningMicros(DecodeOpenAdmissions(r.Get(row, 3)), now),
                   r.GetInt64(row, 4)};
}

std::vector<NodeRecord> DecodeNodes(const pg::Result& r) {
  std::vector<NodeRecord> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    NodeRecord n;
    n.pool_id = r.Get(i, 0);
    n.ordinal = r.GetInt64(i, 1);
    n.zone = r.Get(i, 2);
    n.machine_type = r.Get(i, 3);
    n.state = static_cast<NodeState>(r.GetInt64(i, 4));
    if (!r.IsNull(i, 5)) n.job_id = r.GetInt64(i, 5);
    n.since = FromUnixMicros(r.GetInt64(i, 6));
    n.image_cache = TextList(r.Get(i, 7));
    if (!r.IsNull(i, 8)) n.persistent_resource = std::string(r.Get(i, 8));
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace

StatusOr<std::map<std::pair<std::string, std::string>, int64_t>> PgAdminStore::NodesHeldByProject(
    const std::vector<std::string>& pool_ids) {
  std::map<std::pair<std::string, std::string>, int64_t> out;
  if (pool_ids.empty()) return out;
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kNodesHeldByProject, {TextArray(pool_ids)}));
  for (int i = 0; i < r.rows(); ++i) {
    out[{std::string(r.Get(i, 0)), std::string(r.Get(i, 1))}] = r.GetInt64(i, 2);
  }
  return out;
}

StatusOr<std::map<std::string, PoolNodeCounts>> PgAdminStore::NodeCounts() {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kNodeCounts));
  std::map<std::string, PoolNodeCounts> out;
  for (int i = 0; i < r.rows(); ++i) {
    PoolNodeCounts& c = out[std::string(r.Get(i, 0))];
    c.by_state[static_cast<NodeState>(r.GetInt64(i, 1))] += r.GetInt64(i, 2);
    c.with_job += r.GetInt64(i, 3);
    c.in_resources += r.GetInt64(i, 4);
    c.resource_busy += r.GetInt64(i, 5);
  }
  return out;
}

StatusOr<std::vector<NodeRecord>> PgAdminStore::ListNodes(const NodeQuery& query) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  std::optional<std::string> state;
  if (query.state) state = std::to_string(static_cast<int>(*query.state));
  std::optional<std::string> after_pool, after_ordinal;
  if (query.after) {
    after_pool = query.after->pool_id;
    after_ordinal = std::to_string(query.after->ordinal);
  }
  TY_ASSIGN_OR_RETURN(pg::Result r,
                      conn->Exec(kListNodes, {query.pool, query.zone, state, after_pool,
                                              after_ordinal, std::to_string(query.limit + 1)}));
  return DecodeNodes(r);
}

StatusOr<std::vector<NodeRecord>> PgAdminStore::NodesHeldByJobs(std::optional<int64_t> job_id) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  std::optional<std::string> id;
  if (job_id) id = std::to_string(*job_id);
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kNodesHeldByJobs, {id}));
  return DecodeNodes(r);
}

StatusOr<std::vector<QueueCount>> PgAdminStore::QueueCounts() {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kQueueCounts.With({})));
  std::vector<QueueCount> out;
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back({std::string(r.Get(i, 0)), std::string(r.Get(i, 1)),
                   static_cast<JobState>(r.GetInt64(i, 2)), r.GetInt64(i, 3),
                   std::string(r.Get(i, 4)), std::string(r.Get(i, 5))});
  }
  return out;
}

StatusOr<std::vector<StateCount>> PgAdminStore::StateCounts(int64_t project_number,
                                                            const std::string& location,
                                                            int64_t cap) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kStateCounts, {std::to_string(project_number),
                                                              location, std::to_string(cap)}));
  std::vector<StateCount> out;
  for (int i = 0; i < r.rows(); ++i) {
    if (r.GetInt64(i, 1) > 0) {
      out.push_back({static_cast<JobState>(r.GetInt64(i, 0)), r.GetInt64(i, 1)});
    }
  }
  return out;
}

StatusOr<std::vector<QueuedJobRecord>> PgAdminStore::QueuedJobs(int per_queue) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      conn->Exec(kQueuedJobs.With({std::to_string(per_queue), std::string(kPriorityLabel)})));
  std::vector<QueuedJobRecord> out;
  out.reserve(r.rows());
  for (int i = 0; i < r.rows(); ++i) {
    QueuedJobRecord q;
    q.id = r.GetInt64(i, 0);
    q.project_id = r.Get(i, 1);
    q.project_number = r.GetInt64(i, 2);
    q.location = r.Get(i, 3);
    q.display_name = r.Get(i, 4);
    if (!r.Get(i, 5).empty()) q.labels[std::string(kPriorityLabel)] = r.Get(i, 5);
    q.create_time = FromUnixMicros(r.GetInt64(i, 6));
    if (!r.IsNull(i, 7)) q.queue_position = r.GetInt64(i, 7);
    q.reason_code = r.Get(i, 8);
    q.reason_message = r.Get(i, 9);
    out.push_back(std::move(q));
  }
  return out;
}

StatusOr<std::vector<ModelCost>> PgAdminStore::ProjectCosts(int64_t project_number, Timestamp now) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      conn->Exec(kProjectCosts.With({std::to_string(project_number), TerminalJobStatesParam()})));
  std::vector<ModelCost> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(DecodeModelCost(r, i, now));
  return out;
}

StatusOr<std::vector<ModelTotals>> PgAdminStore::FleetTotals(Timestamp now) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kFleetTotals.With({TerminalJobStatesParam()})));
  std::vector<ModelTotals> out;
  for (int i = 0; i < r.rows(); ++i) {
    ModelTotals t;
    t.cost = DecodeModelCost(r, i, now);
    auto us = [&](int col) { return Duration(std::chrono::microseconds(r.GetInt64(i, col))); };
    t.time.waiting = us(5);
    t.time.starting = us(6);
    t.time.restarting = us(7);
    t.time.running = us(8);
    t.time.redone = us(9);
    t.time.checkpoint_save = us(10);
    t.time.checkpoint_restore = us(11);
    t.time.program_startup = us(12);
    out.push_back(std::move(t));
  }
  return out;
}

StatusOr<std::vector<ResourceCost>> PgAdminStore::ResourceCosts(int64_t project_number,
                                                                Timestamp now) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kResourceCosts, {std::to_string(project_number)}));
  std::vector<ResourceCost> out;
  for (int i = 0; i < r.rows(); ++i) {
    std::optional<Timestamp> held_since;
    if (!r.IsNull(i, 4)) held_since = FromUnixMicros(r.GetInt64(i, 4));
    const int64_t price = r.GetInt64(i, 2);
    ResourceCost& c = out.emplace_back(ResourceCost{
        std::string(r.Get(i, 0)), std::string(r.Get(i, 1)), price,
        cost::ResourceCostMicros(r.GetInt64(i, 3), price, held_since, now), std::nullopt});
    if (!r.IsNull(i, 5)) c.deleted_at = FromUnixMicros(r.GetInt64(i, 5));
  }
  return out;
}

StatusOr<std::vector<JobEvent>> PgAdminStore::JobEvents(int64_t project_number,
                                                        const std::string& location,
                                                        int64_t job_id) {
  TY_ASSIGN_OR_RETURN(auto conn, pool_.Acquire());
  TY_ASSIGN_OR_RETURN(
      pg::Result r,
      conn->Exec(kJobEvents, {std::to_string(job_id), std::to_string(project_number), location}));
  if (r.rows() == 0) return NotFound("job " + std::to_string(job_id) + " not found");
  std::vector<JobEvent> out;
  for (int i = 0; i < r.rows(); ++i) {
    if (r.IsNull(i, 0)) continue;
    out.push_back({FromUnixMicros(r.GetInt64(i, 0)), static_cast<JobState>(r.GetInt64(i, 1)),
                   static_cast<JobState>(r.GetInt64(i, 2)), std::string(r.Get(i, 3))});
  }
  return out;
}

}  // namespace trainyard::storage
