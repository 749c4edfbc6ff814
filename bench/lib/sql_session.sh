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
