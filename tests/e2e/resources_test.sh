#!/usr/bin/env bash
# Persistent resources and operations over HTTP, driven by curl and by the real gcloud: create
# returns an operation that :wait really waits on, the resource runs jobs warm, patch, reboot,
# delete, the operations collection (filter, pages, nested names, cancel, delete), the errors
# clients see, and the cold-versus-warm start figure the README quotes.
source "$(dirname "$0")/lib.sh"

# 50× virtual time: a 300 s A3 High boot takes 6 s of wall time, and one scheduler tick (200 ms)
# is 10 s of virtual time, small against it.
start_server --sim-speed 50
V1="$BASE/v1/projects/demo/locations/us-central1"

# call METHOD URL [BODY]: the body goes to $E2E_DIR/body, the status code to stdout.
call() {
  local args=(-sS -o "$E2E_DIR/body" -w '%{http_code}' -X "$1" "$2" -H 'content-type: application/json')
  [ $# -ge 3 ] && args+=(--data-binary "$3")
  curl "${args[@]}"
}
body() { jq -r "$1" "$E2E_DIR/body"; }

H100='"machineSpec":{"machineType":"a3-highgpu-8g","acceleratorType":"NVIDIA_H100_80GB","acceleratorCount":8}'
PR_BODY='{"displayName":"warm pool","labels":{"team":"a"},"resourcePools":[{'"$H100"',"replicaCount":"2","diskSpec":{"bootDiskType":"pd-ssd","bootDiskSizeGb":100}}]}'

# --- create and wait -------------------------------------------------------------------------
code=$(call POST "$V1/persistentResources?persistent_resource_id=warm" "$PR_BODY")
check "create answers 200" "$code" 200
op=$(body .name)
[[ "$op" =~ ^projects/[0-9]+/locations/us-central1/persistentResources/warm/operations/[0-9]+$ ]] &&
  pass "the operation is nested and numbered" || fail "operation name: $op"
check "create metadata @type" "$(body '.metadata["@type"]')" \
  type.googleapis.com/google.cloud.aiplatform.v1.CreatePersistentResourceOperationMetadata
check "the operation is not done yet" "$(body '.done // false')" false
op_id=${op##*/}

code=$(call POST "$BASE/v1/$op:wait?timeout=60s")
check ":wait answers 200" "$code" 200
check ":wait returns once done" "$(body .done)" true
check "the response is the resource" "$(body '.response["@type"]')" \
  type.googleapis.com/google.cloud.aiplatform.v1.PersistentResource
check "the resource in the response is RUNNING" "$(body .response.state)" RUNNING

code=$(call GET "$V1/persistentResources/warm")
check "get answers 200" "$code" 200
check "get: RUNNING" "$(body .state)" RUNNING
check "get: replicaCount as an int64 string" "$(body '.resourcePools[0].replicaCount')" 2
check "get: a pool id was given" "$(body '.resourcePools[0].id')" a3-highgpu-8g
[ "$(body .startTime)" != null ] && pass "get: startTime set" || fail "no startTime"
for v in v1beta1 ui; do
  code=$(call GET "$BASE/$v/projects/demo/locations/us-central1/persistentResources/warm")
  check "get under /$v" "$code" 200
done

pool=$(body '.trainyard.placement.pools[0].pool')
code=$(call GET "$BASE/trainyard/v1/nodes?pageSize=1000&pool=$(jq -rn --arg p "$pool" '$p|@uri')")
check "the admin view shows the resource's nodes" \
  "$(body '[.nodes[] | select(.persistentResource != null and (.persistentResource | endswith("/persistentResources/warm")))] | length')" 2

# --- errors ----------------------------------------------------------------------------------
code=$(call POST "$V1/persistentResources?persistentResourceId=warm" "$PR_BODY")
check "a taken id is 409" "$code" 409
check "a taken id is ALREADY_EXISTS" "$(body .error.status)" ALREADY_EXISTS
code=$(call POST "$V1/persistentResources?persistentResourceId=Bad_Id" "$PR_BODY")
check "a bad id is 400" "$code" 400
check "the 400 names persistentResourceId" "$(body '.error.details[] | select(.fieldViolations) | .fieldViolations[0].field')" persistentResourceId
code=$(call POST "$V1/persistentResources?persistentResourceId=ray" \
  '{"resourcePools":[{'"$H100"',"replicaCount":"1"}],"resourceRuntimeSpec":{"raySpec":{}}}')
check "raySpec is 400" "$code" 400
check "the 400 names raySpec" "$(body '.error.details[] | select(.fieldViolations) | .fieldViolations[0].field')" resourceRuntimeSpec.raySpec
code=$(call POST "$V1/persistentResources?persistentResourceId=nopools" '{"displayName":"x"}')
check "no pools is 400" "$code" 400
code=$(call GET "$V1/persistentResources/missing")
check "a missing resource is 404" "$code" 404
code=$(call POST "$V1/customJobs" '{"displayName":"j","jobSpec":{"persistentResourceId":"missing","workerPoolSpecs":[{'"$H100"',"replicaCount":"1","containerSpec":{"imageUri":"x"}}]}}')
check "a job on a missing resource is 400" "$code" 400
check "the 400 names persistentResourceId" "$(body '.error.details[] | select(.fieldViolations) | .fieldViolations[0].field')" jobSpec.persistentResourceId
code=$(call POST "$V1/customJobs" '{"displayName":"j","jobSpec":{"persistentResourceId":"warm","workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":{"imageUri":"x"}}]}}')
check "a job that matches no pool is 400" "$code" 400
[[ "$(body .error.message)" == *"n1-standard-4"*"a3-highgpu-8g"* ]] && pass "the 400 names both sides" || fail "message: $(body .error.message)"

# --- cold against warm -----------------------------------------------------------------------
# The same job: on ephemeral on-demand capacity (boot, then pull), and on the resource twice (its
# nodes are booted; the second run finds its image cached).
job_body() {
  local extra=$1
  echo '{"displayName":"lora","jobSpec":{'"$extra"'"workerPoolSpecs":[{"machineSpec":{"machineType":"a3-highgpu-8g","acceleratorType":"NVIDIA_H100_80GB","acceleratorCount":8'"${2:-}"'},"replicaCount":"1","diskSpec":{"bootDiskType":"pd-ssd","bootDiskSizeGb":100},"containerSpec":{"imageUri":"us-docker.pkg.dev/trainyard/peft/lora:1.0","env":[{"name":"TRAINYARD_SIM_DURATION","value":"60s"}]}}]}}'
}
startup_of() {  # seconds from createTime to startTime of job $1, once it has started
  wait_until 120 "job $1 running" bash -c "curl -fsS '$BASE/v1/$1' | jq -e '.startTime' >/dev/null"
  curl -fsS "$BASE/v1/$1" | jq -r '((.startTime | sub("\\.[0-9]+Z$";"Z") | fromdate) - (.createTime | sub("\\.[0-9]+Z$";"Z") | fromdate))'
}
succeeded() { curl -fsS "$BASE/v1/$1" | jq -e '.state == "JOB_STATE_SUCCEEDED"' >/dev/null; }

cold=$(jq -n "$(job_body '' ',"reservationAffinity":{"reservationAffinityType":"NO_RESERVATION"}')" |
  curl -fsS -X POST "$V1/customJobs" -H 'content-type: application/json' --data-binary @- | jq -r .name)
first=$(jq -n "$(job_body '"persistentResourceId":"warm",')" | curl -fsS -X POST "$V1/customJobs" -H 'content-type: application/json' --data-binary @- | jq -r .name)
cold_s=$(startup_of "$cold")
first_s=$(startup_of "$first")
wait_until 120 "first job on the resource done" succeeded "$first"
warm=$(jq -n "$(job_body '"persistentResourceId":"warm",')" | curl -fsS -X POST "$V1/customJobs" -H 'content-type: application/json' --data-binary @- | jq -r .name)
warm_s=$(startup_of "$warm")
echo "# create→RUNNING: cold ${cold_s}s, on the resource ${first_s}s (image pulled), warm ${warm_s}s (image cached)"
[ "$((warm_s * 5))" -le "$cold_s" ] && pass "warm starts at least 5x faster than cold (${warm_s}s vs ${cold_s}s)" ||
  fail "warm ${warm_s}s is not 5x faster than cold ${cold_s}s"
code=$(call GET "$BASE/v1/$warm")
check "the warm job ran on the resource's reservation" "$(body '.trainyard.placement.pools[0].consumptionModel')" RESERVATION
check "the resource bills, not the job" "$(body '.trainyard.hourlyPriceUsd')" 0

# --- patch -----------------------------------------------------------------------------------
code=$(call PATCH "$V1/persistentResources/warm?updateMask=display_name,labels" '{"displayName":"renamed","labels":{"team":"b"}}')
check "patch answers 200" "$code" 200
check "a rename is done at once" "$(body .done)" true
check "patch metadata @type" "$(body '.metadata["@type"]')" \
  type.googleapis.com/google.cloud.aiplatform.v1.UpdatePersistentResourceOperationMetadata
code=$(call GET "$V1/persistentResources/warm")
check "the new name shows" "$(body .displayName)" renamed
check "the new labels show" "$(body .labels.team)" b
code=$(call PATCH "$V1/persistentResources/warm?updateMask=network" '{"network":"x"}')
check "an unknown mask path is 400" "$code" 400
[[ "$(body .error.message)" == *network* ]] && pass "the 400 names the path" || fail "message: $(body .error.message)"

# --- operations ------------------------------------------------------------------------------
code=$(call GET "$V1/operations?filter=done%3Dtrue")
check "list done operations" "$code" 200
[ "$(body '[.operations[] | select(.name | endswith("'"$op_id"'"))] | length')" = 1 ] &&
  pass "the create is among the done ones" || fail "not listed"
code=$(call GET "$V1/operations?filter=done%3Dfalse")
check "nothing is running" "$(body '.operations // [] | length')" 0
code=$(call GET "$V1/operations?pageSize=1")
token=$(body .nextPageToken)
[ "$token" != null ] && pass "operations come in pages" || fail "no nextPageToken"
code=$(call GET "$V1/operations?pageSize=1&pageToken=$token")
check "the next page answers" "$code" 200
code=$(call GET "$V1/operations?filter=name%3Dx")
check "a filter on anything but done is 400" "$code" 400
code=$(call GET "$V1/persistentResources/warm/operations/$op_id")
check "nested under its resource" "$code" 200
code=$(call GET "$V1/persistentResources/other/operations/$op_id")
check "nested under another resource is 404" "$code" 404
code=$(call GET "$BASE/ui/projects/demo/locations/us-central1/operations/$op_id")
check "flat under /ui" "$code" 200
code=$(call POST "$V1/operations/$op_id:cancel")
check "cancelling a done operation is OK" "$code" 200
code=$(call POST "$V1/operations/$op_id:wait" '{"timeout":"1s"}')
check ":wait with a body timeout" "$code" 200
code=$(call POST "$V1/operations/$op_id:wait?timeout=soon")
check "a bad timeout is 400" "$code" 400

# --- reboot and delete -----------------------------------------------------------------------
code=$(call POST "$V1/persistentResources/warm:reboot" '{}')
check "reboot answers 200" "$code" 200
reboot=$(body .name)
check "reboot metadata @type" "$(body '.metadata["@type"]')" \
  type.googleapis.com/google.cloud.aiplatform.v1.RebootPersistentResourceOperationMetadata
code=$(call POST "$V1/persistentResources/warm:reboot" '{}')
check "a second reboot while REBOOTING is 400" "$code" 400
code=$(call POST "$BASE/v1/$reboot:wait")
check "the reboot finishes" "$(body .done)" true
code=$(call GET "$V1/persistentResources/warm")
check "RUNNING again" "$(body .state)" RUNNING

code=$(call DELETE "$V1/persistentResources/warm")
check "delete answers 200" "$code" 200
delete=$(body .name)
check "delete metadata @type" "$(body '.metadata["@type"]')" \
  type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata
code=$(call POST "$BASE/v1/$delete:wait")
check "the delete finishes" "$(body .done)" true
check "the delete answers Empty" "$(body '.response["@type"]')" type.googleapis.com/google.protobuf.Empty
code=$(call GET "$V1/persistentResources/warm")
check "then it is gone" "$code" 404
code=$(call GET "$BASE/trainyard/v1/projects/demo/costs")
check "its cost outlives it, with its deleteTime" \
  "$(body '[.persistentResources[]? | select((.name | endswith("/warm")) and .deleteTime != null and .totalUsd > 0)] | length')" 1
code=$(call DELETE "$BASE/v1/$delete")
check "an operation can be deleted" "$code" 200
code=$(call GET "$BASE/v1/$delete")
check "then it is gone too" "$code" 404

# --- gcloud ----------------------------------------------------------------------------------
if ! command -v gcloud >/dev/null 2>&1; then
  echo "# gcloud is not installed (it is not in Debian's archive): its part is skipped"
  finish
  exit $?
fi
use_gcloud demo
R=--region=us-central1
JOB_SPEC=machine-type=a3-highgpu-8g,accelerator-type=NVIDIA_H100_80GB,accelerator-count=8,replica-count=1
# The job's default boot disk (pd-ssd, 100 GB) is the pool's: they match.
SPEC=$JOB_SPEC,disk-type=pd-ssd,disk-size=100

if gcloud ai persistent-resources create $R --persistent-resource-id=gpr --display-name=gcloud-pr \
    --resource-pool-spec="$SPEC" >"$E2E_DIR/out" 2>"$E2E_DIR/err"; then
  pass "gcloud persistent-resources create"
else
  fail "gcloud persistent-resources create: $(cat "$E2E_DIR/err")"
fi
gop=$(cat "$E2E_DIR/out" "$E2E_DIR/err" | grep -o 'operations/[0-9]*' | head -1 | cut -d/ -f2)
[ -n "$gop" ] && pass "gcloud printed the operation" || fail "no operation in: $(cat "$E2E_DIR/out" "$E2E_DIR/err")"
wait_until 120 "gcloud resource RUNNING" bash -c \
  "gcloud ai persistent-resources describe gpr $R --format='value(state)' | grep -qx RUNNING"
check "gcloud describe shows RUNNING" \
  "$(gcloud ai persistent-resources describe gpr $R --format='value(state)' 2>/dev/null)" RUNNING
check "gcloud operations describe" \
  "$(gcloud ai operations describe "$gop" $R --format='value(done)' 2>"$E2E_DIR/err")" True
check "gcloud list" "$(gcloud ai persistent-resources list $R --format='value(name)' 2>/dev/null | grep -c '/gpr$')" 1

if gcloud ai custom-jobs create $R --display-name=on-gpr --persistent-resource-id=gpr \
    --worker-pool-spec="$JOB_SPEC,container-image-uri=us-docker.pkg.dev/trainyard/peft/lora:1.0" \
    --args=--epochs=1 --format='value(name)' >"$E2E_DIR/out" 2>"$E2E_DIR/err"; then
  pass "gcloud custom-jobs create --persistent-resource-id"
else
  fail "gcloud custom-jobs create --persistent-resource-id: $(cat "$E2E_DIR/err")"
fi
gjob=$(cat "$E2E_DIR/out")
wait_until 120 "the job on gpr succeeds" succeeded "$gjob"
check "the job on gpr SUCCEEDED" "$(curl -fsS "$BASE/v1/$gjob" | jq -r .state)" JOB_STATE_SUCCEEDED

if gcloud ai persistent-resources reboot gpr $R >"$E2E_DIR/out" 2>"$E2E_DIR/err"; then
  pass "gcloud persistent-resources reboot"
else
  fail "gcloud persistent-resources reboot: $(cat "$E2E_DIR/err")"
fi
wait_until 120 "gcloud resource RUNNING after the reboot" bash -c \
  "gcloud ai persistent-resources describe gpr $R --format='value(state)' | grep -qx RUNNING"
if gcloud ai persistent-resources delete gpr $R >"$E2E_DIR/out" 2>"$E2E_DIR/err"; then
  pass "gcloud persistent-resources delete"
else
  fail "gcloud persistent-resources delete: $(cat "$E2E_DIR/err")"
fi
wait_until 120 "gpr gone" bash -c "! curl -fsS '$V1/persistentResources/gpr' >/dev/null"
gcloud ai persistent-resources describe gpr $R >/dev/null 2>"$E2E_DIR/err" &&
  fail "describe after delete succeeded" || pass "gcloud describe after delete fails"
grep -q "not found" "$E2E_DIR/err" && pass "gcloud prints NOT_FOUND's message" || fail "gcloud said: $(cat "$E2E_DIR/err")"

finish
