#!/usr/bin/env bash
# Hostile input over HTTP (curl): malformed JSON, wrong types, huge and negative numbers, deep
# nesting, 10 MB and chunked bodies, unknown enum names, SQL metacharacters and unicode in strings
# and filters, path traversal and bad ids, forged and foreign page tokens. Each gets its 4xx with
# the Vertex error body (never a 5xx), and the database holds afterwards exactly the jobs that were
# valid.
source "$(dirname "$0")/lib.sh"

start_server --sim-speed 100
P="$BASE/v1/projects/demo/locations/us-central1"
BODY="$E2E_DIR/body"

# expect NAME CODE METHOD URL [curl args…]: the status is CODE and the body a Vertex error.
expect() {
  local name=$1 want=$2 method=$3 url=$4
  shift 4
  local got
  got=$(curl -sS -o "$BODY" -w '%{http_code}' -X "$method" "$url" -H 'content-type: application/json' "$@")
  check "$name: $want" "$got" "$want"
  if [ "$want" -ge 400 ]; then
    [ "$(jq -r '.error.code' "$BODY" 2>/dev/null)" = "$want" ] || fail "$name: no Vertex error body: $(head -c 300 "$BODY")"
  fi
}
# field NAME FIELD: the 400 names FIELD among its field violations.
field() {
  jq -e --arg f "$2" '[.error.details[] | select(.fieldViolations) | .fieldViolations[].field] | index($f) != null' \
    "$BODY" >/dev/null && pass "$1 names $2" || fail "$1 does not name $2: $(head -c 400 "$BODY")"
}
job() { jq -c "$1" "$PAYLOADS/lora-single-node.json"; }

expect "malformed JSON" 400 POST "$P/customJobs" --data-binary '{"displayName": '
expect "a JSON array body" 400 POST "$P/customJobs" --data-binary '[1,2]'
expect "displayName as a number" 400 POST "$P/customJobs" --data-binary "$(job '.displayName = 5')"
field "displayName as a number" displayName
expect "replicaCount negative" 400 POST "$P/customJobs" --data-binary "$(job '.jobSpec.workerPoolSpecs[0].replicaCount = "-1"')"
field "replicaCount negative" "jobSpec.workerPoolSpecs[0].replicaCount"
expect "replicaCount beyond int64" 400 POST "$P/customJobs" \
  --data-binary "$(job '.jobSpec.workerPoolSpecs[0].replicaCount = "99999999999999999999999"')"
expect "acceleratorCount beyond int32" 400 POST "$P/customJobs" \
  --data-binary "$(job '.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount = 2147483648')"
expect "a number beyond double" 400 POST "$P/customJobs" \
  --data-binary "$(job '.jobSpec.workerPoolSpecs[0].replicaCount = 0' | sed 's/"replicaCount":0/"replicaCount":1e400/')"
expect "an unknown enum name" 400 POST "$P/customJobs" \
  --data-binary "$(job '.jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType = "NVIDIA_FAKE_9000"')"
field "an unknown enum name" "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"
expect "deep nesting" 400 POST "$P/customJobs" --data-binary "$(printf '%0.s[' $(seq 1 5000))"
expect "invalid UTF-8" 400 POST "$P/customJobs" --data-binary "$(job '.displayName = "XX"' | sed "s/XX/$(printf '\xff\xfe')/")"
head -c 10485760 /dev/zero | tr '\0' ' ' >"$E2E_DIR/10mb"
expect "a 10 MB body" 413 POST "$P/customJobs" --data-binary @"$E2E_DIR/10mb"
expect "a chunked body" 411 POST "$P/customJobs" -H 'Transfer-Encoding: chunked' --data-binary "$(job .)"
expect "a label key with SQL in it" 400 POST "$P/customJobs" --data-binary "$(job '.labels = {"a'"'"'; DROP TABLE custom_jobs;--": "x"}')"

# Strings that are valid stay exactly as sent: SQL metacharacters and unicode included.
sql="x'); DELETE FROM custom_jobs; --\"\\"
expect "SQL metacharacters in displayName" 200 POST "$P/customJobs" \
  --data-binary "$(jq -c --arg n "$sql" '.displayName = $n' "$PAYLOADS/lora-single-node.json")"
sql_job=$(jq -r .name "$BODY")
check "they come back as sent" "$(curl -fsS "$BASE/v1/$sql_job" | jq -r .displayName)" "$sql"
expect "unicode in displayName" 200 POST "$P/customJobs" --data-binary "$(jq -c --arg n "训练 🚀 Ωmega" '.displayName = $n' "$PAYLOADS/lora-single-node.json")"
uni_job=$(jq -r .name "$BODY")
check "unicode comes back as sent" "$(curl -fsS "$BASE/v1/$uni_job" | jq -r .displayName)" "训练 🚀 Ωmega"
valid=2

# Filters: metacharacters are values, never SQL; what cannot be parsed is a 400 naming filter.
expect "a filter with SQL in a value" 200 GET "$P/customJobs" -G --data-urlencode "filter=display_name=\"x' OR '1'='1\""
check "it matches nothing" "$(jq '.customJobs // [] | length' "$BODY")" 0
expect "a filter that finds a name with SQL in it" 200 GET "$P/customJobs" -G \
  --data-urlencode "filter=display_name:\"x'); DELETE FROM custom_jobs; --*\""
check "exactly that job" "$(jq -r '.customJobs[0].name // "none"' "$BODY")" "$sql_job"
expect "an unparsable filter" 400 GET "$P/customJobs" -G --data-urlencode 'filter=state=("'
field "an unparsable filter" filter
expect "a filter on an unknown field" 400 GET "$P/customJobs" -G --data-urlencode 'filter=drop_table="x"'

# Paths: traversal and ids that are not ids.
expect "path traversal in the job id" 404 GET "$P/customJobs/..%2F..%2Fetc%2Fpasswd"
expect "dot segments in the path" 404 GET "$BASE/v1/projects/demo/../../etc/passwd" --path-as-is
expect "a job id that is not a number" 404 GET "$P/customJobs/not-a-number"
expect "a job id beyond int64" 404 GET "$P/customJobs/99999999999999999999999"
expect "a negative job id" 404 GET "$P/customJobs/-5"
expect "a project id with quotes" 400 POST "$BASE/v1/projects/a'b/locations/us-central1/customJobs" --data-binary "$(job .)"

# Page tokens: garbage, another filter's, another project's; page sizes out of range.
expect "a garbage page token" 400 GET "$P/customJobs?pageToken=garbage"
field "a garbage page token" pageToken
token=$(curl -fsS "$P/customJobs?pageSize=1" | jq -r .nextPageToken)
[ -n "$token" ] && [ "$token" != null ] && pass "a real page token" || fail "no page token"
expect "a token used with another filter" 400 GET "$P/customJobs?pageSize=1&pageToken=$token" -G --data-urlencode 'filter=state="JOB_STATE_QUEUED"'
expect "a token used in another project" 400 GET "$BASE/v1/projects/other/locations/us-central1/customJobs?pageSize=1&pageToken=$token"
expect "a negative pageSize" 400 GET "$P/customJobs?pageSize=-1"
expect "a pageSize beyond int32" 400 GET "$P/customJobs?pageSize=99999999999"

check "the database holds exactly the valid jobs" \
  "$(curl -fsS "$P/customJobs?pageSize=100" | jq '.customJobs | length')" "$valid"
check "and the server is still healthy" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" 200
# The log is written off the request thread: the last request's line first, then the search.
curl -fsS -o /dev/null -H 'X-Request-Id: hostile-last' "$P/customJobs?pageSize=1"
wait_until 10 "the last request's line" grep -q '"request_id":"hostile-last"' "$E2E_DIR/server.log"
grep -q '"status":5[0-9][0-9]' "$E2E_DIR/server.log" && fail "the server answered a 5xx: $(grep -m1 '"status":5' "$E2E_DIR/server.log")" ||
  pass "no request got a 5xx"
finish
