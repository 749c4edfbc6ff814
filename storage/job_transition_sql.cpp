#include "storage/job_transition_sql.h"

#include <nlohmann/json.hpp>

#include "services/admin/node_state.h"
#include "storage/node_sql.h"
#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

// $1 id, $2 expected version, $3 from, $4 to, $5 at, $6 start_time, $7 end_time, $8 error code,
// $9 error message, $10 next_action_at, $11 lease fence, $12 reason, $13 ends admission,
// $14 clears admission, $15 interrupts the run, $16 the goodput clock stopped, $17 spot restarts
// added,
// $18 sets the note, $19 note code, $20 note message, $21 placement, $22 hourly price,
// $23 requires nodes up, $24 the node states that count as down, $25 run attempt, $26 stops
// replicas, $27 run replicas.
//
// SET expressions read the row as it was, so the cost accrues on the old admission, and the time
// in the old state (since state_since) goes to its goodput bucket: before the first start
// (start_time still NULL) QUEUED is waiting and PENDING starting, after it both are restarting.
// An interrupted run keeps the work of its whole checkpoint intervals; the rest is redone.
#define TY_IN_STATE "GREATEST(0, $5::bigint - " TY_MICROS("COALESCE(state_since, update_time)") ")"
#define TY_SINCE_CHECKPOINT                                \
  "CASE WHEN checkpoint_interval_us > 0 THEN " TY_IN_STATE \
  " % checkpoint_interval_us "                             \
  "ELSE " TY_IN_STATE " END"
constexpr const char* kApplyTransition =
    "WITH u AS (UPDATE custom_jobs SET state = $4::smallint, version = version + 1, "
    "update_time = " TY_TS("$5") ", "
    "start_time = COALESCE(" TY_TS("$6") ", start_time), "
    "end_time = COALESCE(" TY_TS("$7") ", end_time), "
    "error_code = COALESCE($8::integer, error_code), "
    "error_message = COALESCE($9::text, error_message), "
    "next_action_at = " TY_TS("$10") ", "
    "lease_owner = CASE WHEN $10::bigint IS NULL THEN NULL ELSE lease_owner END, "
    "lease_expires_at = CASE WHEN $10::bigint IS NULL THEN NULL ELSE lease_expires_at END, "
    "cost_micros = cost_micros + CASE WHEN $13::boolean AND admitted_at IS NOT NULL THEN "
    "(hourly_price_micros * extract(epoch from (" TY_TS("$5") " - admitted_at)) / 3600)::bigint "
    "ELSE 0 END, "
    "state_since = CASE WHEN $3::smallint = $4::smallint THEN state_since ELSE " TY_TS("$5") " END, "
    "waiting_us = waiting_us + CASE WHEN $16::text = 'queued' AND start_time IS NULL "
    "THEN " TY_IN_STATE " ELSE 0 END, "
    "starting_us = starting_us + CASE WHEN $16::text = 'pending' AND start_time IS NULL "
    "THEN " TY_IN_STATE " ELSE 0 END, "
    "restarting_us = restarting_us + CASE WHEN $16::text IN ('queued', 'pending') "
    "AND start_time IS NOT NULL THEN " TY_IN_STATE " ELSE 0 END, "
    "running_us = running_us + CASE WHEN $16::text = 'running' THEN " TY_IN_STATE " ELSE 0 END, "
    "redone_us = redone_us + CASE WHEN $15::boolean THEN " TY_SINCE_CHECKPOINT " ELSE 0 END, "
    "checkpointed_us = checkpointed_us + CASE WHEN $15::boolean THEN "
    TY_IN_STATE " - (" TY_SINCE_CHECKPOINT ") ELSE 0 END, "
    "admitted_at = CASE WHEN $21::jsonb IS NOT NULL THEN " TY_TS("$5") " "
    "WHEN $14::boolean THEN NULL ELSE admitted_at END, "
    "placement = CASE WHEN $21::jsonb IS NOT NULL THEN $21::jsonb "
    "WHEN $14::boolean THEN NULL ELSE placement END, "
    "hourly_price_micros = CASE WHEN $21::jsonb IS NOT NULL THEN $22::bigint "
    "WHEN $14::boolean THEN 0 ELSE hourly_price_micros END, "
    "spot_restarts = spot_restarts + $17::int, "
    "sched_code = CASE WHEN $18::boolean THEN $19::text ELSE sched_code END, "
    "sched_message = CASE WHEN $18::boolean THEN $20::text ELSE sched_message END, "
    "queue_position = CASE WHEN $3::smallint = $4::smallint THEN queue_position ELSE NULL END, "
    "run_attempt = COALESCE($25::smallint, run_attempt), "
    "run_replicas = CASE WHEN $26::boolean THEN NULL "
    "WHEN $27::jsonb IS NOT NULL THEN $27::jsonb ELSE run_replicas END "
    "WHERE id = $1::bigint AND version = $2::bigint AND state = $3::smallint "
    "AND ($11::text IS NULL OR lease_owner = $11::text) "
    "AND (NOT $23::boolean OR NOT EXISTS (SELECT 1 FROM nodes WHERE job_id = $1::bigint "
    "AND state = ANY($24::smallint[]))) RETURNING id) "
    "INSERT INTO job_events (job_id, time, from_state, to_state, reason) "
    "SELECT id, " TY_TS("$5") ", $3::smallint, $4::smallint, $12::text FROM u";

// How many images a node keeps (its boot disk holds this many training images).
#define TY_IMAGE_CACHE_SIZE "8"

// Nodes follow their job: BUSY (with the image cached) once it runs, unless one is down meanwhile
// (its repair or reclaim is the failure simulator's). $4 live states, $5 BUSY.
// The cache is least recently used first and keeps kImageCacheSize images: the job's image moves
// to the end, and the oldest goes when the disk is full.
constexpr const char* kNodesRunning =
    "UPDATE nodes SET state = $5::smallint, state_since = " TY_TS("$2") ", "
    "image_cache = CASE WHEN $3::text IS NULL THEN image_cache ELSE "
    "(array_remove(image_cache, $3::text) || $3::text)[greatest(1, cardinality("
    "array_remove(image_cache, $3::text)) + 2 - " TY_IMAGE_CACHE_SIZE "):] END "
    "WHERE job_id = $1::bigint AND state = ANY($4::smallint[])";

std::string Number(auto value) { return std::to_string(static_cast<int64_t>(value)); }
std::string Bool(bool value) { return value ? "true" : "false"; }

// The goodput bucket the time in the old state goes to; none on a self-transition (the state goes
// on) or from a state that has none.
std::optional<std::string> GoodputClockName(const JobTransition& t) {
  if (t.from == t.to) return std::nullopt;
  switch (GoodputClockOf(t.from)) {
    case GoodputClock::kQueued:
      return "queued";
    case GoodputClock::kPending:
      return "pending";
    case GoodputClock::kRunning:
      return "running";
    case GoodputClock::kNone:
      break;
  }
  return std::nullopt;
}

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
  for (const PlacedPoolStatus& pool : admission.pools) {
    nlohmann::json entry = {{"pool", pool.pool_id},
                            {"machineType", pool.machine_type},
                            {"consumptionModel", pool.consumption_model},
                            {"units", pool.units},
                            {"nodes", pool.nodes}};
    if (!pool.reservation.empty()) entry["reservation"] = pool.reservation;
    placement["pools"].push_back(std::move(entry));
  }
  return placement.dump();
}

void DecodePlacement(std::string_view text, SchedulingStatus& status) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object()) return;
  status.zone = json.value("zone", "");
  status.startup = std::chrono::microseconds(json.value("startupUs", int64_t{0}));
  if (!json.contains("pools") || !json["pools"].is_array()) return;
  for (const auto& p : json["pools"]) {
    if (!p.is_object()) continue;
    PlacedPoolStatus pool;
    pool.pool_id = p.value("pool", "");
    pool.machine_type = p.value("machineType", "");
    pool.consumption_model = p.value("consumptionModel", "");
    pool.reservation = p.value("reservation", "");
    pool.units = p.value("units", int64_t{0});
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

pg::Statement TransitionStatement(const StateUpdate& update) {
  const JobTransition& t = update.transition;
  auto note = [&](auto field) -> std::optional<std::string> {
    if (!t.note || t.note->code.empty()) return std::nullopt;
    return field(*t.note);
  };
  return pg::Statement{
      kApplyTransition,
      {
          Number(update.id),
          Number(update.expected_version),
          Number(t.from),
          Number(t.to),
          MicrosParam(t.at),
          MicrosParam(t.start_time),
          MicrosParam(t.end_time),
          t.error ? std::optional<std::string>(Number(t.error->code)) : std::nullopt,
          t.error ? std::optional<std::string>(t.error->message) : std::nullopt,
          MicrosParam(t.next_action_at),
          update.lease_owner,
          t.reason,
          Bool(t.ends_admission),
          Bool(t.clears_admission),
          Bool(t.interrupts_run),
          GoodputClockName(t),
          t.spot_restart ? "1" : "0",
          Bool(t.note.has_value()),
          note([](const SchedulingNote& n) { return n.code; }),
          note([](const SchedulingNote& n) { return n.message; }),
          t.admission ? std::optional<std::string>(EncodePlacement(*t.admission)) : std::nullopt,
          Number(t.admission ? t.admission->hourly_price_micros : 0),
          Bool(t.requires_nodes_up),
          NodeStates({NodeState::kPreempted, NodeState::kFailed, NodeState::kRepairing}),
          t.run ? std::optional<std::string>(Number(t.run->attempt)) : std::nullopt,
          Bool(t.stops_replicas),
          t.run && !t.run->replicas.empty()
              ? std::optional<std::string>(EncodeJobRunReplicas(*t.run))
              : std::nullopt,
      }};
}

std::optional<pg::Statement> TransitionNodeStatement(const StateUpdate& update) {
  const JobTransition& t = update.transition;
  if (t.to == JobState::kRunning) {
    return pg::Statement{
        kNodesRunning,
        {Number(update.id), MicrosParam(t.at), t.image_uri,
         NodeStates({NodeState::kProvisioning, NodeState::kReady, NodeState::kBusy}),
         Number(NodeState::kBusy)}};
  }
  if (IsTerminal(t.to) || t.clears_admission) {
    return pg::Statement{kReleaseJobNodes, {Number(update.id), MicrosParam(t.at)}};
  }
  return std::nullopt;
}

}  // namespace trainyard::storage
