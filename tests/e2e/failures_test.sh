#!/usr/bin/env bash
# Fleet failures over curl on a real server: an injected spot preemption restarts a SPOT job on new
# capacity (restart 1 of 6) and it still SUCCEEDS; an injected node failure sends a running gang
# back to PENDING until the node is repaired — across a kill -9 — then it SUCCEEDS; bad injections
# are 400s naming the field; goodput shows the work each interruption cost.
source "$(dirname "$0")/lib.sh"

# A fleet with no spot hazard of its own, so only the injected preemption happens.
cat >"$E2E_DIR/fleet.json" <<'JSON'
{"name": "failures", "seed": 7, "bootTime": {"default": "120s"}, "spotNotice": "30s",
 "repairTime": "1800s",
 "zones": [{"zone": "us-central1-a", "pools": [
   {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y",
    "projects": ["demo"], "nodes": 2},
   {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 3}]}]}
JSON

# 100 virtual seconds per wall second: boot 1.2s, repair 18s, a 1200s run 12s. The repair outlasts
# a kill -9 and restart of the server (embedded PostgreSQL included) on a loaded machine: at 6s it
# once finished before the restarted server was asked.
serve() {  # (re)starts the server; the port changes, so the URLs below are set again
  start_server --sim-speed 100 --fleet "$E2E_DIR/fleet.json" --lease-seconds 2
  P="$BASE/v1/projects/demo/locations/us-central1"
  F="$BASE/trainyard/v1/fleet"
}
serve
JOBS="$(dirname "$0")/../../payloads/jobs"

create() {  # create STRATEGY → prints the job name
  jq --arg s "$1" '.jobSpec.workerPoolSpecs[0].machineSpec = {"machineType": "a3-megagpu-8g",
      "acceleratorType": "NVIDIA_H100_MEGA_80GB", "acceleratorCount": 8}
    | .jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_SIM_DURATION", "value": "1200s"}]
    | .jobSpec.scheduling.strategy = $s' "$JOBS/lora-single-node.json" |
    curl -fsS -X POST "$P/customJobs" -H 'content-type: application/json' --data-binary @- | jq -r .name
}
is() { [ "$(field "$1" "$2")" = "$3" ]; }
inject() {  # inject VERB BODY → prints the response body (and fails on non-2xx)
  curl -fsS -X POST "$F:$1" -H 'content-type: application/json' --data-binary "$2"
}
bad_field() {  # bad_field VERB BODY → "HTTP_CODE STATUS FIELD"
  local out code
  out=$(curl -sS -w '\n%{http_code}' -X POST "$F:$1" -H 'content-type: application/json' --data-binary "$2")
  code=$(tail -n1 <<<"$out")
  echo "$code $(head -n -1 <<<"$out" | jq -r '.error.status + " " + ([.error.details[]? | .fieldViolations[]?.field][0] // "")')"
}

spot=$(create SPOT)
standard=$(create STANDARD)
wait_until 30 "the SPOT job runs" is "$spot" .state JOB_STATE_RUNNING
wait_until 30 "the STANDARD job runs" is "$standard" .state JOB_STATE_RUNNING

# Spot preemption of the node the SPOT job runs on.
spot_node=$(field "$spot" '.trainyard.placement.pools[0].nodes[0]')
injection=$(inject injectSpotPreemption "{\"node\": \"$spot_node\"}")
check "the preemption request is stored" "$(jq -r '.kind + " " + .state' <<<"$injection")" "SPOT_PREEMPTION PENDING"
iname=$(jq -r .name <<<"$injection")
wait_until 30 "the preemption is applied" bash -c "curl -fsS '$BASE/trainyard/v1/$iname' | jq -e '.state == \"APPLIED\"'"
check "the simulator says which node got the notice" \
  "$(curl -fsS "$BASE/trainyard/v1/$iname" | jq -r .outcome)" "preemption notice given to $spot_node"
wait_until 30 "the SPOT job is restarted" is "$spot" .trainyard.spotRestarts 1
wait_until 30 "the SPOT job runs again" is "$spot" .state JOB_STATE_RUNNING
new_node=$(field "$spot" '.trainyard.placement.pools[0].nodes[0]')
[ "$new_node" != "$spot_node" ] && pass "restarted on new capacity ($new_node)" \
  || fail "restarted on the reclaimed node $spot_node"

# Node failure under the STANDARD job: PENDING while the node is repaired (1800s), then it resumes.
std_node=$(field "$standard" '.trainyard.placement.pools[0].nodes[0]')
failure=$(inject injectNodeFailure "{\"node\": \"$std_node\"}")
fname=$(jq -r .name <<<"$failure")
wait_until 30 "the STANDARD job waits for the repair" is "$standard" .trainyard.reason.code NODE_REPAIR
check "the job is PENDING during the repair" "$(field "$standard" .state)" JOB_STATE_PENDING
check "the reason names the failed node" \
  "$(field "$standard" .trainyard.reason.message | grep -o "node $std_node failed")" "node $std_node failed"
check "the failure injection is applied" \
  "$(curl -fsS "$BASE/trainyard/v1/$fname" | jq -r '.outcome | startswith("node '"$std_node"' FAILED")')" true
# kill -9 in the middle of the repair: the next leader finishes it and the job resumes.
kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
serve
check "the job still waits for the repair after kill -9" "$(field "$standard" .trainyard.reason.code)" NODE_REPAIR
wait_until 60 "the STANDARD job resumes after the repair" is "$standard" .state JOB_STATE_RUNNING

wait_until 60 "the SPOT job succeeds" is "$spot" .state JOB_STATE_SUCCEEDED
wait_until 60 "the STANDARD job succeeds" is "$standard" .state JOB_STATE_SUCCEEDED
check "the SPOT job kept its restart count" "$(field "$spot" .trainyard.spotRestarts)" 1
events() {  # events JOB → one "FROM>TO reason" line per job event
  curl -fsS "$BASE/trainyard/v1/$1/events" |
    jq -r '.events[] | (.fromState | sub("JOB_STATE_"; "")) + ">" + (.toState | sub("JOB_STATE_"; "")) + " " + .reason'
}
check "the SPOT job's events show the notice" \
  "$(events "$spot" | grep -c "^RUNNING>RUNNING spot preemption notice: node $spot_node")" 1
check "the SPOT job's events show the restart" \
  "$(events "$spot" | grep -c "^RUNNING>QUEUED spot capacity reclaimed (node $spot_node); restart 1 of 6")" 1
check "the STANDARD job's events show the failure and the repair" \
  "$(events "$standard" | grep -E -c "^RUNNING>PENDING node $std_node failed|^PENDING>PENDING node $std_node repaired")" 2
check "the STANDARD job was never restarted by spot" "$(field "$standard" '.trainyard.spotRestarts // 0')" 0

# Goodput: both jobs were interrupted before their first checkpoint (every 600s by default), so the
# work they had done was redone; what they kept is their 1200s of work (to within the executor's
# lateness in noticing the end at 100x).
for job in "$spot" "$standard"; do
  short=$(basename "$job")
  check "job $short redid the work since its last checkpoint" \
    "$(field "$job" '.trainyard.goodput.redoneTime | rtrimstr("s") | tonumber > 0')" true
  check "job $short kept exactly its run time as productive time" \
    "$(field "$job" '.trainyard.goodput.productiveTime | rtrimstr("s") | tonumber | . >= 1200 and . < 1210')" true
  check "job $short ran its work plus what it redid" \
    "$(field "$job" '.trainyard.goodput | ((.runningTime, .productiveTime, .redoneTime) |= (rtrimstr("s") | tonumber)) | (.runningTime - .productiveTime - .redoneTime | fabs) < 0.01')" true
  check "job $short's badput is in ML Goodput's buckets, and with the productive time makes up its lifetime" \
    "$(field "$job" '.trainyard.goodput | (.badput | map_values(rtrimstr("s") | tonumber)) as $b |
      ((.productiveTime, .startingTime, .restartingTime, .runningTime, .redoneTime) |= (rtrimstr("s") | tonumber)) |
      $b.WASTED_PROGRESS_FROM_DISRUPTION == .redoneTime and $b.INFRASTRUCTURE_RECOVERY_FROM_DISRUPTION == .restartingTime and
      $b.TPU_INITIALIZATION == .startingTime and
      ((.productiveTime + ($b | add)) - (.startingTime + .restartingTime + .runningTime) | fabs) < 0.01')" true
  check "job $short's ratio is productive over its running lifetime, scheduling goodput beside it" \
    "$(field "$job" '.trainyard.goodput | .ratio > 0 and .ratio < 1 and .schedulingRatio > 0 and .schedulingRatio <= 1')" true
  check "job $short's cost per productive accelerator-hour is its cost over its productive GPU-hours" \
    "$(field "$job" '.trainyard | ([.placement.pools[].nodes | length] | add * 8) as $gpus |
      (.goodput.productiveTime | rtrimstr("s") | tonumber) as $s |
      (.costPerProductiveAcceleratorHourUsd - .costUsd / ($s / 3600 * $gpus) | fabs) < 0.01')" true
done
check "the repair counts as time lost to restarting (1800s and the new VM's pull)" \
  "$(field "$standard" '.trainyard.goodput.restartingTime | rtrimstr("s") | tonumber >= 1800')" true

# Bad injections: 400 INVALID_ARGUMENT naming the field.
check "unknown node" "$(bad_field injectNodeFailure '{"node": "us-central1-a-nope-0000"}')" "400 INVALID_ARGUMENT node"
check "node failure needs a node" "$(bad_field injectNodeFailure '{}')" "400 INVALID_ARGUMENT node"
check "not a spot pool" \
  "$(bad_field injectSpotPreemption '{"pool": "us-central1-a/a3-megagpu-8g/RESERVATION/r1"}')" \
  "400 INVALID_ARGUMENT pool"
check "fraction out of range" \
  "$(bad_field injectSpotPreemption '{"pool": "us-central1-a/a3-megagpu-8g/SPOT", "fraction": 2}')" \
  "400 INVALID_ARGUMENT fraction"
check "count must be a number" \
  "$(bad_field injectSpotPreemption '{"zone": "us-central1-a", "count": "many"}')" "400 INVALID_ARGUMENT count"
check "unknown field" "$(bad_field injectSpotPreemption '{"zones": "us-central1-a"}')" "400 INVALID_ARGUMENT zones"
check "a whole zone by fraction is accepted" \
  "$(inject injectSpotPreemption '{"zone": "us-central1-a", "fraction": 0.5}' | jq -r '.zone + " " + (.fraction|tostring)')" \
  "us-central1-a 0.5"
check "an unknown injection is 404" \
  "$(curl -sS -o /dev/null -w '%{http_code}' "$F/injections/999999")" 404

finish
