#!/usr/bin/env bash
# The web console at /console/ in a real browser: Debian's chromium driven by playwright-core
# (pinned by tests/browser/package-lock.json). Jobs are made with curl; tests/browser/
# console_test.js checks the console shows them, why one waits, cancels another (the API sees it),
# says what a starting job waits for and how long is left, shows the fleet to its admin, fits a
# phone's width, asks for a token when the server wants one, offers a viewer no button it may not
# use, and throws no script error.
source "$(dirname "$0")/lib.sh"

install_browser_tests

# The open server (loopback, no tokens): one job that can never fit (a chief and 63 workers on a3-highgpu-8g),
# one that runs for 100 simulated hours. Its fleet is the default one but for g2-standard-48's boot:
# a day of model time (864 s of wall time at --sim-speed 100), so a job on it stays PENDING, its
# node booting, for the whole browser run.
jq '.bootTime["g2-standard-48"] = "86400s"' "$PAYLOADS/../fleets/default.json" >"$E2E_DIR/fleet.json"
start_server --sim-speed 100 --fleet "$E2E_DIR/fleet.json"
WAITING=$(create '.displayName = "console-waiting" | .jobSpec.workerPoolSpecs += [.jobSpec.workerPoolSpecs[0] | .replicaCount = "63"]' lora-single-node.json)
LONG=$(create '.displayName = "console-long" | .jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_SIM_DURATION", "value": "360000s"}]' lora-single-node.json)
GANG=$(create '.displayName = "console-gang" | .jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_SIM_DURATION", "value": "360000s"}, {"name": "TRAINYARD_SIM_SLOW_HOST", "value": "1"}]' nemo-pretrain-multinode.json)
# One whose program exits 1 (three attempts, then FAILED), and a resource with a display name.
FAILING=$(create '.displayName = "console-failing" | .jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_SIM_EXIT_CODE", "value": "1"}, {"name": "TRAINYARD_SIM_DURATION", "value": "60s"}]' lora-single-node.json)
curl -fsS -X POST "$BASE/v1/projects/demo/locations/us-central1/persistentResources?persistentResourceId=named-pool" \
  -H 'content-type: application/json' \
  -d '{"displayName": "The named pool", "resourcePools": [{"machineSpec": {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8}, "replicaCount": "1"}]}' >/dev/null
wait_until 300 "the failing job failed" bash -c "curl -fsS '$BASE/v1/$FAILING' | jq -e '.state == \"JOB_STATE_FAILED\"'"
wait_until 120 "the gang running" bash -c "curl -fsS '$BASE/v1/$GANG' | jq -e '.state == \"JOB_STATE_RUNNING\"'"
wait_until 30 "the waiting job has its reason" \
  bash -c "curl -fsS '$BASE/v1/$WAITING' | jq -e '.trainyard.reason.code == \"NEVER_FITS\"'"

# What-if over curl: the scenarios offered, and a bad name refused naming the entry.
check "the server offers the shipped what-if scenarios" \
  "$(curl -fsS "$BASE/trainyard/v1/whatif/scenarios" | jq -c '.scenarios | index("spot-fallback") != null')" true
check "an unknown scenario is a 400 naming it" \
  "$(curl -s -X POST "$BASE/trainyard/v1/whatif/runs" -H 'content-type: application/json' \
     -d '{"scenarios": ["on-demand", "nope"]}' | jq -r '.error.code, .error.details[1].fieldViolations[0].field' | paste -sd' ')" \
  "400 scenarios[1]"

# A second server with tokens, on its own data directory: an editor token creates its job, the
# browser gets a viewer token.
TOKENS="$E2E_DIR/tokens"
EDITOR=$("$TRAINYARD_BIN" tokens create --data-dir "$TOKENS" --project demo --role editor 2>>"$E2E_DIR/tokens.err")
TOKEN_PORT=$(free_port)
TOKEN_BASE="http://127.0.0.1:$TOKEN_PORT"
"$TRAINYARD_BIN" serve --listen "127.0.0.1:$TOKEN_PORT" --data-dir "$TOKENS" --auth=tokens \
  >>"$E2E_DIR/tokens.log" 2>&1 &
TOKEN_PID=$!
trap 'kill -TERM $TOKEN_PID 2>/dev/null; wait $TOKEN_PID 2>/dev/null; cleanup' EXIT
wait_until 60 "the token server ready" curl -fsS "$TOKEN_BASE/readyz"
VIEWER=$("$TRAINYARD_BIN" tokens create --data-dir "$TOKENS" --project demo --role viewer 2>>"$E2E_DIR/tokens.err")
TOKEN_JOB=$(jq '.displayName = "console-token-job"' "$PAYLOADS/lora-single-node.json" |
  curl -fsS -X POST "$TOKEN_BASE/v1/projects/demo/locations/us-central1/customJobs" \
    -H "authorization: Bearer $EDITOR" -H 'content-type: application/json' --data-binary @- |
  jq -r .name)
[ -n "$TOKEN_JOB" ] && pass "a job on the token server" || fail "no job on the token server"

# Last, so that it is still booting when the browser looks: a job admitted to a cold g2-standard-48.
BOOTING=$(create '.displayName = "console-booting"' lora-g2-l4.json)
wait_until 60 "the booting job PENDING with its startup" bash -c \
  "curl -fsS '$BASE/v1/$BOOTING' | jq -e '.state == \"JOB_STATE_PENDING\" and .trainyard.startup.bootNodes == 1'"

if BASE=$BASE TOKEN_BASE=$TOKEN_BASE TOKEN=$VIEWER WAITING=${WAITING##*/} LONG=${LONG##*/} FAILING=${FAILING##*/} \
  TOKEN_JOB=${TOKEN_JOB##*/} GANG=${GANG##*/} BOOTING=${BOOTING##*/} \
  node "$BROWSER_DIR/console_test.js" >"$E2E_DIR/browser.out" 2>&1; then
  cat "$E2E_DIR/browser.out"
  pass "the console in chromium"
else
  cat "$E2E_DIR/browser.out"
  fail "the console in chromium"
fi
finish
