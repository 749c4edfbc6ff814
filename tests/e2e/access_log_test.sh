#!/usr/bin/env bash
# The server's log as an operator's collector reads it: every line one JSON object; each request's
# line carries the request id (the client's X-Request-Id when well-formed, else one generated, and
# echoed back either way), the route template, the project, the status and the latency; no secret
# ever (a bearer token sent in Authorization); --log-level=warn drops the request lines.
source "$(dirname "$0")/lib.sh"

LOG="$E2E_DIR/server.log"
start_server --auth=tokens
TOKEN=$("$TRAINYARD_BIN" tokens create --data-dir "$E2E_DIR/data" --project demo --role editor 2>/dev/null)
V1="$BASE/v1/projects/demo/locations/us-central1"

# call ID: a list request with X-Request-Id ID; prints the X-Request-Id the server answered with.
call() {
  curl -sS -o /dev/null -D - "$V1/customJobs" -H "Authorization: Bearer $TOKEN" -H "X-Request-Id: $1" |
    tr -d '\r' | awk -F': ' 'tolower($1) == "x-request-id" { print $2 }'
}
check "a well-formed X-Request-Id is echoed" "$(call trace-0001.a_b)" "trace-0001.a_b"
generated=$(call 'not well formed; has spaces')
[[ "$generated" =~ ^[0-9a-f]{32}$ ]] && pass "a malformed one is replaced by a generated id" ||
  fail "answered with: $generated"
long=$(printf 'x%.0s' $(seq 65))
[ "$(call "$long")" != "$long" ] && pass "so is one over 64 characters" || fail "a 65-character id was kept"
curl -sS -o /dev/null "$V1/customJobs" -H "Authorization: Bearer ty1_1_forgedforgedforgedforgedforgedforgedforg" \
  -H "X-Request-Id: forged-1"

# The lines of a request are written off the request thread: poll for them with a deadline.
wait_until 10 "the access line of trace-0001.a_b" grep -q '"request_id":"trace-0001.a_b"' "$LOG"
wait_until 10 "the access line of forged-1" grep -q '"request_id":"forged-1"' "$LOG"

python3 - "$LOG" <<'EOF' && pass "every line of the log is one JSON object" || fail "a line is not JSON"
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    obj = json.loads(line)
    assert isinstance(obj, dict) and "ts" in obj and "level" in obj and "event" in obj, (n, line)
EOF
line=$(grep '"request_id":"trace-0001.a_b"' "$LOG" | grep '"event":"http_request"')
check "the line names the route template" "$(jq -r .route <<<"$line")" \
  "/{version}/projects/{project}/locations/{location}/customJobs"
check "and the project" "$(jq -r .project <<<"$line")" "demo"
check "and the status" "$(jq -r .status <<<"$line")" "200"
jq -e '.ms >= 0' <<<"$line" >/dev/null && pass "and the latency" || fail "ms: $line"
check "the forged token's request is logged as a 401" \
  "$(grep '"request_id":"forged-1"' "$LOG" | jq -r 'select(.event == "http_request") | .status')" 401
grep -q "$TOKEN" "$LOG" && fail "the token is in the log" || pass "the token never appears in the log"
grep -q "forgedforged" "$LOG" && fail "the forged token is in the log" || pass "nor does the forged one"
grep -qi "authorization" "$LOG" && fail "an Authorization header is in the log" ||
  pass "no Authorization header appears"
stop_server

# --- --log-level=warn: no request lines, and a bad level is refused ----------------------------
start_server --log-level=warn
V1="$BASE/v1/projects/demo/locations/us-central1"
check "the server answers" "$(call warn-level-1)" "warn-level-1"
stop_server  # flushes the log
grep -q '"request_id":"warn-level-1"' "$LOG" && fail "warn still logs requests" ||
  pass "--log-level=warn writes no request lines"
if "$TRAINYARD_BIN" serve --log-level=loud --data-dir "$E2E_DIR/x" >"$E2E_DIR/bad.out" 2>&1; then
  fail "--log-level=loud started"
else
  grep -q "loud" "$E2E_DIR/bad.out" && pass "an unknown --log-level is refused, naming it" ||
    fail "refusal: $(cat "$E2E_DIR/bad.out")"
fi
finish
