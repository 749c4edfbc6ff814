# One psql session the whole run, for a row that polls the database while it measures.
# A psql started at each poll (and the backend PostgreSQL forks for its connection) cost ~30 ms
# of CPU every 50 ms: a fifth of the two cores the end-to-end row measures (perf over
# bench/e2e-costs, docs/performance.md). A poll forks nothing either: `$(…)` forks a shell and
# `sleep` a process, ~2% of both cores at 20 polls a second. Usage: session_open CONNINFO;
# session_read VAR "SELECT …" (or session_sql "SELECT …" to print it); session_nap SECONDS;
# session_close. One query at a time; each must return one row of one column.
session_open() {
  coproc SQL_SESSION { psql "$1" -v ON_ERROR_STOP=1 -qAtX 2>&1; }
  # A pipe whose writer is this shell: a read of it waits out its timeout (a sleep, no fork).
  exec {SESSION_NAP_FD}<> <(:)
}
session_read() {
  printf '%s;\n' "$2" >&"${SQL_SESSION[1]}"
  IFS= read -r "$1" <&"${SQL_SESSION[0]}" || { echo "session_read: psql ended" >&2; return 1; }
}
session_sql() {
  local line
  session_read line "$1" || return 1
  printf '%s\n' "$line"
}
session_nap() {
  read -r -t "$1" -u "$SESSION_NAP_FD" _ || true
}
session_close() {
  local pid=$SQL_SESSION_PID
  exec {SQL_SESSION[1]}>&- {SESSION_NAP_FD}>&-
  wait "$pid" 2>/dev/null || true
}
# Sets VAR to t while a job of project $2 in location $3 has not ended, else f. It walks the
# list-by-state index over the states a job leaves (sequential scans off for the session): a count
# of the SUCCEEDED read every row at each poll, 11 ms a poll over 40k jobs, a tenth of
# PostgreSQL's CPU in that run (docs/performance.md).
session_jobs_live() {
  session_read "$1" "SELECT set_config('enable_seqscan', 'off', false)" || return 1
  session_read "$1" "SELECT EXISTS (SELECT 1 FROM custom_jobs WHERE project_number = (SELECT number
    FROM projects WHERE project_id = '$2') AND location = '$3' AND state IN (1, 2, 3, 6, 8, 10))"
}
