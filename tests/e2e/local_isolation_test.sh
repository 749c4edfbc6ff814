#!/usr/bin/env bash
# Issue #48: one project's local replica cannot reach another's. The server runs as root with
# --runtime=local; project A's job holds a secret in its environment and keeps running, project
# B's job hunts for it (every /proc/<pid>/environ, the data directory), lists the processes it
# sees, and tries to write outside its working folder. Each replica runs in bubblewrap: B finds
# nothing, sees only its own processes, and writes only its own folder and its private /tmp.
# Also: the server's files of a replica are 0600 in folders closed to others, and a stopped
# replica's command still gets SIGTERM first. A host where this cannot be shown fails.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  fail "cannot test: needs root (the server drops replicas to trainyard-run only when it is root)"
  finish
  exit 1
fi
id -u trainyard-run >/dev/null 2>&1 || { fail "no user trainyard-run: scripts/setup makes it"; finish; exit 1; }
[ -x /usr/bin/bwrap ] || { fail "cannot test: /usr/bin/bwrap is missing (scripts/setup installs bubblewrap)"; finish; exit 1; }

start_server --runtime local --stop-grace 1
if grep -q '"event":"replicas_unsandboxed"' "$E2E_DIR/server.log"; then
  fail "cannot test: the server runs replicas without bubblewrap: $(grep -m1 '"event":"replicas_unsandboxed"' "$E2E_DIR/server.log" | jq -r .warning)"
  finish
  exit 1
fi
pass "the server runs replicas in bubblewrap"
DATA="$E2E_DIR/data"
REPLICAS="$DATA/replicas/jobs"
# Where the server's PostgreSQL listens (its socket folder, from the start-up log).
PG_SOCKET=$(grep -m1 '"event":"embedded_postgres_ready"' "$E2E_DIR/server.log" | jq -r .socket_dir)
[ -n "$PG_SOCKET" ] && [ -S "$PG_SOCKET/.s.PGSQL.5432" -o -n "$(ls -A "$PG_SOCKET" 2>/dev/null)" ] &&
  pass "the database socket is at $PG_SOCKET" || fail "cannot find the database socket: [$PG_SOCKET]"

# job_in PROJECT SCRIPT [JQ]: a one-replica job of PROJECT running `sh -c SCRIPT`; prints its name.
job_in() {
  jq -n --arg s "$2" '{displayName: "sh", jobSpec: {workerPoolSpecs: [{
      machineSpec: {machineType: "n2-standard-8"}, replicaCount: "1",
      containerSpec: {imageUri: "debian:12", command: ["sh", "-c", $s]}}]}}' | jq "${3:-.}" |
    curl -fsS -X POST "$BASE/v1/projects/$1/locations/us-central1/customJobs" \
      -H 'content-type: application/json' --data-binary @- | jq -r .name
}
logs_in() {  # logs_in PROJECT NAME: the job's log lines
  curl -fsS "$BASE/trainyard/v1/projects/$1/locations/us-central1/customJobs/${2##*/}/logs?pageSize=1000" |
    jq -r '.entries[].textPayload'
}
has_line() { logs_in "$1" "$2" | grep -qx "$3"; }  # has_line PROJECT NAME LINE
state_of() { [ "$(curl -fsS "$BASE/v1/$1" | jq -r .state)" = "$2" ]; }

# --- project A: a secret in its environment, running on ---
secret="secret-a-$RANDOM$RANDOM$RANDOM"
a=$(job_in team-a 'trap "echo got TERM; exit 0" TERM; echo ready; sleep 60 & wait' \
  ".jobSpec.workerPoolSpecs[0].containerSpec.env = [{name: \"HF_TOKEN\", value: \"$secret\"}]")
wait_until 30 "A RUNNING" state_of "$a" JOB_STATE_RUNNING
wait_until 20 "A's ready line" has_line team-a "$a" ready
a_dir="$REPLICAS/${a##*/}/attempt-0/workerpool0-0"
# The secret is really in a live process's environment, where the host can read it.
grep -qsa "$secret" /proc/[0-9]*/environ && pass "A's secret is in a running process's environment" ||
  fail "A's secret is in no process's environment: the hunt below would prove nothing"

# --- project B: hunts for it, looks around, writes where it should not. (Its own environment
# holds this script, in CLUSTER_SPEC: the pattern it greps for does not match its own text.) ---
b=$(job_in team-b "
  echo \"procs \$(ls /proc | grep -c '^[0-9]')\"
  echo \"comms \$(cat /proc/[0-9]*/comm | sort -u | tr '\n' ' ')\"
  grep -r -h -a -o 'secret-a-[0-9][0-9]*' /proc/[0-9]*/environ '$DATA' 2>/dev/null | sed 's/^/found /'
  echo \"data \$(ls -A '$DATA' 2>&1 | tr '\n' ' ')\"
  echo \"jobs \$(ls -A '$REPLICAS' 2>&1 | tr '\n' ' ')\"
  cat '$a_dir/launch.json' >/dev/null 2>&1 && echo read-a-launch
  ls '$a_dir/work' >/dev/null 2>&1 && echo listed-a-work
  touch /etc/trainyard-b 2>/dev/null && echo wrote-etc
  touch /usr/trainyard-b 2>/dev/null && echo wrote-usr
  touch '$a_dir/work/b' 2>/dev/null && echo wrote-a-work
  touch '$a_dir/b' 2>/dev/null && echo wrote-a-folder
  touch '$DATA/b' 2>/dev/null && echo wrote-data
  touch ../b 2>/dev/null && echo wrote-beside
  touch own && echo wrote-own
  touch /tmp/b && echo wrote-tmp
  ls -A '$PG_SOCKET' >/dev/null 2>&1 && echo saw-db-socket
  psql 'host=$PG_SOCKET user=postgres dbname=trainyard connect_timeout=3' -Atc 'SELECT 1' 2>/dev/null &&
    echo reached-db
  echo end")
wait_until 30 "B SUCCEEDED" state_of "$b" JOB_STATE_SUCCEEDED
wait_until 20 "B's last line" has_line team-b "$b" end
out=$(logs_in team-b "$b")
line() { sed -n "s/^$1 //p" <<<"$out"; }

grep -qF "$secret" <<<"$out" && fail "B read A's secret: $(grep -F "$secret" <<<"$out")" ||
  pass "B did not find A's secret"
grep -qx "saw-db-socket" <<<"$out" && fail "B can see the database's socket folder" ||
  pass "B cannot see the database's socket folder"
grep -qx "reached-db" <<<"$out" && fail "B connected to the server's database" ||
  pass "B cannot connect to the server's database"
grep -q '^found ' <<<"$out" && fail "B found secrets: $(grep '^found ' <<<"$out" | tr '\n' ' ')" ||
  pass "B found no secret in any environ nor in the data directory"
procs=$(line procs)
[[ "$procs" =~ ^[0-9]+$ ]] && [ "$procs" -lt 10 ] && pass "B sees only its own processes ($procs in /proc)" ||
  fail "B sees ${procs:-?} processes in /proc: $(line comms)"
grep -Eqw 'sleep|postgres|trainyard' <<<"$(line comms)" && fail "B sees others' processes: $(line comms)" ||
  pass "none of them A's, the server's or the database's ($(line comms))"
check "of the data directory B sees the way to its own folder" "$(line data)" "replicas "
check "and of the jobs, its own" "$(line jobs)" "${b##*/} "
for what in read-a-launch listed-a-work wrote-etc wrote-usr wrote-a-work wrote-a-folder wrote-data wrote-beside; do
  grep -qx "$what" <<<"$out" && fail "B could: $what" || pass "B could not: $what"
done
for what in wrote-own wrote-tmp; do
  grep -qx "$what" <<<"$out" && pass "B could: $what" || fail "B could not: $what"
done
b_dir="$REPLICAS/${b##*/}/attempt-0/workerpool0-0"
[ -f "$b_dir/work/own" ] && pass "B's write reached its working folder" || fail "no $b_dir/work/own"
[ ! -e "$a_dir/work/b" ] && [ ! -e "$a_dir/b" ] && [ ! -e /etc/trainyard-b ] && [ ! -e "$DATA/b" ] &&
  pass "nothing of B's outside its folder" || fail "B left a file outside its folder"

# --- the server's files: 0600, in folders closed to everyone but the replicas' group passing ---
mode() { stat -c '%a %U %G' "$1"; }
for f in "$DATA/replicas" "$REPLICAS" "$REPLICAS/${a##*/}" "$REPLICAS/${a##*/}/attempt-0" "$a_dir"; do
  check "folder ${f#"$DATA"/}" "$(mode "$f")" "710 root trainyard-run"
done
for f in launch.json output.log pid; do
  check "A's $f" "$(stat -c '%a %U' "$a_dir/$f")" "600 root"
done
check "B's exit_code" "$(stat -c '%a %U' "$b_dir/exit_code")" "600 root"
check "A's working folder" "$(stat -c '%a %U' "$a_dir/work")" "700 trainyard-run"
setpriv --reuid=trainyard-run --regid=trainyard-run --clear-groups cat "$a_dir/launch.json" >/dev/null 2>&1 &&
  fail "trainyard-run reads A's launch record on the host" || pass "trainyard-run cannot read A's launch record on the host"

# --- cancel: A's command gets SIGTERM inside its sandbox, then everything of it ends ---
keeper=$(cut -d: -f1 "$a_dir/pid")
curl -fsS -X POST "$BASE/v1/$a:cancel" -H 'content-type: application/json' -d '{}' >/dev/null
wait_until 30 "A CANCELLED" state_of "$a" JOB_STATE_CANCELLED
wait_until 10 "A's TERM line" has_line team-a "$a" "got TERM" && pass "A's command got SIGTERM" ||
  fail "A's command never saw SIGTERM: $(logs_in team-a "$a" | tr '\n' ' ')"
wait_until 10 "A's group gone" sh -c "! kill -0 -- -$keeper 2>/dev/null" && pass "cancel ended A's replica" ||
  fail "A's process group $keeper outlived the cancel"
grep -qsa "$secret" /proc/[0-9]*/environ && fail "a process with A's secret outlived the cancel" ||
  pass "no process with A's secret is left"
finish
