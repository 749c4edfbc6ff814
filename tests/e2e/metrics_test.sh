#!/usr/bin/env bash
# GET /metrics end to end with curl, as a Prometheus scraper reads it: the text format 0.0.4 (and
# `promtool check metrics`: make test installs Debian's prometheus, so a missing promtool fails),
# counters that move as the API is used, cumulative histograms, label sets that do not grow with
# the number of jobs, the same on the --metrics-listen port, and the metrics-viewer or fleet-admin
# role when tokens are on (on both ports).
source "$(dirname "$0")/lib.sh"

MPORT=$(free_port)
start_server --sim-speed 1000 --metrics-listen "127.0.0.1:$MPORT"
scrape() { curl -fsS "$BASE/metrics"; }
# value SERIES: the sample of one exact series (name{labels}), or "" when absent.
value() { scrape | awk -v s="$1" 'index($0, s " ") == 1 { print $NF }'; }
# total NAME REGEX: the sum of NAME's samples whose labels match REGEX (0 when none).
total() { scrape | awk -v n="$1" -v re="$2" '$1 ~ ("^" n "[{ ]") && $1 ~ re { t += $NF } END { print t + 0 }'; }
# at_least WHAT ACTUAL MIN
at_least() { awk -v a="$2" -v m="$3" 'BEGIN { exit !(a >= m) }' && pass "$1" || fail "$1: $2 < $3"; }

ctype=$(curl -fsS -o /dev/null -w '%{content_type}' "$BASE/metrics")
check "the content type is the text format 0.0.4" "$ctype" "text/plain; version=0.0.4; charset=utf-8"

if command -v promtool >/dev/null 2>&1; then
  if scrape | promtool check metrics >"$E2E_DIR/promtool.out" 2>&1; then
    pass "promtool check metrics accepts the exposition"
  else
    fail "promtool: $(cat "$E2E_DIR/promtool.out")"
  fi
else
  # make test installs Debian's prometheus, which brings promtool: its absence is a broken set-up.
  fail "promtool is not installed (Debian's prometheus package; make test installs it)"
fi

# Every line is a comment or `name{labels} value`, and every family has HELP and TYPE.
scrape >"$E2E_DIR/first"
bad=$(grep -vE '^(# (HELP|TYPE) [a-z_:][a-z0-9_:]* .+|[a-z_:][a-z0-9_:]*(\{([a-z_]+="([^"\\]|\\.)*",?)*\})? [-+0-9.eE]+(Inf)?|[a-z_:][a-z0-9_:]*(\{.*\})? NaN)$' "$E2E_DIR/first" || true)
check "every line parses" "$bad" ""

# A profile (top -H, perf) tells the roles apart: each of the server's threads is named for its role.
names=" $(sort -u /proc/"$SERVER_PID"/task/*/comm | tr '\n' ' ')"
for role in ty-http ty-write ty-scheduler ty-runtime ty-changes; do
  [[ "$names" == *" $role "* ]] && pass "a thread is named $role" || fail "no thread named $role:$names"
done

POST="trainyard_http_requests_total{route=\"/{version}/projects/{project}/locations/{location}/customJobs\",method=\"POST\",code=\"200\"}"
GET="trainyard_http_requests_total{route=\"/{version}/projects/{project}/locations/{location}/customJobs/{job}\",method=\"GET\",code=\"200\"}"
NOTFOUND="trainyard_http_requests_total{route=\"/{version}/projects/{project}/locations/{location}/customJobs/{job}\",method=\"GET\",code=\"404\"}"

# round N: creates N jobs, reads each, asks for one that does not exist, waits for all to end.
round() {
  names=()
  for i in $(seq "$1"); do names+=("$(create ".displayName=\"m$i\"" lora-single-node.json)"); done
  for n in "${names[@]}"; do curl -fsS -o /dev/null "$BASE/v1/$n"; done
  curl -sS -o /dev/null "$BASE/v1/projects/demo/locations/us-central1/customJobs/12345"
  for n in "${names[@]}"; do
    wait_until 60 "$n SUCCEEDED" bash -c "curl -fsS '$BASE/v1/$n' | jq -e '.state == \"JOB_STATE_SUCCEEDED\"'"
  done
}
before=$(value "$POST")
round 5
check "five creates count under the route template" "$(value "$POST")" $((${before:-0} + 5))
gets=$(value "$GET")
[ "${gets:-0}" -ge 5 ] && pass "the gets count under theirs" || fail "gets: $gets"
check "a 404 counts under its code" "$(value "$NOTFOUND")" 1
grep -q "${names[0]##*/}" <(scrape) && fail "a job id appears in the exposition" ||
  pass "no job id appears in the exposition"

# A histogram's buckets never decrease, end in +Inf, and +Inf equals _count.
LAT='trainyard_http_request_duration_seconds'
ROUTE='route="/{version}/projects/{project}/locations/{location}/customJobs",method="POST"'
scrape | grep "^${LAT}_bucket{${ROUTE}," | awk '{ print $NF }' >"$E2E_DIR/buckets"
sort -n -c "$E2E_DIR/buckets" 2>/dev/null && pass "the buckets are cumulative" ||
  fail "buckets: $(tr '\n' ' ' <"$E2E_DIR/buckets")"
check "the last bucket is +Inf and equals _count" \
  "$(value "${LAT}_bucket{${ROUTE},le=\"+Inf\"}")" "$(value "${LAT}_count{${ROUTE}}")"

# The scheduler's figures follow.
check "this process leads the scheduler" "$(value trainyard_scheduler_leader)" 1
admitted=$(value trainyard_scheduler_admissions_total)
[ "${admitted:-0}" -ge 5 ] && pass "the scheduler counted its admissions" || fail "admissions: $admitted"
cycles=$(value 'trainyard_scheduler_cycle_phase_seconds_count{phase="decide"}')
[ "${cycles:-0}" -ge 1 ] && pass "cycle phases are timed" || fail "decide count: $cycles"
check "no job of demo is left running" \
  "$(total trainyard_jobs 'project="demo".*state="JOB_STATE_RUNNING"')" 0

# The executor, the database and the fleet's figures follow too.
# The scheduler beside it hands the executor what it admits (the admission writes the lease), so
# the executor has claimed none of them and still runs them all.
check "the executor claimed no lease: its scheduler handed it the jobs" \
  "$(value trainyard_executor_leases_claimed_total)" 0
at_least "and it moved them to SUCCEEDED" \
  "$(value 'trainyard_job_transitions_total{state="JOB_STATE_SUCCEEDED"}')" 5
at_least "each job's time from creation to RUNNING is observed" \
  "$(value trainyard_job_startup_seconds_count)" 5
at_least "database round trips are timed" "$(value trainyard_db_query_duration_seconds_count)" 10
at_least "creates went through group commit" "$(value trainyard_group_commit_batch_size_count)" 1
at_least "the pool has connections" "$(total trainyard_db_pool_connections .)" 1
at_least "the jobs cost something under their consumption model" \
  "$(total trainyard_job_cost_dollars 'kind="accrued"')" 0.000001
ratio=$(scrape | awk '$1 ~ /^trainyard_goodput_ratio\{/ { print $NF; exit }')
awk -v r="${ratio:-x}" 'BEGIN { exit !(r > 0 && r <= 1) }' && pass "goodput is a ratio in (0, 1]" ||
  fail "goodput ratio: $ratio"
at_least "nodes are counted by zone, machine type, consumption model and state" \
  "$(total trainyard_nodes 'machine_type="a3-megagpu-8g".*state="(READY|BUSY|DELETED)"')" 1

# A job that cannot be admitted is counted under the scheduler's reason.
create '.displayName="too-big" | .jobSpec.workerPoolSpecs[1].replicaCount = "500"' nemo-pretrain-multinode.json >/dev/null
wait_until 30 "the big job's reason" bash -c "curl -fsS '$BASE/metrics' |
  grep -qE '^trainyard_queued_jobs\{project=\"demo\",location=\"us-central1\",reason=\"(QUOTA_EXCEEDED|NEVER_FITS)\"\} 1$'" &&
  pass "a queued job is counted under its reason" || fail "queued: $(scrape | grep '^trainyard_queued_jobs')"
at_least "and the scheduler's decision to hold it under the same reason" \
  "$(total trainyard_scheduler_decisions_total 'decision="hold",reason="(QUOTA_EXCEEDED|NEVER_FITS)"')" 1

# The number of series does not grow with the number of jobs.
# Series per consumption model are bounded by the models there are, not by the jobs: the first job
# placed under a model brings its whole set, so they are counted apart (and their label checked).
names() { scrape | grep -v '^#' | grep -v 'consumption_model=' | sed 's/ [^ ]*$//' | sort; }
names >"$E2E_DIR/series1"
round 10
# Nodes move between states as jobs come and go, so a state's series may come or go; a label with
# a job in it would add at least one series per job.
names >"$E2E_DIR/series2"
models=$(scrape | grep -o 'consumption_model="[^"]*"' | sort -u | sed 's/consumption_model=//' | tr -d '"' | paste -sd' ')
grep -qvE '^(RESERVATION|ON_DEMAND|SPOT|FLEX_START|NOT_PLACED| )+$' <<<"$models" &&
  fail "a consumption_model label outside the models: $models" ||
  pass "consumption_model labels are the models there are ($models)"
n1=$(wc -l <"$E2E_DIR/series1") n2=$(wc -l <"$E2E_DIR/series2")
[ $((n2 - n1)) -lt 10 ] && pass "ten more jobs add fewer than ten series ($n1 then $n2)" ||
  fail "series grew with the jobs: $n1 then $n2; new: $(comm -13 "$E2E_DIR/series1" "$E2E_DIR/series2" | tr '\n' ' ')"

# --metrics-listen: the same exposition on a port of its own, and nothing else there.
grep -q '^trainyard_scheduler_admissions_total ' <<<"$(curl -fsS "http://127.0.0.1:$MPORT/metrics")" &&
  pass "--metrics-listen serves /metrics" || fail "no metrics on the metrics port"
check "and nothing else" "$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/v1/projects/demo/locations/us-central1/customJobs")" 404
stop_server

# --- with tokens on, only a metrics viewer or the fleet admin reads it ------------------------
MPORT=$(free_port)
start_server --auth=tokens --metrics-listen "127.0.0.1:$MPORT"
FLEET=$("$TRAINYARD_BIN" tokens create --data-dir "$E2E_DIR/data" --fleet-admin 2>/dev/null)
ADMIN=$("$TRAINYARD_BIN" tokens create --data-dir "$E2E_DIR/data" --project demo --role admin 2>/dev/null)
SCRAPER=$("$TRAINYARD_BIN" tokens create --data-dir "$E2E_DIR/data" --role metrics-viewer 2>/dev/null)
code() { curl -sS -o /dev/null -w '%{http_code}' "$BASE/metrics" "$@"; }
check "no token: 401" "$(code)" 401
check "a project admin: 403" "$(code -H "Authorization: Bearer $ADMIN")" 403
check "the fleet admin: 200" "$(code -H "Authorization: Bearer $FLEET")" 200
mcode() { curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/metrics" "$@"; }
check "the metrics port: no token, 401" "$(mcode)" 401
check "the metrics port: a project admin, 403" "$(mcode -H "Authorization: Bearer $ADMIN")" 403
check "the metrics port: the fleet admin, 200" "$(mcode -H "Authorization: Bearer $FLEET")" 200
# What Prometheus holds: a metrics viewer scrapes both ports and can do nothing else.
check "a metrics viewer: 200" "$(code -H "Authorization: Bearer $SCRAPER")" 200
check "the metrics port: a metrics viewer, 200" "$(mcode -H "Authorization: Bearer $SCRAPER")" 200
for path in /trainyard/v1/fleet /v1/projects/demo/locations/us-central1/customJobs; do
  check "a metrics viewer on $path: 403" \
    "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE$path" -H "Authorization: Bearer $SCRAPER")" 403
done
grep -q "$FLEET" <<<"$(curl -fsS "$BASE/metrics" -H "Authorization: Bearer $FLEET")" &&
  fail "the token appears in the exposition" || pass "the token does not appear"
finish
