#!/usr/bin/env bash
# The real gcloud CLI pointed at our server: create (flags and --config), describe, list across
# pages, cancel, and a describe of a missing job.
source "$(dirname "$0")/lib.sh"

if ! command -v gcloud >/dev/null 2>&1; then
  echo "SKIP: gcloud is not installed (it is not in Debian's archive); nothing to drive"
  exit 77
fi

start_server --sim-speed 200
use_gcloud demo-project
R=--region=us-central1

# create with --worker-pool-spec
if gcloud ai custom-jobs create $R --display-name=gcloud-flags \
    --worker-pool-spec=machine-type=a3-highgpu-8g,accelerator-type=NVIDIA_H100_80GB,accelerator-count=8,replica-count=1,container-image-uri=us-docker.pkg.dev/trainyard/peft/lora:1.0 \
    --format='value(name)' >"$E2E_DIR/out" 2>"$E2E_DIR/err"; then
  pass "create with --worker-pool-spec"
else
  fail "create with --worker-pool-spec: $(cat "$E2E_DIR/err")"
fi
name=$(cat "$E2E_DIR/out")
[[ "$name" =~ ^projects/[0-9]+/locations/us-central1/customJobs/[0-9]{19}$ ]] && pass "gcloud printed the job name" || fail "name: $name"

# create with --config (a CustomJobSpec in YAML), with a skipped pool kept in place
cat >"$E2E_DIR/job.yaml" <<'YAML'
workerPoolSpecs:
  - machineSpec:
      machineType: n1-standard-8
    replicaCount: 1
    containerSpec:
      imageUri: us-docker.pkg.dev/trainyard/nemo/pretrain:24.07
      env:
        - name: TRAINYARD_SIM_DURATION
          value: "36000s"
  - machineSpec:
      machineType: a3-megagpu-8g
      acceleratorType: NVIDIA_H100_MEGA_80GB
      acceleratorCount: 8
    replicaCount: 2
    containerSpec:
      imageUri: us-docker.pkg.dev/trainyard/nemo/pretrain:24.07
scheduling:
  timeout: 86400s
YAML
if gcloud ai custom-jobs create $R --display-name=gcloud-config --config="$E2E_DIR/job.yaml" \
    --format='value(name)' >"$E2E_DIR/out" 2>"$E2E_DIR/err"; then
  pass "create with --config"
else
  fail "create with --config: $(cat "$E2E_DIR/err")"
fi
config_name=$(cat "$E2E_DIR/out")

# describe: state progresses to SUCCEEDED for the short job
wait_until 60 "gcloud describe shows SUCCEEDED" bash -c \
  "gcloud ai custom-jobs describe '$name' --format='value(state)' 2>/dev/null | grep -qx JOB_STATE_SUCCEEDED"
check "describe shows SUCCEEDED" "$(gcloud ai custom-jobs describe "$name" --format='value(state)' 2>/dev/null)" JOB_STATE_SUCCEEDED
id=${name##*/}
check "describe by bare id and region" "$(gcloud ai custom-jobs describe "$id" $R --format='value(displayName)' 2>/dev/null)" gcloud-flags
check "config job keeps its pools" "$(gcloud ai custom-jobs describe "$config_name" --format='value(jobSpec.workerPoolSpecs[1].replicaCount)' 2>/dev/null)" 2

# bad input from a YAML config: gcloud forwards unknown keys; the server must refuse them
printf 'workerPoolSpecs:\n  - machineSpec:\n      machine_typo: n1-standard-4\n    replicaCount: 1\n    containerSpec:\n      imageUri: python:3.11\n' >"$E2E_DIR/bad.yaml"
if gcloud ai custom-jobs create $R --display-name=bad --config="$E2E_DIR/bad.yaml" >/dev/null 2>"$E2E_DIR/err"; then
  fail "unknown YAML key accepted"
else
  grep -q "INVALID_ARGUMENT" "$E2E_DIR/err" && grep -q "machine_typo" "$E2E_DIR/err" \
    && pass "unknown YAML key is INVALID_ARGUMENT naming it" || fail "bad config error: $(cat "$E2E_DIR/err")"
fi

# list across pages: gcloud always asks for pageSize=100 and follows nextPageToken
P="$BASE/v1/projects/demo-project/locations/us-central1/customJobs"
body=$(jq -c . "$(dirname "$0")/../../payloads/jobs/lora-single-node.json")
for i in $(seq 1 105); do
  curl -fsS -o /dev/null -X POST "$P" -H 'content-type: application/json' --data-binary "$body" || fail "bulk create $i"
done
count=$(gcloud ai custom-jobs list $R --format='value(name)' 2>/dev/null | wc -l)
check "list follows nextPageToken across pages" "$count" 107
limited=$(gcloud ai custom-jobs list $R --limit=3 --format='value(name)' 2>/dev/null | wc -l)
check "list --limit" "$limited" 3

# cancel
if gcloud ai custom-jobs cancel "$config_name" >/dev/null 2>"$E2E_DIR/err"; then pass "cancel"; else fail "cancel: $(cat "$E2E_DIR/err")"; fi
wait_until 30 "cancelled" bash -c \
  "gcloud ai custom-jobs describe '$config_name' --format='value(state)' 2>/dev/null | grep -qx JOB_STATE_CANCELLED"
check "cancel ends CANCELLED" "$(gcloud ai custom-jobs describe "$config_name" --format='value(state)' 2>/dev/null)" JOB_STATE_CANCELLED
check "cancelled error code" "$(gcloud ai custom-jobs describe "$config_name" --format='value(error.code)' 2>/dev/null)" 1

# describe of a missing job: exit 1 and NOT_FOUND
set +e
gcloud ai custom-jobs describe 1234567890123456789 $R >/dev/null 2>"$E2E_DIR/err"
rc=$?
set -e
check "describe missing exits 1" "$rc" 1
grep -q "NOT_FOUND" "$E2E_DIR/err" && pass "describe missing says NOT_FOUND" || fail "missing: $(cat "$E2E_DIR/err")"

# gcloud beta uses /v1beta1
check "gcloud beta describe" "$(gcloud beta ai custom-jobs describe "$name" --format='value(state)' 2>/dev/null)" JOB_STATE_SUCCEEDED

finish
