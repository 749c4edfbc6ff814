# One psql session the whole run, for a row that polls the database while it measures.
# A psql started at each poll (and the backend PostgreSQL forks for its connection) cost ~30 ms
# of CPU every 50 ms: a fifth of the two cores the end-to-end row measures (perf over
# bench/e2e-costs, docs/performance.md). Usage: session_open CONNINFO; session_sql "SELECT …";
# session_close. One query at a time; each must return one row of one column.
session_open() {
  coproc SQL_SESSION { psql "$1" -v ON_ERROR_STOP=1 -qAtX 2>&1; }
}
session_sql() {
  local line
  printf '%s;\n' "$1" >&"${SQL_SESSION[1]}"
  IFS= read -r line <&"${SQL_SESSION[0]}" || { echo "session_sql: psql ended" >&2; return 1; }
  printf '%s\n' "$line"
}
session_close() {
  local pid=$SQL_SESSION_PID
  exec {SQL_SESSION[1]}>&-
  wait "$pid" 2>/dev/null || true
}
# Prints t while a job of project $1 in location $2 has not ended, else f. It walks the
# list-by-state index over the states a job leaves (sequential scans off for the session): a count
# of the SUCCEEDED read every row at each poll, 11 ms a poll over 40k jobs, a tenth of
# PostgreSQL's CPU in that run (docs/performance.md).
session_jobs_live() {
  session_sql "SELECT set_config('enable_seqscan', 'off', false)" >/dev/null
  session_sql "SELECT EXISTS (SELECT 1 FROM custom_jobs WHERE project_number = (SELECT number
    FROM projects WHERE project_id = '$1') AND location = '$2' AND state IN (1, 2, 3, 6, 8, 10))"
}
