#!/usr/bin/env bash
# Every job in payloads/jobs runs to SUCCEEDED on the default fleet over curl: LoRA on A3 High and
# on G2 (L4), NeMo-style pre-training on 8 A3 Mega nodes (chief + workers) under STANDARD, SPOT and
# FLEX_START, MaxText on a TPU v5e 4x4 slice and on v5p. The local-process payload runs in
# local_runtime_test.sh. Each job's log holds its simulated training output.
source "$(dirname "$0")/lib.sh"

start_server --sim-speed 5000

declare -A jobs
for payload in "$PAYLOADS"/*.json; do
  file=$(basename "$payload")
  case "$file" in local-*) continue ;; esac
  jobs[$file]=$(create '.' "$file")
done
for strategy in SPOT FLEX_START; do
  jobs[nemo-pretrain-multinode.json/$strategy]=$(create ".jobSpec.scheduling.strategy = \"$strategy\"" \
    nemo-pretrain-multinode.json)
done

for key in $(printf '%s\n' "${!jobs[@]}" | sort); do
  name=${jobs[$key]}
  if wait_until 120 "$key SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED; then
    pass "$key: SUCCEEDED on $(field "$name" '[.trainyard.placement.pools[] | "\(.units) \(.machineType) \(.consumptionModel)"] | join(" + ")')"
  else
    fail "$key: $(field "$name" '.state + " " + (.trainyard.reason.message // "") + " " + (.error.message // "")')"
    continue
  fi
  id=${name##*/}
  lines=$(curl -fsS "$BASE/trainyard/v1/projects/demo/locations/us-central1/customJobs/$id/logs?task=workerpool0-0&pageSize=1000" |
    jq -r '.entries[].textPayload')
  grep -q '^training finished$' <<<"$lines" && pass "$key: its log ends with the training output" \
    || fail "$key: log: $lines"
done

nemo=${jobs[nemo-pretrain-multinode.json]}
check "NeMo: 8 nodes, chief + 7 workers" "$(field "$nemo" '[.trainyard.replicas[].taskName] | length')" 8
check "MaxText v5e 4x4: one replica per host of the slice" \
  "$(field "${jobs[maxtext-v5e-4x4.json]}" '[.trainyard.replicas[].taskName] | join(",")')" \
  "workerpool0-0,workerpool0-1,workerpool0-2,workerpool0-3"
check "FLEX_START ran on DWS capacity" \
  "$(field "${jobs[nemo-pretrain-multinode.json/FLEX_START]}" '.trainyard.placement.pools[0].consumptionModel')" FLEX_START

finish
