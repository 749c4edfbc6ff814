#!/usr/bin/env bash
# customJobs over plain curl, exactly as a user would call it.
source "$(dirname "$0")/lib.sh"

start_server --sim-speed 200 --lease-seconds 2
P="$BASE/v1/projects/demo-project/locations/us-central1"
PAYLOAD="$(dirname "$0")/../../payloads/jobs/lora-single-node.json"

# HTTP status and body of one call: "CODE BODY".
call() {
  local method=$1 url=$2
  shift 2
  # JSON, as every client sends it, unless the call says otherwise.
  local type=(-H 'content-type: application/json')
  [[ "${*,,}" == *content-type:* ]] && type=()
  curl -sS -o "$E2E_DIR/body" -w '%{http_code}' -X "$method" "$url" "${type[@]}" "$@"
}

code=$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/healthz"); check "healthz is 200" "$code" 200

# Create, then poll to SUCCEEDED.
code=$(call POST "$P/customJobs?alt=json" -H 'content-type: application/json' --data-binary @"$PAYLOAD")
check "create is 200" "$code" 200
name=$(jq -r .name "$E2E_DIR/body")
[[ "$name" =~ ^projects/[0-9]+/locations/us-central1/customJobs/[0-9]{19}$ ]] && pass "name has a project number and a 19-digit id" || fail "name: $name"
check "created job is QUEUED" "$(jq -r .state "$E2E_DIR/body")" JOB_STATE_QUEUED
check "replicaCount is an int64 string" "$(jq -r '.jobSpec.workerPoolSpecs[0].replicaCount|type' "$E2E_DIR/body")" string
number=$(echo "$name" | cut -d/ -f2)
id=${name##*/}

job_state() { curl -fsS "$BASE/v1/$name" | jq -r .state; }
wait_until 60 "job succeeds" bash -c "[ \"\$(curl -fsS '$BASE/v1/$name' | jq -r .state)\" = JOB_STATE_SUCCEEDED ]"
check "job reaches SUCCEEDED" "$(job_state)" JOB_STATE_SUCCEEDED
curl -fsS "$BASE/v1/$name" >"$E2E_DIR/job.json"
check "startTime set" "$(jq -r 'has("startTime")' "$E2E_DIR/job.json")" true
check "endTime set" "$(jq -r 'has("endTime")' "$E2E_DIR/job.json")" true

# Project id and project number name the same job; v1beta1 is an alias; $alt is ignored.
code=$(call GET "$BASE/v1beta1/projects/demo-project/locations/us-central1/customJobs/$id?\$alt=json%3Benum-encoding=int")
check "get by project id under v1beta1" "$code" 200
check "same job by id and number" "$(jq -r .name "$E2E_DIR/body")" "$name"

# Missing job: 404 with the Vertex error body.
code=$(call GET "$P/customJobs/1234567890123456789")
check "missing job is 404" "$code" 404
check "error status NOT_FOUND" "$(jq -r .error.status "$E2E_DIR/body")" NOT_FOUND
check "error code is the HTTP status" "$(jq -r .error.code "$E2E_DIR/body")" 404
check "every detail has @type" "$(jq -r '[.error.details[]|has("@type")]|all' "$E2E_DIR/body")" true

# Unknown field: 400 naming the field; nothing created.
before=$(curl -fsS "$P/customJobs" | jq '.customJobs|length')
code=$(call POST "$P/customJobs" --data-binary '{"displayName":"x","jobSpec":{"workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":{"imageUri":"python:3.11"}}],"bogusField":1}}')
check "unknown field is 400" "$code" 400
check "unknown field status" "$(jq -r .error.status "$E2E_DIR/body")" INVALID_ARGUMENT
jq -r .error.message "$E2E_DIR/body" | grep -q bogusField && pass "message names the field" || fail "message: $(cat "$E2E_DIR/body")"
after=$(curl -fsS "$P/customJobs" | jq '.customJobs|length')
check "nothing half-written" "$after" "$before"

# Newer v1 fields: pscInterfaceConfig and lustreMounts are stored and read back by get and list.
psc='{"networkAttachment":"projects/demo-project/regions/us-central1/networkAttachments/na-1","dnsPeeringConfigs":[{"domain":"corp.example.com.","targetProject":"host-project","targetNetwork":"shared-vpc"}]}'
lustre='[{"instanceIp":"10.90.1.4","volumeHandle":"demo-project/us-central1-a/lustre-1","filesystem":"lfs","mountPoint":"scratch"}]'
newer=$(jq --argjson psc "$psc" --argjson lustre "$lustre" \
  '.displayName="psc-lustre" | .jobSpec.pscInterfaceConfig=$psc | .jobSpec.workerPoolSpecs[0].lustreMounts=$lustre
   | .jobSpec.workerPoolSpecs[0].containerSpec.env=[{"name":"TRAINYARD_SIM_DURATION","value":"36000s"}]' "$PAYLOAD")
code=$(call POST "$P/customJobs" --data-binary "$newer"); check "create with pscInterfaceConfig and lustreMounts" "$code" 200
psc_name=$(jq -r .name "$E2E_DIR/body")
curl -fsS "$BASE/v1/$psc_name" >"$E2E_DIR/psc.json"
check "get returns pscInterfaceConfig" "$(jq -cS .jobSpec.pscInterfaceConfig "$E2E_DIR/psc.json")" "$(jq -cS . <<<"$psc")"
check "get returns lustreMounts" "$(jq -cS .jobSpec.workerPoolSpecs[0].lustreMounts "$E2E_DIR/psc.json")" "$(jq -cS . <<<"$lustre")"
code=$(call GET "$P/customJobs?filter=display_name%3D%22psc-lustre%22")
check "list returns lustreMounts" "$(jq -cS '.customJobs[0].jobSpec.workerPoolSpecs[0].lustreMounts' "$E2E_DIR/body")" "$(jq -cS . <<<"$lustre")"
check "list returns pscInterfaceConfig" "$(jq -cS '.customJobs[0].jobSpec.pscInterfaceConfig' "$E2E_DIR/body")" "$(jq -cS . <<<"$psc")"
call POST "$BASE/v1/$psc_name:cancel" --data-binary '{}' >/dev/null  # keep the SUCCEEDED filter below to one job
no_ip=$(jq '.jobSpec.workerPoolSpecs[0].lustreMounts[0].instanceIp=""' <<<"$newer")
code=$(call POST "$P/customJobs" --data-binary "$no_ip"); check "lustre mount without instanceIp is 400" "$code" 400
check "400 names the lustre field" "$(jq -r '.error.details[]|select(."@type"|endswith("BadRequest"))|.fieldViolations[0].field' "$E2E_DIR/body")" "jobSpec.workerPoolSpecs[0].lustreMounts[0].instanceIp"

# v1beta1-only MachineSpec fields: accepted under /v1beta1, unknown names under /v1 (as in Vertex).
a4x=$(jq '.displayName="a4x-multihost" | .jobSpec.workerPoolSpecs[0].machineSpec={"machineType":"a4x-highgpu-4g","acceleratorType":"NVIDIA_GB200","acceleratorCount":4,"multihostGpuNodeCount":2,"minGpuDriverVersion":"570.86.15"}
  | .jobSpec.workerPoolSpecs[0].containerSpec.env=[{"name":"TRAINYARD_SIM_DURATION","value":"36000s"}]' "$PAYLOAD")
B="$BASE/v1beta1/projects/demo-project/locations/us-central1"
code=$(call POST "$B/customJobs" --data-binary "$a4x"); check "v1beta1 accepts multihostGpuNodeCount" "$code" 200
a4x_name=$(jq -r .name "$E2E_DIR/body")
check "v1beta1 echoes multihostGpuNodeCount" "$(jq -r .jobSpec.workerPoolSpecs[0].machineSpec.multihostGpuNodeCount "$E2E_DIR/body")" 2
check "v1beta1 get keeps minGpuDriverVersion" "$(curl -fsS "$BASE/v1beta1/$a4x_name" | jq -r .jobSpec.workerPoolSpecs[0].machineSpec.minGpuDriverVersion)" 570.86.15
check "v1 get leaves v1beta1 fields out" "$(curl -fsS "$BASE/v1/$a4x_name" | jq -c '.jobSpec.workerPoolSpecs[0].machineSpec|keys')" '["acceleratorCount","acceleratorType","machineType"]'
call POST "$BASE/v1/$a4x_name:cancel" --data-binary '{}' >/dev/null  # keep the SUCCEEDED filter below to one job
before=$(curl -fsS "$P/customJobs" | jq '.customJobs|length')
code=$(call POST "$P/customJobs" --data-binary "$a4x"); check "v1 rejects multihostGpuNodeCount" "$code" 400
check "v1 rejection is INVALID_ARGUMENT" "$(jq -r .error.status "$E2E_DIR/body")" INVALID_ARGUMENT
jq -r .error.message "$E2E_DIR/body" | grep -q 'Unknown name "m[a-zA-Z]*" at .custom_job.job_spec.worker_pool_specs\[0\].machine_spec.' \
  && pass "v1 message names the unknown machineSpec field" || fail "message: $(cat "$E2E_DIR/body")"
check "v1 400 names the field path" "$(jq -r '.error.details[]|select(."@type"|endswith("BadRequest"))|.fieldViolations[0].field' "$E2E_DIR/body")" "jobSpec.workerPoolSpecs[0].machineSpec.minGpuDriverVersion"
multihost_only=$(jq 'del(.jobSpec.workerPoolSpecs[0].machineSpec.minGpuDriverVersion)' <<<"$a4x")
code=$(call POST "$P/customJobs" --data-binary "$multihost_only")
check "v1 400 names multihostGpuNodeCount" "$(jq -r '.error.details[]|select(."@type"|endswith("BadRequest"))|.fieldViolations[0].field' "$E2E_DIR/body")" "jobSpec.workerPoolSpecs[0].machineSpec.multihostGpuNodeCount"
check "v1 rejections create nothing" "$(curl -fsS "$P/customJobs" | jq '.customJobs|length')" "$before"

# Oversized and over-deep bodies are refused.
head -c 1100000 /dev/zero | tr '\0' ' ' >"$E2E_DIR/big"
code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Expect:' -H 'content-type: application/json' -X POST "$P/customJobs" --data-binary @"$E2E_DIR/big")
check "body over 1 MiB is 413" "$code" 413
deep=$(printf '%0.s[' $(seq 1 100))
code=$(call POST "$P/customJobs" --data-binary "{\"displayName\":$deep")
check "nesting deeper than 64 is 400" "$code" 400

# Cancel: CANCELLING, then CANCELLED with error code 1; cancelling again is FAILED_PRECONDITION.
long=$(jq '.jobSpec.workerPoolSpecs[0].containerSpec.env=[{"name":"TRAINYARD_SIM_DURATION","value":"36000s"}]' "$PAYLOAD")
code=$(call POST "$P/customJobs" --data-binary "$long"); check "create long job" "$code" 200
long_name=$(jq -r .name "$E2E_DIR/body")
code=$(call POST "$BASE/v1/$long_name:cancel" --data-binary '{}'); check "cancel is 200" "$code" 200
check "cancel returns {}" "$(cat "$E2E_DIR/body")" "{}"
wait_until 30 "job cancelled" bash -c "[ \"\$(curl -fsS '$BASE/v1/$long_name' | jq -r .state)\" = JOB_STATE_CANCELLED ]"
curl -fsS "$BASE/v1/$long_name" >"$E2E_DIR/cancelled.json"
check "cancelled error code 1" "$(jq -r .error.code "$E2E_DIR/cancelled.json")" 1
check "cancelled has endTime" "$(jq -r 'has("endTime")' "$E2E_DIR/cancelled.json")" true
code=$(call POST "$BASE/v1/$long_name:cancel"); check "cancel of terminal job is 400" "$code" 400
check "cancel of terminal job is FAILED_PRECONDITION" "$(jq -r .error.status "$E2E_DIR/body")" FAILED_PRECONDITION

# Failure knob.
failing=$(jq '.jobSpec.workerPoolSpecs[0].containerSpec.env=[{"name":"TRAINYARD_SIM_EXIT_CODE","value":"2"}]' "$PAYLOAD")
code=$(call POST "$P/customJobs" --data-binary "$failing"); check "create failing job" "$code" 200
fail_name=$(jq -r .name "$E2E_DIR/body")
wait_until 60 "job fails" bash -c "[ \"\$(curl -fsS '$BASE/v1/$fail_name' | jq -r .state)\" = JOB_STATE_FAILED ]"
curl -fsS "$BASE/v1/$fail_name" | jq -r .error.message | grep -q "non-zero status of 2" && pass "failure names the exit status" || fail "failure message"

# List: filter, paging, readMask.
code=$(call GET "$P/customJobs?filter=state%3DJOB_STATE_SUCCEEDED&pageSize=1")
check "filtered list is 200" "$code" 200
check "filtered list returns the succeeded job" "$(jq -r '.customJobs[0].name' "$E2E_DIR/body")" "$name"
code=$(call GET "$P/customJobs?pageSize=1"); token=$(jq -r .nextPageToken "$E2E_DIR/body")
[ -n "$token" ] && [ "$token" != null ] && pass "first page has a nextPageToken" || fail "no nextPageToken"
code=$(call GET "$P/customJobs?pageSize=1&pageToken=$token"); check "second page is 200" "$code" 200
code=$(call GET "$P/customJobs?readMask=name,state"); check "readMask list is 200" "$code" 200
check "readMask keeps only the named fields" "$(jq -c '.customJobs[0]|keys' "$E2E_DIR/body")" '["name","state"]'
code=$(call GET "$P/customJobs?filter=state%3D"); check "malformed filter is 400" "$code" 400
code=$(call GET "$BASE/v1/projects/nobody-here/locations/us-central1/customJobs"); check "empty list is 200" "$code" 200
check "empty list is {}" "$(cat "$E2E_DIR/body")" "{}"

# Delete: terminal job → Operation with @type metadata and a numeric id; then 404.
code=$(call DELETE "$BASE/v1/$name"); check "delete is 200" "$code" 200
op=$(jq -r .name "$E2E_DIR/body")
[[ "$op" =~ /operations/[0-9]+$ ]] && pass "operation has a numeric id" || fail "operation name: $op"
check "operation metadata @type" "$(jq -r '.metadata["@type"]' "$E2E_DIR/body")" type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata
check "operation done" "$(jq -r .done "$E2E_DIR/body")" true
code=$(call GET "$BASE/v1/$op"); check "operation readable by its flat name" "$code" 200
code=$(call GET "$BASE/ui/$op"); check "operation readable under /ui" "$code" 200
code=$(call GET "$BASE/v1/$name"); check "deleted job is 404" "$code" 404

# Durability: kill -9 loses nothing acknowledged, and the job in flight finishes after a restart
# (its lease expires and the new process claims it).
slow=$(jq '.jobSpec.workerPoolSpecs[0].containerSpec.env=[{"name":"TRAINYARD_SIM_DURATION","value":"600s"}]' "$PAYLOAD")
code=$(call POST "$P/customJobs" --data-binary "$slow"); check "create job before the crash" "$code" 200
slow_name=$(jq -r .name "$E2E_DIR/body")
wait_until 30 "job running" bash -c "[ \"\$(curl -fsS '$BASE/v1/$slow_name' | jq -r .state)\" = JOB_STATE_RUNNING ]"
kill -9 "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""
start_server --sim-speed 200 --lease-seconds 2
code=$(call GET "$BASE/v1/$long_name"); check "job survives kill -9" "$code" 200
check "state survives kill -9" "$(jq -r .state "$E2E_DIR/body")" JOB_STATE_CANCELLED
wait_until 60 "job in flight finishes after the restart" bash -c "[ \"\$(curl -fsS '$BASE/v1/$slow_name' | jq -r .state)\" = JOB_STATE_SUCCEEDED ]"
check "job in flight finishes after the restart" "$(curl -fsS "$BASE/v1/$slow_name" | jq -r .state)" JOB_STATE_SUCCEEDED

# trainyard migrate on the same data directory: nothing left to apply, and it says so.
stop_server
"$TRAINYARD_BIN" migrate --data-dir "$E2E_DIR/data" 2>>"$E2E_DIR/server.log" | grep -q "migrations applied" \
  && pass "trainyard migrate" || fail "trainyard migrate"

finish
