#!/usr/bin/env bash
# SIGTERM with two servers on one database (local runtime, the default 30 s leases): the stopped
# server's /readyz turns 503 at once, a request it was still reading finishes (201-style 200 with
# the job stored), its scheduler lead and its job leases move to the other server at once rather
# than when they expire, and the embedded PostgreSQL it started stays up for the other server,
# which stops it last.
source "$(dirname "$0")/lib.sh"

B_PID=""
stop_b() {
  [ -n "$B_PID" ] && kill -TERM "$B_PID" 2>/dev/null && wait "$B_PID" 2>/dev/null || true
  cleanup
}
trap stop_b EXIT

REC="$E2E_DIR/replicas.record"
touch "$REC" && chmod 666 "$REC"
start_server --runtime local
A_PID=$SERVER_PID
A_BASE=$BASE
P="$A_BASE/v1/projects/demo/locations/us-central1"

job=$(jq -n --arg rec "$REC" '{displayName: "outlives-its-server", jobSpec: {workerPoolSpecs: [{
  machineSpec: {machineType: "n2-standard-8"}, replicaCount: "1",
  containerSpec: {imageUri: "debian:12", command: ["sh", "-c",
    ("echo \"start $(date +%s%N)\" >>" + $rec + "; sleep 120 & wait $!")]}}]}}')
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
wait_until 5 "readyz 503 on the stopping server" \
  sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $A_BASE/readyz)\" = 503 ]"
pass "readyz turns 503 at once on SIGTERM"
touch "$E2E_DIR/go"
wait "$SLOW_PID" || true
check "the in-flight create finished" "$(cat "$E2E_DIR/slow.out")" "HTTP/1.1 200 OK"
wait "$A_PID" && rc=0 || rc=$?
SERVER_PID=""
check "the first server exits 0" "$rc" 0
grep -q '"event":"postgres_left_running"' "$E2E_DIR/server.log" &&
  pass "it left the shared PostgreSQL running for the other server" ||
  fail "the first server did not leave PostgreSQL running"

count=$(curl -fsS "$B_BASE/v1/projects/demo/locations/us-central1/customJobs" -G \
  --data-urlencode 'filter=display_name="in-flight"' | jq '.customJobs | length')
check "the in-flight create is stored once" "$count" 1

# The lead and the job's lease moved at once: the other server leads, and restarts the replica
# the stopping server ended, well before the 30 s lease would have run out.
wait_until 10 "the second server leads" grep -q '"event":"scheduler_leading"' "$E2E_DIR/b.log"
pass "the second server took the scheduler over"
second_start() { [ "$(grep -c '^start' "$REC")" -ge 2 ]; }
wait_until 25 "the job's replica started again" second_start
restarted_at=$(sed -n '2s/^start //p' "$REC")
took=$(awk -v a="$stopped_at" -v b="$restarted_at" 'BEGIN { printf "%.1f", b / 1e9 - a }')
awk -v t="$took" 'BEGIN { exit !(t < 15) }' &&
  pass "the job continued on the other server ${took}s after the SIGTERM (leases are 30 s)" ||
  fail "the job continued only after ${took}s"
state_b() { [ "$(curl -fsS "$B_BASE/v1/$name" | jq -r .state)" = JOB_STATE_RUNNING ]; }
wait_until 30 "job RUNNING on the second server" state_b
pass "the job is RUNNING on the second server"

kill -TERM "$B_PID"; wait "$B_PID" 2>/dev/null || true; B_PID=""
grep -q '"event":"embedded_postgres_stopped"' "$E2E_DIR/b.log" &&
  pass "the last server out stopped PostgreSQL" || fail "PostgreSQL was not stopped by the last server"
finish
