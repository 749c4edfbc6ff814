#!/usr/bin/env bash
# What a web page the developer opens could make the browser send to `make run`'s server (no
# tokens, on loopback, here with the local runtime, which runs commands): simulated by curl with
# the browser's headers. A "simple" cross-site POST (text/plain, a form, a Blob with no type), any
# request with another site's Origin, a DNS-rebound Host, a request forwarded by a proxy and
# oversized headers are each refused with a 4xx and the Vertex body, and nothing runs or is
# stored; the server's own origin, curl, and JSON clients keep working.
source "$(dirname "$0")/lib.sh"

MPORT=$(free_port)
start_server --runtime local --stop-grace 1 --metrics-listen "127.0.0.1:$MPORT"
P="$BASE/v1/projects/demo/locations/us-central1"
MARK="$E2E_DIR/pwned"
# The job a hostile page would post: it leaves a file behind if it ever runs.
JOB=$(jq -nc --arg s "touch $MARK" '{displayName: "pwn", jobSpec: {workerPoolSpecs: [{
  machineSpec: {machineType: "n2-standard-8"}, replicaCount: "1",
  containerSpec: {imageUri: "debian:12", command: ["sh", "-c", $s]}}]}}')

# refused NAME CODE [curl args…]: POST $JOB to customJobs; the status is CODE with a Vertex body.
refused() {
  local name=$1 want=$2
  shift 2
  local got
  got=$(curl -sS -o "$E2E_DIR/body" -w '%{http_code}' -X POST "$P/customJobs" "$@" --data-binary "$JOB")
  check "$name: $want" "$got" "$want"
  [ "$(jq -r .error.code "$E2E_DIR/body" 2>/dev/null)" = "$want" ] ||
    fail "$name: no Vertex error body: $(head -c 300 "$E2E_DIR/body")"
}

PAGE=(-H 'Origin: https://evil.example' -H 'Referer: https://evil.example/' -H 'Sec-Fetch-Site: cross-site')
refused "a cross-site text/plain POST (no preflight)" 415 "${PAGE[@]}" -H 'Content-Type: text/plain;charset=UTF-8'
refused "a cross-site form POST" 415 "${PAGE[@]}" -H 'Content-Type: application/x-www-form-urlencoded'
refused "a Blob with no type (no Content-Type at all)" 415 "${PAGE[@]}" -H 'Content-Type:'
refused "a cross-site JSON POST (after a preflight nobody answered)" 403 "${PAGE[@]}" -H 'Content-Type: application/json'
# DNS rebinding: the page's own name resolves to 127.0.0.1, so its Origin matches its Host.
refused "a DNS-rebound Host" 403 -H "Host: rebind.evil.example:$PORT" \
  -H "Origin: http://rebind.evil.example:$PORT" -H 'Content-Type: application/json'
code=$(curl -sS -o "$E2E_DIR/body" -w '%{http_code}' -H "Host: rebind.evil.example:$PORT" "$P/customJobs")
check "a DNS-rebound page cannot read the job list either" "$code" 403
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Host: rebind.evil.example:$MPORT" "http://127.0.0.1:$MPORT/metrics")
check "nor the metrics port" "$code" 403
check "which serves its own loopback name" \
  "$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/metrics")" 200
refused "a request a proxy forwarded (nginx in front of --auth=off)" 403 \
  -H 'X-Forwarded-For: 203.0.113.7' -H 'Content-Type: application/json'
big=$(head -c 40000 /dev/zero | tr '\0' 'a')
refused "40 KB of headers" 431 -H "X-Padding: $big" -H 'Content-Type: application/json'
check "nothing was stored" "$(curl -fsS "$P/customJobs" | jq '.customJobs // [] | length')" 0

# A job that exists cannot be cancelled by a page either (an empty body needs no Content-Type,
# but a browser always sends its Origin on a POST).
name=$(shell_job "sleep 600")
code=$(curl -sS -o "$E2E_DIR/body" -w '%{http_code}' -X POST "$BASE/v1/$name:cancel" "${PAGE[@]}" \
  -H 'Content-Type: text/plain')
check "a cross-site cancel" "$code" 403
state=$(field "$name" .state)
[ "$state" != JOB_STATE_CANCELLING ] && [ "$state" != JOB_STATE_CANCELLED ] &&
  pass "the job was not cancelled ($state)" || fail "the job is $state"

# The server's own origin (its console) and loopback names work.
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$BASE/v1/$name:cancel" -H "Origin: $BASE")
check "a cancel from the server's own origin" "$code" 200
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Host: localhost:$PORT" "$P/customJobs")
check "Host: localhost" "$code" 200
[ ! -e "$MARK" ] && pass "no hostile command ran" || fail "a hostile command ran"

# The local runtime runs commands: on a non-loopback address only when the flag says so.
if timeout 30 "$TRAINYARD_BIN" serve --listen "0.0.0.0:$(free_port)" --runtime local --auth=tokens \
  --data-dir "$E2E_DIR/exposed" >"$E2E_DIR/exposed.out" 2>&1; then
  fail "--runtime=local on 0.0.0.0 started"
else
  check "--runtime=local on 0.0.0.0 exits 2" "$?" 2
  grep -q -- "--allow-remote-command-execution" "$E2E_DIR/exposed.out" && pass "and names the flag" ||
    fail "no reason: $(cat "$E2E_DIR/exposed.out")"
fi
finish
