#!/usr/bin/env bash
# Debian's Prometheus against the real server on loopback, with the repo's recording and alerting
# rules (docs/monitoring/trainyard.rules.yml): it scrapes while jobs run, and its HTTP API answers
# for the server's series, finds the slow host of an 8-host job through the rules (the same host
# the utilization API names), and evaluates every query of the Grafana dashboard.
source "$(dirname "$0")/lib.sh"

if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  echo "SKIP: prometheus is not installed (Debian's prometheus package; make test installs it)"
  exit 77
fi
MONITORING="$(cd "$(dirname "$0")/../../docs/monitoring" && pwd)"

promtool check rules "$MONITORING/trainyard.rules.yml" >"$E2E_DIR/rules.out" 2>&1 &&
  pass "promtool accepts the rules" || fail "rules: $(cat "$E2E_DIR/rules.out")"
promtool check config --syntax-only "$MONITORING/prometheus.yml" >"$E2E_DIR/config.out" 2>&1 &&
  pass "promtool accepts the scrape config" || fail "config: $(cat "$E2E_DIR/config.out")"

start_server --sim-speed 60

# The shipped config, pointed at this server, scraping and evaluating every second.
PROM_PORT=$(free_port)
PROM="http://127.0.0.1:$PROM_PORT"
sed -e "s/127.0.0.1:8080/127.0.0.1:$PORT/" -e 's/scrape_interval: 15s/scrape_interval: 1s/' \
  -e 's/evaluation_interval: 15s/evaluation_interval: 1s/' \
  -e "s|trainyard.rules.yml|$MONITORING/trainyard.rules.yml|" \
  "$MONITORING/prometheus.yml" >"$E2E_DIR/prometheus.yml"
prometheus --config.file="$E2E_DIR/prometheus.yml" --storage.tsdb.path="$E2E_DIR/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$E2E_DIR/prometheus.log" 2>&1 &
PROM_PID=$!
trap 'kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null; cleanup' EXIT
wait_until 60 "prometheus ready" curl -fsS "$PROM/-/ready" || fail "prometheus: $(tail -5 "$E2E_DIR/prometheus.log")"

# query PROMQL: the instant query's JSON.
query() { curl -fsS "$PROM/api/v1/query" --data-urlencode "query=$1"; }
# has PROMQL: succeeds when the query returns at least one series.
has() { query "$1" | jq -e '.status == "success" and (.data.result | length) > 0' >/dev/null; }

wait_until 30 "the first scrape" has 'up{job="trainyard"} == 1' && pass "Prometheus scrapes /metrics" ||
  fail "targets: $(curl -fsS "$PROM/api/v1/targets" | jq -c '.data.activeTargets[].lastError')"

# An 8-host pre-training job whose host 5 is slow, and a single-node fine-tune.
name=$(create '.displayName = "slow-host"
  | .jobSpec.workerPoolSpecs[0].containerSpec.env += [
      {"name": "TRAINYARD_SIM_DURATION", "value": "36000s"},
      {"name": "TRAINYARD_CHECKPOINT_INTERVAL", "value": "0s"},
      {"name": "TRAINYARD_SIM_SLOW_HOST", "value": "5"}]' nemo-pretrain-multinode.json)
create '.displayName = "lora"' lora-single-node.json >/dev/null
id=${name##*/}
UTIL="$BASE/trainyard/v1/projects/demo/locations/us-central1/customJobs/$id/utilization"
wait_until 120 "the big job past its warm-up" bash -c \
  "curl -fsS '$UTIL' | jq -e '(.outliers | length) == 1'" || fail "utilization: $(curl -fsS "$UTIL")"
slow=$(curl -fsS "$UTIL" | jq -r '.outliers[0]')
check "the utilization API lists 8 hosts" "$(curl -fsS "$UTIL" | jq '.hosts | length')" 8
check "and names host 5 as the outlier" "$slow" "$(curl -fsS "$UTIL" | jq -r '.hosts[5].host')"

wait_until 60 "the slow-host rule" has 'trainyard:accelerator_duty_cycle:off_gang_median > 0.15' ||
  fail "no host off its gang's median"
found=$(query 'trainyard:accelerator_duty_cycle:off_gang_median > 0.15' | jq -r '[.data.result[].metric.host] | join(",")')
check "the recording rule finds the same host, and only it" "$found" "$slow"
check "the job's 8 hosts share its gang label" \
  "$(query "count(trainyard_accelerator_duty_cycle{gang=\"$(curl -fsS "$UTIL" | jq -r '.hosts[0].host')\"})" |
    jq -r '.data.result[0].value[1]')" 8
wait_until 30 "admissions counted" has 'sum(trainyard_scheduler_admissions_total) >= 2' &&
  pass "admissions are in Prometheus" || fail "admissions: $(query 'trainyard_scheduler_admissions_total')"
has 'trainyard_jobs{project="demo",state="JOB_STATE_RUNNING"}' && pass "jobs by state are in Prometheus" ||
  fail "jobs: $(query 'trainyard_jobs')"
has 'sum by (consumption_model) (trainyard_job_cost_dollars) > 0' && pass "cost by consumption model" ||
  fail "cost: $(query 'trainyard_job_cost_dollars')"
has 'rate(trainyard_http_requests_total[1m]) > 0' && pass "request rates" || fail "no request rate"

# Every query of the dashboard evaluates (a typo would be a 400 from Prometheus).
bad=0
while IFS= read -r expr; do
  if ! query "$expr" | jq -e '.status == "success"' >/dev/null 2>&1; then
    fail "dashboard query does not evaluate: $expr"
    bad=$((bad + 1))
  fi
done < <(jq -r '.panels[].targets[].expr' "$MONITORING/grafana-dashboard.json")
check "every dashboard query evaluates" "$bad" 0
finish
