#!/usr/bin/env bash
# `simulate` decides as `serve` does: one small workload (gangs of 1-3 nodes asking for
# reservations, on-demand, spot and spot with fallback, more than the fleet holds at once, so some
# wait and are placed on nodes others freed) goes through a real server on the simulator and
# through `simulate`, with failures off (their draws follow wall time in a server). Every job must
# end in the same state, in the same zone, on the same consumption models and the same nodes.
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"

cat >"$E2E_DIR/fleet.json" <<'JSON'
{"name": "match", "seed": 5, "bootTime": {"default": "300s"}, "imagePullGbps": 10,
 "imageSizeGb": {"default": 10},
 "quotas": {"default": {"NVIDIA_H100_MEGA_80GB": 256, "PREEMPTIBLE_NVIDIA_H100_MEGA_80GB": 256}},
 "zones": [{"zone": "us-central1-a", "pools": [
   {"machineType": "a3-megagpu-8g", "model": "RESERVATION", "reservation": "r1", "term": "1y", "nodes": 2},
   {"machineType": "a3-megagpu-8g", "model": "ON_DEMAND", "nodes": 3},
   {"machineType": "a3-megagpu-8g", "model": "SPOT", "nodes": 2}]}]}
JSON

# Eight jobs, a second apart: name, A3 Mega nodes, strategy, run time. The run times keep every
# end and every admission at least ten model minutes apart: the server notices an end one poll
# late, many model seconds at --sim-speed 300, so two events closer than that could go either way.
python3 - >"$E2E_DIR/workload.jsonl" <<'PY'
import json
WORKLOAD = [("j1", 2, "STANDARD", 1800), ("j2", 1, "SPOT", 2400), ("j3", 3, "STANDARD", 3000),
            ("j4", 1, "LOW_COST", 1200), ("j5", 2, "STANDARD", 1500), ("j6", 1, "SPOT", 3600),
            ("j7", 1, "STANDARD", 600), ("j8", 2, "LOW_COST", 1500)]
for i, (name, nodes, strategy, run) in enumerate(WORKLOAD):
    def pool(replicas):
        return {"machineSpec": {"machineType": "a3-megagpu-8g",
                                "acceleratorType": "NVIDIA_H100_MEGA_80GB", "acceleratorCount": 8},
                "replicaCount": str(replicas),
                "containerSpec": {"imageUri": "nemo:24.07",
                                  "env": [{"name": "TRAINYARD_SIM_DURATION", "value": f"{run}s"}]}}
    pools = [pool(1)] + ([pool(nodes - 1)] if nodes > 1 else [])
    job = {"displayName": name, "jobSpec": {"scheduling": {"strategy": strategy},
                                            "workerPoolSpecs": pools}}
    print(json.dumps({"submitOffset": f"{i}s", "project": "demo", "job": job}))
PY
jq -n '{name: "match", fleet: "fleet.json", workload: {path: "workload.jsonl", format: "jsonl"}}' \
  >"$E2E_DIR/scenario.json"

# Through simulate.
"$TRAINYARD_BIN" simulate "$E2E_DIR/scenario.json" --out "$E2E_DIR/sim" 2>/dev/null >/dev/null &&
  pass "simulate replays the workload" || fail "simulate failed"
# name state zone models nodes, a line per job, by name.
python3 - "$E2E_DIR/sim/match/jobs.csv" "$E2E_DIR/workload.jsonl" >"$E2E_DIR/simulated" <<'PY'
import csv, json, sys
names = [json.loads(l)["job"]["displayName"] for l in open(sys.argv[2])]
for row in csv.DictReader(open(sys.argv[1])):
    name = names[int(row["trace_line"]) - 1]
    print(name, row["state"], row["zone"], row["consumption_model"], " ".join(sorted(row["node_names"].split())))
PY

# Through a server on the simulator, the same bodies in the same order.
start_server --sim-speed 300 --fleet "$E2E_DIR/fleet.json"
P="$BASE/v1/projects/demo/locations/us-central1/customJobs"
names=()
while read -r line; do
  names+=("$(jq -c .job <<<"$line" | curl -fsS -X POST "$P" -H 'content-type: application/json' \
    --data-binary @- | jq -r .name)")
done <"$E2E_DIR/workload.jsonl"
all_ended() {
  for n in "${names[@]}"; do
    case "$(curl -fsS "$BASE/v1/$n" | jq -r .state)" in
      JOB_STATE_SUCCEEDED | JOB_STATE_FAILED | JOB_STATE_CANCELLED) ;;
      *) return 1 ;;
    esac
  done
}
wait_until 240 "every job ended on the server" all_ended && pass "the server runs the workload" ||
  fail "the server's jobs did not end"
for n in "${names[@]}"; do
  curl -fsS "$BASE/v1/$n" | jq -r '[.displayName, .state, .trainyard.placement.zone,
    ([(.trainyard.placement.pools // [])[].consumptionModel] | unique | join("+")),
    ([(.trainyard.placement.pools // [])[] | (.nodes // [])[]] | sort | join(" "))] | join(" ")'
done | sort >"$E2E_DIR/served"
sort -o "$E2E_DIR/simulated" "$E2E_DIR/simulated"

check "eight jobs each way" "$(wc -l <"$E2E_DIR/served") $(wc -l <"$E2E_DIR/simulated")" "8 8"
if diff "$E2E_DIR/served" "$E2E_DIR/simulated" >"$E2E_DIR/diff"; then
  pass "every job ends the same: state, zone, consumption models and nodes"
else
  fail "serve and simulate differ:"$'\n'"$(cat "$E2E_DIR/diff")"
fi
grep -q "RESERVATION" "$E2E_DIR/served" && grep -q "SPOT" "$E2E_DIR/served" &&
  grep -q "ON_DEMAND" "$E2E_DIR/served" && pass "the workload used every consumption model" ||
  fail "the workload did not reach every model: $(cat "$E2E_DIR/served")"
finish
