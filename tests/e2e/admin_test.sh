#!/usr/bin/env bash
# The read-only admin view over curl on the default fleet: fleet, nodes, reservations, queues,
# costs and job events, their 400/404s; and a job whose run time comes from the workload model.
source "$(dirname "$0")/lib.sh"

# 1000 virtual seconds per wall second.
# The default fleet, where a job that never fits waits long enough for the checks below (the default
# hour is 3.6 s of wall time at 1000x).
jq '.neverFitsTimeout = "2592000s"' "$(dirname "$0")/../../payloads/fleets/default.json" >"$E2E_DIR/fleet.json"
start_server --sim-speed 1000 --fleet "$E2E_DIR/fleet.json"
A="$BASE/trainyard/v1"
P="$BASE/v1/projects/demo/locations/us-central1"

get() { curl -fsS "$1" | jq -r "$2"; }
state_is() { [ "$(get "$BASE/v1/$1" .state)" = "$2" ]; }
status_of() { curl -sS -o "$E2E_DIR/body" -w '%{http_code}' "$1"; }
violation() { jq -r '[.error.details[] | select(.fieldViolations) | .fieldViolations[0].field][0]' "$E2E_DIR/body"; }

# --- fleet and reservations, before any job ---
check "fleet name" "$(get "$A/fleet" .name)" default
check "fleet zones of us-central1" \
  "$(get "$A/fleet" '[.regions[] | select(.region == "us-central1") | .zones[].zone] | join(",")')" \
  "us-central1-a,us-central1-b,us-central1-c"
r1='.regions[0].zones[0].pools[0]'
check "a CUD pool: model, reservation, owners, size, no VM booted before a job asks" \
  "$(get "$A/fleet" "$r1 | \"\(.consumptionModel) \(.reservation.name) \(.reservation.term) \(.reservation.projects|join(\",\")) \(.nodes) \(.nodesByState.DELETED)\"")" \
  "RESERVATION r-a3m-uc1a 1y demo 16 16"
check "spot pool price is 40% of on-demand" \
  "$(get "$A/fleet" '[.regions[0].zones[0].pools[] | select(.consumptionModel == "SPOT") | .pricePerNodeHourUsd][0] * 100 | round')" \
  "3680"
check "reservations: CUD and calendar" \
  "$(get "$A/reservations" '[.reservations[] | .name + ":" + .kind] | join(",")')" \
  "r-a3m-uc1a:CUD,r-a3h-uc1b:CUD,cal-a3m-uc1c:DWS_CALENDAR"
check "calendar reservation has a window and is usable now" \
  "$(get "$A/reservations" '.reservations[2] | "\(.windowStart != null) \(.windowEnd != null) \(.usableNow) \(.nodesTotal) \(.nodesFree)"')" \
  "true true true 32 32"

# --- a job on the r-a3h-uc1b reservation, and one that never fits ---
job=$(create '.' lora-single-node.json)
huge=$(create '.jobSpec.workerPoolSpecs[1].replicaCount = "63" | .labels = {}' nemo-pretrain-multinode.json)
wait_until 60 "$job succeeds" state_is "$job" JOB_STATE_SUCCEEDED
# Its verdict comes at once; its position with the next report of positions (each second).
wait_until 30 "the huge job gets a verdict and a position" bash -c \
  "[ \"\$(curl -fsS '$BASE/v1/$huge' | jq -r '.trainyard.queuePosition // empty')\" != '' ]"

events="$BASE/trainyard/v1/$job/events"
check "job events oldest first" \
  "$(get "$events" '[.events[] | .fromState + ">" + .toState] | join(" ")')" \
  "JOB_STATE_UNSPECIFIED>JOB_STATE_QUEUED JOB_STATE_QUEUED>JOB_STATE_PENDING JOB_STATE_PENDING>JOB_STATE_RUNNING JOB_STATE_RUNNING>JOB_STATE_SUCCEEDED"
check "events carry reasons and times" "$(get "$events" '[.events[] | (.reason != "") and (.time | test("Z$"))] | all')" true
check "the huge job's reason change is an event" \
  "$(get "$BASE/trainyard/v1/$huge/events" '.events[1] | .fromState + ">" + .toState + " " + (.reason | split(":")[0])')" \
  "JOB_STATE_QUEUED>JOB_STATE_QUEUED NEVER_FITS"

pool="us-central1-b/a3-highgpu-8g/RESERVATION/r-a3h-uc1b"
nodes="$A/nodes?pool=$(jq -rn --arg p "$pool" '$p|@uri')"
check "nodes of one pool, paged" "$(get "$nodes&pageSize=3" '[.nodes[].name] | join(",")')" \
  "us-central1-b-a3-highgpu-8g-RESERVATION-r-a3h-uc1b-0000,us-central1-b-a3-highgpu-8g-RESERVATION-r-a3h-uc1b-0001,us-central1-b-a3-highgpu-8g-RESERVATION-r-a3h-uc1b-0002"
token=$(get "$nodes&pageSize=3" .nextPageToken)
check "next page continues after the token" "$(get "$nodes&pageSize=3&pageToken=$token" '.nodes[0].ordinal')" 3
check "the node that ran the job is given back: its VM deleted, no image kept" \
  "$(get "$nodes&pageSize=1" '.nodes[0] | .state + " " + (.imageCache | join(","))')" \
  "DELETED "
check "state filter" "$(get "$A/nodes?zone=us-central1-a&state=DELETED&pageSize=1000" '[.nodes[].state] | unique | join(",")')" DELETED
check "bad state is 400 naming it" \
  "$(status_of "$A/nodes?state=ASLEEP") $(jq -r .error.status "$E2E_DIR/body") $(violation)" \
  "400 INVALID_ARGUMENT state"
check "unknown pool is 400 naming it" \
  "$(status_of "$A/nodes?pool=nope") $(violation)" "400 pool"
check "token from other filters is 400" "$(status_of "$A/nodes?zone=us-central1-a&pageToken=$token")" 400

check "queue of demo: the huge job first with its reason" \
  "$(get "$A/queues" '.queues[] | select(.project == "demo" and .region == "us-central1") | "\(.queued) \(.jobs[0].queuePosition) \(.jobs[0].reason.code)"')" \
  "1 1 NEVER_FITS"
check "bad jobsPerQueue is 400" "$(status_of "$A/queues?jobsPerQueue=many")" 400

cost=$(get "$A/projects/demo/costs" '.byConsumptionModel[] | select(.consumptionModel == "RESERVATION") | .accruedUsd')
awk -v c="$cost" 'BEGIN { exit !(c > 0) }' && pass "reservation cost accrued: \$$cost" || fail "reservation cost: $cost"
check "total is accrued + running" \
  "$(get "$A/projects/demo/costs" '(.totalUsd - .accruedUsd - .runningUsd) | fabs < 1e-6')" true
check "costs of an unknown project are 404" "$(status_of "$A/projects/nobody/costs")" 404
check "events of an unknown job are 404" \
  "$(status_of "$A/projects/demo/locations/us-central1/customJobs/123/events") $(jq -r .error.status "$E2E_DIR/body")" \
  "404 NOT_FOUND"
check "unknown admin path is 404" "$(status_of "$A/bogus")" 404

# --- the workload model decides RUNNING time ---
# 6 × 8e9 × 1e8 FLOPs on 8 H100 at 989 TFLOP/s × 0.4 MFU = 1516.7 virtual seconds (the default
# would be 10 s).
model=$(create '.jobSpec.workerPoolSpecs[0].containerSpec.env = [
  {"name": "TRAINYARD_MODEL_PARAMS", "value": "8e9"}, {"name": "TRAINYARD_TRAIN_TOKENS", "value": "1e8"}]' \
  lora-single-node.json)
wait_until 60 "$model succeeds" state_is "$model" JOB_STATE_SUCCEEDED
ran=$(get "$BASE/trainyard/v1/$model/events" \
  '[.events[] | select(.toState == "JOB_STATE_RUNNING" or .toState == "JOB_STATE_SUCCEEDED") | .time | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601] | .[1] - .[0]')
awk -v r="$ran" 'BEGIN { exit !(r >= 1516 && r < 15000) }' && pass "model run time: ${ran}s" || fail "model run time: $ran"
code=$(curl -sS -o "$E2E_DIR/body" -w '%{http_code}' -X POST "$P/customJobs" -H 'content-type: application/json' \
  --data-binary "$(jq '.jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_MODEL_PARAMS", "value": "big"}]' "$PAYLOADS/lora-single-node.json")")
check "a bad model knob is refused at create" \
  "$code $(violation)" \
  "400 jobSpec.workerPoolSpecs[0].containerSpec.env[0].value"
tpu=$(create '.' tpu-v5p-slice.json)
wait_until 60 "the v5p job succeeds" state_is "$tpu" JOB_STATE_SUCCEEDED
pass "tpu-v5p-slice payload runs on its model knobs"

finish
