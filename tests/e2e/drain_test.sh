#!/usr/bin/env bash
# SIGTERM with two servers on one database (local runtime, the default 30 s leases): the stopped
# server drains (--drain-period): its /readyz turns 503 at once while it still accepts and answers
# every other request, a request it was still reading finishes (201-style 200 with the job
# stored), and a second SIGTERM ends the drain; its scheduler lead and its job leases move to the
# other server at once rather than when they expire, and the embedded PostgreSQL it started stays
# up for the other server, which drains for its default period on its own and stops it last.
source "$(dirname "$0")/lib.sh"

B_PID=""
# On a failure midway: the first server's long drain ends on its second SIGTERM, sent once the
# first was taken (two at once would be one pending signal).
end_drain() {
  [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null || return 0
  if ! grep -q '"event":"shutting_down"' "$E2E_DIR/server.log"; then
    kill -TERM "$SERVER_PID"
    wait_until 10 "the first SIGTERM taken" grep -q '"event":"shutting_down"' "$E2E_DIR/server.log" || true
  fi
  kill -TERM "$SERVER_PID" 2>/dev/null || true
}
stop_b() {
  end_drain
  [ -n "$B_PID" ] && kill -TERM "$B_PID" 2>/dev/null && wait "$B_PID" 2>/dev/null || true
  cleanup
}
trap stop_b EXIT

# Each start of the replica says so on its stdout: the job's log (a replica in its sandbox cannot
# write anywhere on the host but its own work folder).
starts() {
  "$TRAINYARD_BIN" jobs logs "${name##*/}" --endpoint "$1" --project demo 2>/dev/null |
    grep -o 'start [0-9]*' || true
}
# A drain far longer than the test needs: it ends when the test sends a second SIGTERM, so what
# is checked during it cannot race its end.
start_server --runtime local --drain-period 600
A_PID=$SERVER_PID
A_BASE=$BASE
P="$A_BASE/v1/projects/demo/locations/us-central1"

job=$(jq -n '{displayName: "outlives-its-server", jobSpec: {workerPoolSpecs: [{
  machineSpec: {machineType: "n2-standard-8"}, replicaCount: "1",
  containerSpec: {imageUri: "debian:12", command: ["sh", "-c",
    "echo \"start $(date +%s%N)\"; sleep 120 & wait $!"]}}]}}')
name=$(curl -fsS -X POST "$P/customJobs" -H 'content-type: application/json' --data-binary "$job" |
  jq -r .name)
state_is() { [ "$(curl -fsS "$A_BASE/v1/$1" | jq -r .state)" = "$2" ]; }
wait_until 60 "job RUNNING on the first server" state_is "$name" JOB_STATE_RUNNING
pass "a job runs on the first server"

B_PORT=$(free_port)
B_BASE="http://127.0.0.1:$B_PORT"
"$TRAINYARD_BIN" serve --listen "127.0.0.1:$B_PORT" --data-dir "$E2E_DIR/data" --runtime local \
  >>"$E2E_DIR/b.log" 2>&1 &
B_PID=$!
wait_until 60 "second server ready" curl -fsS "$B_BASE/readyz"
pass "a second server on the same data directory is ready"

# A create whose body is still arriving when SIGTERM comes: headers and half the body, then the
# rest once the test says so.
python3 - "$(echo "$A_BASE" | sed 's|.*:||')" "$E2E_DIR" <<'PY' >"$E2E_DIR/slow.out" 2>&1 &
import json, os, socket, sys, time
port, d = int(sys.argv[1]), sys.argv[2]
body = json.dumps({"displayName": "in-flight", "jobSpec": {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "n2-standard-8"}, "replicaCount": "1",
    "containerSpec": {"imageUri": "debian:12", "command": ["true"]}}]}}).encode()
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"POST /v1/projects/demo/locations/us-central1/customJobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
s.sendall(body[:len(body) // 2])
open(os.path.join(d, "half-sent"), "w").close()
deadline = time.time() + 60
while not os.path.exists(os.path.join(d, "go")) and time.time() < deadline:
    time.sleep(0.02)
s.sendall(body[len(body) // 2:])
reply = b""
while b"\r\n\r\n" not in reply or len(reply.split(b"\r\n\r\n", 1)[1]) == 0:
    chunk = s.recv(65536)
    if not chunk:
        break
    reply += chunk
print(reply.split(b"\r\n", 1)[0].decode())
PY
SLOW_PID=$!
wait_until 30 "the slow create half sent" test -e "$E2E_DIR/half-sent"
# The half-sent request must have reached the server's accept before the signal.
wait_until 10 "the connection established" sh -c "ss -tnH state established '( dport = :$PORT )' | grep -q ."

stopped_at=$(date +%s.%N)
kill -TERM "$A_PID"
wait_until 10 "readyz 503 on the draining server" \
  sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $A_BASE/readyz)\" = 503 ]"
pass "readyz turns 503 on SIGTERM"
# Every other route is served meanwhile, on new connections too (each curl opens one).
check "a poll is served during the drain" "$(curl -fsS "$A_BASE/v1/$name" | jq -r .name)" "$name"
during=$(jq -n '{displayName: "during-drain", jobSpec: {workerPoolSpecs: [{
  machineSpec: {machineType: "n2-standard-8"}, replicaCount: "1",
  containerSpec: {imageUri: "debian:12", command: ["true"]}}]}}' |
  curl -fsS -X POST "$P/customJobs" -H 'content-type: application/json' --data-binary @- | jq -r .name)
[[ "$during" == projects/*/customJobs/* ]] && pass "a create is served during the drain" ||
  fail "a create during the drain: [$during]"
check "readyz still 503" "$(curl -s -o /dev/null -w '%{http_code}' "$A_BASE/readyz")" 503
touch "$E2E_DIR/go"
wait "$SLOW_PID" || true
check "the in-flight create finished" "$(cat "$E2E_DIR/slow.out")" "HTTP/1.1 200 OK"

# A second SIGTERM ends the drain at once (the period is 600 s): the port closes, the server exits.
kill -TERM "$A_PID"
wait_until 30 "the first server stopped on the second SIGTERM" \
  grep -q '"event":"stopped"' "$E2E_DIR/server.log"
wait "$A_PID" && rc=0 || rc=$?
SERVER_PID=""
check "the first server exits 0" "$rc" 0
grep -q '"event":"drain_cut_short"' "$E2E_DIR/server.log" &&
  pass "the second SIGTERM cut the drain short" || fail "the drain did not end on the second SIGTERM"
grep -q '"event":"postgres_left_running"' "$E2E_DIR/server.log" &&
  pass "it left the shared PostgreSQL running for the other server" ||
  fail "the first server did not leave PostgreSQL running"

for display in in-flight during-drain; do
  count=$(curl -fsS "$B_BASE/v1/projects/demo/locations/us-central1/customJobs" -G \
    --data-urlencode "filter=display_name=\"$display\"" | jq '.customJobs | length')
  check "the $display create is stored once" "$count" 1
done

# The lead and the job's lease moved at once: the other server leads, and restarts the replica
# the stopping server ended, well before the 30 s lease would have run out.
wait_until 10 "the second server leads" grep -q '"event":"scheduler_leading"' "$E2E_DIR/b.log"
pass "the second server took the scheduler over"
second_start() { [ "$(starts "$B_BASE" | wc -l)" -ge 2 ]; }
wait_until 25 "the job's replica started again" second_start
restarted_at=$(starts "$B_BASE" | sed -n '2s/^start //p')
took=$(awk -v a="$stopped_at" -v b="$restarted_at" 'BEGIN { printf "%.1f", b / 1e9 - a }')
awk -v t="$took" 'BEGIN { exit !(t < 15) }' &&
  pass "the job continued on the other server ${took}s after the SIGTERM (leases are 30 s)" ||
  fail "the job continued only after ${took}s"
state_b() { [ "$(curl -fsS "$B_BASE/v1/$name" | jq -r .state)" = JOB_STATE_RUNNING ]; }
wait_until 30 "job RUNNING on the second server" state_b
pass "the job is RUNNING on the second server"

# The second server drains for the default period (5 s) by itself, then stops.
b_stopped_at=$(date +%s.%N)
kill -TERM "$B_PID"
wait_until 60 "the second server stopped after its drain" grep -q '"event":"stopped"' "$E2E_DIR/b.log"
took=$(awk -v a="$b_stopped_at" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
wait "$B_PID" 2>/dev/null || true
B_PID=""
awk -v t="$took" 'BEGIN { exit !(t >= 5) }' &&
  pass "the second server stopped ${took}s after SIGTERM, its 5 s drain over" ||
  fail "the second server stopped ${took}s after SIGTERM, within its 5 s drain"
grep -q '"event":"drain_cut_short"' "$E2E_DIR/b.log" && fail "the second server's drain was cut short" ||
  pass "its drain ended by itself"
grep -q '"event":"embedded_postgres_stopped"' "$E2E_DIR/b.log" &&
  pass "the last server out stopped PostgreSQL" || fail "PostgreSQL was not stopped by the last server"
# A stop asked for is not a fault: nothing from the signal on is a warning (the change feed's
# connection once was, cut by the PostgreSQL the server itself stopped under it).
warned=$(sed -n '/"event":"shutting_down"/,$p' "$E2E_DIR/b.log" | grep -E '"level":"(warn|error)"' || true)
[ -z "$warned" ] && pass "its clean stop logged no warning" ||
  fail "its clean stop logged: $warned"
finish
