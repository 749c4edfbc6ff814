#!/usr/bin/env bash
# The Slurm runtime end to end (`serve --runtime=slurm`) on a throwaway two-node Slurm cluster
# with slurmrestd and JWT auth (tests/e2e/slurm_cluster.sh): a job to SUCCEEDED with its output in
# Trainyard's log; a 2-pool, 3-task job whose tasks get their own distributed environment and
# really rendezvous, on one partition and as a heterogeneous job over two; a worker restarted in place inside its allocation; a failing command with
# its exit code; cancel and timeout reaching Slurm; slurmrestd stopped and started again mid-job;
# a kill -9 of the server that never submits a job twice. Skips (77), saying why, where slurmctld
# cannot start (no packages: `scripts/setup slurm`; not root).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_cluster.sh"
trap 'slurm_cluster_stop; cleanup' EXIT

if ! slurm_cluster_start; then
  echo "SKIP: no Slurm cluster here: $SLURM_SKIP_REASON"
  exit 77
fi

# Whom the jobs run as is never a default (it used to fall back to $USER, then root).
if timeout 30 "$TRAINYARD_BIN" serve --listen "127.0.0.1:$(free_port)" --runtime slurm \
  --slurm-url "$SLURM_REST_URL" --slurm-token-file "$SLURM_CLUSTER_DIR/token" \
  --data-dir "$E2E_DIR/nouser" >"$E2E_DIR/nouser.out" 2>&1; then
  fail "--runtime slurm without --slurm-user started"
else
  grep -q -- "needs --slurm-user" "$E2E_DIR/nouser.out" && pass "--runtime slurm needs --slurm-user" ||
    fail "no reason: $(tail -3 "$E2E_DIR/nouser.out")"
fi

serve() {
  # One node: replicas share it (8 task slots), so they listen on distinct ports.
  start_server --runtime slurm --slurm-url "$SLURM_REST_URL" \
    --slurm-token-file "$SLURM_CLUSTER_DIR/token" --slurm-user root \
    --slurm-shared-dir "$E2E_DIR/shared" --slurm-tasks-per-node 8 --lease-seconds 2
  P="$BASE/v1/projects/demo/locations/us-central1"
}
serve

# Slurm's own view of a Trainyard job's attempt: "ID STATE" of the batch job named for it.
slurm_job() {
  squeue -h -t all -n "trainyard-${1##*/}-a${2:-0}" -o '%i %T' 2>/dev/null | head -n1
}
slurm_state_is() { [ "$(slurm_job "$1" | cut -d' ' -f2)" = "$2" ]; }
log_has() { logs "$1" "${3:-}" | grep -qxF -- "$2"; }

# --- a one-task job: submitted to Slurm, runs there, its output reaches Trainyard's log ---
name=$(shell_job 'echo "hello from $(hostname) as task $SLURM_PROCID of $SLURM_NTASKS"')
wait_until 60 "hello job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
wait_until 20 "its line in the log" log_has "$name" "hello from $(hostname) as task 0 of 1"
pass "a job ran on the Slurm node and its output is the job's log"
check "one Slurm job for the attempt, named for the Trainyard job" "$(slurm_job "$name" | wc -l)" 1

# --- 2 pools, 3 tasks: each task its own replica's environment; a real rendezvous ---
rendezvous_job '.labels.runtime = "slurm"' 90
node=$(hostname)
spec=$(env_of workerpool1-1 CLUSTER_SPEC)
check "CLUSTER_SPEC lists both pools" "$(jq -c '.cluster | map_values(length)' <<<"$spec")" '{"workerpool0":1,"workerpool1":2}'
check "CLUSTER_SPEC task of workerpool1-1" "$(jq -c .task <<<"$spec")" '{"type":"workerpool1","index":1,"trial":""}'
check "CLUSTER_SPEC addresses are the allocated node" \
  "$(jq -r --arg n "$node:" '[.cluster[][] | startswith($n)] | all' <<<"$spec")" true
check "CLUSTER_SPEC ports are distinct on the shared node" "$(jq '[.cluster[][]] | (unique | length) == length' <<<"$spec")" true
check "TF_CONFIG of a worker" "$(env_of workerpool1-0 TF_CONFIG | jq -c '[(.cluster | keys), .task.type, .task.index]')" '[["chief","worker"],"worker",0]'
check "MASTER_ADDR is the node of task 0" "$(env_of workerpool1-1 MASTER_ADDR)" "$node"
check "RANK per replica" "$(for t in workerpool0-0 workerpool1-0 workerpool1-1; do env_of $t RANK; done | tr '\n' ' ')" "0 1 2 "
check "WORLD_SIZE" "$(env_of workerpool0-0 WORLD_SIZE)" 3
check "CLOUD_ML_JOB_ID" "$(env_of workerpool1-0 CLOUD_ML_JOB_ID)" "$id"
check "the chief saw both peers" "$(logs "$name" workerpool0-0 | grep -c 'rendezvous ok rank=0 world=3 peers=\[1, 2\]')" 1
check "one Slurm job ran all 3 tasks" "$(squeue -h -t all -n "trainyard-$id-a0" -o '%i' | wc -l)" 1

# --- a worker that exits 1 is restarted in place, inside the same allocation ---
name=$(shell_job 'if [ -f tried ]; then echo second try; exit 0; fi; touch tried; echo first try; exit 1')
wait_until 60 "flaky job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
check "restarted once in place" "$(field "$name" '.trainyard.replicas[0].restarts')" 1
wait_until 20 "both runs in the log" log_has "$name" "second try"
check "both runs in the log, in order" "$(logs "$name" workerpool0-0 | tr '\n' ' ')" "first try second try "
check "still the one Slurm job" "$(squeue -h -t all -n "trainyard-${name##*/}-a0" -o '%i' | wc -l)" 1

# --- a failing command: FAILED with its exit code ---
name=$(shell_job 'echo failing; exit 3' '.jobSpec.scheduling = {disableRetries: true}')
wait_until 60 "failing job FAILED" state_is "$name" JOB_STATE_FAILED
check "error names the replica and the code" "$(field "$name" .error.message)" \
  "The replica workerpool0-0 exited with a non-zero status of 3."

# --- cancel reaches Slurm ---
name=$(shell_job 'echo up; exec sleep 300')
wait_until 60 "sleeper RUNNING" state_is "$name" JOB_STATE_RUNNING
check "Slurm runs it" "$(slurm_job "$name" | cut -d' ' -f2)" RUNNING
curl -fsS -X POST "$BASE/v1/$name:cancel" -H 'content-type: application/json' -d '{}' >/dev/null
wait_until 30 "sleeper CANCELLED" state_is "$name" JOB_STATE_CANCELLED
wait_until 30 "Slurm job cancelled" slurm_state_is "$name" CANCELLED
pass "cancel ended the Slurm job"

# --- scheduling.timeout: DEADLINE_EXCEEDED, and the Slurm job ends ---
name=$(shell_job 'exec sleep 300' '.jobSpec.scheduling = {timeout: "3s"}')
wait_until 60 "timed-out job FAILED" state_is "$name" JOB_STATE_FAILED
check "timeout is DEADLINE_EXCEEDED (4)" "$(field "$name" .error.code)" 4
wait_until 30 "Slurm job of the timed-out job ended" slurm_state_is "$name" CANCELLED
pass "the timeout ended the Slurm job"

# --- slurmrestd down mid-job: the job keeps its state; back up, it finishes ---
name=$(shell_job 'echo waiting; while [ ! -f go ]; do sleep 0.1; done; echo finished')
wait_until 60 "waiter RUNNING" state_is "$name" JOB_STATE_RUNNING
dir="$E2E_DIR/shared/jobs/${name##*/}/attempt-0/workerpool0-0"
slurmrestd_stop
# The replica waits for `go`, so the runtime's next look (its job list is at most 250 ms old)
# finds slurmrestd gone.
reason_is() { [ "$(field "$1" .trainyard.reason.code)" = "$2" ]; }
wait_until 30 "the outage is the job's reason" reason_is "$name" RUNTIME_UNAVAILABLE
field "$name" .trainyard.reason.message | grep -q "cannot be reached" &&
  pass "the reason says slurmrestd cannot be reached" || fail "reason: $(field "$name" .trainyard.reason)"
touch "$dir/go"
wait_until 20 "the replica finished while slurmrestd is down" test -f "$dir/exit.0"
check "still RUNNING while Slurm cannot be asked" "$(field "$name" .state)" JOB_STATE_RUNNING
slurmrestd_start
wait_until 60 "waiter SUCCEEDED once slurmrestd is back" state_is "$name" JOB_STATE_SUCCEEDED
wait_until 20 "its last line in the log" log_has "$name" finished
pass "an outage of slurmrestd lost nothing"

# --- Slurm holds an admitted job (its 8 slots taken by work outside Trainyard): Slurm's reason is
# the job's; once the slots free up, the job runs ---
mkdir -p "$E2E_DIR/others"
for _ in 1 2; do
  sbatch -Q -n 4 --wrap='sleep 300' -o /dev/null -D "$E2E_DIR/others" >/dev/null
done
name=$(shell_job 'echo ran after the others')
wait_until 60 "Slurm's reason on the job" reason_is "$name" RUNTIME_WAITING
# Right after the submit Slurm has no reason yet; its scheduler then says Resources.
reason_says() { [ "$(field "$1" .trainyard.reason.message | sed 's/job [0-9]*/job N/')" = "$2" ]; }
wait_until 30 "Slurm's words" reason_says "$name" "Slurm job N is PENDING (Resources)"
pass "Slurm's words are the job's reason"
check "PENDING in Trainyard meanwhile" "$(field "$name" .state)" JOB_STATE_PENDING
scancel --name=wrap
wait_until 60 "held job SUCCEEDED once the slots are free" state_is "$name" JOB_STATE_SUCCEEDED
check "its reason moved on" "$(field "$name" .trainyard.reason.code)" ADMITTED

# --- kill -9 of the server mid-job: the restarted server takes the Slurm job up again ---
name=$(shell_job 'echo run >> runs; while [ ! -f go ]; do sleep 0.1; done; echo finished')
wait_until 60 "second waiter RUNNING" state_is "$name" JOB_STATE_RUNNING
dir="$E2E_DIR/shared/jobs/${name##*/}/attempt-0/workerpool0-0"
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
serve
touch "$dir/go"
wait_until 60 "adopted job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
check "the replica ran once" "$(wc -l <"$dir/runs" | tr -d ' ')" 1
check "submitted once" "$(squeue -h -t all -n "trainyard-${name##*/}-a0" -o '%i' | wc -l)" 1

# --- the cluster's nodes are the fleet's capacity: a drained node takes its pool's unit out; a
# job waits in Trainyard's queue until it is back, then runs on that pool's partition ---
cat >"$E2E_DIR/fleet.json" <<'JSON'
{"name": "slurm-e2e", "quotas": {"default": {"CPUS": 512}},
 "zones": [{"zone": "us-central1-a", "pools": [
   {"machineType": "n2-standard-8", "model": "ON_DEMAND", "nodes": 1, "slurmPartition": "gpu"},
   {"machineType": "n2-standard-4", "model": "ON_DEMAND", "nodes": 2, "slurmPartition": "cpu"}]}]}
JSON
stop_server
start_server --runtime slurm --slurm-url "$SLURM_REST_URL" \
  --slurm-token-file "$SLURM_CLUSTER_DIR/token" --slurm-user root \
  --slurm-shared-dir "$E2E_DIR/shared" --slurm-tasks-per-node 8 --lease-seconds 2 \
  --fleet "$E2E_DIR/fleet.json" --slurm-capacity-interval 0.5
P="$BASE/v1/projects/demo/locations/us-central1"
scontrol update nodename="$SLURM_NODE_NAME" state=drain reason=trainyard-e2e
wait_until 10 "the scheduler has read the drain" \
  grep -q '"event":"slurm_capacity","pool":"us-central1-a/n2-standard-8/ON_DEMAND","units_down":1' "$E2E_DIR/server.log"
name=$(shell_job 'echo ran on the resumed node')
wait_until 30 "the job waits for capacity" reason_is "$name" NO_CAPACITY
check "QUEUED in Trainyard, not submitted to Slurm" "$(field "$name" .state):$(slurm_job "$name" | wc -l)" \
  "JOB_STATE_QUEUED:0"
scontrol update nodename="$SLURM_NODE_NAME" state=resume
wait_until 60 "the job runs once the node is back" state_is "$name" JOB_STATE_SUCCEEDED
check "on the pool's partition" "$(squeue -h -t all -n "trainyard-${name##*/}-a0" -o '%P')" gpu

# --- pools on two partitions: one heterogeneous Slurm job, a component on each partition's node;
# every task's environment has the other component's node, and the rendezvous crosses them ---
rendezvous_job '.labels.runtime = "slurm" | .jobSpec.workerPoolSpecs[1].machineSpec.machineType = "n2-standard-4"' 90
check "one heterogeneous Slurm job: a component per partition" \
  "$(squeue -h -t all -n "trainyard-$id-a0" -o '%i %P' | sort | sed 's/^[0-9]*//' | tr '\n' ' ')" "+0 gpu +1 cpu "
spec=$(env_of workerpool1-0 CLUSTER_SPEC)
check "the chief's address is the gpu partition's node" \
  "$(jq -r '.cluster.workerpool0[0] | split(":")[0]' <<<"$spec")" "$SLURM_NODE_NAME"
check "the workers' addresses are the cpu partition's node" \
  "$(jq -r '[.cluster.workerpool1[] | split(":")[0]] | unique | join(",")' <<<"$spec")" "$SLURM_NODE2_NAME"
check "MASTER_ADDR is the chief's node" "$(env_of workerpool1-1 MASTER_ADDR)" "$SLURM_NODE_NAME"
check "RANK across the components" "$(for t in workerpool0-0 workerpool1-0 workerpool1-1; do env_of $t RANK; done | tr '\n' ' ')" "0 1 2 "
check "the chief saw both peers" "$(logs "$name" workerpool0-0 | grep -c 'rendezvous ok rank=0 world=3 peers=\[1, 2\]')" 1

# --- the real gcloud: a job created with --config runs on Slurm; stream-logs shows its output ---
if command -v gcloud >/dev/null 2>&1; then
  use_gcloud demo
  cat >"$E2E_DIR/job.yaml" <<'YAML'
workerPoolSpecs:
  - machineSpec:
      machineType: n2-standard-8
    replicaCount: 1
    containerSpec:
      imageUri: debian:12
      command: ["sh", "-c", "echo from gcloud on task $SLURM_PROCID"]
YAML
  if gcloud ai custom-jobs create --region=us-central1 --display-name=gcloud-slurm \
      --config="$E2E_DIR/job.yaml" --format='value(name)' >"$E2E_DIR/out" 2>"$E2E_DIR/err"; then
    pass "gcloud create"
  else
    fail "gcloud create: $(cat "$E2E_DIR/err")"
  fi
  name=$(cat "$E2E_DIR/out")
  wait_until 60 "gcloud's job SUCCEEDED" state_is "$name" JOB_STATE_SUCCEEDED
  wait_until 20 "its line in the log" log_has "$name" "from gcloud on task 0"
  if timeout 120 gcloud ai custom-jobs stream-logs "${name##*/}" --region=us-central1 \
    --polling-interval=1 >"$E2E_DIR/stream" 2>"$E2E_DIR/err"; then
    pass "gcloud stream-logs exits by itself for an ended job"
  else
    fail "gcloud stream-logs: $(tail -5 "$E2E_DIR/err")"
  fi
  grep -qP '\tworkerpool0-0\tfrom gcloud on task 0$' "$E2E_DIR/stream" &&
    pass "gcloud stream-logs shows the Slurm task's output" ||
    fail "stream-logs: $(cat "$E2E_DIR/stream")"
else
  echo "SKIP: the gcloud part: gcloud is not installed (it is not in Debian's archive)"
fi

finish
