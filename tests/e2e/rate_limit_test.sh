#!/usr/bin/env bash
# Per-project create limits (serve --create-rate-limit): a burst of creates from curl gets 429
# RESOURCE_EXHAUSTED with RetryInfo and Retry-After for what is over the limit, and nothing of those
# is written; another project is not slowed; the trainyard CLI (the SDK) waits as told and gets
# every create through.
source "$(dirname "$0")/lib.sh"

start_server --create-rate-limit 2  # 2 a second, bursts of 4
TA="$BASE/v1/projects/team-a/locations/us-central1/customJobs"
TB="$BASE/v1/projects/team-b/locations/us-central1/customJobs"
JOB=$(jq -c '.displayName = "burst"' "$PAYLOADS/lora-single-node.json")

mkdir -p "$E2E_DIR/burst"
pids=()
burst_start=$(date +%s%N)
for i in $(seq 1 12); do
  curl -sS -o "$E2E_DIR/burst/$i.body" -D "$E2E_DIR/burst/$i.headers" -w '%{http_code}\n' \
    -X POST "$TA" -H 'content-type: application/json' --data-binary "$JOB" >"$E2E_DIR/burst/$i.code" &
  pids+=($!)
done
wait "${pids[@]}"  # not the server
burst_ms=$((($(date +%s%N) - burst_start) / 1000000))
ok=$(cat "$E2E_DIR"/burst/*.code | grep -c '^200$' || true)
limited=$(cat "$E2E_DIR"/burst/*.code | grep -c '^429$' || true)
check "every create answered 200 or 429" "$((ok + limited))" 12
# A bucket of 4 that refills 2 a second lets at most 4 + 2 per second of the burst through.
allowed=$((4 + 2 * (burst_ms + 999) / 1000))
[ "$limited" -ge 1 ] && [ "$ok" -le "$allowed" ] &&
  pass "the limit held over the burst ($ok passed, $limited refused in ${burst_ms} ms)" ||
  fail "$ok of 12 passed in ${burst_ms} ms (at most $allowed may)"
one=$(grep -l '^429$' "$E2E_DIR"/burst/*.code | head -n 1)
one=${one%.code}
check "the 429 is RESOURCE_EXHAUSTED" "$(jq -r .error.status "$one.body")" RESOURCE_EXHAUSTED
delay=$(jq -r '.error.details[] | select(."@type" == "type.googleapis.com/google.rpc.RetryInfo") | .retryDelay' "$one.body")
[[ "$delay" =~ ^0\.[0-9]{3}s$ ]] && pass "with a RetryInfo retryDelay ($delay)" || fail "retryDelay: $delay"
grep -qi '^retry-after: 1' "$one.headers" && pass "and Retry-After: 1" || fail "headers: $(cat "$one.headers")"

listed=$(curl -fsS "$TA?pageSize=100" | jq '.customJobs | length')
check "only the accepted creates were written" "$listed" "$ok"
check "team-b is not slowed by team-a" \
  "$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$TB" -H 'content-type: application/json' --data-binary "$JOB")" 200

# The SDK retries a 429 (it did nothing), waiting what the server says: six creates in a row all
# get through.
jq -c '.displayName = "patient"' "$PAYLOADS/lora-single-node.json" >"$E2E_DIR/job.json"
created=0
for i in $(seq 1 6); do
  "$TRAINYARD_BIN" jobs create -f "$E2E_DIR/job.json" --endpoint "$BASE" --project team-c \
    >>"$E2E_DIR/cli.out" 2>&1 && created=$((created + 1))
done
check "the CLI got all 6 creates through the limit" "$created" 6
check "exactly 6 exist" "$(curl -fsS "$BASE/v1/projects/team-c/locations/us-central1/customJobs" | jq '.customJobs | length')" 6
finish
