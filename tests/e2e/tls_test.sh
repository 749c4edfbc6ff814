#!/usr/bin/env bash
# TLS (serve --tls-cert/--tls-key): HTTPS only, TLS 1.2 or later, driven by curl, the trainyard
# CLI (--ca-file) and the official Node SDK (NODE_EXTRA_CA_CERTS), with a throwaway CA made here by
# openssl; plain HTTP, TLS 1.1 and an untrusted client are refused. (gcloud's requests
# session did not take core/custom_ca_certs_file for a private CA here; see the issue note.)
source "$(dirname "$0")/lib.sh"

PKI="$E2E_DIR/pki"
make_test_pki "$PKI"

# A key that does not exist stops start-up, naming the file.
if timeout 30 "$TRAINYARD_BIN" serve --listen "127.0.0.1:$(free_port)" --data-dir "$E2E_DIR/bad" \
  --tls-cert "$PKI/server.pem" --tls-key "$PKI/missing.key" >"$E2E_DIR/bad.out" 2>&1; then
  fail "serve started with a missing key"
else
  grep -q "missing.key" "$E2E_DIR/bad.out" && pass "a missing key stops start-up, named" ||
    fail "said: $(cat "$E2E_DIR/bad.out")"
fi

PORT=$(free_port)
BASE="https://127.0.0.1:$PORT"
"$TRAINYARD_BIN" serve --listen "127.0.0.1:$PORT" --data-dir "$E2E_DIR/data" --sim-speed 100 \
  --tls-cert "$PKI/server.pem" --tls-key "$PKI/server.key" >>"$E2E_DIR/server.log" 2>&1 &
SERVER_PID=$!
wait_until 60 "server ready over TLS" curl -fsS --cacert "$PKI/ca.pem" "$BASE/readyz"
pass "readyz over HTTPS"

V1="$BASE/v1/projects/demo/locations/us-central1"
JOB=$(jq -c '.displayName = "over-tls"' "$PAYLOADS/lora-single-node.json")
name=$(curl -fsS --cacert "$PKI/ca.pem" -X POST "$V1/customJobs" -H 'content-type: application/json' \
  --data-binary "$JOB" | jq -r .name)
[[ "$name" == projects/*/customJobs/* ]] && pass "curl creates a job over HTTPS" || fail "create: $name"

curl -sS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && fail "plain HTTP was served" ||
  pass "plain HTTP is not served"
curl -sS -o /dev/null "$BASE/healthz" 2>/dev/null && fail "an untrusting client connected" ||
  pass "a client that does not trust the CA is refused"
if curl -sS -o /dev/null --cacert "$PKI/ca.pem" --tlsv1.0 --tls-max 1.1 "$BASE/healthz" 2>"$E2E_DIR/tls11.err"; then
  fail "TLS 1.1 was accepted"
else
  pass "TLS 1.1 is refused"
fi
proto=$(curl -sS -o /dev/null -w '%{ssl_verify_result} ' --cacert "$PKI/ca.pem" -v "$BASE/healthz" 2>&1 |
  grep -o 'TLSv1\.[23]' | head -n 1)
[[ "$proto" == TLSv1.[23] ]] && pass "curl negotiates $proto" || fail "protocol: $proto"

# --- the CLI (the C++ SDK) with --ca-file -----------------------------------------------------
if "$TRAINYARD_BIN" jobs get "$name" --endpoint "$BASE" --project demo --ca-file "$PKI/ca.pem" \
  >"$E2E_DIR/cli.out" 2>&1; then
  grep -q over-tls "$E2E_DIR/cli.out" && pass "trainyard jobs get over HTTPS with --ca-file" ||
    fail "cli: $(cat "$E2E_DIR/cli.out")"
else
  fail "trainyard jobs get over HTTPS: $(cat "$E2E_DIR/cli.out")"
fi
"$TRAINYARD_BIN" jobs get "$name" --endpoint "$BASE" --project demo >"$E2E_DIR/cli.out" 2>&1 && rc=0 || rc=$?
check "without the CA the CLI fails" "$rc" 1

# --- the Node SDK over HTTPS, trusting the CA through NODE_EXTRA_CA_CERTS -----------------------
if (install_node_sdk) >"$E2E_DIR/npm.out" 2>&1; then
  NODE_DIR="$(dirname "$TRAINYARD_BIN")/node-sdk"
  if NODE_EXTRA_CA_CERTS="$PKI/ca.pem" PORT=$PORT JOB="$name" node "$NODE_DIR/tls_test.js" \
    >"$E2E_DIR/node.out" 2>&1; then
    cat "$E2E_DIR/node.out"
    pass "the Node SDK over HTTPS"
  else
    cat "$E2E_DIR/node.out"
    fail "the Node SDK over HTTPS"
  fi
else
  echo "# the Node SDK could not be installed: its part is skipped"
fi
finish
