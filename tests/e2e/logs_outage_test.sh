#!/usr/bin/env bash
# A job's log lines survive PostgreSQL going away: a replica prints 300 numbered lines, 200 of
# them while the database is down (the executor's passes fail meanwhile), and once it is back
# `gcloud ai custom-jobs stream-logs` shows each of the 300 exactly once, in order.
source "$(dirname "$0")/lib.sh"
if ! command -v gcloud >/dev/null 2>&1; then
  echo "SKIP: gcloud is not installed (it is not in Debian's archive)"
  exit 77
fi

# The replica waits on gate files the test makes; a sandboxed replica has a /tmp of its own, so
# they live where it can read the host's: /var/tmp.
GATE=$(mktemp -d /var/tmp/trainyard-gate.XXXXXX)
chmod 755 "$GATE"
trap 'rm -rf "$GATE"; cleanup' EXIT

start_server --runtime local --lease-seconds 60
P="$BASE/v1/projects/demo/locations/us-central1"
PGDATA="$E2E_DIR/data/pg/data"
pg_ctl_as_owner() {
  local cmd=(/usr/lib/postgresql/15/bin/pg_ctl "$@" -D "$PGDATA" -w -t 60)
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "${cmd[@]}"; else "${cmd[@]}"; fi
}

script='for i in $(seq 1 100); do echo "n $i"; done
while [ ! -e "$GATE/one" ]; do sleep 0.05; done
for i in $(seq 101 300); do echo "n $i"; done
while [ ! -e "$GATE/two" ]; do sleep 0.05; done'
name=$(jq -n --arg s "$script" --arg gate "$GATE" '{displayName: "outage", jobSpec: {workerPoolSpecs: [{
    machineSpec: {machineType: "n2-standard-8"}, replicaCount: "1",
    containerSpec: {imageUri: "debian:12", command: ["sh", "-c", $s],
                    env: [{name: "GATE", value: $gate}]}}]}}' |
  curl -fsS -X POST "$P/customJobs" -H 'content-type: application/json' --data-binary @- | jq -r .name)
numbered() {  # how many "n …" lines of the replica are stored
  curl -fsS "$BASE/trainyard/v1/projects/demo/locations/us-central1/customJobs/${name##*/}/logs?pageSize=1000&task=workerpool0-0" |
    jq '[.entries[].textPayload | select(startswith("n "))] | length'
}
stored_at_least() { [ "$(numbered)" -ge "$1" ]; }
wait_until 60 "the first 100 lines stored" stored_at_least 100
check "100 lines stored before the outage" "$(numbered)" 100

pg_ctl_as_owner stop -m fast >/dev/null
pass "PostgreSQL stopped under the server"
touch "$GATE/one"
# The replica prints the next 200 while the database is down, and the executor fails to store them.
output=$(find "$E2E_DIR/data/replicas" -name output.log | head -1)
wait_until 30 "the replica printed line 300" grep -q '^n 300$' "$output"
wait_until 30 "the executor met the outage" grep -Eq '"event":"(job_log_append_failed|executor_pass_failed)"' "$E2E_DIR/server.log"
pass "the executor's passes failed while PostgreSQL was down"
pg_ctl_as_owner start -l "$E2E_DIR/data/pg/restart.log" >/dev/null
pass "PostgreSQL started again"
touch "$GATE/two"
wait_until 120 "the job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED

use_gcloud demo
wait_until 30 "all 300 stored" stored_at_least 300 || true
if timeout 120 gcloud ai custom-jobs stream-logs "${name##*/}" --region=us-central1 \
  --polling-interval=1 --task-name=workerpool0-0 >"$E2E_DIR/stream" 2>"$E2E_DIR/err"; then
  pass "gcloud stream-logs exits by itself for the ended job"
else
  fail "gcloud stream-logs: $(tail -5 "$E2E_DIR/err")"
fi
cut -f4 "$E2E_DIR/stream" | grep '^n ' >"$E2E_DIR/numbered" || true
check "stream-logs shows 300 numbered lines" "$(wc -l <"$E2E_DIR/numbered")" 300
check "each once, in order" "$(seq 1 300 | sed 's/^/n /' | diff - "$E2E_DIR/numbered" | wc -l)" 0
finish
