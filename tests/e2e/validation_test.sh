#!/usr/bin/env bash
# The README's replay of the HPC2N log (Parallel Workloads Archive) on its own machine, run as
# written with the published log beside the scenarios: the validation block holds the recorded and
# the replayed figures, utilization lands within 2 points of the recorded, and the per-user limit
# brings the mean wait within 30% of it (docs/simulate.md, "Held against recorded history"). The
# log is read from the workplace's copy (never committed); without it the test fails.
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LOG="${HPC2N_LOG:-$ROOT/../shared/traces/HPC2N-2002-2.2-cln.swf.gz}"
if [ ! -r "$LOG" ]; then
  fail "cannot test: no HPC2N log at $LOG (set HPC2N_LOG to the published HPC2N-2002-2.2-cln.swf.gz)"
  finish
  exit 1
fi

command=$(grep -m1 -E "^build/trainyard simulate payloads/simulate/validation/" "$ROOT/README.md" || true)
[ -n "$command" ] && pass "the README shows the validation replay" ||
  fail "the README has no 'build/trainyard simulate payloads/simulate/validation/' line"

# The repository's scenarios with the log beside them, as the README says to put it.
mkdir -p "$E2E_DIR/payloads/simulate/validation"
cp "$ROOT"/payloads/simulate/validation/*.json "$E2E_DIR/payloads/simulate/validation/"
gunzip -c "$LOG" >"$E2E_DIR/payloads/simulate/validation/HPC2N-2002-2.2-cln.swf"
BIN=$(realpath "$TRAINYARD_BIN")
cd "$E2E_DIR"
# shellcheck disable=SC2086
if "$BIN" ${command#build/trainyard } 2>"$E2E_DIR/progress" >/dev/null; then
  pass "the validation replay runs as written"
else
  fail "the validation replay failed: $(tail -3 "$E2E_DIR/progress")"
fi
dir=$(sed -E 's/.*--out ([^ ]+).*/\1/' <<<"$command")
v() { jq -r "$2" "$E2E_DIR/$dir/$1/summary.json"; }
check "the whole log is replayed" "$(v hpc2n-recorded .validation.jobs)" 202870
check "every job started" "$(v hpc2n-recorded .validation.jobs_never_started)" 0
for key in utilization wait_mean_s wait_p50_s wait_p95_s bounded_slowdown; do
  [ "$(v hpc2n-recorded ".validation.recorded.$key | type")" = number ] &&
    [ "$(v hpc2n-recorded ".validation.replay.$key | type")" = number ] ||
    fail "validation lacks $key"
done
jq -e '.validation.recorded.utilization > 0.59 and .validation.recorded.utilization < 0.61' \
  "$E2E_DIR/$dir/hpc2n-recorded/summary.json" >/dev/null &&
  pass "the recorded utilization is the log's (about 0.60)" || fail "recorded utilization off"
for s in hpc2n-recorded hpc2n-user-limit; do
  points=$(v $s '.validation.replay_over_recorded.utilization_points | if . < 0 then -. else . end')
  awk -v p="$points" 'BEGIN { exit !(p <= 2) }' &&
    pass "$s: utilization within 2 points of the recorded ($points)" ||
    fail "$s: utilization $points points from the recorded"
done
ratio=$(v hpc2n-user-limit .validation.replay_over_recorded.wait_mean)
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.7 && r <= 1.3) }' &&
  pass "with the per-user limit the mean wait is within 30% of the recorded (x$ratio)" ||
  fail "with the per-user limit the mean wait is x$ratio of the recorded"
grep -q "Against recorded history" "$E2E_DIR/$dir/comparison.md" &&
  pass "comparison.md has the validation table" || fail "comparison.md has no validation table"
finish
