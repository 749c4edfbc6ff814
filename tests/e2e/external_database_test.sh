#!/usr/bin/env bash
# serve --database-url, as a deployment runs it: an external PostgreSQL that comes up after the
# server. Start-up waits for it (/readyz 503, `database_unavailable` logged), then serves and runs
# a job on it; an unknown database fails at once instead of waiting; a wait that runs out fails
# with the error and how long it tried.
source "$(dirname "$0")/lib.sh"

PGBIN=/usr/lib/postgresql/15/bin
CLUSTER="$E2E_DIR/external"
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
mkdir -p "$CLUSTER"
[ "$(id -u)" = 0 ] && chown postgres "$CLUSTER"
as_owner "$PGBIN/initdb" -D "$CLUSTER/data" -U postgres -A trust --no-sync -E UTF8 --locale=C \
  >"$E2E_DIR/initdb.log" 2>&1 || { cat "$E2E_DIR/initdb.log" >&2; exit 1; }
trap 'as_owner "$PGBIN/pg_ctl" -D "$CLUSTER/data" -m immediate stop >/dev/null 2>&1 || true; cleanup' EXIT
DB_PORT=$(free_port)
URL="host=127.0.0.1 port=$DB_PORT user=postgres dbname=postgres"

# --- the database comes up after the server --------------------------------------------------
PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
"$TRAINYARD_BIN" serve --listen "127.0.0.1:$PORT" --data-dir "$E2E_DIR/data" --drain-period 0 \
  --database-url "$URL" --database-wait 120 --sim-speed 1000 >>"$E2E_DIR/server.log" 2>&1 &
SERVER_PID=$!
wait_until 60 "start-up waiting for the database" grep -q '"event":"database_unavailable"' "$E2E_DIR/server.log"
check "/readyz says 503 while the database is not up" \
  "$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/readyz")" 503
kill -0 "$SERVER_PID" && pass "the server waits instead of exiting" || fail "the server exited"
grep '"event":"database_unavailable"' "$E2E_DIR/server.log" | head -n 1 | jq -e '.attempt >= 1 and
  (.error | contains("Connection refused")) and .retry_in_ms > 0' >/dev/null &&
  pass "each wait is logged with its attempt and the error" || fail "database_unavailable: $(grep -m1 database_unavailable "$E2E_DIR/server.log")"

as_owner "$PGBIN/pg_ctl" -D "$CLUSTER/data" -l "$CLUSTER/log" -w -t 60 \
  -o "-p $DB_PORT -c listen_addresses=127.0.0.1 -k $CLUSTER" start >/dev/null
wait_until 60 "ready once the database is up" curl -fsS "$BASE/readyz"
pass "ready once the database is up"
name=$(create '.displayName = "external"' lora-single-node.json)
wait_until 60 "the job SUCCEEDED on the external database" state_is "$name" JOB_STATE_SUCCEEDED &&
  pass "a job runs to SUCCEEDED on the external database" || fail "$name: $(field "$name" .state)"
check "its row is in the external database" \
  "$(as_owner "$PGBIN/psql" -h 127.0.0.1 -p "$DB_PORT" -U postgres -d postgres -Atc \
    "SELECT count(*) FROM custom_jobs WHERE display_name = 'external'")" 1
stop_server

# --- what waiting will not mend fails at once ------------------------------------------------
# exits_within SECONDS LOG ARGS…: serve with ARGS must exit non-zero within SECONDS.
exits_within() {
  local limit=$1 log=$2
  shift 2
  "$TRAINYARD_BIN" serve --listen "127.0.0.1:$(free_port)" --data-dir "$E2E_DIR/data" \
    --drain-period 0 "$@" >"$log" 2>&1 &
  local pid=$! deadline=$((SECONDS + limit))
  while kill -0 "$pid" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      kill -KILL "$pid"
      wait "$pid" || true
      return 1
    fi
    sleep 0.05
  done
  ! wait "$pid"
}
exits_within 20 "$E2E_DIR/nope.log" --database-url "host=127.0.0.1 port=$DB_PORT user=postgres dbname=nope" \
  --database-wait 600 && pass "an unknown database fails at once, not after the wait" ||
  fail "serve with an unknown database did not exit within 20 s"
grep -q 'database \\"nope\\" does not exist' "$E2E_DIR/nope.log" &&
  pass "its error names the database" || fail "nope: $(tail -n 2 "$E2E_DIR/nope.log")"
check "nothing waited for it" "$(grep -c database_unavailable "$E2E_DIR/nope.log" || true)" 0

as_owner "$PGBIN/pg_ctl" -D "$CLUSTER/data" -m fast -w stop >/dev/null
exits_within 30 "$E2E_DIR/gone.log" --database-url "$URL" --database-wait 1 &&
  pass "a wait that runs out fails" || fail "serve with --database-wait 1 did not exit within 30 s"
grep '"event":"database_failed"' "$E2E_DIR/gone.log" | jq -e '.error | contains("Connection refused")
  and test("[0-9]+ attempts over [0-9.]+ s")' >/dev/null &&
  pass "its error says how long it tried" || fail "gone: $(grep database_failed "$E2E_DIR/gone.log")"
finish
