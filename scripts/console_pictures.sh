#!/usr/bin/env bash
# `make console-pictures`: the screenshots of the web console (README.md, docs/console.md) from a
# real run. Starts the server on its own data directory, makes a few jobs with curl (one that
# cannot fit, gangs that run, one that finishes), and photographs the console in Debian's chromium
# (tests/browser/pictures.js).
# Usage: scripts/console_pictures.sh BUILD_DIR OUT_DIR
set -euo pipefail
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR OUT_DIR}" && pwd)
OUT=$(mkdir -p "${2:?usage: $0 BUILD_DIR OUT_DIR}" && cd "$2" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
set -- "$BUILD_DIR/trainyard"
source "$ROOT/tests/e2e/lib.sh"
install_browser_tests

start_server --sim-speed 200
WAITING=$(create '.displayName = "llama3-70b-full" | .jobSpec.workerPoolSpecs += [.jobSpec.workerPoolSpecs[0] | .replicaCount = "63"]' lora-single-node.json)
create '.displayName = "llama3-8b-lora-short" | .jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_SIM_DURATION", "value": "600s"}]' lora-single-node.json >/dev/null
RUNNING=$(create '.displayName = "nemo-pretrain" | .labels = {"team": "nlp"}' nemo-pretrain-multinode.json)
create '.displayName = "maxtext-v5e"' maxtext-v5e-4x4.json >/dev/null
create '.displayName = "llama3-8b-lora"' lora-single-node.json >/dev/null
wait_until 120 "the nemo job running" bash -c "curl -fsS '$BASE/v1/$RUNNING' | jq -e '.state == \"JOB_STATE_RUNNING\"'"
BASE=$BASE OUT=$OUT WAITING=${WAITING##*/} RUNNING=${RUNNING##*/} node "$BROWSER_DIR/pictures.js"
echo "console pictures in $OUT"
