#!/usr/bin/env bash
# Cohorts over curl: two teams share a 4-node A3 Mega reservation with a nominal 2 each. team-a
# borrows team-b's idle half; when team-b's jobs come, team-a's borrowed work is reclaimed by
# preemption once it has run the 10-minute exemption (and says so), never its own share; the admin
# view shows nominal, used, borrowed and lent; a project outside the cohort cannot use its pool; a
# bad cohort stops start-up.
source "$(dirname "$0")/lib.sh"

cat >"$E2E_DIR/fleet.json" <<'JSON'
{"name": "cohorts", "seed": 7, "bootTime": {"default": "60s"},
 "zones": [{"zone": "us-central1-a", "pools": [
   {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r-shared", "term": "1y",
    "nodes": 4}]}],
 "cohorts": [{"name": "research", "pools": ["us-central1-a/a3-megagpu-8g/RESERVATION/r-shared"],
   "members": [
     {"project": "team-a", "nominal": {"a3-megagpu-8g/RESERVATION": 2}},
     {"project": "team-b", "nominal": {"a3-megagpu-8g/RESERVATION": 2}, "weight": 2}]}]}
JSON
start_server --sim-speed 100 --fleet "$E2E_DIR/fleet.json"

is() { [ "$(field "$1" "$2")" = "$3" ]; }
submit() {  # submit PROJECT → prints the name of a 1-node A3 Mega job that runs for 10 hours
  jq '.jobSpec.workerPoolSpecs[0].machineSpec = {"machineType": "a3-megagpu-8g",
      "acceleratorType": "NVIDIA_H100_MEGA_80GB", "acceleratorCount": 8}
    | .jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_SIM_DURATION", "value": "36000s"}]' \
    "$PAYLOADS/lora-single-node.json" |
    curl -fsS -X POST "$BASE/v1/projects/$1/locations/us-central1/customJobs" \
      -H 'content-type: application/json' --data-binary @- | jq -r .name
}
share() {  # share PROJECT → "used borrowed lent" on the cohort's reservation
  curl -fsS "$BASE/trainyard/v1/fleet" | jq -r --arg p "$1" \
    '.cohorts[0].resources[0].members[] | select(.project == $p) | "\(.used) \(.borrowed) \(.lent)"'
}

a=()
for i in 1 2 3 4; do
  a+=("$(submit team-a)")
  # One at a time, so "newest" is well defined.
  wait_until 30 "team-a job $i is admitted" bash -c "[ \"\$(curl -fsS '$BASE/v1/${a[-1]}' | jq -r .state)\" != JOB_STATE_QUEUED ]"
done
check "team-a borrows team-b's idle half: 4 used, 2 borrowed" "$(share team-a)" "4 2 0"
check "team-b lends its 2" "$(share team-b)" "0 0 2"
check "the view names the nominal and the weight" \
  "$(curl -fsS "$BASE/trainyard/v1/fleet" | jq -c '[.cohorts[0].resources[0].members[] | [.project, .nominal, .weight]]')" \
  '[["team-a",2,1],["team-b",2,2]]'

b1=$(submit team-b)
queued_a() { for j in "${a[@]}"; do if [ "$(field "$j" .state)" = JOB_STATE_QUEUED ]; then echo "$j"; fi; done; }
count_queued_a() { [ "$(queued_a | wc -l)" = "$1" ]; }
# At 100x, 10 minutes of model time are 6 s: the verdict comes within a cycle or two.
exempt() { field "$b1" .trainyard.reason.message | grep -q 'its work that ran less than 10m is not preempted'; }
wait_until 5 "team-b's first job waits while team-a's work is younger than 10 minutes" exempt
pass "team-b's first job waits while team-a's work is younger than 10 minutes"
wait_until 30 "team-b's first job is admitted" bash -c "[ \"\$(curl -fsS '$BASE/v1/$b1' | jq -r .state)\" != JOB_STATE_QUEUED ]"
wait_until 30 "one of team-a's jobs goes back to the queue" count_queued_a 1
r1=$(queued_a)
check "its events say its borrowed capacity was reclaimed" \
  "$(curl -fsS "$BASE/trainyard/v1/$r1/events" | jq -r '.events[] | select(.toState == "JOB_STATE_QUEUED" and .fromState != "JOB_STATE_QUEUED") | .reason' | sed -E 's/job [0-9]+/job N/' | tail -1)" \
  "borrowed capacity reclaimed by job N, whose project is within its cohort share, stopped at the end of its termination grace; back in the queue"
# The requeue and the scheduler's verdict on the requeued job are two writes: wait for the second.
full_cohort() { field "$r1" .trainyard.reason.message | grep -qF "cohort research's a3-megagpu-8g/RESERVATION is full: 4 of 4 in use, team-a holds 3 of its nominal 2"; }
wait_until 10 "its reason names the full cohort" full_cohort
pass "its reason names the full cohort"
check "team-a's other jobs keep running" \
  "$(for j in "${a[@]}"; do field "$j" .state; done | grep -c 'RUNNING\|PENDING')" 3

b2=$(submit team-b)
wait_until 30 "team-b's second job is admitted" bash -c "[ \"\$(curl -fsS '$BASE/v1/$b2' | jq -r .state)\" != JOB_STATE_QUEUED ]"
wait_until 30 "a second job of team-a's is reclaimed" count_queued_a 2
b3=$(submit team-b)
wait_until 30 "team-b's third job gets a verdict" bash -c "[ \"\$(curl -fsS '$BASE/v1/$b3' | jq -r '.trainyard.reason.code // empty')\" != '' ]"
check "beyond its nominal team-b reclaims nothing: team-a keeps its own 2" \
  "$(for j in "${a[@]}"; do field "$j" .state; done | grep -c 'RUNNING\|PENDING')" 2
check "team-b's third job waits" "$(field "$b3" .state)" JOB_STATE_QUEUED
check "shares now: team-a 2 used, none borrowed" "$(share team-a)" "2 0 0"
check "shares now: team-b 2 used" "$(share team-b)" "2 0 0"

outsider=$(submit team-c)
wait_until 30 "the outsider's job gets a verdict" \
  bash -c "[ \"\$(curl -fsS '$BASE/v1/$outsider' | jq -r '.trainyard.reason.code // empty')\" = NEVER_FITS ]"
pass "a project outside the cohort cannot use its pool (NEVER_FITS)"

# A cohort whose shares add up to more than its pools have stops start-up, naming the field.
stop_server
jq '.cohorts[0].members[0].nominal["a3-megagpu-8g/RESERVATION"] = 3' "$E2E_DIR/fleet.json" >"$E2E_DIR/bad.json"
out=$("$TRAINYARD_BIN" serve --listen 127.0.0.1:0 --data-dir "$E2E_DIR/data" --fleet "$E2E_DIR/bad.json" 2>&1 || true)
grep -q "cohorts\[0\].members: the nominal shares of a3-megagpu-8g/RESERVATION add up to 5, more than the 4 its pools have" <<<"$out" \
  && pass "a cohort over its capacity stops start-up" || fail "bad cohort: $out"

finish
