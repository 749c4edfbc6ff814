#!/usr/bin/env bash
# Job logs end to end: the curl route, Cloud Logging's entries:list as gcloud sends it, the
# `trainyard jobs logs` verb, and `gcloud ai custom-jobs stream-logs` against the server. A job's
# log is the service's entries (its state changes) merged with its replicas' lines: here the
# simulator's training output (start, steps with loss and throughput, checkpoints, the end).
source "$(dirname "$0")/lib.sh"

start_server --sim-speed 1000
P=demo
L=us-central1

# A job that ran to the end (polling its state with a deadline, never sleeping for it).
# Ten simulated minutes of training: a start line, ten progress lines, two checkpoints, the end.
name=$(jq '.displayName="logs" | .jobSpec.workerPoolSpecs[0].containerSpec.env =
    [{"name": "TRAINYARD_SIM_DURATION", "value": "600s"}]' "$PAYLOADS/lora-single-node.json" |
  curl -fsS -X POST "$BASE/v1/projects/$P/locations/$L/customJobs" \
    -H 'content-type: application/json' --data-binary @- | jq -r .name)
id=${name##*/}
wait_until 60 "job SUCCEEDED" bash -c \
  "curl -fsS '$BASE/v1/$name' | jq -e '.state == \"JOB_STATE_SUCCEEDED\"'"
LOGS="$BASE/trainyard/v1/projects/$P/locations/$L/customJobs/$id/logs"

# --- the curl route ---
all=$(curl -fsS "$LOGS")
check "curl: the service entries, oldest first" \
  "$(jq -r '.entries[0].textPayload' <<<"$all")" "Job state JOB_STATE_QUEUED: created"
jq -r '[.entries[] | select(.resource.labels.task_name == "service")][-1].textPayload' <<<"$all" |
  grep -q 'JOB_STATE_RUNNING -> JOB_STATE_SUCCEEDED' \
  && pass "curl: the last service entry is the success" || fail "entries: $(jq -c '.entries' <<<"$all")"
check "curl: the replica's last line" \
  "$(jq -r '[.entries[] | select(.resource.labels.task_name == "workerpool0-0")][-1].textPayload' <<<"$all")" \
  "training finished"
n=$(jq '.entries | length' <<<"$all")
services=$(jq '[.entries[] | select(.resource.labels.task_name == "service")] | length' <<<"$all")
[ "$services" -ge 4 ] && pass "curl: at least 4 service entries ($services)" || fail "only $services service entries"
check "curl: entries are ml_job entries of the job" \
  "$(jq -r '[.entries[] | .resource.type + " " + .resource.labels.job_id] | unique | join(",")' <<<"$all")" "ml_job $id"
check "curl: timestamps have nine fraction digits" \
  "$(jq '[.entries[].timestamp | test("\\.[0-9]{9}Z$")] | all' <<<"$all")" true
check "curl: insertIds increase" "$(jq '[.entries[].insertId] | . == sort' <<<"$all")" true
check "curl: task=service is the service's entries" \
  "$(curl -fsS "$LOGS?task=service" | jq -c '[.entries[].insertId]')" \
  "$(jq -c '[.entries[] | select(.resource.labels.task_name == "service") | .insertId]' <<<"$all")"
check "curl: task=workerpool0-0 is the replica's lines" \
  "$(curl -fsS "$LOGS?task=workerpool0-0" | jq -c '[.entries[].insertId]')" \
  "$(jq -c '[.entries[] | select(.resource.labels.task_name == "workerpool0-0") | .insertId]' <<<"$all")"
curl -fsS "$LOGS?task=workerpool0-0" | jq -r '.entries[].textPayload' | grep -Eq '^step [0-9]+/1000 loss=[0-9.]+ tokens/s=[0-9]+$' \
  && pass "curl: simulated training output has steps, loss and throughput" || fail "no step lines"

# pages of 2 visit every entry once
ids=() token=""
for _ in $(seq 1 20); do
  page=$(curl -fsS "$LOGS?pageSize=2${token:+&pageToken=$token}")
  while read -r i; do ids+=("$i"); done < <(jq -r '.entries[].insertId' <<<"$page")
  token=$(jq -r '.nextPageToken // empty' <<<"$page")
  [ -z "$token" ] && break
done
check "curl: pages of 2 cover the log" "$(printf '%s\n' "${ids[@]}" | jq -Rsc 'split("\n")[:-1]')" \
  "$(jq -c '[.entries[].insertId]' <<<"$all")"
second=$(jq -r '.entries[1].insertId' <<<"$all")
check "curl: after=<insertId> resumes after it" \
  "$(curl -fsS "$LOGS?after=$second" | jq -r '.entries[0].insertId')" "$(jq -r '.entries[2].insertId' <<<"$all")"
code=$(curl -s -o "$E2E_DIR/body" -w '%{http_code}' "$LOGS?after=nonsense")
check "curl: a bad after is 400" "$code" 400
check "curl: ... naming after" "$(jq -r '.error.details[] | select(.fieldViolations) | .fieldViolations[0].field' "$E2E_DIR/body")" after
code=$(curl -s -o "$E2E_DIR/body" -w '%{http_code}' \
  "$BASE/trainyard/v1/projects/$P/locations/$L/customJobs/1234567890123456789/logs")
check "curl: unknown job is 404" "$code" 404
check "curl: ... NOT_FOUND" "$(jq -r .error.status "$E2E_DIR/body")" NOT_FOUND

# --- Cloud Logging entries:list, as gcloud sends it ---
entries() {  # entries PROJECT FILTER [extra JSON fields]
  jq -nc --arg p "$1" --arg f "$2" --argjson x "${3:-{\}}" \
    '{resourceNames: ["projects/" + $p], filter: $f, orderBy: "timestamp asc", pageSize: 1000} + $x' |
    curl -sS -X POST "$BASE/v2/entries:list?alt=json" -H 'content-type: application/json' --data-binary @-
}
base="resource.type=\"ml_job\" AND resource.labels.job_id=\"$id\""
first="$base AND timestamp>=\"1970-01-01T01:00:00.000000000Z\" AND timestamp<\"$(date -u +%Y-%m-%dT%H:%M:%S.000000+00:00 -d '+1 hour')\""
got=$(entries $P "$first")
check "entries:list: the same entries as the curl route" "$(jq -c '[.entries[].insertId]' <<<"$got")" \
  "$(jq -c '[.entries[].insertId]' <<<"$all")"
check "entries:list: no nextPageToken when done" "$(jq -r 'has("nextPageToken")' <<<"$got")" false
t=$(jq -r '.entries[1].timestamp' <<<"$all")
later="$base AND ((timestamp=\"$t\" AND insertId>\"$second\") OR timestamp>\"$t\")"
check "entries:list: gcloud's insertId bound" "$(entries $P "$later" | jq -r '.entries[0].insertId')" \
  "$(jq -r '.entries[2].insertId' <<<"$all")"
check "entries:list: a page of 1 has a token" \
  "$(entries $P "$first" '{"pageSize":1}' | jq -r '.entries | length')" 1
tok=$(entries $P "$first" '{"pageSize":1}' | jq -r .nextPageToken)
check "entries:list: the token resumes" \
  "$(entries $P "$first" "{\"pageSize\":1,\"pageToken\":\"$tok\"}" | jq -r '.entries[0].insertId')" \
  "$(jq -r '.entries[1].insertId' <<<"$all")"
check "entries:list: another project reads {}" "$(entries other-project "$first" | jq -c .)" '{}'
check "entries:list: an unknown job reads {}" \
  "$(entries $P 'resource.labels.job_id="1234567890123456789"' | jq -c .)" '{}'
bad=$(entries $P "$base AND severity>=ERROR")
check "entries:list: an unsupported filter is INVALID_ARGUMENT" "$(jq -r .error.status <<<"$bad")" INVALID_ARGUMENT
check "entries:list: ... naming filter" "$(jq -r '.error.details[] | select(.fieldViolations) | .fieldViolations[0].field' <<<"$bad")" filter

# --- trainyard jobs logs ---
export TRAINYARD_ENDPOINT="$BASE" TRAINYARD_PROJECT=$P TRAINYARD_LOCATION=$L
out=$("$TRAINYARD_BIN" jobs logs "$id")
check "cli: one line per entry" "$(wc -l <<<"$out")" "$n"
head -1 <<<"$out" | grep -Eq '^[0-9T:.-]+Z INFO service Job state JOB_STATE_QUEUED: created$' \
  && pass "cli: TIMESTAMP SEVERITY TASK MESSAGE" || fail "cli line: $(head -1 <<<"$out")"
"$TRAINYARD_BIN" jobs logs "$id" --task workerpool0-0 | tail -1 | grep -Eq '^[0-9T:.-]+Z INFO workerpool0-0 training finished$' \
  && pass "cli: --task workerpool0-0 prints the replica's lines" || fail "cli --task: $("$TRAINYARD_BIN" jobs logs "$id" --task workerpool0-0 | tail -2)"
# --follow on a job that is still running ends by itself once it has ended.
long=$(jq '.displayName="follow" | .jobSpec.workerPoolSpecs[0].containerSpec.env=[{"name":"TRAINYARD_SIM_DURATION","value":"3000s"}]' \
  "$PAYLOADS/lora-single-node.json" |
  curl -fsS -X POST "$BASE/v1/projects/$P/locations/$L/customJobs" -H 'content-type: application/json' \
    --data-binary @- | jq -r .name)
if timeout 120 "$TRAINYARD_BIN" jobs logs "$long" --follow >"$E2E_DIR/follow" 2>"$E2E_DIR/err"; then
  pass "cli: --follow exits once the job has ended"
else
  fail "cli --follow: $(cat "$E2E_DIR/err")"
fi
grep -q 'JOB_STATE_SUCCEEDED' "$E2E_DIR/follow" && pass "cli: --follow printed the end" \
  || fail "follow output: $(cat "$E2E_DIR/follow")"
check "cli: --follow printed each entry once" "$(sort "$E2E_DIR/follow" | uniq -d | wc -l)" 0

# --- gcloud ai custom-jobs stream-logs ---
if ! command -v gcloud >/dev/null 2>&1; then
  echo "SKIP: the gcloud part: gcloud is not installed (it is not in Debian's archive)"
  finish || exit 1
  exit 77
fi
use_gcloud $P
# The job had ended before streaming began, so gcloud stops after two empty polls by itself.
if timeout 120 gcloud ai custom-jobs stream-logs "$id" --region=$L --polling-interval=1 \
  >"$E2E_DIR/stream" 2>"$E2E_DIR/err"; then
  pass "gcloud stream-logs exits by itself for an ended job"
else
  fail "gcloud stream-logs: $(tail -5 "$E2E_DIR/err")"
fi
check "gcloud stream-logs: one line per entry" "$(wc -l <"$E2E_DIR/stream")" "$n"
head -1 "$E2E_DIR/stream" | grep -Eq $'^INFO\t[0-9-]+ [0-9:]+ [+-][0-9]{4}\tservice\tJob state JOB_STATE_QUEUED: created$' \
  && pass "gcloud stream-logs: SEVERITY, time, task, message" || fail "gcloud line: $(head -1 "$E2E_DIR/stream")"
grep -q 'JOB_STATE_SUCCEEDED' "$E2E_DIR/stream" && pass "gcloud stream-logs: the end" \
  || fail "stream: $(cat "$E2E_DIR/stream")"
gcloud ai custom-jobs stream-logs "$id" --region=$L --polling-interval=1 --task-name=workerpool0-0 \
  >"$E2E_DIR/stream" 2>"$E2E_DIR/err" && check "gcloud stream-logs --task-name: the replica's lines" \
  "$(wc -l <"$E2E_DIR/stream")" "$(curl -fsS "$LOGS?task=workerpool0-0" | jq '.entries | length')" \
  || fail "gcloud --task-name: $(tail -5 "$E2E_DIR/err")"
grep -q $'\tworkerpool0-0\ttraining finished$' "$E2E_DIR/stream" && pass "gcloud stream-logs: the replica's last line" \
  || fail "stream: $(tail -3 "$E2E_DIR/stream")"

finish
