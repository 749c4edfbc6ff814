#!/usr/bin/env bash
# The shipped nginx configuration (docs/nginx/trainyard.conf), run by Debian's nginx on loopback
# in front of two servers on one database: a full one and an API-only one that adopts its
# cluster. Over TLS, requests reach both upstreams; a client that sends its headers (or its body)
# too slowly is cut off while others are served; an oversized body stops at nginx; GETs go on
# when one upstream dies; a token's flood is cut off at the edge with 429. Both run with tokens,
# as the README's recipe says: a request without one is a 401 through nginx.
source "$(dirname "$0")/lib.sh"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ]; then
  echo "SKIP: nginx is not installed (make setup installs it)"
  exit 77
fi

API_PID=""
NGINX_PID=""
stop_extra() {
  [ -n "$NGINX_PID" ] && kill -QUIT "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null || true
  [ -n "$API_PID" ] && kill -TERM "$API_PID" 2>/dev/null && wait "$API_PID" 2>/dev/null || true
  cleanup
}
trap stop_extra EXIT

PKI="$E2E_DIR/pki"
make_test_pki "$PKI"

# The README's recipe runs every server with --auth=tokens: check it says so, then do as it says.
recipe=$(sed -n '/^## In production/,/^## /p' "$(dirname "$0")/../../README.md" | grep 'trainyard serve' || true)
[ -n "$recipe" ] && ! grep -v -- '--auth=tokens' <<<"$recipe" | grep -q . &&
  pass "every server of the README's production recipe runs with --auth=tokens" ||
  fail "the README's production recipe serves without tokens: $recipe"
start_server --sim-speed 100 --auth=tokens
TOKEN=$("$TRAINYARD_BIN" tokens create --data-dir "$E2E_DIR/data" --project demo --role editor)
AUTH=(-H "Authorization: Bearer $TOKEN")
FULL_PORT=$PORT
API_PORT=$(free_port)
"$TRAINYARD_BIN" serve --roles=api --auth=tokens --listen "127.0.0.1:$API_PORT" --data-dir "$E2E_DIR/data" \
  >>"$E2E_DIR/api.log" 2>&1 &
API_PID=$!
wait_until 60 "API-only server ready" curl -fsS "http://127.0.0.1:$API_PORT/readyz"
pass "an API-only server adopts the running server's database"

# Polls are answered from each server's memory; a change made through one server must still show
# in the other's polls (LISTEN/NOTIFY drops it there), and the other must answer from memory.
METRICS_TOKEN=$("$TRAINYARD_BIN" tokens create --data-dir "$E2E_DIR/data" --role metrics-viewer)
cache_hits() {
  curl -fsS -H "Authorization: Bearer $METRICS_TOKEN" "http://127.0.0.1:$API_PORT/metrics" |
    awk '/^trainyard_job_cache_lookups_total\{result="hit"\}/ {print $2}'
}
polled=$(jq '.jobSpec.workerPoolSpecs[0].containerSpec.env = [{"name": "TRAINYARD_SIM_DURATION", "value": "3600s"}]' \
  "$PAYLOADS/lora-single-node.json" |
  curl -fsS "${AUTH[@]}" -X POST "http://127.0.0.1:$FULL_PORT/v1/projects/demo/locations/us-central1/customJobs" \
    -H 'content-type: application/json' --data-binary @- | jq -r .name)
api_state() { curl -fsS "${AUTH[@]}" "http://127.0.0.1:$API_PORT/v1/$polled" | jq -r .state; }
# Until its feed listens (a moment after the server is ready), a server answers every poll from
# PostgreSQL.
feed_live() {
  curl -fsS -H "Authorization: Bearer $METRICS_TOKEN" "http://127.0.0.1:$API_PORT/metrics" |
    grep -x 'trainyard_job_cache_live 1' >/dev/null  # not -q: grep must read it all (pipefail)
}
wait_until 10 "the API-only server's change feed listening" feed_live
# The job is being admitted and started meanwhile, and each step drops it again: poll until one
# poll is answered from memory.
hit_on_repeat() {
  local before
  api_state >/dev/null
  before=$(cache_hits)
  api_state >/dev/null
  [ "$(cache_hits)" -gt "${before:-0}" ]
}
if wait_until 20 "a repeated poll answered from memory" hit_on_repeat; then
  pass "the API-only server answers a repeated poll from memory"
else
  fail "no repeated poll of the API-only server was answered from memory"
fi
curl -fsS -o /dev/null "${AUTH[@]}" -X POST "http://127.0.0.1:$FULL_PORT/v1/$polled:cancel"
cancelled_there() { [[ "$(api_state)" =~ JOB_STATE_CANCELL(ING|ED) ]]; }
if wait_until 10 "the cancel made on one server in the other's polls" cancelled_there; then
  pass "a cancel made through one server shows in the other's polls"
else
  fail "a cancel made through one server never showed in the other's polls"
fi
# Gone again, so the edge checks below start from an empty project.
cancelled() { [ "$(api_state)" = JOB_STATE_CANCELLED ]; }
wait_until 30 "the polled job cancelled" cancelled
curl -fsS -o /dev/null "${AUTH[@]}" -X DELETE "http://127.0.0.1:$FULL_PORT/v1/$polled"

# The shipped file, with loopback ports, the test's certificate and 2 s client timeouts.
NGX="$E2E_DIR/nginx"
mkdir -p "$NGX/tmp"
NGINX_PORT=$(free_port)
sed -e "s|listen 443 ssl;|listen 127.0.0.1:$NGINX_PORT ssl;|" \
  -e "s|127.0.0.1:8081|127.0.0.1:$FULL_PORT|" -e "s|127.0.0.1:8082|127.0.0.1:$API_PORT|" \
  -e "s|/etc/trainyard/tls/|$PKI/|" \
  -e "s|client_header_timeout 10s;|client_header_timeout 2s;|" \
  -e "s|client_body_timeout 30s;|client_body_timeout 2s;|" \
  "$(dirname "$0")/../../docs/nginx/trainyard.conf" >"$NGX/trainyard.conf"
grep -q "client_header_timeout 2s;" "$NGX/trainyard.conf" || fail "the shipped file changed shape"
user_line=""
[ "$(id -u)" = 0 ] && user_line="user root root;"
cat >"$NGX/nginx.conf" <<CONF
$user_line
worker_processes 1;
pid $NGX/nginx.pid;
error_log $NGX/error.log info;
events { worker_connections 256; }
http {
  access_log $NGX/access.log;
  client_body_temp_path $NGX/tmp/body;
  proxy_temp_path $NGX/tmp/proxy;
  fastcgi_temp_path $NGX/tmp/fastcgi;
  uwsgi_temp_path $NGX/tmp/uwsgi;
  scgi_temp_path $NGX/tmp/scgi;
  include $NGX/trainyard.conf;
}
CONF
if ! "$NGINX" -t -p "$NGX" -c "$NGX/nginx.conf" >"$NGX/check.out" 2>&1; then
  cat "$NGX/check.out" >&2
  fail "nginx -t refused the shipped configuration"
  finish
fi
pass "nginx -t accepts the shipped configuration"
"$NGINX" -p "$NGX" -c "$NGX/nginx.conf" -g "daemon off;" >>"$NGX/stdout" 2>&1 &
NGINX_PID=$!
EDGE="https://127.0.0.1:$NGINX_PORT"
wait_until 30 "nginx ready" curl -fsS --cacert "$PKI/ca.pem" "$EDGE/readyz"
pass "readyz through nginx over TLS"

V1="$EDGE/v1/projects/demo/locations/us-central1"
JOB=$(jq -c '.displayName = "through-nginx"' "$PAYLOADS/lora-single-node.json")
# Without a token: 401 with the Vertex body and a challenge, and nothing stored.
code=$(curl -sS -o "$E2E_DIR/refused" -D "$E2E_DIR/refused.headers" -w '%{http_code}' --cacert "$PKI/ca.pem" \
  -X POST "$V1/customJobs" -H 'content-type: application/json' --data-binary "$JOB")
check "a create without a token through nginx" "$code" 401
check "its body is Vertex's" "$(jq -r .error.status "$E2E_DIR/refused")" UNAUTHENTICATED
grep -qi '^www-authenticate: Bearer' "$E2E_DIR/refused.headers" && pass "with a Bearer challenge" ||
  fail "no challenge: $(cat "$E2E_DIR/refused.headers")"
check "a list without a token through nginx" \
  "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$PKI/ca.pem" "$V1/customJobs")" 401
check "nothing was stored" \
  "$(curl -fsS "${AUTH[@]}" --cacert "$PKI/ca.pem" "$V1/customJobs" | jq '.customJobs // [] | length')" 0
curl -sS -D "$E2E_DIR/headers" --cacert "$PKI/ca.pem" -X POST "$V1/customJobs" "${AUTH[@]}" \
  -H 'content-type: application/json' --data-binary "$JOB" >"$E2E_DIR/created"
name=$(jq -r .name "$E2E_DIR/created")
[[ "$name" == projects/*/customJobs/* ]] && pass "a create through nginx" || fail "create: $(cat "$E2E_DIR/created")"
rid=$(tr -d '\r' <"$E2E_DIR/headers" | sed -n 's/^[Xx]-[Rr]equest-[Ii]d: //p')
[[ "$rid" =~ ^[0-9a-f]{32}$ ]] && pass "nginx's request id is the server's ($rid)" || fail "X-Request-Id: [$rid]"
# The servers write their logs off the request thread: poll for the line.
wait_until 10 "request $rid logged" grep -q "\"request_id\":\"$rid\"" "$E2E_DIR/server.log" "$E2E_DIR/api.log" &&
  pass "the server logged the create under nginx's request id" || fail "request id $rid not in the logs"

for i in $(seq 1 12); do
  curl -fsS -o /dev/null --cacert "$PKI/ca.pem" "${AUTH[@]}" "$EDGE/v1/$name?round=$i" || fail "GET $i"
done
logged_both() {
  grep -q "\"path\":\"/v1/$name\"" "$E2E_DIR/server.log" && grep -q "\"path\":\"/v1/$name\"" "$E2E_DIR/api.log"
}
wait_until 10 "GETs logged by both upstreams" logged_both || true
full_hits=$(grep -c "\"path\":\"/v1/$name\"" "$E2E_DIR/server.log" || true)
api_hits=$(grep -c "\"path\":\"/v1/$name\"" "$E2E_DIR/api.log" || true)
[ "$full_hits" -gt 0 ] && [ "$api_hits" -gt 0 ] &&
  pass "GETs reach both upstreams ($full_hits and $api_hits)" ||
  fail "upstream spread: full $full_hits, api $api_hits"

# 1.5 MB: over the edge's 1 MB limit, refused without reaching a server.
before=$(cat "$E2E_DIR/server.log" "$E2E_DIR/api.log" | grep -c '"method":"POST"' || true)
code=$(head -c 1500000 /dev/zero | tr '\0' 'a' | curl -sS -o /dev/null -w '%{http_code}' \
  --cacert "$PKI/ca.pem" -X POST "$V1/customJobs" -H 'content-type: application/json' --data-binary @-)
check "a 1.5 MB body is refused at the edge" "$code" 413
after=$(cat "$E2E_DIR/server.log" "$E2E_DIR/api.log" | grep -c '"method":"POST"' || true)
check "the oversized body never reached a server" "$after" "$before"

# Slow clients: one that never finishes its headers, one that never finishes its body. Each is
# cut off by nginx after its 2 s timeout, and others are served meanwhile.
slow_client() {  # slow_client headers|body: prints the seconds until nginx closed the connection
  python3 - "$NGINX_PORT" "$PKI/ca.pem" "$1" <<'PY'
import socket, ssl, sys, time
port, ca, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=ca)
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
if kind == "headers":
    s.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
else:
    s.sendall(b"POST /v1/projects/demo/locations/us-central1/customJobs HTTP/1.1\r\n"
              b"Host: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"d")
start = time.monotonic()
s.settimeout(30)
try:
    while s.recv(4096):
        pass
except (ssl.SSLError, ConnectionResetError):
    pass
except socket.timeout:
    print("never")
    sys.exit(0)
print("%.1f" % (time.monotonic() - start))
PY
}
for kind in headers body; do
  slow_client "$kind" >"$E2E_DIR/slow.$kind" &
  slow_pid=$!
  served=0
  for i in $(seq 1 10); do
    curl -fsS -o /dev/null --cacert "$PKI/ca.pem" "${AUTH[@]}" "$EDGE/v1/$name" && served=$((served + 1))
  done
  check "10 of 10 requests served while a slow-$kind client hangs" "$served" 10
  wait "$slow_pid" || true
  took=$(cat "$E2E_DIR/slow.$kind")
  if [[ "$took" =~ ^[0-9.]+$ ]] && awk -v t="$took" 'BEGIN { exit !(t >= 1.5 && t < 15) }'; then
    pass "a slow-$kind client is cut off after ${took}s (timeout 2 s)"
  else
    fail "slow-$kind client: closed after [$took]"
  fi
done

# One upstream dies: GETs go to the other (nginx retries idempotent requests only).
kill -9 "$API_PID"; wait "$API_PID" 2>/dev/null || true; API_PID=""
served=0
for i in $(seq 1 10); do
  curl -fsS -o /dev/null --cacert "$PKI/ca.pem" "${AUTH[@]}" "$EDGE/v1/$name" && served=$((served + 1))
done
check "GETs are served after one upstream is killed" "$served" 10

# The edge's rate limit: one token's 600 GETs on one kept connection, far past its burst (100, then
# 50/s), pass up to the burst and are then answered 429 by nginx, with Vertex's error body and
# when to retry; once that time has passed the token is served again. A token of its own: the
# GETs above spent part of the first token's burst less than a second ago (50/s refills it).
FLOOD_TOKEN=$("$TRAINYARD_BIN" tokens create --data-dir "$E2E_DIR/data" --project demo --role editor)
AUTH=(-H "Authorization: Bearer $FLOOD_TOKEN")
FLOOD="$E2E_DIR/flood"
mkdir -p "$FLOOD"
curl -s --cacert "$PKI/ca.pem" "${AUTH[@]}" -i -o "$FLOOD/#1" -w '%{http_code}\n' \
  "$EDGE/v1/$name?flood=[1-600]" >"$FLOOD/codes"
served=$(grep -cx 200 "$FLOOD/codes" || true)
limited=$(grep -cx 429 "$FLOOD/codes" || true)
[ "$served" -ge 100 ] && pass "a token's burst passes the edge ($served of 600)" ||
  fail "only $served of 600 GETs passed: the burst is 100"
[ "$limited" -ge 1 ] && pass "past it, $limited answered 429" || fail "no 429 in 600 GETs at once"
check "every GET was served or limited" "$((served + limited))" 600
refusal=$(grep -l '^HTTP/1.1 429' "$FLOOD"/[0-9]* | head -n 1 || true)
if [ -n "$refusal" ]; then
  grep -qi '^retry-after: 1' "$refusal" && pass "a 429 says when to retry (Retry-After)" ||
    fail "no Retry-After: $(cat "$refusal")"
  body=$(sed '1,/^\r$/d' "$refusal")
  check "its body is Vertex's" "$(jq -r .error.status <<<"$body" || true)" RESOURCE_EXHAUSTED
  check "with a RetryInfo" "$(jq -r '.error.details[0]["@type"]' <<<"$body" || true)" \
    type.googleapis.com/google.rpc.RetryInfo
fi
wait_until 10 "the token served again after Retry-After" \
  curl -fsS -o /dev/null --cacert "$PKI/ca.pem" "${AUTH[@]}" "$EDGE/v1/$name"
pass "the token is served again once the limit's time has passed"
finish
