#!/usr/bin/env bash
# A start that works from any clone: as root, with the data directory somewhere the postgres OS
# user cannot reach (a clone in /root), `serve` still starts its embedded PostgreSQL, says where
# it put the cluster, and finds the same cluster on the next start.
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
  echo "SKIP: only root runs the embedded PostgreSQL as another user; nothing to relocate"
  exit 77
fi

HOME_LIKE="$E2E_DIR/root-home"
mkdir -p "$HOME_LIKE"
chmod 700 "$HOME_LIKE"  # as /root: the postgres user cannot search it
DATA="$HOME_LIKE/clone/.trainyard"
PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"

serve() {
  "$TRAINYARD_BIN" serve --listen "127.0.0.1:$PORT" --data-dir "$DATA" --sim-speed 100 \
    >>"$E2E_DIR/server.log" 2>&1 &
  SERVER_PID=$!
  wait_until 60 "server ready" curl -fsS "$BASE/readyz"
}

serve
pass "serve starts with its data directory under a 0700 home"
wait_until 10 "the ready line" grep -q '"event":"ready"' "$E2E_DIR/server.log"  # written off-thread
cluster=$(grep '"event":"embedded_postgres_relocated"' "$E2E_DIR/server.log" | head -n 1 | jq -r .cluster_dir)
[[ "$cluster" == /var/lib/trainyard/clusters/* ]] && pass "and says where the cluster went: $cluster" ||
  fail "no relocation logged: $(grep -m1 embedded_postgres "$E2E_DIR/server.log")"
cleanup_cluster() { [ -n "$cluster" ] && rm -rf "$cluster" "$cluster.data-dir"; }
trap 'cleanup_cluster; cleanup' EXIT
check "the note beside it names the data directory" "$(cat "$cluster.data-dir" 2>/dev/null)" "$DATA"
check "the ready line names it too" \
  "$(grep '"event":"ready"' "$E2E_DIR/server.log" | tail -n 1 | jq -r .embedded_postgres)" "$cluster"

name=$(create '.displayName = "survives"' lora-single-node.json)
[[ "$name" == projects/*/customJobs/* ]] && pass "a job is created" || fail "create: $name"

stop_server
serve
check "the next start finds the same cluster (the job is there)" \
  "$(curl -fsS "$BASE/v1/$name" | jq -r .displayName)" survives
finish
