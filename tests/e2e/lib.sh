# Shared by the end-to-end tests: start the real server on a free port with its own embedded
# PostgreSQL, wait for readiness (polling with a deadline, never a fixed sleep), stop it at exit.
set -euo pipefail

TRAINYARD_BIN=${1:?usage: $0 path/to/trainyard}
E2E_DIR=$(mktemp -d /tmp/trainyard-e2e.XXXXXX)
chmod 755 "$E2E_DIR"  # the embedded PostgreSQL runs as the postgres user
SERVER_PID=""
FAILURES=0
PASSES=0

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID" || true
  fi
  SERVER_PID=""
}

cleanup() {
  stop_server
  # TRAINYARD_E2E_KEEP=1 keeps the server's log and data of a failed run to look at.
  if [ "${TRAINYARD_E2E_KEEP:-}" = 1 ] && [ "$FAILURES" -gt 0 ]; then
    echo "kept $E2E_DIR" >&2
  else
    rm -rf "$E2E_DIR"
  fi
}
trap cleanup EXIT

# start_server [extra serve flags…]: sets PORT and BASE.
# No drain unless the test asks for one (tests/e2e/drain_test.sh): each stop would wait it out.
start_server() {
  PORT=$(free_port)
  BASE="http://127.0.0.1:$PORT"
  local drain=(--drain-period 0)
  [[ " $* " == *" --drain-period "* ]] && drain=()
  "$TRAINYARD_BIN" serve --listen "127.0.0.1:$PORT" --data-dir "$E2E_DIR/data" "${drain[@]}" "$@" \
    >>"$E2E_DIR/server.log" 2>&1 &
  SERVER_PID=$!
  wait_until 60 "server ready" curl -fsS "$BASE/readyz"
}

# wait_until SECONDS WHAT CMD…: retries CMD until it succeeds or the deadline passes.
wait_until() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      echo "timed out waiting for: $what" >&2
      # The server's last words, without the access log of the polling that just timed out.
      grep -v '"event":"http_request"' "$E2E_DIR/server.log" | tail -n 30 >&2 || true
      return 1
    fi
    sleep 0.05
  done
}

PAYLOADS="$(dirname "${BASH_SOURCE[0]}")/../../payloads/jobs"

# create JQ_FILTER PAYLOAD: posts payloads/jobs/PAYLOAD, edited by JQ_FILTER, as a job of project
# demo in us-central1 (after start_server); prints the job's name.
create() {
  jq "$1" "$PAYLOADS/$2" |
    curl -fsS -X POST "$BASE/v1/projects/demo/locations/us-central1/customJobs" \
      -H 'content-type: application/json' --data-binary @- | jq -r .name
}

# use_gcloud PROJECT: the real gcloud, with a throwaway config, no credentials, pointed at this
# server for Vertex and Cloud Logging (after start_server).
use_gcloud() {
  export CLOUDSDK_CONFIG="$E2E_DIR/gcloud" CLOUDSDK_CORE_DISABLE_PROMPTS=1
  gcloud config set auth/disable_credentials true >/dev/null 2>&1
  gcloud config set core/project "$1" >/dev/null 2>&1
  gcloud config set api_endpoint_overrides/aiplatform "$BASE/" >/dev/null 2>&1
  gcloud config set api_endpoint_overrides/logging "$BASE/" >/dev/null 2>&1
  gcloud config set component_manager/disable_update_check true >/dev/null 2>&1
}

# make_test_pki DIR: a throwaway CA and a server certificate for 127.0.0.1 (tests/make_test_pki).
make_test_pki() { bash "$(dirname "${BASH_SOURCE[0]}")/../make_test_pki" "$1"; }

pass() { PASSES=$((PASSES + 1)); echo "ok - $1"; }
fail() { FAILURES=$((FAILURES + 1)); echo "not ok - $1" >&2; }

# check NAME ACTUAL EXPECTED
check() {
  if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected [$3], got [$2]"; fi
}

finish() {
  echo "$PASSES passed, $FAILURES failed"
  [ "$FAILURES" -eq 0 ]
}

# install_npm_suite SUITE DEST: tests/SUITE's package.json, package-lock.json and scripts (with
# tests/node/harness.js, which every suite reports through), installed once per lock file next to the
# binary (outside the clone's tests/) with npm ci; prints DEST's path. Exits 77 (skip, which make
# test counts as a failure) where npm cannot.
install_npm_suite() {
  if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    echo "SKIP: node and npm are not installed; tests/$1 cannot run" >&2
    exit 77
  fi
  local src dest
  src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../$1" && pwd)"
  dest="$(dirname "$TRAINYARD_BIN")/$2"
  mkdir -p "$dest"
  local scripts=("$src"/*.js)
  [ "$1" = node ] || scripts+=("$(dirname "$src")/node/harness.js")
  cp "$src/package.json" "$src/package-lock.json" "${scripts[@]}" "$dest/"
  if ! cmp -s "$src/package-lock.json" "$dest/node_modules/.installed-lock" 2>/dev/null; then
    if ! (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >"$E2E_DIR/npm.log" 2>&1); then
      cat "$E2E_DIR/npm.log" >&2
      echo "SKIP: npm ci could not install tests/$1 (no registry here?)" >&2
      exit 77
    fi
    cp "$src/package-lock.json" "$dest/node_modules/.installed-lock"
  fi
  echo "$dest"
}

# install_node_sdk: the official Node SDK as tests/node's lock pins it; sets NODE_DIR.
install_node_sdk() { NODE_DIR=$(install_npm_suite node node-sdk) || exit $?; }

# install_browser_tests: playwright-core as tests/browser's lock pins it; sets BROWSER_DIR. Debian's
# chromium is the browser (it never downloads one).
install_browser_tests() {
  if [ ! -x /usr/bin/chromium ]; then
    echo "SKIP: /usr/bin/chromium is not installed (scripts/setup test-tools installs it)"
    exit 77
  fi
  BROWSER_DIR=$(install_npm_suite browser browser-tests) || exit $?
}

# Job helpers (after start_server; shell_job posts to $P, the tests' locations URL).
field() { curl -fsS "$BASE/v1/$1" | jq -r "$2"; }  # field NAME JQ
state_is() { [ "$(field "$1" .state)" = "$2" ]; }   # state_is NAME JOB_STATE_…
logs() {  # logs NAME [TASK] → the job's log lines, one per line
  local id=${1##*/}
  curl -fsS "$BASE/trainyard/v1/projects/demo/locations/us-central1/customJobs/$id/logs?pageSize=1000${2:+&task=$2}" |
    jq -r '.entries[].textPayload'
}
# shell_job SCRIPT [JQ]: a one-pool n2-standard-8 job running `sh -c SCRIPT` (with extra jq edits);
# prints its name.
shell_job() {
  jq -n --arg s "$1" '{displayName: "sh", jobSpec: {workerPoolSpecs: [{
      machineSpec: {machineType: "n2-standard-8"}, replicaCount: "1",
      containerSpec: {imageUri: "debian:12", command: ["sh", "-c", $s]}}]}}' | jq "${2:-.}" |
    curl -fsS -X POST "$P/customJobs" -H 'content-type: application/json' --data-binary @- | jq -r .name
}

# rendezvous_job JQ SECONDS: payloads/jobs/local-rendezvous.json (with jq edits), run to SUCCEEDED
# with every replica's "rendezvous ok" line in its log; sets `name` and `id`. env_of TASK VAR then
# reads what that replica printed of its environment.
rendezvous_job() {
  name=$(create "$1" local-rendezvous.json)
  id=${name##*/}
  wait_until "$2" "rendezvous job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
  local task
  for task in workerpool0-0 workerpool1-0 workerpool1-1; do
    wait_until 20 "$task's rendezvous line" bash -c "curl -fsS '$BASE/trainyard/v1/projects/demo/locations/us-central1/customJobs/$id/logs?task=$task' | jq -e '[.entries[].textPayload | select(startswith(\"rendezvous ok\"))] | length == 1'"
  done
}
env_of() { logs "$name" "$1" | sed -n "s/^ENV $2=//p"; }
