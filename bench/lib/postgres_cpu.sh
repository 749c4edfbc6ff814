# CPU ticks (user + system) of all of PostgreSQL's processes now, for the rows that say what a
# request or a job cost the database. A process that ends between pgrep and its read (a poll
# session's backend, a finished connection) counts nothing rather than failing under pipefail.
postgres_ticks() {
  for p in $(pgrep -u postgres -x postgres); do
    awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || true
  done | awk '{s += $1} END {print s + 0}'
}
