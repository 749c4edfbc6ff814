#!/usr/bin/env bash
# The default fleet through curl: a STANDARD, a SPOT and a FLEX_START job each reach SUCCEEDED and
# say where they ran and what they cost; a job that cannot fit says why and where it stands, is
# parked out of the way of the jobs behind it (1,100 of them do not hold back a job that fits), and
# fails with NEVER_FITS once the fleet's neverFitsTimeout has passed.
source "$(dirname "$0")/lib.sh"

# The default fleet, with the never-fits wait set by the test: long for the first part (at 1000x the
# default hour is 3.6 s of wall time), short for the last.
fleet_with_timeout() {
  jq --arg t "$1" '.neverFitsTimeout = $t' "$(dirname "$0")/../../payloads/fleets/default.json" \
    >"$E2E_DIR/fleet.json"
}
fleet_with_timeout 2592000s
# 1000 virtual seconds per wall second: a 6-minute A3 Mega boot takes 0.36s.
start_server --sim-speed 1000 --fleet "$E2E_DIR/fleet.json"
P="$BASE/v1/projects/demo/locations/us-central1"


standard=$(create '.' lora-single-node.json)
spot=$(create '.jobSpec.scheduling.strategy = "SPOT"' lora-single-node.json)
flex=$(create '.jobSpec.scheduling.strategy = "FLEX_START"
  | .jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_SIM_DURATION", "value": "60s"}]' \
  nemo-pretrain-multinode.json)
# 64 A3 Mega nodes in one zone: more than any pool of us-central1 has.
huge=$(create '.jobSpec.workerPoolSpecs[1].replicaCount = "63" | .labels = {}' nemo-pretrain-multinode.json)

for job in "$standard" "$spot" "$flex"; do
  wait_until 60 "$job succeeds" state_is "$job" JOB_STATE_SUCCEEDED
done
check "STANDARD job SUCCEEDED" "$(field "$standard" .state)" JOB_STATE_SUCCEEDED
check "STANDARD job ran on the reservation" \
  "$(field "$standard" '.trainyard.placement.pools[0].consumptionModel + " " + .trainyard.placement.pools[0].reservation')" \
  "RESERVATION r-a3h-uc1b"
check "STANDARD job names its node" \
  "$(field "$standard" '.trainyard.placement.pools[0].nodes[0]')" \
  "us-central1-b-a3-highgpu-8g-RESERVATION-r-a3h-uc1b-0000"
check "SPOT job SUCCEEDED" "$(field "$spot" .state)" JOB_STATE_SUCCEEDED
check "SPOT job ran on spot capacity" "$(field "$spot" '.trainyard.placement.pools[0].consumptionModel')" SPOT
check "FLEX_START job SUCCEEDED" "$(field "$flex" .state)" JOB_STATE_SUCCEEDED
check "FLEX_START job got all 8 nodes from DWS in one zone" \
  "$(field "$flex" '"\([.trainyard.placement.pools[] | .consumptionModel + ":" + (.units|tostring)] | join(",")) \(.trainyard.placement.zone)"')" \
  "FLEX_START:1,FLEX_START:7 us-central1-a"
for job in "$standard" "$spot" "$flex"; do
  cost=$(field "$job" .trainyard.costUsd)
  awk -v c="$cost" 'BEGIN { exit !(c > 0) }' && pass "cost accrued: \$$cost" || fail "cost of $job: $cost"
done
check "reason of an admitted job" "$(field "$standard" .trainyard.reason.code)" ADMITTED

# Its verdict comes at once; its position with the next report of positions (each second), the
# first of its queue once the jobs created before it are admitted (a report may still count them).
wait_until 30 "the huge job gets a verdict and is first in its queue" bash -c "[ \"\$(curl -fsS '$BASE/v1/$huge' | jq -r '.trainyard.queuePosition // empty')\" = 1 ]"
check "huge job stays QUEUED" "$(field "$huge" .state)" JOB_STATE_QUEUED
check "huge job says it never fits" "$(field "$huge" .trainyard.reason.code)" NEVER_FITS
check "huge job names the largest pool" \
  "$(field "$huge" .trainyard.reason.message)" \
  "needs 63 a3-megagpu-8g in one zone; the largest RESERVATION or ON_DEMAND pool in us-central1 has 32 (parked until configuration changes)"
check "huge job has a queue position" "$(field "$huge" .trainyard.queuePosition)" 1

# scheduling.timeout bounds the running time: 100 s of work under a 30 s timeout fails at 30 s.
late=$(create '.jobSpec.scheduling.timeout = "30s"
  | .jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_SIM_DURATION", "value": "100s"}]' \
  lora-single-node.json)
wait_until 60 "$late fails" state_is "$late" JOB_STATE_FAILED
check "a job past its timeout fails with DEADLINE_EXCEEDED" "$(field "$late" .error.code)" 4
ran=$(field "$late" '[.startTime, .endTime] | map(sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) | .[1] - .[0]')
# The runtime sleeps until a step is due, so at 1000x it lands within a few virtual seconds on an
# idle machine; a loaded one (ctest -j2) is late by tens of wall milliseconds, tens of virtual
# seconds. Either way it was stopped by the timeout, long before its 100 s of work.
awk -v r="$ran" 'BEGIN { exit !(r >= 30 && r < 90) }' && pass "it ran its 30 s timeout (${ran}s)" ||
  fail "ran ${ran}s, expected 30-90 (the timeout, not the 100 s of work)"

# Vertex's most common machine type runs on the default fleet: CPU-only types are elastic capacity
# in every zone, bounded by the CPUS quota rather than a node count.
cpu=$(create '.jobSpec.workerPoolSpecs[0].machineSpec = {"machineType": "n1-standard-4"}
  | .jobSpec.workerPoolSpecs += [.jobSpec.workerPoolSpecs[0] | .replicaCount = "2"]' lora-single-node.json)
wait_until 30 "the n1-standard-4 job succeeds" state_is "$cpu" JOB_STATE_SUCCEEDED
pass "a chief + 2 workers n1-standard-4 job SUCCEEDED on the default fleet"
check "it ran on elastic on-demand CPU capacity" \
  "$(field "$cpu" '[.trainyard.placement.pools[] | (.pool | sub("^us-central1-[a-z]/"; "")) + " " + .machineType + " " + (.nodes | length | tostring)] | join(", ")')" \
  "elastic-cpu/ON_DEMAND n1-standard-4 1, elastic-cpu/ON_DEMAND n1-standard-4 2"
check "at the n1-standard-4 list price (3 nodes x 4 vCPUs x \$0.0475)" \
  "$(field "$cpu" '.trainyard.hourlyPriceUsd')" 0.57
check "the admin view shows the elastic pools" \
  "$(curl -fsS "$BASE/trainyard/v1/fleet" | jq '[.regions[].zones[].pools[] | select(.elastic)] | length')" 6

# Every accelerator type of the catalog runs on the default fleet (a small pool of each): an
# A100 fine-tune, a TPU v6e single-host job, an N1 with an attached T4 and a legacy TPU v3-8.
a2=$(create '.jobSpec.workerPoolSpecs[0].machineSpec = {"machineType": "a2-highgpu-1g",
    "acceleratorType": "NVIDIA_TESLA_A100", "acceleratorCount": 1}' lora-single-node.json)
v6e=$(create '.jobSpec.workerPoolSpecs[0].machineSpec = {"machineType": "ct6e-standard-4t", "tpuTopology": "2x2"}' \
  lora-single-node.json)
t4=$(create '.jobSpec.workerPoolSpecs[0].machineSpec = {"machineType": "n1-standard-8",
    "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1}' lora-single-node.json)
v3=$(create '.jobSpec.workerPoolSpecs[0].machineSpec = {"machineType": "cloud-tpu",
    "acceleratorType": "TPU_V3", "acceleratorCount": 8}' lora-single-node.json)
for j in "$a2" "$v6e" "$t4" "$v3"; do wait_until 30 "$j succeeds" state_is "$j" JOB_STATE_SUCCEEDED; done
check "the TPU v3-8 job ran on a v3 host at its list price" \
  "$(field "$v3" '.trainyard.placement.pools[0].pool | sub("^us-central1-[a-z]/"; "")')+$(field "$v3" .trainyard.hourlyPriceUsd)" \
  "cloud-tpu+TPU_V3/ON_DEMAND+8"
check "the N1 + T4 job ran on the T4 pool, priced as its shape (8 vCPUs + 1 T4)" \
  "$(field "$t4" '.trainyard.placement.pools[0] | (.pool | sub("^us-central1-[a-z]/"; "")) + " " + .machineType')+$(field "$t4" .trainyard.hourlyPriceUsd)" \
  "n1+NVIDIA_TESLA_T4/ON_DEMAND n1-standard-8+0.73"
check "the A100 job ran on an a2-highgpu-1g pool" "$(field "$a2" '.trainyard.placement.pools[0].machineType')" a2-highgpu-1g
check "the v6e job ran on a 2x2 slice" "$(field "$v6e" '.trainyard.placement.pools[0].pool | endswith("/ct6e-standard-4t/ON_DEMAND/2x2")')" true

# Head of line (issue 17): team-a queues 1,100 gangs of 64 A3 Mega nodes in one zone, which no pool
# of this fleet has, then one LoRA job that fits at once. The parked jobs do not count against the
# lookback of 1,000: the LoRA job runs.
TA="$BASE/v1/projects/team-a/locations/us-central1/customJobs"
jq -c '.jobSpec.workerPoolSpecs[1].replicaCount = "63" | .labels = {}' \
  "$PAYLOADS/nemo-pretrain-multinode.json" >"$E2E_DIR/huge.json"
seq 1100 | xargs -P 8 -I{} curl -fsS -o /dev/null -X POST "$TA" -H 'content-type: application/json' \
  --data-binary @"$E2E_DIR/huge.json" && pass "1,100 huge gangs created" || fail "creating the huge gangs"
lora=$(jq . "$PAYLOADS/lora-single-node.json" |
  curl -fsS -X POST "$TA" -H 'content-type: application/json' --data-binary @- | jq -r .name)
wait_until 30 "the LoRA job behind 1,100 parked jobs succeeds" state_is "$lora" JOB_STATE_SUCCEEDED
pass "the LoRA job behind 1,100 parked jobs SUCCEEDED"
newest=$(curl -fsS "$TA?pageSize=10" | jq -r '[.customJobs[] | select(.jobSpec.workerPoolSpecs | length == 2)] | first | .name')
wait_until 30 "the newest huge gang has its verdict and its position" \
  bash -c "[ \"\$(curl -fsS '$BASE/v1/$newest' | jq -r '\"\\(.trainyard.reason.code) \\(.trainyard.queuePosition)\"')\" = 'NEVER_FITS 1100' ]"
check "a huge gang says it never fits (team-a may not use demo's reservation)" \
  "$(field "$newest" .trainyard.reason.message)" \
  "needs 63 a3-megagpu-8g in one zone; the largest RESERVATION or ON_DEMAND pool in us-central1 has 8 (parked until configuration changes)"
check "the newest huge gang keeps its true place, last of 1,100 in team-a's queue" \
  "$(field "$newest" .trainyard.queuePosition)" 1100
check "the huge gang is still QUEUED" "$(field "$newest" .state)" JOB_STATE_QUEUED

# A restart on a fleet that waits 120 s (0.12 s here) for a change: the huge job fails NEVER_FITS.
stop_server
fleet_with_timeout 120s
start_server --sim-speed 1000 --fleet "$E2E_DIR/fleet.json"
P="$BASE/v1/projects/demo/locations/us-central1"
wait_until 30 "the huge job fails" state_is "$huge" JOB_STATE_FAILED
check "it fails RESOURCE_EXHAUSTED" "$(field "$huge" .error.code)" 8
check "the error says NEVER_FITS and why" "$(field "$huge" .error.message)" \
  "NEVER_FITS: needs 63 a3-megagpu-8g in one zone; the largest RESERVATION or ON_DEMAND pool in us-central1 has 32; the fleet did not change within its neverFitsTimeout (2m), so the job fails"

# gcloud and the SDKs ignore the trainyard object; a client that echoes it back is not refused.
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$P/customJobs" -H 'content-type: application/json' \
  --data-binary "$(curl -fsS "$BASE/v1/$standard" | jq 'del(.name)')")
check "a job echoed back with its trainyard object is accepted" "$code" 200

finish
