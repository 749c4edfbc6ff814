#!/usr/bin/env bash
# The local runtime keeps replicas from acting as the server (a root server, as CI runs it): a
# replica runs as trainyard-run with no_new_privs and resource limits, in a working directory only
# it can write; it cannot touch the server's files beside it (pid, exit code, output) nor swap its
# output for a link to a file it cannot read; and a child that left its process group (setsid)
# still ends when the job is cancelled or when the replica exits. (What one replica cannot see of
# another, in bubblewrap: local_isolation_test.sh.)
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: needs root (the server drops replicas to trainyard-run only when it is root)"
  exit 77
fi
id -u trainyard-run >/dev/null 2>&1 || { fail "no user trainyard-run: scripts/setup makes it"; finish; }

start_server --runtime local --stop-grace 1
P="$BASE/v1/projects/demo/locations/us-central1"
REPLICAS="$E2E_DIR/data/replicas/jobs"
wait_done() { wait_until 60 "$1 ended" sh -c "curl -fsS '$BASE/v1/$1' | jq -e '.state | test(\"SUCCEEDED|FAILED|CANCELLED\")'"; }

# --- who and where a replica is ---
name=$(shell_job 'echo "user $(id -un)"; echo "groups $(id -G)"; grep NoNewPrivs /proc/self/status;
  echo "nofile $(ulimit -n)"; echo "core $(ulimit -c)"; echo "cpu $(ulimit -t)"; echo "fsize $(ulimit -f)";
  echo "cwd $(pwd)"; echo "mode $(stat -c %U:%a .)"; echo "home $HOME"')
wait_until 30 "whoami job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
wait_until 10 "its lines" sh -c "curl -fsS '$BASE/trainyard/v1/projects/demo/locations/us-central1/customJobs/${name##*/}/logs?task=workerpool0-0' | jq -e '[.entries[].textPayload | select(startswith(\"home \"))] | length == 1'"
out=$(logs "$name" workerpool0-0)
line() { sed -n "s/^$1 //p" <<<"$out"; }
check "it runs as trainyard-run" "$(line user)" trainyard-run
check "with no supplementary groups of root's" "$(line groups)" "$(id -g trainyard-run)"
check "with no_new_privs" "$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' <<<"$out")" 1
hard=$(ulimit -Hn)  # a limit is only ever lowered: the server's own hard limit may be below ours
check "open files limited" "$(line nofile)" "$((hard < 65536 ? hard : 65536))"
check "no core files" "$(line core)" 0
[[ "$(line cpu)" =~ ^[0-9]+$ ]] && pass "CPU time limited ($(line cpu) s)" || fail "CPU time: $(line cpu)"
[[ "$(line fsize)" =~ ^[0-9]+$ ]] && pass "file size limited" || fail "file size: $(line fsize)"
check "it works in its own folder" "$(line cwd)" "$REPLICAS/${name##*/}/attempt-0/workerpool0-0/work"
check "which only it may enter" "$(line mode)" trainyard-run:700
check "and which is its HOME" "$(line home)" "$(line cwd)"

# --- the server's files beside it are not its to write (in bubblewrap it does not even see them:
# `..` is an empty, read-only folder there) ---
name=$(shell_job 'echo before; echo 1:1 > ../pid && echo wrote-pid; echo 9 > ../exit_code && echo wrote-exit;
  rm ../output.log && echo removed-output; ln -sf /etc/shadow ../output.log && echo linked; echo after')
wait_until 30 "meddling job ended" state_is "$name" JOB_STATE_SUCCEEDED
wait_until 10 "its last line" sh -c "curl -fsS '$BASE/trainyard/v1/projects/demo/locations/us-central1/customJobs/${name##*/}/logs?task=workerpool0-0' | jq -e '[.entries[].textPayload] | index(\"after\") != null'"
out=$(logs "$name" workerpool0-0)
grep -Eq 'wrote-pid|wrote-exit|removed-output|linked' <<<"$out" &&
  fail "the replica wrote the server's files: $out" || pass "the replica could not write the server's files"
dir="$REPLICAS/${name##*/}/attempt-0/workerpool0-0"
[ -f "$dir/output.log" ] && [ ! -L "$dir/output.log" ] && pass "its output.log is still the server's file" ||
  fail "its output.log was removed or replaced: $(ls -l "$dir")"
[[ "$(cat "$dir/pid")" =~ ^[0-9]+:[0-9]+$ ]] && [ "$(cat "$dir/pid")" != 1:1 ] && pass "its pid file is the server's" ||
  fail "its pid file says $(cat "$dir/pid")"
grep -q '^root:' <<<"$out" && fail "/etc/shadow reached the job's log" || pass "nothing of /etc/shadow in its log"
# It wrote 9 to ../exit_code if it could: the job would have failed with that code.
check "its exit code is the keeper's, not a forgery" "$(field "$name" .state)" JOB_STATE_SUCCEEDED

# --- cgroups: what ends a child that left its process group. Without them the setsid escape
# below cannot be tested, and a test that cannot test fails rather than pass. ---
cgroup2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if grep -q '"event":"replica_cgroups_unavailable"' "$E2E_DIR/server.log"; then
  why=$(grep -m1 '"event":"replica_cgroups_unavailable"' "$E2E_DIR/server.log" | jq -r .why || true)
  if [ -z "$cgroup2" ]; then
    mount="no cgroup v2 is mounted"
  elif [ -w "$cgroup2" ]; then
    mount="cgroup v2 at $cgroup2 is writable, so the server should have made one"
  else
    mount="cgroup v2 at $cgroup2 is not writable"
  fi
  fail "cannot test that a setsid child ends with its replica: the server runs replicas without cgroups (${why:-no reason logged}; $mount). It needs cgroup v2 with its own cgroup delegated writable (in a container: --cgroupns=private and a writable /sys/fs/cgroup) on a kernel with cgroup.kill (5.14 or later)"
  finish
  exit 1
fi
pass "replicas get cgroups of their own (cgroup v2 at $cgroup2)"

# --- a child that called setsid() ends on cancel. It sleeps a number of seconds no other process
# does, which finds it on the host: the pid it could print is its pid namespace's. ---
host_pid() { pgrep -x -f "sleep $1" | head -n1; }
marker=$((300000 + RANDOM))
name=$(shell_job "setsid sh -c 'exec sleep $marker' & exec sleep 300")
wait_until 30 "the daemon running" sh -c "pgrep -x -f 'sleep $marker'"
daemon=$(host_pid $marker)
kill -0 "$daemon" && pass "the setsid child runs ($daemon)" || fail "no daemon $daemon"
curl -fsS -X POST "$BASE/v1/$name:cancel" -H 'content-type: application/json' -d '{}' >/dev/null
wait_until 30 "cancelled" state_is "$name" JOB_STATE_CANCELLED
wait_until 10 "the setsid child gone" sh -c "! kill -0 $daemon 2>/dev/null" && pass "cancel ended the setsid child" ||
  fail "the setsid child $daemon outlived the cancel"

# --- and when the replica exits on its own (once the test has seen its setsid child: `go`) ---
marker=$((300000 + RANDOM))
name=$(shell_job "setsid sh -c 'exec sleep $marker' & while [ ! -f go ]; do sleep 0.05; done; echo done")
wait_until 30 "the daemon running" sh -c "pgrep -x -f 'sleep $marker'"
daemon=$(host_pid $marker)
touch "$REPLICAS/${name##*/}/attempt-0/workerpool0-0/work/go"
wait_until 30 "leaver SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
[ -n "$daemon" ] || fail "no daemon sleep $marker on the host"
wait_until 10 "the orphan gone" sh -c "! kill -0 ${daemon:-1} 2>/dev/null" && pass "an orphaned setsid child ends with its replica" ||
  fail "the setsid child $daemon outlived its replica"
finish
