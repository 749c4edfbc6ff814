#!/usr/bin/env bash
# The local-process runtime end to end (`serve --runtime=local`): every replica of a 2-pool,
# 3-replica job gets its distributed environment (checked from the job's own logs) and the
# replicas really rendezvous over MASTER_ADDR:MASTER_PORT; a worker that exits 1 is restarted in
# place and succeeds; a job that always fails exhausts 5 restarts x 3 retries; cancel and timeout
# end the processes; a kill -9 of the server leaves replicas running, the restarted server adopts
# them and never runs one twice.
source "$(dirname "$0")/lib.sh"

serve() {
  start_server --runtime local --lease-seconds 2 --stop-grace 2
  P="$BASE/v1/projects/demo/locations/us-central1"
}
serve
REPLICAS="$E2E_DIR/data/replicas/jobs"

group_gone() { ! kill -0 -- "-$1" 2>/dev/null; }
pgid_of() { cut -d: -f1 "$REPLICAS/${1##*/}/attempt-0/workerpool0-0/pid"; }

# --- the distributed environment of a 2-pool, 3-replica job, and a real rendezvous ---
rendezvous_job '.' 60
spec=$(env_of workerpool1-1 CLUSTER_SPEC)
check "CLUSTER_SPEC lists both pools" "$(jq -c '.cluster | map_values(length)' <<<"$spec")" '{"workerpool0":1,"workerpool1":2}'
check "CLUSTER_SPEC task of workerpool1-1" "$(jq -c .task <<<"$spec")" '{"type":"workerpool1","index":1,"trial":""}'
check "CLUSTER_SPEC addresses are on loopback" \
  "$(jq -r '[.cluster[][] | startswith("127.0.0.1:")] | all' <<<"$spec")" true
check "CLUSTER_SPEC ports are distinct" "$(jq '[.cluster[][]] | (unique | length) == length' <<<"$spec")" true
check "CLUSTER_SPEC carries the job spec" "$(jq -r '.job.workerPoolSpecs | length' <<<"$spec")" 2
check "TF_CONFIG: chief and workers" "$(env_of workerpool1-0 TF_CONFIG | jq -c '[(.cluster | keys), .task.type, .task.index]')" '[["chief","worker"],"worker",0]'
check "TF_CONFIG of the chief" "$(env_of workerpool0-0 TF_CONFIG | jq -r .task.type)" chief
check "CLOUD_ML_JOB_ID" "$(env_of workerpool0-0 CLOUD_ML_JOB_ID)" "$id"
project_number=$(cut -d/ -f2 <<<"$name")
check "CLOUD_ML_PROJECT_ID is the project number" "$(env_of workerpool1-0 CLOUD_ML_PROJECT_ID)" "$project_number"
check "AIP_MODEL_DIR" "$(env_of workerpool0-0 AIP_MODEL_DIR)" "gs://trainyard-demo/runs/rendezvous/model/"
check "AIP_CHECKPOINT_DIR" "$(env_of workerpool1-0 AIP_CHECKPOINT_DIR)" "gs://trainyard-demo/runs/rendezvous/checkpoints/"
check "AIP_TENSORBOARD_LOG_DIR" "$(env_of workerpool1-1 AIP_TENSORBOARD_LOG_DIR)" "gs://trainyard-demo/runs/rendezvous/logs/"
check "MASTER_ADDR" "$(env_of workerpool1-1 MASTER_ADDR)" 127.0.0.1
check "MASTER_PORT is the same everywhere" \
  "$(for t in workerpool0-0 workerpool1-0 workerpool1-1; do env_of $t MASTER_PORT; done | sort -u | wc -l)" 1
check "WORLD_SIZE" "$(env_of workerpool1-0 WORLD_SIZE)" 3
check "RANK per replica" "$(for t in workerpool0-0 workerpool1-0 workerpool1-1; do env_of $t RANK; done | tr '\n' ' ')" "0 1 2 "
check "NODE_RANK = RANK" "$(env_of workerpool1-1 NODE_RANK)" 2
check "LOCAL_WORLD_SIZE on a CPU machine" "$(env_of workerpool0-0 LOCAL_WORLD_SIZE)" 1
check "the chief saw both peers" "$(logs "$name" workerpool0-0 | grep -c 'rendezvous ok rank=0 world=3 peers=\[1, 2\]')" 1
# The workers may still be on their way out when the primary's exit 0 ends the job.
check "per-replica state in the trainyard object" \
  "$(field "$name" '[.trainyard.replicas[].taskName] | join(",")')" "workerpool0-0,workerpool1-0,workerpool1-1"
check "the primary exited 0" "$(field "$name" '.trainyard.replicas[0] | .state + ":" + (.exitCode|tostring)')" "EXITED:0"

# --- Multislice: payloads/jobs/local-maxtext-multislice.json, two v5e 4x4 slices, a process per
# host; the primary's log holds its MEGASCALE variables ---
name=$(create '.' local-maxtext-multislice.json)
wait_until 60 "multislice job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
tasks=$(field "$name" '[.trainyard.replicas[].taskName] | join(",")')
check "a process per host of both slices" "$tasks" \
  "workerpool0-0,workerpool0-1,workerpool0-2,workerpool0-3,workerpool1-0,workerpool1-1,workerpool1-2,workerpool1-3"
# The job ends when the primary exits 0, and the other hosts may be stopped before they print:
# the primary's own lines are certain (every host's variables are in replica_plan_test).
wait_until 20 "the primary's maxtext line" bash -c "curl -fsS \"$BASE/trainyard/v1/projects/demo/locations/us-central1/customJobs/${name##*/}/logs?task=workerpool0-0\" | jq -e '[.entries[].textPayload | select(startswith(\"maxtext: slice 0 of 2\"))] | length == 1' >/dev/null"
check "MEGASCALE_NUM_SLICES" "$(env_of workerpool0-0 MEGASCALE_NUM_SLICES)" 2
check "MEGASCALE_SLICE_ID of slice 0" "$(env_of workerpool0-0 MEGASCALE_SLICE_ID)" 0
check "the coordinator is slice 0's first host, port 8081" \
  "$(env_of workerpool0-0 MEGASCALE_COORDINATOR_ADDRESS)" "127.0.0.1:8081"
check "MEGASCALE_PORT" "$(env_of workerpool0-0 MEGASCALE_PORT)" 8081
check "TPU_WORKER_HOSTNAMES lists the slice's own 4 hosts" \
  "$(env_of workerpool0-0 TPU_WORKER_HOSTNAMES | tr ',' '\n' | wc -l)" 4
check "both slices admitted together on v5e capacity" \
  "$(field "$name" '[.trainyard.placement.pools[] | "\(.units) \(.machineType)"] | join(" + ")')" \
  "1 ct5lp-hightpu-4t + 1 ct5lp-hightpu-4t"

# --- a worker that exits 1, then succeeds when restarted in place (its working dir survives) ---
name=$(shell_job 'if [ -f tried ]; then echo second try; exit 0; fi; touch tried; echo first try; exit 1')
wait_until 30 "flaky job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
check "restarted once in place" "$(field "$name" '.trainyard.replicas[0].restarts')" 1
check "both runs in the log" "$(logs "$name" workerpool0-0 | tr '\n' ' ')" "first try second try "

# --- a job that always fails: 5 restarts in place, then 3 whole-job retries, then FAILED ---
name=$(shell_job 'echo failing; exit 3')
wait_until 120 "failing job FAILED" state_is "$name" JOB_STATE_FAILED
check "error names the replica and the code" "$(field "$name" .error.message)" \
  "The replica workerpool0-0 exited with a non-zero status of 3."
check "three retries" "$(field "$name" .trainyard.attempt)" 3
check "24 runs in all (6 per attempt x 4 attempts)" "$(logs "$name" workerpool0-0 | grep -c '^failing$')" 24

# --- disableRetries: the first failure is final ---
name=$(shell_job 'exit 2' '.jobSpec.scheduling = {disableRetries: true}')
wait_until 30 "disableRetries job FAILED" state_is "$name" JOB_STATE_FAILED
check "no restart with disableRetries" "$(field "$name" '.trainyard.replicas[0].restarts // 0')" 0

# --- cancel ends the process group ---
name=$(shell_job 'echo up; exec sleep 300')
wait_until 30 "sleeper RUNNING" state_is "$name" JOB_STATE_RUNNING
pgid=$(pgid_of "$name")
kill -0 -- "-$pgid" && pass "the replica runs as its own process group" || fail "no group $pgid"
curl -fsS -X POST "$BASE/v1/$name:cancel" -H 'content-type: application/json' -d '{}' >/dev/null
wait_until 30 "sleeper CANCELLED" state_is "$name" JOB_STATE_CANCELLED
wait_until 10 "cancelled group gone" group_gone "$pgid"
pass "cancel ended the processes"

# --- timeout ends the process group: DEADLINE_EXCEEDED ---
name=$(shell_job 'exec sleep 300' '.jobSpec.scheduling = {timeout: "2s"}')
wait_until 30 "timed-out job FAILED" state_is "$name" JOB_STATE_FAILED
check "timeout is DEADLINE_EXCEEDED (4)" "$(field "$name" .error.code)" 4
pgid=$(pgid_of "$name")
wait_until 10 "timed-out group gone" group_gone "$pgid"
pass "timeout ended the processes"

# --- kill -9 of the server while a replica runs: adopted, never run twice ---
name=$(shell_job 'echo run >> runs; while [ ! -f go ]; do sleep 0.05; done; echo finished')
wait_until 30 "waiter RUNNING" state_is "$name" JOB_STATE_RUNNING
dir="$REPLICAS/${name##*/}/attempt-0/workerpool0-0/work"  # the replica's working directory
pgid=$(pgid_of "$name")
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
kill -0 -- "-$pgid" && pass "the replica outlives a killed server" || fail "replica died with the server"
serve
touch "$dir/go"
wait_until 60 "adopted job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
check "the replica ran once" "$(wc -l <"$dir/runs" | tr -d ' ')" 1
wait_until 20 "its last line in the log" bash -c "curl -fsS '$BASE/trainyard/v1/projects/demo/locations/us-central1/customJobs/${name##*/}/logs?task=workerpool0-0' | jq -e '[.entries[].textPayload] | index(\"finished\") != null'"
pass "output after the restart reached the log"

# --- a stopped server ends its replicas ---
name=$(shell_job 'exec sleep 300')
wait_until 30 "last sleeper RUNNING" state_is "$name" JOB_STATE_RUNNING
pgid=$(pgid_of "$name")
stop_server
# The server sends the group SIGTERM as it stops; the sandbox's processes end a moment later.
wait_until 10 "the stopped server's replica group gone" group_gone "$pgid" &&
  pass "a stopped server ended its replicas" || fail "group $pgid survived the stop"

finish
