#!/usr/bin/env bash
# `trainyard simulate`: the examples of the README and docs/simulate.md run as written and write
# every report; the same scenarios and seed give byte-identical reports (timing.json, the
# machine's, aside) and another seed another history; the figures agree with what the scenarios
# buy; bad input is refused with the file, line or field named and nothing half-written. Needs no
# server.
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"

# The documents' commands (each once), with the binary under test and an output folder of our own.
# The replay of the HPC2N log needs the published log: tests/e2e/validation_test.sh runs it.
mapfile -t commands < <(grep -hE "^build/trainyard simulate " README.md docs/simulate.md |
  grep -v "payloads/simulate/validation/" | sort -u)
[ "${#commands[@]}" -ge 2 ] && pass "the documents show simulate's examples" ||
  fail "README.md and docs/simulate.md have no 'trainyard simulate' example lines"
for i in "${!commands[@]}"; do
  cmd="${commands[$i]#build/trainyard }"
  out="$E2E_DIR/readme-$i"
  # shellcheck disable=SC2086
  if "$TRAINYARD_BIN" ${cmd/--out*/--out $out} 2>"$E2E_DIR/progress-$i"; then
    pass "example $i runs"
  else
    fail "example $i failed: $(tail -3 "$E2E_DIR/progress-$i")"
  fi
  [ -s "$out/comparison.md" ] && [ -s "$out/comparison.json" ] && [ -s "$out/wait_cdf.svg" ] &&
    [ -s "$out/cost_vs_wait.svg" ] && pass "example $i writes the comparison and its plots" ||
    fail "example $i: comparison or plots missing"
  grep -q '^simulate: .* jobs submitted' "$E2E_DIR/progress-$i" &&
    pass "example $i shows its progress on stderr" || fail "no progress line"
done

S=payloads/simulate
run() { "$TRAINYARD_BIN" simulate "$@" 2>/dev/null >/dev/null; }
run $S/on-demand.json $S/reservation-1y.json $S/reservation-3y.json $S/spot-fallback.json \
  --out "$E2E_DIR/a" --seed 3 || fail "four scenarios"
run $S/on-demand.json $S/reservation-1y.json $S/reservation-3y.json $S/spot-fallback.json \
  --out "$E2E_DIR/b" --seed 3 || fail "four scenarios again"
diff -r -x timing.json "$E2E_DIR/a" "$E2E_DIR/b" >/dev/null &&
  pass "the same scenarios and seed give byte-identical reports" ||
  fail "two runs with one seed differ: $(diff -r -x timing.json "$E2E_DIR/a" "$E2E_DIR/b" | head -5)"
run $S/spot-fallback.json --out "$E2E_DIR/c" --seed 4 || fail "another seed"
cmp -s "$E2E_DIR/a/spot-fallback/jobs.csv" "$E2E_DIR/c/spot-fallback/jobs.csv" &&
  fail "another seed gave the same spot history" || pass "another seed gives another spot history"

sum() { jq -r "$2" "$E2E_DIR/a/$1/summary.json"; }
for s in on-demand reservation-1y reservation-3y spot-fallback; do
  for key in .jobs .succeeded .failed .cost_usd.total .cost_usd.by_consumption_model \
    .wait_seconds.p50 .wait_seconds.p95 .wait_seconds.p99 .jct_seconds.p50 .jct_seconds.p95 \
    .goodput .scheduling_goodput .cost_per_productive_accelerator_hour .preemptions \
    .simulated_seconds; do
    [ "$(sum $s "$key | type")" != "null" ] || fail "$s: summary.json has no $key"
  done
  rows=$(($(wc -l <"$E2E_DIR/a/$s/jobs.csv") - 1))
  check "$s: jobs.csv has a row per job" "$rows" "$(sum $s .jobs)"
  jq -e '.wall_seconds > 0 and .simulated_per_wall > 0' "$E2E_DIR/a/$s/timing.json" >/dev/null &&
    pass "$s: timing.json says how fast it ran" || fail "$s: timing.json"
done
check "every trace job ends" "$(sum on-demand .succeeded)" "$(sum on-demand .jobs)"
check "on-demand alone buys no spot" "$(sum on-demand '.cost_usd.by_consumption_model.SPOT // 0')" "0"
jq -e -n --argjson a "$(sum reservation-1y .cost_usd.total)" --argjson b "$(sum reservation-3y .cost_usd.total)" \
  '$b < $a' >/dev/null && pass "a 3-year reservation costs less than a 1-year one" || fail "3y >= 1y"
jq -e -n --argjson a "$(sum on-demand .cost_usd.total)" --argjson b "$(sum spot-fallback .cost_usd.total)" \
  '$b < $a' >/dev/null && pass "spot with on-demand fallback costs less than on-demand alone" ||
  fail "spot fallback is not cheaper"
jq -e '.preemptions > 0' "$E2E_DIR/a/spot-fallback/summary.json" >/dev/null &&
  pass "spot capacity is reclaimed in the replay" || fail "no spot preemption"
jq -e '.reservation_utilization > 0 and .reservation_utilization <= 1' \
  "$E2E_DIR/a/reservation-1y/summary.json" >/dev/null && pass "the reservation's use is reported" ||
  fail "reservation utilization"

# SWF, the Parallel Workloads Archive's format: the same 2,000 jobs written as SWF (GPUs as
# processors, projects as user numbers) replay to the same report as the CSV.
mkdir -p "$E2E_DIR/swf"
cp $S/fleet.json "$E2E_DIR/swf/"
python3 scripts/make_synthetic_trace.py --jobs 2000 --days 14 --seed 1 --format swf >"$E2E_DIR/swf/synthetic.swf"
jq '.name = "on-demand-swf" | .workload = {path: "synthetic.swf", format: "swf", project: "user"}' \
  $S/on-demand.json >"$E2E_DIR/swf/on-demand-swf.json"
run "$E2E_DIR/swf/on-demand-swf.json" --out "$E2E_DIR/swf/out" --seed 3 || fail "the SWF trace"
check "an SWF trace replays every job" "$(jq -r .jobs "$E2E_DIR/swf/out/on-demand-swf/summary.json")" "2000"
# (the projects have other names: each one's waits are compared as a set)
same='del(.scenario) | .wait_seconds_by_project |= ([.[]] | sort)'
check "and reports what the same jobs as CSV report" \
  "$(jq -c "$same" "$E2E_DIR/swf/out/on-demand-swf/summary.json")" \
  "$(jq -c "$same" "$E2E_DIR/a/on-demand/summary.json")"
check "its projects are the log's users" \
  "$(cut -d, -f3 "$E2E_DIR/swf/out/on-demand-swf/jobs.csv" | sed 1d | sort -u | tr '\n' ' ')" \
  "user-1 user-2 user-3 user-4 "

# A persistent resource kept for one team: its nodes are paid for while held, its jobs start on
# warm nodes, and the same seed repeats the run.
run $S/resource-autoscaled.json --out "$E2E_DIR/pr" --seed 3 || fail "the persistent resource scenario"
run $S/resource-autoscaled.json --out "$E2E_DIR/pr2" --seed 3 || fail "the persistent resource scenario again"
diff -r -x timing.json "$E2E_DIR/pr" "$E2E_DIR/pr2" >/dev/null &&
  pass "a persistent resource's replay repeats byte for byte" || fail "two persistent resource runs differ"
PR="$E2E_DIR/pr/resource-autoscaled/summary.json"
jq -e '.persistent_resources["product-pool"] | .held_node_hours >= .busy_node_hours and
  .busy_node_hours > 0 and .most_nodes > 4 and .most_nodes <= 16' "$PR" >/dev/null &&
  pass "the resource reports the node-hours it held and used, grown past its minimum within its maximum" ||
  fail "persistent_resources: $(jq -c .persistent_resources "$PR")"
check "every job ends" "$(jq -r .succeeded "$PR")" "$(jq -r .jobs "$PR")"
jq -e -n --argjson r "$(jq .wait_seconds_by_project.product.p50 "$PR")"   --argjson o "$(sum on-demand .wait_seconds_by_project.product.p50)" '$r < $o' >/dev/null &&
  pass "the team's jobs wait less on its warm resource than on on-demand nodes that boot" ||
  fail "product's wait p50 did not drop"
awk -F, 'NR > 1 && $3 == "product" && $10 != "a3-megagpu-8g" {bad = 1} END {exit bad}'   "$E2E_DIR/pr/resource-autoscaled/jobs.csv" && pass "the team's jobs run on the resource's machine type" ||
  fail "a product job ran on another machine type"

# Bad input: refused, named, nothing written.
bad() {  # bad NAME EXPECTED-MESSAGE SCENARIO-JSON [TRACE-TEXT]
  local dir="$E2E_DIR/bad-$1"
  mkdir -p "$dir"
  cp $S/fleet.json "$dir/"
  [ -n "${4:-}" ] && printf '%b' "$4" >"$dir/trace.csv" || cp $S/synthetic.csv "$dir/trace.csv"
  echo "$3" >"$dir/scenario.json"
  local err
  if err=$("$TRAINYARD_BIN" simulate "$dir/scenario.json" $S/on-demand.json --out "$dir/out" 2>&1); then
    fail "$1: accepted"
  else
    grep -qF -- "$2" <<<"$err" && pass "$1: refused naming $2" || fail "$1: message was: $err"
  fi
  [ ! -e "$dir/out" ] && pass "$1: nothing written" || fail "$1: wrote $(ls "$dir/out")"
}
W='"workload": {"path": "trace.csv", "format": "csv", "columns": {"submit": "submit_time", "duration": "duration", "gpus": "num_gpu"}}'
bad "missing column" 'no column "gpu_count" (workload.columns.gpus)' \
  '{"fleet": "fleet.json", "workload": {"path": "trace.csv", "format": "csv", "columns": {"submit": "submit_time", "duration": "duration", "gpus": "gpu_count"}}}'
bad "a job no shape fits" 'trace.csv:3: no shape has 16 GPUs a node' \
  '{"fleet": "fleet.json", "workload": {"path": "trace.csv", "format": "csv", "columns": {"submit": "s", "duration": "d", "gpus": "g", "nodes": "n"}}}' \
  's,d,g,n\n0,60,8,1\n10,60,32,2\n'
bad "unknown reservation" 'reservations[0].reservation: the fleet has no pool of reservation "nope"' \
  "{\"fleet\": \"fleet.json\", $W, \"reservations\": [{\"reservation\": \"nope\", \"nodes\": 4}]}"
bad "not a number" 'trace.csv:2: column "duration" is not a number: "soon"' \
  "{\"fleet\": \"fleet.json\", $W}" 'submit_time,duration,num_gpu\n0,soon,8\n'
bad "unknown model" 'placement[0].model: must be STANDARD' \
  "{\"fleet\": \"fleet.json\", $W, \"placement\": [{\"model\": \"CHEAP\"}]}"
bad "no workload" 'workload: is required' '{"fleet": "fleet.json"}'
WP='"workload": {"path": "trace.csv", "format": "csv", "columns": {"submit": "submit_time", "duration": "duration", "gpus": "num_gpu", "project": "queue"}}'
R='"persistentResources": [{"id": "pool", "project": "product", "machineType": "a3-megagpu-8g", "replicaCount": 2}]'
bad "unknown persistent resource" 'placement[0].persistentResource: the scenario keeps no persistent resource "nope"' \
  "{\"fleet\": \"fleet.json\", $W, $R, \"placement\": [{\"projects\": [\"product\"], \"persistentResource\": \"nope\"}]}"
bad "another project's resource" 'placement[0].projects: must be ["product"]' \
  "{\"fleet\": \"fleet.json\", $W, $R, \"placement\": [{\"projects\": [\"research\"], \"persistentResource\": \"pool\"}]}"
bad "a gang larger than its resource" 'trace.csv:3: needs 4 nodes of a3-megagpu-8g; persistent resource pool holds at most 2' \
  "{\"fleet\": \"fleet.json\", $WP, $R, \"placement\": [{\"projects\": [\"product\"], \"persistentResource\": \"pool\"}]}" \
  'submit_time,duration,num_gpu,queue\n0,60,8,product\n10,60,32,product\n'
bad "a resource without a size" 'persistentResources[0].replicaCount: is required without an autoscalingSpec' \
  "{\"fleet\": \"fleet.json\", $W, \"persistentResources\": [{\"id\": \"pool\", \"project\": \"product\", \"machineType\": \"a3-megagpu-8g\"}]}"

finish
