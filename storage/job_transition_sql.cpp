#include "storage/job_transition_sql.h"

#include <unordered_map>

#include <nlohmann/json.hpp>

#include "services/fleet/node_state.h"
#include "services/jobs/catalog.h"
#include "services/jobs/job_record_update.h"
#include "storage/job_change_notify.h"
#include "storage/named_sql.h"
#include "storage/node_moves.h"
#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

// Named parameters (storage/named_sql.h): the job (:id, :version), the move (:from, :to, :at,
// :reason), its stamps and error, when the runtime looks next, whose lease fences it and to whom
// it is handed (:grant_owner for :grant_seconds, StateUpdate::grant), the
// admission's effects (:clears_admission drops it, :placement and :hourly_price set a new one),
// what the move writes from the row it read (:cost_micros, :state_since, the goodput buckets,
// :checkpointed_us and :spot_restarts, services/jobs/job_record_update.h's WriteOf), the
// scheduling note, the run (:run_attempt, :run_replicas, :stops_replicas), and whether none of
// the job's nodes may be down (:down_node_states).
//
// Nothing here computes from the row: the values that follow from it were computed from the row
// at :version, which the compare-and-set below requires. A JSON value is tested as text and cast
// where it is set: in the batch form each cast of a text column parses it again, row by row.
// The SET list; then the compare-and-set; then what job_events records of it.
#define TY_TRANSITION_SET \
  "state = :to::smallint, version = version + 1, " \
  "change_seq = nextval('job_change_seq'), change_xid = pg_current_xact_id(), " \
  "update_time = " TY_TS(":at") ", " \
  "start_time = COALESCE(" TY_TS(":start_time") ", start_time), " \
  "end_time = COALESCE(" TY_TS(":end_time") ", end_time), " \
  "error_code = COALESCE(:error_code::integer, error_code), " \
  "error_message = COALESCE(:error_message::text, error_message), " \
  "next_action_at = " TY_TS(":next_action_at") ", " \
  "lease_owner = CASE WHEN :next_action_at::bigint IS NULL THEN NULL " \
  "WHEN :grant_owner::text IS NOT NULL THEN :grant_owner::text ELSE lease_owner END, " \
  "lease_expires_at = CASE WHEN :next_action_at::bigint IS NULL THEN NULL " \
  "WHEN :grant_owner::text IS NOT NULL THEN now() + :grant_seconds::bigint * interval '1 second' " \
  "ELSE lease_expires_at END, " \
  "cost_micros = :cost_micros::bigint, " \
  "state_since = " TY_TS(":state_since") ", " \
  "waiting_us = :waiting_us::bigint, starting_us = :starting_us::bigint, " \
  "restarting_us = :restarting_us::bigint, running_us = :running_us::bigint, " \
  "checkpoint_restoring_us = :checkpoint_restoring_us::bigint, " \
  "checkpoint_saving_us = :checkpoint_saving_us::bigint, redone_us = :redone_us::bigint, " \
  "program_starting_us = :program_starting_us::bigint, " \
  "checkpointed_us = :checkpointed_us::bigint, " \
  "admitted_at = CASE WHEN :placement::text IS NOT NULL THEN " TY_TS(":at") " " \
  "WHEN :clears_admission::boolean THEN NULL ELSE admitted_at END, " \
  "placement = CASE WHEN :placement::text IS NOT NULL THEN :placement::jsonb " \
  "WHEN :clears_admission::boolean THEN NULL ELSE placement END, " \
  "hourly_price_micros = CASE WHEN :placement::text IS NOT NULL THEN :hourly_price::bigint " \
  "WHEN :clears_admission::boolean THEN 0 ELSE hourly_price_micros END, " \
  "accelerators = CASE WHEN :placement::text IS NOT NULL THEN :accelerators::int " \
  "ELSE accelerators END, " \
  "spot_restarts = :spot_restarts::int, " \
  "sched_code = CASE WHEN :sets_note::boolean THEN :note_code::text ELSE sched_code END, " \
  "sched_message = CASE WHEN :sets_note::boolean THEN :note_message::text ELSE sched_message END, " \
  "queue_position = CASE WHEN :from::smallint = :to::smallint THEN queue_position ELSE NULL END, " \
  "run_attempt = COALESCE(:run_attempt::smallint, run_attempt), " \
  "run_replicas = CASE WHEN :stops_replicas::boolean THEN NULL " \
  "WHEN :run_replicas::text IS NOT NULL THEN :run_replicas::jsonb ELSE run_replicas END "
#define TY_TRANSITION_WHERE                                                                 \
  "id = :id::bigint AND version = :version::bigint AND state = :from::smallint "            \
  "AND (:lease_owner::text IS NULL OR lease_owner = :lease_owner::text) "                   \
  "AND (NOT :requires_nodes_up::boolean OR NOT EXISTS (SELECT 1 FROM nodes WHERE job_id = " \
  ":id::bigint AND state = ANY(:down_node_states::smallint[]))) "
// A transition through a state (JobTransition::via) records two events, the passage first.
#define TY_TRANSITION_EVENTS                                            \
  "ev AS (INSERT INTO job_events (job_id, time, from_state, to_state, " \
  "reason) SELECT u.id, e.time, e.from_state, e.to_state, e.reason FROM u "
#define TY_TRANSITION_EVENT_ROWS \
  ", LATERAL (VALUES (" TY_TS(":via_at") ", :from::smallint, :via_state::smallint, " \
  ":via_reason::text), (" TY_TS(":at") ", COALESCE(:via_state::smallint, :from::smallint), " \
  ":to::smallint, :reason::text)) AS e(time, from_state, to_state, reason) " \
  "WHERE e.to_state IS NOT NULL) "

// A transition stamps the change feed in its SET and notifies the poll caches of its jobs itself
// (storage/job_change_notify.h): migrations/0020's row triggers leave a version bump to it, so
// each row calls no trigger function.
// Its rows are the jobs it moved (the events' insert, a data-modifying CTE, runs regardless).
constexpr const char* kApplyTransitionText =
    "WITH u AS (UPDATE custom_jobs SET " TY_TRANSITION_SET "WHERE " TY_TRANSITION_WHERE
    "RETURNING id), n AS (" TY_NOTIFY_JOBS_OF(
        "u") "), " TY_TRANSITION_EVENTS TY_TRANSITION_EVENT_ROWS
             "SELECT id FROM u WHERE (SELECT count(*) FROM n) >= 0";

// The same for many jobs: every name's values in one text array, unnested into the rows of t
// (each use of a name casts it), so the statement is planned and its SET expressions built once
// a pass instead of once a job (in the runtime's backend that was a fifth of its time). The node
// states a job must not be on stay one value for all. It returns the ids it applied to, and
// notifies them a few hundred to a notification rather than one a job.
constexpr const char* kApplyTransitionsText =
    "u AS (UPDATE custom_jobs SET " TY_TRANSITION_SET "FROM t WHERE " TY_TRANSITION_WHERE
    "RETURNING id), n AS (" TY_NOTIFY_JOBS_OF(
        "u") "), " TY_TRANSITION_EVENTS "JOIN t ON :id::bigint = u.id" TY_TRANSITION_EVENT_ROWS
             "SELECT id FROM u WHERE (SELECT count(*) FROM n) >= 0";
constexpr std::string_view kSharedName = "down_node_states";

const NamedSql& ApplyTransitionSql() {
  static const NamedSql sql(kApplyTransitionText);
  return sql;
}

// kApplyTransitionsText with `:name` as t.p_name (and the shared one as $1), behind the unnest
// of $2…: one text[] a name, in ApplyTransitionSql()'s order of names.
const std::string& ApplyTransitionsSql() {
  static const std::string sql = [] {
    std::string arrays;
    std::string columns;
    int n = 1;
    for (const std::string& name : ApplyTransitionSql().names()) {
      if (name == kSharedName) continue;
      if (!arrays.empty()) {
        arrays += ", ";
        columns += ", ";
      }
      arrays += "$" + std::to_string(++n) + "::text[]";
      columns += "p_" + name;
    }
    return "WITH t AS (SELECT * FROM unnest(" + arrays + ") AS t(" + columns + ")), " +
           ReplaceNames(kApplyTransitionsText, [](std::string_view name) {
             return name == kSharedName ? std::string("$1") : "t.p_" + std::string(name);
           });
  }();
  return sql;
}

// What a transition's writes follow from (JobTransitionBasis), in TakeTransitionBases' order.
constexpr const char* kTransitionBases =
    "SELECT id, version, " TY_MICROS("state_since") ", " TY_MICROS("update_time") ", "
    "start_time IS NOT NULL, " TY_MICROS("admitted_at") ", hourly_price_micros, cost_micros, "
    "waiting_us, starting_us, restarting_us, running_us, redone_us, checkpoint_saving_us, "
    "checkpoint_restoring_us, checkpointed_us, checkpoint_interval_us, checkpoint_save_us, "
    "checkpoint_restore_us, spot_restarts, program_starting_us, "
    "COALESCE((placement->>'programStartupUs')::bigint, 0) "
    "FROM custom_jobs WHERE id = ANY($1::bigint[])";

// How many images a node keeps (its boot disk holds this many training images).
#define TY_IMAGE_CACHE_SIZE "8"

// How a node's image cache takes `image` (text): least recently used first, kImageCacheSize
// images; the job's image moves to the end, and the oldest goes when the disk is full.
#define TY_IMAGE_CACHED(image)                      \
  "(array_remove(image_cache, " image ") || " image \
  ")[greatest(1, cardinality("                      \
  "array_remove(image_cache, " image ")) + 2 - " TY_IMAGE_CACHE_SIZE "):]"

// Nodes follow their job once it runs: each as NodeStateMachine's kJobRunning says from the state
// it is in ($4, $5: EventMovesParams), with the image cached; a node down meanwhile has no move
// (its repair or reclaim is the failure simulator's). A row of t a job.
constexpr const char* kNodesRunningOfJobs =
    "UPDATE nodes SET state = m.to_state, state_since = " TY_TS("t.at") ", "
    "image_cache = CASE WHEN t.image IS NULL THEN image_cache ELSE " TY_IMAGE_CACHED("t.image") " END "
    "FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS t(job, at, image), " TY_EVENT_MOVES(
        "$4", "$5") " WHERE nodes.job_id = t.job AND nodes.state = m.from_state";

// A job leaves its nodes: each goes where NodeStateMachine's give-back table ($5…$11,
// GiveBackTableParams) says for the state it is found in, whether it is warm (a keepBooted pool's,
// or held by a persistent resource) and whether the job's run started in this write too
// (t.ran_at; the node then takes the run on the way, as kNodesRunningOfJobs would). A row of t a
// job.
constexpr const char* kReleaseNodesOfJobs =
    "UPDATE nodes SET job_id = NULL, preempt_at = NULL, state = g.to_state, "
    "image_cache = CASE WHEN NOT g.keeps_images THEN '{}' "
    "WHEN g.took_run AND t.image IS NOT NULL THEN " TY_IMAGE_CACHED("t.image") " "
    "ELSE image_cache END, "
    "state_since = CASE WHEN NOT g.keeps_since THEN " TY_TS("t.at") " "
    "WHEN g.took_run THEN " TY_TS("t.ran_at") " ELSE nodes.state_since END "
    "FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[]) AS t(job, at, ran_at, image), "
    "unnest($5::smallint[], $6::boolean[], $7::boolean[], $8::smallint[], $9::boolean[], "
    "$10::boolean[], $11::boolean[]) "
    "AS g(from_state, warm, ran, to_state, keeps_images, keeps_since, took_run) "
    "WHERE nodes.job_id = t.job AND nodes.state = g.from_state "
    "AND g.warm = (nodes.keep_warm OR nodes.resource_uid IS NOT NULL) "
    "AND g.ran = (t.ran_at IS NOT NULL)";

std::string Number(auto value) { return std::to_string(static_cast<int64_t>(value)); }
std::string Bool(bool value) { return value ? "true" : "false"; }

std::string NodeStates(std::initializer_list<NodeState> states) {
  std::vector<int> numbers;
  for (NodeState s : states) numbers.push_back(static_cast<int>(s));
  return NumberArray(numbers);
}

}  // namespace

std::string EncodePlacement(const JobAdmission& admission) {
  nlohmann::json placement = {
      {"zone", admission.zone},
      {"pools", nlohmann::json::array()},
      {"startupUs",
       std::chrono::duration_cast<std::chrono::microseconds>(admission.startup).count()}};
  if (admission.program_startup > Duration{}) {
    placement["programStartupUs"] =
        std::chrono::duration_cast<std::chrono::microseconds>(admission.program_startup).count();
  }
  for (const PlacedPoolStatus& pool : admission.pools) {
    nlohmann::json entry = {{"pool", pool.pool_id},
                            {"machineType", pool.machine_type},
                            {"consumptionModel", pool.consumption_model},
                            {"units", pool.units},
                            {"nodes", pool.nodes}};
    if (!pool.reservation.empty()) entry["reservation"] = pool.reservation;
    if (pool.blocks > 0) entry["blocks"] = pool.blocks;
    placement["pools"].push_back(std::move(entry));
  }
  const StartupDetail& d = admission.startup_detail;
  if (d.boot_nodes > 0 || d.image_gb > 0) {
    placement["startupDetail"] = {
        {"machineType", d.machine_type},
        {"bootNodes", d.boot_nodes},
        {"bootUs", std::chrono::duration_cast<std::chrono::microseconds>(d.boot).count()},
        {"imageGb", d.image_gb},
        {"imagePullUs",
         std::chrono::duration_cast<std::chrono::microseconds>(d.image_pull).count()}};
  }
  return placement.dump();
}

void DecodePlacement(std::string_view text, SchedulingStatus& status) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object()) return;
  status.zone = json.value("zone", "");
  status.startup = std::chrono::microseconds(json.value("startupUs", int64_t{0}));
  status.program_startup = std::chrono::microseconds(json.value("programStartupUs", int64_t{0}));
  if (json.contains("startupDetail") && json["startupDetail"].is_object()) {
    const auto& d = json["startupDetail"];
    status.startup_detail.machine_type = d.value("machineType", "");
    status.startup_detail.boot_nodes = d.value("bootNodes", int64_t{0});
    status.startup_detail.boot = std::chrono::microseconds(d.value("bootUs", int64_t{0}));
    status.startup_detail.image_gb = d.value("imageGb", 0.0);
    status.startup_detail.image_pull =
        std::chrono::microseconds(d.value("imagePullUs", int64_t{0}));
  }
  if (!json.contains("pools") || !json["pools"].is_array()) return;
  for (const auto& p : json["pools"]) {
    if (!p.is_object()) continue;
    PlacedPoolStatus pool;
    pool.pool_id = p.value("pool", "");
    pool.machine_type = p.value("machineType", "");
    pool.consumption_model = p.value("consumptionModel", "");
    pool.reservation = p.value("reservation", "");
    pool.units = p.value("units", int64_t{0});
    pool.blocks = p.value("blocks", 0);
    if (p.contains("nodes") && p["nodes"].is_array()) {
      for (const auto& n : p["nodes"]) {
        if (n.is_string()) pool.nodes.push_back(n.get<std::string>());
      }
    }
    status.pools.push_back(std::move(pool));
  }
}

std::string EncodeJobRunReplicas(const JobRun& run) {
  nlohmann::json replicas = nlohmann::json::array();
  for (const ReplicaRun& r : run.replicas) {
    nlohmann::json replica = {{"task", r.task_name},
                              {"phase", ReplicaPhaseName(r.phase)},
                              {"restarts", r.restarts},
                              {"handle", r.handle}};
    if (r.exit_code) replica["exit"] = *r.exit_code;
    replicas.push_back(std::move(replica));
  }
  return replicas.dump();
}

JobRun DecodeJobRun(std::string_view replicas_json, int attempt) {
  JobRun run;
  run.attempt = attempt;
  auto json = nlohmann::json::parse(replicas_json, nullptr, false);
  if (!json.is_array()) return run;
  for (const auto& r : json) {
    if (!r.is_object()) continue;
    ReplicaRun replica;
    replica.task_name = r.value("task", "");
    replica.phase = ParseReplicaPhase(r.value("phase", "")).value_or(ReplicaPhase::kPending);
    replica.restarts = r.value("restarts", 0);
    replica.handle = r.value("handle", "");
    if (r.contains("exit") && r["exit"].is_number_integer())
      replica.exit_code = r["exit"].get<int>();
    run.replicas.push_back(std::move(replica));
  }
  return run;
}

namespace {

// Every named value of `update`'s statement, handed to `set(name, value)`.
template <class Set>
void ForEachTransitionValue(const StateUpdate& update, Set&& set) {
  const JobTransition& t = update.transition;
  auto note = [&](auto field) -> std::optional<std::string> {
    if (!t.note() || t.note()->code.empty()) return std::nullopt;
    return field(*t.note());
  };
  auto some = [](std::string text) { return std::optional<std::string>(std::move(text)); };
  // Without the basis of its version (the row was not there) it is a compare-and-set that loses.
  const bool read = update.basis && update.basis->version == update.expected_version;
  static const JobTransitionBasis kNone;
  const JobTransitionBasis& basis = read ? *update.basis : kNone;
  set("id", Number(update.id));
  set("version", read ? Number(update.expected_version) : "-1");
  set("from", Number(t.from()));
  set("to", Number(t.to()));
  set("at", MicrosParam(t.at()));
  set("start_time", MicrosParam(t.start_time()));
  set("end_time", MicrosParam(t.end_time()));
  set("error_code", t.error() ? some(Number(t.error()->code)) : std::nullopt);
  set("error_message", t.error() ? some(t.error()->message) : std::nullopt);
  set("next_action_at", MicrosParam(t.next_action_at()));
  set("lease_owner", update.lease_owner);
  set("grant_owner", update.grant ? some(update.grant->owner) : std::nullopt);
  set("grant_seconds", Number(update.grant ? update.grant->duration.count() : 0));
  set("reason", t.reason());
  set("via_state", t.via() ? some(Number(t.via()->state)) : std::nullopt);
  set("via_at", MicrosParam(t.via() ? std::optional<Timestamp>(t.via()->at) : std::nullopt));
  set("via_reason", t.via() ? some(t.via()->reason) : std::nullopt);
  set("clears_admission", Bool(t.clears_admission()));
  const JobTransitionWrite w = WriteOf(t, basis);
  auto micros = [](Duration d) {
    return Number(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  };
  set("cost_micros", Number(w.cost_micros));
  set("state_since", MicrosParam(w.state_since));
  set("waiting_us", micros(w.goodput.waiting));
  set("starting_us", micros(w.goodput.starting));
  set("restarting_us", micros(w.goodput.restarting));
  set("running_us", micros(w.goodput.running));
  set("checkpoint_restoring_us", micros(w.goodput.checkpoint_restore));
  set("checkpoint_saving_us", micros(w.goodput.checkpoint_save));
  set("program_starting_us", micros(w.goodput.program_startup));
  set("redone_us", micros(w.goodput.redone));
  set("checkpointed_us", micros(w.checkpointed));
  set("spot_restarts", Number(w.spot_restarts));
  set("sets_note", Bool(t.note().has_value()));
  set("note_code", note([](const SchedulingNote& n) { return n.code; }));
  set("note_message", note([](const SchedulingNote& n) { return n.message; }));
  set("placement", t.admission() ? some(EncodePlacement(*t.admission())) : std::nullopt);
  set("hourly_price", Number(t.admission() ? t.admission()->hourly_price_micros : 0));
  set("accelerators", Number(t.admission() ? AcceleratorsHeld(t.admission()->pools) : 0));
  set("requires_nodes_up", Bool(t.requires_nodes_up()));
  set("run_attempt", t.run() ? some(Number(t.run()->attempt)) : std::nullopt);
  set("stops_replicas", Bool(t.stops_replicas()));
  set("run_replicas",
      t.run() && !t.run()->replicas.empty() ? some(EncodeJobRunReplicas(*t.run())) : std::nullopt);
}

std::string DownNodeStates() {
  return NodeStates({NodeState::kPreempted, NodeState::kFailed, NodeState::kRepairing});
}

}  // namespace

bool LacksBasis(const StateUpdate& update) {
  return !update.basis || update.basis->version != update.expected_version;
}

std::optional<pg::Statement> TransitionBasesStatement(const std::vector<StateUpdate*>& updates) {
  std::vector<int64_t> ids;
  for (const StateUpdate* update : updates) {
    if (LacksBasis(*update)) ids.push_back(update->id);
  }
  if (ids.empty()) return std::nullopt;
  return pg::Statement{kTransitionBases, {NumberArray(ids)}};
}

void TakeTransitionBases(const pg::Result& read, const std::vector<StateUpdate*>& updates) {
  std::unordered_map<int64_t, JobTransitionBasis> bases;
  auto micros = [&](int row, int column) {
    return std::chrono::microseconds(read.GetInt64(row, column));
  };
  auto time = [&](int row, int column) -> std::optional<Timestamp> {
    if (read.IsNull(row, column)) return std::nullopt;
    return FromUnixMicros(read.GetInt64(row, column));
  };
  for (int i = 0; i < read.rows(); ++i) {
    JobTransitionBasis b;
    b.version = read.GetInt64(i, 1);
    b.state_since = time(i, 2);
    b.update_time = time(i, 3);
    b.started = read.GetBool(i, 4);
    b.admitted_at = time(i, 5);
    b.hourly_price_micros = read.GetInt64(i, 6);
    b.cost_micros = read.GetInt64(i, 7);
    b.goodput = JobGoodput{micros(i, 8),  micros(i, 9),  micros(i, 10), micros(i, 11),
                           micros(i, 12), micros(i, 13), micros(i, 14)};
    b.checkpointed = micros(i, 15);
    b.checkpoint_interval = micros(i, 16);
    b.checkpoint_cost = CheckpointCost{micros(i, 17), micros(i, 18)};
    b.spot_restarts = static_cast<int>(read.GetInt64(i, 19));
    b.goodput.program_startup = micros(i, 20);
    b.program_startup = micros(i, 21);
    bases.emplace(read.GetInt64(i, 0), b);
  }
  for (StateUpdate* update : updates) {
    if (!LacksBasis(*update)) continue;
    auto it = bases.find(update->id);
    if (it != bases.end()) update->basis = it->second;
  }
}

Status ReadTransitionBases(pg::Connection& conn, const std::vector<StateUpdate*>& updates) {
  std::optional<pg::Statement> read = TransitionBasesStatement(updates);
  if (!read) return Status::Ok();
  TY_ASSIGN_OR_RETURN(pg::Result r, conn.Exec(*read));
  TakeTransitionBases(r, updates);
  return Status::Ok();
}

pg::Statement TransitionStatement(const StateUpdate& update) {
  NamedParams params(ApplyTransitionSql());
  ForEachTransitionValue(update, [&](std::string_view name, std::optional<std::string> value) {
    params.Set(name, std::move(value));
  });
  params.Set(kSharedName, DownNodeStates());
  return params.Build();
}

pg::Statement TransitionsStatement(const std::vector<StateUpdate>& updates) {
  const NamedSql& named = ApplyTransitionSql();
  std::vector<std::vector<std::optional<std::string>>> columns(named.names().size());
  for (const StateUpdate& update : updates) {
    ForEachTransitionValue(update, [&](std::string_view name, std::optional<std::string> value) {
      columns[*named.IndexOf(name)].push_back(std::move(value));
    });
  }
  pg::Params params = {DownNodeStates()};
  for (size_t i = 0; i < columns.size(); ++i) {
    if (named.names()[i] == kSharedName) continue;
    params.push_back(NullableTextArray(columns[i]));
  }
  return pg::Statement{ApplyTransitionsSql(), std::move(params)};
}

std::vector<pg::Statement> TransitionNodeStatements(
    const std::vector<const StateUpdate*>& applied) {
  std::vector<std::optional<std::string>> running_jobs, running_at, images;
  std::vector<std::optional<std::string>> released_jobs, released_at, ran_at, released_images;
  for (const StateUpdate* update : applied) {
    const JobTransition& t = update->transition;
    if (IsTerminal(t.to()) || t.clears_admission()) {
      // A run that started in this write too is the give-back's to apply (one node write).
      const std::optional<Timestamp> ran = t.entered(JobState::kRunning);
      released_jobs.push_back(Number(update->id));
      released_at.push_back(MicrosParam(t.at()));
      ran_at.push_back(MicrosParam(ran));
      released_images.push_back(ran ? t.image_uri() : std::nullopt);
    } else if (t.to() == JobState::kRunning) {
      running_jobs.push_back(Number(update->id));
      running_at.push_back(MicrosParam(t.at()));
      images.push_back(t.image_uri());
    }
  }
  std::vector<pg::Statement> out;
  if (!running_jobs.empty()) {
    out.push_back(
        pg::Statement{kNodesRunningOfJobs,
                      WithEventMoves({NullableTextArray(running_jobs),
                                      NullableTextArray(running_at), NullableTextArray(images)},
                                     NodeEvent::kJobRunning)});
  }
  if (!released_jobs.empty()) {
    pg::Params params = {NullableTextArray(released_jobs), NullableTextArray(released_at),
                         NullableTextArray(ran_at), NullableTextArray(released_images)};
    for (std::optional<std::string>& table : GiveBackTableParams()) {
      params.push_back(std::move(table));
    }
    out.push_back(pg::Statement{kReleaseNodesOfJobs, std::move(params)});
  }
  return out;
}

}  // namespace trainyard::storage
