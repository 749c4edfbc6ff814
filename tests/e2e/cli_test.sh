#!/usr/bin/env bash
# The `trainyard jobs|ops` verbs (built on sdk/) against a real `trainyard serve`: output, --json,
# exit codes, and errors as one line.
source "$(dirname "$0")/lib.sh"

start_server --sim-speed 200 --lease-seconds 2
export TRAINYARD_ENDPOINT="$BASE" TRAINYARD_PROJECT=cli-project TRAINYARD_LOCATION=us-central1
TY=$TRAINYARD_BIN
PAYLOAD="$PAYLOADS/lora-single-node.json"

# job_file NAME VAR VALUE: the sample payload with one simulator knob in its env.
job_file() {
  jq --arg n "$2" --arg v "$3" '.jobSpec.workerPoolSpecs[0].containerSpec.env=[{"name":$n,"value":$v}]' \
    "$PAYLOAD" >"$E2E_DIR/$1.json"
  echo "$E2E_DIR/$1.json"
}

# run CMD…: sets OUT, ERR and RC, whatever the exit code.
run() {
  RC=0
  "$@" >"$E2E_DIR/out" 2>"$E2E_DIR/err" || RC=$?
  OUT=$(cat "$E2E_DIR/out")
  ERR=$(cat "$E2E_DIR/err")
}

quick=$(job_file quick TRAINYARD_SIM_DURATION 1s)
long=$(job_file long TRAINYARD_SIM_DURATION 36000s)
failing=$(job_file failing TRAINYARD_SIM_EXIT_CODE 1)

# create --wait: one line per change, the last one SUCCEEDED, exit 0.
run "$TY" jobs create -f "$quick" --wait --timeout 120
check "create --wait on a good job exits 0" "$RC" 0
grep -q '^Created projects/[0-9]*/locations/us-central1/customJobs/[0-9]*$' <<<"$OUT" \
  && pass "create --wait names the job" || fail "create output: $OUT"
grep -Eq '^ +[0-9]+\.[0-9]s  JOB_STATE_[A-Z]+' <<<"$OUT" && pass "wait line: elapsed and state" \
  || fail "no wait line: $OUT"
# One line per change: no two consecutive wait lines say the same thing.
repeats=$(grep -E '^ +[0-9]+\.[0-9]s  ' <<<"$OUT" | sed -E 's/^ +[0-9.]+s  //' | uniq -d | wc -l)
check "wait prints a line only on a change" "$repeats" 0
grep -Eq 'ADMITTED' <<<"$OUT" && pass "wait lines give the server's reason" || fail "no reason: $OUT"
grep -Eq 'customJobs/[0-9]+ JOB_STATE_SUCCEEDED after [0-9.]+s$' <<<"$OUT" \
  && pass "last line is the SUCCEEDED outcome" || fail "outcome: $OUT"
done_name=$(head -1 <<<"$OUT" | cut -d' ' -f2)

# get: human and --json (the raw resource, parseable by jq).
run "$TY" jobs get "$done_name"
check "get exits 0" "$RC" 0
grep -q '^state: *JOB_STATE_SUCCEEDED$' <<<"$OUT" && pass "get shows the state" || fail "get: $OUT"
run "$TY" jobs get "${done_name##*/}" --json
check "get by id --json exits 0" "$RC" 0
check "--json is the raw job" "$(jq -r .state <<<"$OUT")" JOB_STATE_SUCCEEDED
check "--json keeps the trainyard object" "$(jq -r .trainyard.reason.code <<<"$OUT")" ADMITTED

# wait that times out: a 10-hour job and --timeout 2 → exit 5 with a clear message.
run "$TY" jobs create -f "$long" --json
check "create --json exits 0" "$RC" 0
long_name=$(jq -r .name <<<"$OUT")
check "created job is QUEUED" "$(jq -r .state <<<"$OUT")" JOB_STATE_QUEUED
run "$TY" jobs wait "$long_name" --timeout 2
check "wait past --timeout exits 5" "$RC" 5
grep -q "^trainyard: DEADLINE_EXCEEDED: timed out after 2.0s: $long_name is still JOB_STATE_" <<<"$ERR" \
  && pass "timeout message names the job and its state" || fail "timeout stderr: $ERR"

# cancel, then wait: CANCELLED exits 4.
run "$TY" jobs cancel "$long_name"
check "cancel exits 0" "$RC" 0
run "$TY" jobs wait "$long_name" --timeout 60
check "wait on a cancelled job exits 4" "$RC" 4
grep -q "JOB_STATE_CANCELLED after" <<<"$OUT" && pass "cancelled outcome line" || fail "cancel wait: $OUT"

# FAILED exits 3 and says why.
run "$TY" jobs create -f "$failing" --wait --timeout 120
check "create --wait on a failing job exits 3" "$RC" 3
grep -q "JOB_STATE_FAILED after .*non-zero status of 1" <<<"$OUT" && pass "failure reason shown" \
  || fail "failed outcome: $OUT"

# list follows page tokens: three jobs in a fresh project, two per page.
for i in 1 2 3; do
  run "$TY" jobs create -f "$quick" --project paging-project
  check "create paging job $i" "$RC" 0
done
run "$TY" jobs list --project paging-project --page-size 2 --json
check "list --json exits 0" "$RC" 0
check "list with pageSize 2 returns all 3 jobs" "$(jq '.customJobs|length' <<<"$OUT")" 3
check "list pages hold distinct jobs" "$(jq '[.customJobs[].name]|unique|length' <<<"$OUT")" 3
run "$TY" jobs list --project paging-project --page-size 2
check "list table exits 0" "$RC" 0
check "table: a header and 3 rows" "$(wc -l <<<"$OUT")" 4
grep -q '^ID  *DISPLAY NAME  *STATE  *CREATED  *REASON$' <<<"$OUT" && pass "table header" \
  || fail "table: $OUT"
run "$TY" jobs list --filter 'state=JOB_STATE_FAILED' --json
check "filtered list returns the failed job" "$(jq -r '[.customJobs[].state]|unique|join(",")' <<<"$OUT")" JOB_STATE_FAILED

# Errors: NOT_FOUND decoded into one line, exit 1.
run "$TY" jobs get 1234567890123456789
check "missing job exits 1" "$RC" 1
check "missing job is one line on stderr" "$(wc -l <<<"$ERR")" 1
grep -q '^trainyard: NOT_FOUND: ' <<<"$ERR" && pass "error names the canonical code" || fail "err: $ERR"
# A bad body: INVALID_ARGUMENT with the field violation under it.
jq '.jobSpec.bogusField=1' "$PAYLOAD" >"$E2E_DIR/bad.json"
run "$TY" jobs create -f "$E2E_DIR/bad.json"
check "invalid job exits 1" "$RC" 1
grep -q '^trainyard: INVALID_ARGUMENT: .*bogusField' <<<"$ERR" && pass "invalid job message" || fail "err: $ERR"
grep -q '^  jobSpec.bogusField: ' <<<"$ERR" && pass "field violation printed" || fail "err: $ERR"

# delete returns an operation; ops get / ops wait read it.
run "$TY" jobs delete "$done_name" --json
check "delete exits 0" "$RC" 0
op=$(jq -r .name <<<"$OUT")
[[ "$op" =~ /operations/[0-9]+$ ]] && pass "delete --json prints the operation" || fail "op: $OUT"
run "$TY" ops get "$op"
check "ops get exits 0" "$RC" 0
grep -q '^done: *true$' <<<"$OUT" && pass "ops get shows done" || fail "ops get: $OUT"
run "$TY" ops wait "$op" --json
check "ops wait exits 0" "$RC" 0
check "ops wait --json is the operation" "$(jq -r .done <<<"$OUT")" true
run "$TY" jobs get "$done_name"
check "deleted job is gone" "$RC" 1

# Usage errors: one line and the usage, exit 2, no stack trace.
run "$TY" jobs get
check "missing NAME exits 2" "$RC" 2
check "missing NAME: first line" "$(head -1 <<<"$ERR")" "trainyard: NAME is required"
grep -q '^Usage: trainyard jobs get' <<<"$ERR" && pass "usage of the verb follows" || fail "err: $ERR"
run "$TY" jobs create -f "$E2E_DIR/no-such-file.json"
check "unreadable file exits 2" "$RC" 2
grep -q "^trainyard: cannot read $E2E_DIR/no-such-file.json: No such file or directory$" <<<"$ERR" \
  && pass "unreadable file message" || fail "err: $ERR"
echo '{not json' >"$E2E_DIR/garbage.json"
run "$TY" jobs create -f "$E2E_DIR/garbage.json"
check "a file that is not JSON exits 2" "$RC" 2
run "$TY" jobs list --page-size 0
check "bad flag value exits 2" "$RC" 2
run env -u TRAINYARD_PROJECT "$TY" jobs list
check "no project exits 2" "$RC" 2
grep -q "^trainyard: no project: pass --project or set TRAINYARD_PROJECT$" <<<"$ERR" \
  && pass "no project message" || fail "err: $ERR"
run "$TY" jobs logs "$long_name"
check "logs of a job exits 0" "$RC" 0
grep -q " INFO service Job state JOB_STATE_QUEUED: created$" <<<"$OUT" && pass "logs prints its entries" \
  || fail "logs: $OUT"
run "$TY" jobs logs 1234567890123456789
check "logs of a missing job exits 1" "$RC" 1
grep -q "^trainyard: NOT_FOUND" <<<"$ERR" && pass "logs says NOT_FOUND" || fail "err: $ERR"
run "$TY" jobs --help
check "jobs --help exits 0" "$RC" 0
grep -q "Exit codes: 0 success" <<<"$OUT" && pass "--help documents exit codes" || fail "help: $OUT"

# Unreachable endpoint: a clear UNAVAILABLE, exit 1.
run "$TY" jobs get 1 --endpoint "http://127.0.0.1:$(free_port)" --request-timeout 2
check "unreachable endpoint exits 1" "$RC" 1
grep -q '^trainyard: UNAVAILABLE: cannot reach' <<<"$ERR" && pass "unreachable message" || fail "err: $ERR"

# The SDK example program submits and waits.
EXAMPLE="$(dirname "$TRAINYARD_BIN")/sdk_submit_and_wait"
if [ -x "$EXAMPLE" ]; then
  run "$EXAMPLE" "$quick"
  check "sdk example exits 0" "$RC" 0
  grep -q "^JOB_STATE_SUCCEEDED" <<<"$OUT" && pass "sdk example saw SUCCEEDED" || fail "example: $OUT"
fi

# `trainyard resources` and `trainyard ops` on payloads/resources/a3-high-warm-pool.json.
RESOURCE="$(dirname "$0")/../../payloads/resources/a3-high-warm-pool.json"
run "$TY" resources create -f "$RESOURCE" --id cli-pool --wait --timeout 120
check "resources create --wait exits 0" "$RC" 0
grep -q '^done: *true' <<<"$OUT" && pass "create --wait prints the done operation" || fail "create: $OUT"
run "$TY" resources get cli-pool
check "resources get exits 0" "$RC" 0
grep -q 'cli-pool  RUNNING' <<<"$OUT" && pass "resources get shows RUNNING" || fail "get: $OUT"
grep -q 'pool h100: a3-highgpu-8g × 2' <<<"$OUT" && pass "resources get shows the pool" || fail "get: $OUT"
run "$TY" resources list --json
check "resources list --json" "$(jq -r '.persistentResources | length' <<<"$OUT")" 1
echo '{"displayName":"renamed"}' >"$E2E_DIR/rename.json"
run "$TY" resources update cli-pool -f "$E2E_DIR/rename.json" --update-mask displayName --wait
check "resources update exits 0" "$RC" 0
check "the new name shows" "$("$TY" resources get cli-pool --json | jq -r .displayName)" renamed
run "$TY" resources update cli-pool -f "$E2E_DIR/rename.json" --update-mask network
check "a bad update mask exits 1" "$RC" 1
grep -q '^trainyard: INVALID_ARGUMENT: .*network' <<<"$ERR" && pass "the bad mask is named" || fail "err: $ERR"
run "$TY" resources reboot cli-pool --wait --timeout 120
check "resources reboot --wait exits 0" "$RC" 0
run "$TY" ops list --filter done=true
check "ops list exits 0" "$RC" 0
check "ops list shows the resource's three done operations" "$(grep -c "DONE.*PersistentResourceOperationMetadata" <<<"$OUT")" 3
op=$(grep PersistentResource <<<"$OUT" | head -1 | cut -d' ' -f1)
run "$TY" ops cancel "$op"
check "ops cancel of a done operation exits 0" "$RC" 0
run "$TY" ops delete "$op"
check "ops delete exits 0" "$RC" 0
run "$TY" ops get "$op"
check "a deleted operation is gone" "$RC" 1
run "$TY" resources delete cli-pool --wait --timeout 120
check "resources delete --wait exits 0" "$RC" 0
run "$TY" resources get cli-pool
check "a deleted resource is gone" "$RC" 1
grep -q '^trainyard: NOT_FOUND' <<<"$ERR" && pass "get after delete says NOT_FOUND" || fail "err: $ERR"

# Right after `serve` starts (its PostgreSQL's first initdb still running): the starting server's
# 503 did nothing, so create --wait sends it again until the server is up, and succeeds.
FRESH_PORT=$(free_port)
"$TRAINYARD_BIN" serve --listen "127.0.0.1:$FRESH_PORT" --data-dir "$E2E_DIR/fresh" --sim-speed 200 \
  >>"$E2E_DIR/fresh.log" 2>&1 &
FRESH_PID=$!
wait_until 30 "the fresh server listening" curl -sS -o /dev/null "http://127.0.0.1:$FRESH_PORT/healthz"
RC=0
TRAINYARD_ENDPOINT="http://127.0.0.1:$FRESH_PORT" "$TY" jobs create -f "$quick" --wait --timeout 120 \
  >"$E2E_DIR/out" 2>"$E2E_DIR/err" || RC=$?
check "create --wait right after serve started exits 0" "$RC" 0 || cat "$E2E_DIR/err" >&2
kill -TERM "$FRESH_PID" && wait "$FRESH_PID" || true
finish
