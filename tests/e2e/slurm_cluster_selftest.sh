#!/usr/bin/env bash
# Starts the throwaway Slurm cluster of slurm_cluster.sh, drives slurmrestd's openapi/v0.0.38 with
# curl and writes what it really answered to a Markdown file (default build/slurm-api-samples.md;
# docs/runtimes.md sums it up). Not a ctest test (the name does not end in _test.sh): run it by
# hand, as root, after `scripts/setup slurm`:
#
#   bash tests/e2e/slurm_cluster_selftest.sh [OUT_FILE]
#
# Takes about 3 minutes, most of it waiting for a job to hit its 1-minute time limit.
set -euo pipefail
# shellcheck disable=SC2016  # jq filters and Markdown with backticks are single-quoted on purpose

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT=${1:-$HERE/../../build/slurm-api-samples.md}
# lib.sh wants the trainyard binary as its argument; nothing here runs it.
# shellcheck source=lib.sh
source "$HERE/lib.sh" "${TRAINYARD_BIN:-/nonexistent/trainyard}"
# shellcheck source=slurm_cluster.sh
source "$HERE/slurm_cluster.sh"
trap 'slurm_cluster_stop; cleanup' EXIT

elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }

t0=$EPOCHREALTIME
if ! slurm_cluster_start 2>"$E2E_DIR/start.log"; then
  cat "$E2E_DIR/start.log" >&2
  echo "SKIP: $SLURM_SKIP_REASON"
  exit 77
fi
START_SECONDS=$(elapsed "$t0")
cat "$E2E_DIR/start.log" >&2
V=/slurm/$SLURM_REST_VERSION
W=$E2E_DIR/work   # the jobs' working directory and output files
mkdir -p "$W"

BODY=$(mktemp "$E2E_DIR/out.XXXXXX")
md() { printf '%s\n' "$@" >>"$BODY"; }
# hide: the temp directory and the token do not belong in the notes.
hide() { sed -e "s|$E2E_DIR|\$E2E_DIR|g" -e "s|$SLURM_JWT_TOKEN|<token>|g"; }
code() { md '```'"${1:-}"; hide >>"$BODY"; md '```' ''; }

# call METHOD PATH [BODY]: sets STATUS and RESP (no recording).
call() {
  local args=(-X "$1" -o "$E2E_DIR/resp" -w '%{http_code}')
  rm -f "$E2E_DIR/resp"  # curl writes nothing for an empty body (304)
  [ -z "${3:-}" ] || args+=(-H 'content-type: application/json' --data-binary "$3")
  STATUS=$(slurm_rest "${args[@]}" "$SLURM_REST_URL$2") || STATUS="curl-failed"
  RESP=$(cat "$E2E_DIR/resp" 2>/dev/null || true)
}
# rec TITLE JQ_TRIM METHOD PATH [BODY]: call, and record request and (trimmed) answer.
rec() {
  local title=$1 trim=$2
  shift 2
  call "$@"
  md "#### $title" ''
  { echo "$1 $2"; [ -z "${3:-}" ] || jq . <<<"$3" 2>/dev/null || printf '%s\n' "$3"; } | code
  md "HTTP $STATUS"
  if [ -n "$RESP" ] && jq -e . >/dev/null 2>&1 <<<"$RESP"; then jq "$trim" <<<"$RESP" | code json; else
    printf '%s\n' "${RESP:-(empty body)}" | code; fi
}
# job SCRIPT [JQ]: a submit body (debug partition, 5 minutes, cwd $W, PATH only) running SCRIPT,
# edited by the jq filter JQ (which sees the working directory as $w).
job() {
  jq -cn --arg w "$W" --arg s "$1" '{job: {partition: "debug", time_limit: 5,
    current_working_directory: $w, environment: {PATH: "/usr/bin:/bin"}}, script: $s} | '"${2:-.}"
}
submit() { call POST "$V/job/submit" "$1"; jq -r .job_id <<<"$RESP"; }
state() { call GET "$V/job/$1"; jq -r '.jobs[0].job_state' <<<"$RESP"; }
is_state() { [ "$(state "$1")" = "$2" ]; }
is_done() { case "$(state "$1")" in PENDING | RUNNING | COMPLETING | CONFIGURING) return 1 ;; esac; }
STATE_FIELDS='.jobs[0] | {job_id, name, job_state, state_reason, exit_code, derived_exit_code,
  start_time, end_time, time_limit, tasks, cpus}'

# --- a job that must time out runs while everything else happens (time_limit is in minutes).
TO_ID=$(submit "$(job $'#!/bin/sh\necho start; sleep 300' \
  '.job += {name: "timeout", time_limit: 1, standard_output: ($w + "/timeout-%j.out")}')")
TO_SUBMITTED=$EPOCHSECONDS

md "### Cluster and ping" ''
md "- \`slurm_cluster_start\` took ${START_SECONDS} s (munged, slurm.conf, slurmctld + slurmd up and" \
  "  the node idle, token, slurmrestd answering ping); per step:" ''
code <"$E2E_DIR/start.log"
md "- The generated slurm.conf:" ''
code <"$SLURM_CONF"
md '- Every request carries `X-SLURM-USER-NAME: root` and `X-SLURM-USER-TOKEN: <token>` (from' \
  '  `scontrol token username=root lifespan=7200`, which prints `SLURM_JWT=<token>`).' ''
rec "GET ping (the only answer shown with its meta block; every answer has the same one)" . \
  GET "$V/ping"

# --- one task
md "### A single-task job" ''
SINGLE=$(jq -n --arg w "$W" '{job: {name: "trainyard-job-123-attempt-1", comment: "trainyard:123:1",
  partition: "debug", time_limit: 10, tasks: 1, nodes: 1, current_working_directory: $w,
  environment: {PATH: "/usr/bin:/bin", TRAINYARD_JOB: "123"},
  standard_output: ($w + "/job-%j.out"), standard_error: ($w + "/job-%j.err")},
  script: "#!/bin/sh\necho hello; env | grep SLURM_ | sort"}')
rec "POST job/submit" 'del(.meta)' POST "$V/job/submit" "$SINGLE"
ID1=$(jq -r .job_id <<<"$RESP")
wait_until 30 "job $ID1 done" is_done "$ID1"
rec "GET job/$ID1 once COMPLETED: the whole job object" 'del(.meta)' GET "$V/job/$ID1"
md "Its standard_output file (\`job-$ID1.out\`; the API gives back the pattern, not the name):" ''
code <"$W/job-$ID1.out"

md "#### PENDING and RUNNING" ''
HELD=$(job $'#!/bin/sh\ntrue' '.job += {name: "held", hold: true}')
rec "POST job/submit with hold: true (an error entry, yet the job exists)" 'del(.meta)' \
  POST "$V/job/submit" "$HELD"
HELD_ID=$(jq -r .job_id <<<"$RESP")
rec "GET job/$HELD_ID (held)" "$STATE_FIELDS" GET "$V/job/$HELD_ID"
RUN_ID=$(submit "$(job $'#!/bin/sh\nsleep 300' '.job.name = "sleeper"')")
wait_until 30 "job $RUN_ID running" is_state "$RUN_ID" RUNNING
rec "GET job/$RUN_ID (running; end_time is start_time + time_limit)" "$STATE_FIELDS" \
  GET "$V/job/$RUN_ID"

md "#### Cancel" ''
rec "DELETE job/$RUN_ID (running)" 'del(.meta)' DELETE "$V/job/$RUN_ID"
wait_until 30 "job $RUN_ID cancelled" is_done "$RUN_ID"
rec "GET job/$RUN_ID after DELETE" "$STATE_FIELDS" GET "$V/job/$RUN_ID"
rec "DELETE job/$HELD_ID (pending, held)" 'del(.meta)' DELETE "$V/job/$HELD_ID"
wait_until 30 "job $HELD_ID cancelled" is_done "$HELD_ID"
rec "GET job/$HELD_ID after DELETE" "$STATE_FIELDS" GET "$V/job/$HELD_ID"
rec "DELETE job/$ID1 (already COMPLETED)" 'del(.meta)' DELETE "$V/job/$ID1"

# --- several tasks
md "### Several tasks in one job (tasks: 3, nodes: 1)" ''
md "The batch script runs once, as task 0 of the allocation; tasks are started by \`srun\` inside" \
  "it. Each variant below is the script of a job with \`tasks: 3, nodes: 1\` and" \
  "\`standard_output: \"\$W/<name>-%j-%t.out\"\` (\`%t\` is always 0 for the batch step)." ''
multi() { # NAME SCRIPT [JQ]
  local id
  id=$(submit "$(job "$2" '.job += {name: "'"$1"'", tasks: 3, nodes: 1,
    environment: {PATH: "/usr/bin:/bin", SHARED: "same-for-all"},
    standard_output: ($w + "/'"$1"'-%j-%t.out")}' | jq -c "${3:-.}")")
  wait_until 60 "job $id done" is_done "$id"
  md "#### $1" ''
  printf '%s\n' "$2" | code sh
  [ -z "${3:-}" ] || { md "extra: \`$3\`" ''; }
  call GET "$V/job/$id"
  md "-> $(jq -c '.jobs[0] | {job_state, exit_code, tasks, cpus}' <<<"$RESP"); output files:" ''
  local f
  for f in "$W/$1-$id"*; do
    { echo "== ${f##*/}"; cat "$f"; } | code
  done
}
multi no-srun $'#!/bin/sh\necho "script: PROCID=$SLURM_PROCID NTASKS=$SLURM_NTASKS CPUS_ON_NODE=$SLURM_CPUS_ON_NODE"'
multi srun-label $'#!/bin/sh\nexec srun --kill-on-bad-exit=1 -l sh -c \'echo "task $SLURM_PROCID of $SLURM_NTASKS localid=$SLURM_LOCALID shared=$SHARED"\''
multi srun-file-per-task $'#!/bin/sh\nsrun --output="$PWD/srun-file-per-task-%j-task%t.out" sh -c \'echo "task $SLURM_PROCID of $SLURM_NTASKS"\'\necho batch-done'
# Per-task environment, three ways.
multi env-case $'#!/bin/sh\nexec srun -l --kill-on-bad-exit=1 sh -c \'\ncase "$SLURM_PROCID" in\n  0) export ROLE=chief TASK_INDEX=0 ;;\n  1) export ROLE=worker TASK_INDEX=0 ;;\n  2) export ROLE=worker TASK_INDEX=1 ;;\nesac\necho "task $SLURM_PROCID ROLE=$ROLE TASK_INDEX=$TASK_INDEX"\''
multi env-multi-prog $'#!/bin/sh\ncat >"$PWD/multi-$SLURM_JOB_ID.conf" <<\'EOF\'\n0 env ROLE=chief TASK_INDEX=0 sh -c \'echo "task $SLURM_PROCID ROLE=$ROLE TASK_INDEX=$TASK_INDEX"\'\n1 env ROLE=worker TASK_INDEX=0 sh -c \'echo "task $SLURM_PROCID ROLE=$ROLE TASK_INDEX=$TASK_INDEX"\'\n2 env ROLE=worker TASK_INDEX=1 sh -c \'echo "task $SLURM_PROCID ROLE=$ROLE TASK_INDEX=$TASK_INDEX"\'\nEOF\nexec srun -l --multi-prog "$PWD/multi-$SLURM_JOB_ID.conf"'
multi env-per-rank-variable $'#!/bin/sh\nexec srun -l sh -c \'eval "$(printenv TASK_ENV_$SLURM_PROCID)"; echo "task $SLURM_PROCID ROLE=$ROLE TASK_INDEX=$TASK_INDEX"\'' \
  '.job.environment += {TASK_ENV_0: "ROLE=chief TASK_INDEX=0", TASK_ENV_1: "ROLE=worker TASK_INDEX=0", TASK_ENV_2: "ROLE=worker TASK_INDEX=1"}'

# --- exit codes
md "### How endings look (exit_code is the raw wait status: code << 8, or the signal number)" ''
ending() { # NAME SCRIPT [JQ]
  local id
  id=$(submit "$(job "$2" '.job += {name: "'"$1"'", standard_output: ($w + "/'"$1"'-%j.out")}' |
    jq -c "${3:-.}")")
  wait_until 60 "job $id done" is_done "$id"
  call GET "$V/job/$id"
  md "- \`$1\`: \`$(printf '%s' "$2" | tr '\n' ';' | sed 's/^#!\/bin\/sh;//')\`${3:+ ($3)}" \
    "  -> \`$(jq -c '.jobs[0] | {job_state, state_reason, exit_code, derived_exit_code}' <<<"$RESP")\`"
  if [ -s "$W/$1-$id.out" ]; then
    md '  output:' ''
    sed 's/^/    /' "$W/$1-$id.out" | hide >>"$BODY"
    md ''
  fi
}
ending exit-0 $'#!/bin/sh\ntrue'
ending exit-3 $'#!/bin/sh\necho failing; exit 3'
ending killed-by-signal $'#!/bin/sh\nkill -9 $$'
ending srun-task-fails $'#!/bin/sh\nexec srun -l --kill-on-bad-exit=1 sh -c \'if [ $SLURM_PROCID = 1 ]; then exit 5; fi; sleep 30\'' '.job.tasks = 3'
ending srun-task-fails-no-kill $'#!/bin/sh\nsrun -l sh -c \'exit $SLURM_PROCID\'' '.job.tasks = 3'
ending no-shebang 'true'
ending bad-cwd $'#!/bin/sh\npwd' '.job.current_working_directory = "/nonexistent"'
md ''

# --- heterogeneous job
md "### A heterogeneous job (\"jobs\": [...]) on the one node" ''
HET=$(jq -n --arg w "$W" '{jobs: [
  {name: "het", partition: "debug", time_limit: 5, tasks: 1, current_working_directory: $w,
   environment: {PATH: "/usr/bin:/bin", ROLE: "chief"}, standard_output: ($w + "/het-%j.out")},
  {partition: "gpu", time_limit: 5, tasks: 2, current_working_directory: $w,
   environment: {PATH: "/usr/bin:/bin", ROLE: "worker"}}],
  script: "#!/bin/sh\nexec srun -l --het-group=0,1 sh -c '\''echo task $SLURM_PROCID ROLE=$ROLE'\''"}')
rec "POST job/submit with jobs: [2 components]" 'del(.meta)' POST "$V/job/submit" "$HET"
HET_ID=$(jq -r .job_id <<<"$RESP")
het_started() { ! is_state "$HET_ID" PENDING; }
if wait_until 45 "het job start" het_started 2>/dev/null; then HET_RESULT="started"; else HET_RESULT="still PENDING after 45 s"; fi
rec "GET job/$HET_ID ($HET_RESULT)" '.jobs[] | {job_id, het_job_id, het_job_offset,
  het_job_id_set, partition, job_state, state_reason, tasks}' GET "$V/job/$HET_ID"
rec "DELETE job/$HET_ID" 'del(.meta)' DELETE "$V/job/$HET_ID"

# --- the job that times out
md "### TIMEOUT (time_limit: 1, script \`sleep 300\`)" ''
to_done() { is_done "$TO_ID"; }
wait_until 150 "timeout job $TO_ID" to_done || true
TO_SEEN=$EPOCHSECONDS
rec "GET job/$TO_ID" "$STATE_FIELDS" GET "$V/job/$TO_ID"
TO_START=$(jq -r '.jobs[0].start_time' <<<"$RESP")
TO_END=$(jq -r '.jobs[0].end_time' <<<"$RESP")
md "- submitted at t=0; start_time t=$((TO_START - TO_SUBMITTED)) s; end_time (limit enforced)" \
  "  t=$((TO_END - TO_SUBMITTED)) s; final state seen by polling at t=$((TO_SEEN - TO_SUBMITTED)) s." \
  "  slurmctld checks time limits about every 30 s, so a 1-minute limit ends a job 60–90 s after start." ''
code <"$W/timeout-$TO_ID.out"

# --- listings
md "### Listings" ''
rec "GET jobs (trimmed to the fields a poller uses)" '{errors, jobs: [.jobs[:3][] |
  {job_id, name, comment, job_state, state_reason, exit_code, start_time, end_time}],
  jobs_total: (.jobs | length)}' GET "$V/jobs"
rec "GET jobs?update_time=<now + 60> (nothing changed since then)" 'del(.meta)' \
  GET "$V/jobs?update_time=$((EPOCHSECONDS + 60))"
rec "GET jobs?update_time=<a minute ago> (something changed: every job comes back)" \
  '{errors, jobs_total: (.jobs | length)}' GET "$V/jobs?update_time=$((EPOCHSECONDS - 60))"
rec "GET nodes" '{errors, nodes: [.nodes[0] | {name, hostname, address, state, state_flags, cpus,
  alloc_cpus, idle_cpus, sockets, cores, threads, real_memory, free_memory, partitions, tres,
  reason, slurmd_version}]}' GET "$V/nodes"
rec "GET partitions" '{errors, partitions: [.partitions[] | {name, flags, nodes, state, total_cpus,
  total_nodes, max_time_limit, default_time_limit, maximum_nodes_per_job, tres}]}' \
  GET "$V/partitions"

# --- errors
md "### Errors" ''
raw() { # TITLE CURL_ARGS…: a request with hand-made headers
  local title=$1
  shift
  rm -f "$E2E_DIR/resp"
  STATUS=$(curl -sS -o "$E2E_DIR/resp" -w '%{http_code}' "$@") || true
  touch "$E2E_DIR/resp"
  md "#### $title" '' "HTTP $STATUS"
  if jq -e . >/dev/null 2>&1 <"$E2E_DIR/resp"; then jq 'del(.meta)' "$E2E_DIR/resp" | code json
  else { cat "$E2E_DIR/resp"; echo; } | code; fi
}
raw "no token headers at all" "$SLURM_REST_URL$V/jobs"
raw "token without X-SLURM-USER-NAME" -H "X-SLURM-USER-TOKEN: $SLURM_JWT_TOKEN" "$SLURM_REST_URL$V/jobs"
raw "garbage token, GET job/$ID1" -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: garbage" \
  "$SLURM_REST_URL$V/job/$ID1"
raw "garbage token, GET ping" -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: garbage" \
  "$SLURM_REST_URL$V/ping"
EXPIRED=$(scontrol token username=root lifespan=1)
EXPIRED=${EXPIRED#SLURM_JWT=}
expired() { [ $EPOCHSECONDS -ge $((EXP_AT + 2)) ]; }
EXP_AT=$EPOCHSECONDS
wait_until 5 "token expiry" expired
raw "expired token (lifespan=1), GET jobs" -H "X-SLURM-USER-NAME: root" \
  -H "X-SLURM-USER-TOKEN: $EXPIRED" "$SLURM_REST_URL$V/jobs"
rec "unknown job id" 'del(.meta)' GET "$V/job/999999"
rec "DELETE unknown job id" 'del(.meta)' DELETE "$V/job/999999"
rec "non-numeric job id" 'del(.meta)' GET "$V/job/abc"
rec "unknown path" . GET "/slurm/v0.0.37/ping"
rec "submit: unknown partition" 'del(.meta)' POST "$V/job/submit" "$(job $'#!/bin/sh\ntrue' '.job.partition = "nope"')"
rec "submit: no environment" 'del(.meta)' POST "$V/job/submit" "$(job $'#!/bin/sh\ntrue' 'del(.job.environment)')"
rec "submit: no script" 'del(.meta)' POST "$V/job/submit" "$(job '' 'del(.script)')"
rec "submit: unknown field" 'del(.meta)' POST "$V/job/submit" "$(job $'#!/bin/sh\ntrue' '.job.bogus = 1')"
rec "submit: malformed JSON" . POST "$V/job/submit" '{"job":'
rec "submit: more tasks (9) than the node has CPUs (8)" 'del(.meta)' POST "$V/job/submit" \
  "$(job $'#!/bin/sh\ntrue' '.job.tasks = 9')"
BIG_ID=$(jq -r .job_id <<<"$RESP")
rec "... and that job afterwards" "$STATE_FIELDS" GET "$V/job/$BIG_ID"
call DELETE "$V/job/$BIG_ID"

md "#### A root token may act as any user" ''
NOBODY=$(job $'#!/bin/sh\nid' '.job += {name: "as-nobody", standard_output: "/tmp/trainyard-as-nobody-%j.out"}')
STATUS=$(curl -sS -o "$E2E_DIR/resp" -w '%{http_code}' -H "X-SLURM-USER-NAME: nobody" \
  -H "X-SLURM-USER-TOKEN: $SLURM_JWT_TOKEN" -H 'content-type: application/json' \
  --data-binary "$NOBODY" "$SLURM_REST_URL$V/job/submit")
NB_ID=$(jq -r .job_id "$E2E_DIR/resp")
wait_until 30 "job $NB_ID done" is_done "$NB_ID"
md "POST job/submit with \`X-SLURM-USER-NAME: nobody\` and root's token: HTTP $STATUS, the job ran as:" ''
code <"/tmp/trainyard-as-nobody-$NB_ID.out"
rm -f "/tmp/trainyard-as-nobody-$NB_ID.out"

# --- slurmrestd outage
md "### slurmrestd outage" ''
slurmrestd_stop
STATUS=$(curl -sS -o /dev/null -w '%{http_code}' "$SLURM_REST_URL$V/ping" 2>"$E2E_DIR/curl.err") || STATUS="curl exit $?"
md "- after \`slurmrestd_stop\`: $STATUS, \`$(head -c 120 "$E2E_DIR/curl.err")\`"
t=$EPOCHREALTIME
slurmrestd_start 2>/dev/null
md "- \`slurmrestd_start\` on the same port: ping answers again after $(elapsed "$t") s" ''

# --- throughput
md "### Throughput: 100 trivial jobs on the one node (8 slots)" ''
queue_empty() { [ -z "$(squeue -h -o %i)" ]; }
wait_until 60 "queue empty" queue_empty
t=$EPOCHREALTIME
for _ in $(seq 100); do sbatch --quiet -o /dev/null --wrap=true; done
SB_SUBMIT=$(elapsed "$t")
wait_until 300 "sbatch jobs done" queue_empty
SB_ALL=$(elapsed "$t")
TRUE_JOB=$(job $'#!/bin/sh\ntrue' '.job += {standard_output: "/dev/null"}')
t=$EPOCHREALTIME
for _ in $(seq 100); do
  slurm_rest -o /dev/null -H 'content-type: application/json' --data-binary "$TRUE_JOB" \
    "$SLURM_REST_URL$V/job/submit"
done
RS_SUBMIT=$(elapsed "$t")
wait_until 300 "REST jobs done" queue_empty
RS_ALL=$(elapsed "$t")
md "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (2 cores; other work was running)." ''
md "| path | 100 submissions | until the queue is empty |" "|---|---|---|" \
  "| \`sbatch --wrap=true\`, one after another | ${SB_SUBMIT} s | ${SB_ALL} s |" \
  "| \`POST job/submit\` with curl, one after another | ${RS_SUBMIT} s | ${RS_ALL} s |" ''

# --- the file: a fixed header, then what was recorded above.
{
  cat <<EOF
# slurmrestd openapi/v0.0.38 (Slurm 22.05.8, Debian 12): recorded requests and answers

Written by \`tests/e2e/slurm_cluster_selftest.sh\` on $(date -u +%Y-%m-%d) from a real one-node
cluster started by \`tests/e2e/slurm_cluster.sh\` (see docs/runtimes.md). Answers are
trimmed with jq (the filter is the shape shown); \`\$E2E_DIR\` is the run's temp directory. Times
are Unix seconds; \`time_limit\` is in minutes (null when not given).

## What a client has to know (from the samples below)

- **slurmrestd needs \`SLURM_JWT=daemon\` in its environment** (any value; "daemon" is the
  documented one). Without it, it talks to slurmctld with AuthType (munge), which rejects every
  forwarded token: each request fails with 401 and the log says "Rejecting thread config token for
  user root". The token value in that variable is not used: the request's header token is. It
  refuses to run as root ("fatal: slurmrestd should not be run as the root user"); \`-u nobody\`
  works, and nobody needs to read slurm.conf only (not the JWT key, which only slurmctld reads).
  auth/jwt itself is the Debian package \`slurm-wlm-jwt-plugin\`.
- **Both headers are required**: a token without \`X-SLURM-USER-NAME\` is a 401 with a text/plain
  body. A bad or expired token is *not* a 401: it is a 500 whose error says "Unable to find
  JobId=…" / "Failed while looking for jobs" (error_number -1); only slurmctld's log says
  "token expired". A root (or SlurmUser) token with another user name acts as that user.
- **Submit answers carry \`job_id\` even with a non-empty \`errors\`**: \`hold: true\` gives error
  2042 and 2015 (more tasks than the partition has CPUs) leaves a job PENDING with reason
  PartitionConfig forever. Treat "job_id present" as submitted; read \`errors\` as warnings then.
  Real rejections (unknown partition 2000, no script 2009) are 500 with no job_id; parse errors
  (no environment, unknown key, environment not an object) are 400; malformed JSON is a 400 with
  the text body "Unable to parse query.".
- **exit_code is the raw wait status**: \`exit 3\` -> 768 (3 << 8); killed by signal N -> N
  (SIGKILL: 9, and state_reason JobLaunchFailure for the batch script); cancelled -> 15;
  TIMEOUT -> whatever the script died of (15, 9 or 36608 = 143 << 8 were all seen for
  \`sleep\` scripts): use job_state, never exit_code, to tell a timeout.
  state_reason on failure is NonZeroExitCode; on timeout TimeLimit (the job passes through
  COMPLETING with reason TimeLimit first).
- **TIMEOUT is late**: time limits are checked about every 30 s, so time_limit 1 (minute, the
  smallest there is) ends a job 60–90 s after it started; then SIGTERM, SIGKILL after KillWait.
- **Tasks**: the batch script runs once (as task 0, SLURM_NTASKS=3 visible); \`srun\` inside it
  starts the N tasks. \`srun -l\` prefixes lines with the rank in the job's one output file;
  \`srun --output=…%t\` writes one file per task. Per-task environment works three ways (a \`case
  "\$SLURM_PROCID"\` in the srun command, \`srun --multi-prog\` with a file the script writes, or
  per-rank variables in \`environment\`); the job's \`environment\` is the same for all tasks.
  REST jobs get no SLURM_SUBMIT_DIR/SLURM_SUBMIT_HOST; use \`\$PWD\` (= current_working_directory).
- **Heterogeneous jobs** are accepted (\`jobs: [...]\`, one job id per component, het_job_id =
  the first) but on this single node stay PENDING (Resources) for good: the backfill scheduler
  plans component 0 on the node and then finds no node for component 1. Not testable here.
- **GET jobs?update_time=T** is not a filter: 304 with an empty body if nothing changed since T,
  else every job. Finished jobs disappear from slurmctld after MinJobAge (300 s); then GET job/{id}
  is a 500 with error_number 2017 "Invalid job id specified", the same as a job that never was.
- A missing working directory does not fail the job: slurmstepd runs it in /tmp and says so in
  the output file. A script without "#!" fails at run time (exit_code 2048, "Exec format error").
- The node is told it has 8 CPUs (\`SlurmdParameters=config_overrides\`, $(nproc) real cores): 8 task
  slots, so two 3-task jobs run side by side and a third waits (reason Resources) for the next
  scheduler tick. \`SchedulerParameters=batch_sched_delay=0\` makes that tick ~1 s instead of ~3 s.

EOF
  cat "$BODY"
} >"$OUT"
echo "wrote $OUT"
