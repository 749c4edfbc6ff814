# Knobs the cost scripts (bench/e2e-costs, bench/one-client-costs) and bench/run share. Each
# expects the caller's `sql` (one statement through psql) and `BASE` (the server's URL).
# SYSCONF="name=value ...": cluster settings tried without a build, set with ALTER SYSTEM and a
# reload (measurement only, e.g. synchronous_commit=off).
apply_sysconf() {
  [ -n "${SYSCONF:-}" ] || return 0
  local s
  for s in $SYSCONF; do sql "ALTER SYSTEM SET ${s%%=*} = '${s#*=}'"; done
  sql "SELECT pg_reload_conf()" >/dev/null
}
# METRICS=1: the scheduler's and the runtime's counters and phase sums from /metrics.
print_loop_metrics() {
  [ -n "${METRICS:-}" ] || return 0
  echo "-- metrics"
  curl -fsS "$BASE/metrics" | grep -E '^trainyard_(scheduler|executor)_[a-z_]*(_sum|_count|_total)[{ ]'
}
