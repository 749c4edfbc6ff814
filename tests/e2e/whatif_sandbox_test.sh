#!/usr/bin/env bash
# What-if runs take what a caller sends and keep it off the host: a scenario name is a plain
# folder name (an absolute or climbing one is a 400 naming the field, and nothing is written
# there), an upload names only its own files (no absolute fleet, no trace that replaces the staged
# scenario), a scenario nested past the body's depth is a 400 (not a crashed server), a fleet past
# the bound is a 400 naming it, and a good upload still runs. The child process itself (its user,
# limits, cancel) is tested in tests/unit/cmd/simulate/simulate_child_test.cpp.
source "$(dirname "$0")/lib.sh"

start_server --sim-speed 100
RUNS="$BASE/trainyard/v1/whatif/runs"
TRACE=$'submit,duration,gpus\n0,3600,8\n60,7200,16\n'

# post JSON: prints "<http status> <field of the first violation>".
post() {
  curl -s -o "$E2E_DIR/body.json" -w '%{http_code}' -X POST "$RUNS" \
    -H 'content-type: application/json' --data-binary "$1" >"$E2E_DIR/code"
  echo "$(cat "$E2E_DIR/code") $(jq -r '[.error.details[]?.fieldViolations[]?.field][0] // ""' "$E2E_DIR/body.json")"
}
# upload SCENARIO_JSON [TRACE_NAME]: a request body with the scenario's text and the trace.
upload() {
  jq -n --arg s "$1" --arg t "$TRACE" --arg n "${2:-mine.csv}" \
    '{upload: {scenario: $s, trace: $t, traceName: $n}}'
}
scenario() {
  jq -nc --arg name "$1" '{name: $name, fleet: "fleet.json",
    workload: {format: "csv", columns: {submit: "submit", duration: "duration", gpus: "gpus"}},
    placement: [{model: "ON_DEMAND"}]}'
}

target="$E2E_DIR/planted"
mkdir -p "$target"
check "a scenario named by an absolute path is a 400 naming upload.scenario.name" \
  "$(post "$(upload "$(scenario "$target")")")" "400 upload.scenario.name"
check "a scenario name that climbs out is a 400 naming upload.scenario.name" \
  "$(post "$(upload "$(scenario "../../x")")")" "400 upload.scenario.name"
[ -z "$(ls -A "$target")" ] && pass "nothing was written where the name pointed" ||
  fail "the planted name's folder has: $(ls -A "$target")"

check "a trace named as the staged scenario is a 400 naming upload.traceName" \
  "$(post "$(upload "$(scenario mine)" uploaded.json)")" "400 upload.traceName"
absolute_fleet=$(scenario mine | jq -c '.fleet = "/etc/passwd"')
check "an absolute fleet path is a 400 naming upload.scenario.fleet" \
  "$(post "$(upload "$absolute_fleet")")" "400 upload.scenario.fleet"
climbing_fleet=$(scenario mine | jq -c '.fleet = "../simulate/fleet.json"')
check "a climbing fleet path is a 400 naming upload.scenario.fleet" \
  "$(post "$(upload "$climbing_fleet")")" "400 upload.scenario.fleet"

python3 -c 'import json; print(json.dumps({"upload": {"scenario": "[" * 400000 + "]" * 400000,
  "trace": "submit,duration,gpus\n", "traceName": "mine.csv"}}))' >"$E2E_DIR/deep.json"
check "a scenario nested 400k deep is a 400 naming upload.scenario" \
  "$(post "@$E2E_DIR/deep.json")" "400 upload.scenario"
curl -fsS "$BASE/readyz" >/dev/null && pass "the server is still up after the deep scenario" ||
  fail "the server died on a deep scenario"

big_fleet=$(scenario mine | jq -c '.fleet = {zones: [{zone: "us-central1-a",
  pools: [{machineType: "a3-highgpu-8g", model: "ON_DEMAND", nodes: 5000000}]}]}')
check "an inline fleet past the node bound is a 400 naming upload.scenario" \
  "$(post "$(upload "$big_fleet")")" "400 upload.scenario"
grep -q "nodes" "$E2E_DIR/body.json" && pass "the refusal names the bound" ||
  fail "the refusal does not name the node bound: $(cat "$E2E_DIR/body.json")"

# A good upload runs, in a child process of its own, to SUCCEEDED.
check "a good upload starts" "$(post "$(upload "$(scenario mine)")")" "200 "
RUN=$(jq -r .name "$E2E_DIR/body.json")
wait_until 120 "the uploaded run ends" \
  bash -c "curl -fsS '$BASE/trainyard/v1/$RUN' | jq -e '.state != \"RUNNING\"'"
RUN_STATE=$(curl -fsS "$BASE/trainyard/v1/$RUN" | jq -r .state)
check "the uploaded run succeeds" "$RUN_STATE" SUCCEEDED
[ "$RUN_STATE" = SUCCEEDED ] || curl -fsS "$BASE/trainyard/v1/$RUN"  # why, in the test's output

finish
