#!/usr/bin/env bash
# Bearer tokens end to end (serve --auth=tokens): `trainyard tokens create|list|revoke` on the
# server's data directory, before and while it runs; curl for every refusal (401 with the Vertex
# body and a challenge, 403 alike for another project's resources whether or not they exist);
# the trainyard CLI with --token; the real gcloud with auth/access_token_file; the official Node
# SDK with the header; and --auth=off refused on a non-loopback address.
source "$(dirname "$0")/lib.sh"

DATA="$E2E_DIR/data"
token_re='^ty1_[0-9]+_[A-Za-z0-9_-]{43}$'

# --- no auth on a public address: refused, saying why -----------------------------------------
if timeout 30 "$TRAINYARD_BIN" serve --listen "0.0.0.0:$(free_port)" --auth=off \
  --data-dir "$E2E_DIR/refused" >"$E2E_DIR/refused.out" 2>&1; then
  fail "--auth=off on 0.0.0.0 started"
else
  check "--auth=off on 0.0.0.0 exits 2" "$?" 2
  grep -q "only allowed on a loopback" "$E2E_DIR/refused.out" && pass "and says why" ||
    fail "no reason: $(cat "$E2E_DIR/refused.out")"
fi

# --- the first token, before the server ever ran ------------------------------------------------
"$TRAINYARD_BIN" tokens create --data-dir "$DATA" --project team-a --role editor \
  --description "first" >"$E2E_DIR/editor" 2>"$E2E_DIR/create.err"
check "tokens create prints one line" "$(wc -l <"$E2E_DIR/editor")" 1
EDITOR=$(cat "$E2E_DIR/editor")
[[ "$EDITOR" =~ $token_re ]] && pass "the line is the token alone" || fail "stdout: $EDITOR"

start_server --auth=tokens
V1="$BASE/v1/projects/team-a/locations/us-central1"

# --- more tokens while it runs (the CLI adopts the server's PostgreSQL and leaves it running) ---
mint() { "$TRAINYARD_BIN" tokens create --data-dir "$DATA" "$@" 2>>"$E2E_DIR/create.err"; }
VIEWER=$(mint --project team-a --role viewer)
OTHER=$(mint --project team-b --role admin)
FLEET=$(mint --fleet-admin)
[[ "$FLEET" =~ $token_re ]] && pass "a fleet-admin token needs no project" || fail "fleet token: $FLEET"
check "the server's database survived the CLI" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" 200

# --- the session the console reads: role and projects, no button a viewer cannot use --------------
check "a viewer's session names its role and its one project" \
  "$(curl -fsS -H "authorization: Bearer $VIEWER" "$BASE/trainyard/v1/session" | jq -c '[.authentication, .role, .fleetAdmin, .projects]')" \
  '["TOKENS","viewer",false,["team-a"]]'
check "a fleet admin's session may pick any project" \
  "$(curl -fsS -H "authorization: Bearer $FLEET" "$BASE/trainyard/v1/session" | jq -c '[.role, .fleetAdmin, (.projects | index("team-a") != null)]')" \
  '["admin",true,true]'
check "no token, no session" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/trainyard/v1/session")" 401

# call METHOD URL TOKEN [BODY]: the body goes to $E2E_DIR/body, the status code to stdout.
call() {
  local args=(-sS -o "$E2E_DIR/body" -D "$E2E_DIR/headers" -w '%{http_code}' -X "$1" "$2"
    -H 'content-type: application/json')
  [ -n "$3" ] && args+=(-H "Authorization: Bearer $3")
  [ $# -ge 4 ] && args+=(--data-binary "$4")
  curl "${args[@]}"
}
body() { jq -r "$1" "$E2E_DIR/body"; }
JOB=$(jq -c '.displayName = "with-token"' "$PAYLOADS/lora-single-node.json")

check "healthz needs no token" "$(call GET "$BASE/healthz" "")" 200
check "no token: 401" "$(call GET "$V1/customJobs" "")" 401
check "no token: UNAUTHENTICATED" "$(body .error.status)" UNAUTHENTICATED
grep -qi '^www-authenticate: Bearer' "$E2E_DIR/headers" && pass "401 carries a Bearer challenge" ||
  fail "no challenge: $(cat "$E2E_DIR/headers")"
check "a garbled token: 401" "$(call GET "$V1/customJobs" "garbage")" 401
check "a forged token: 401" "$(call GET "$V1/customJobs" "${EDITOR%_*}_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")" 401

check "the editor creates a job" "$(call POST "$V1/customJobs" "$EDITOR" "$JOB")" 200
job=$(body .name)
job_id=${job##*/}
check "the viewer reads it" "$(call GET "$BASE/v1/$job" "$VIEWER")" 200
check "the viewer may not create" "$(call POST "$V1/customJobs" "$VIEWER" "$JOB")" 403
check "as PERMISSION_DENIED" "$(body .error.status)" PERMISSION_DENIED
check "naming the permission" "$(body .error.message)" \
  "Permission 'aiplatform.customJobs.create' denied on resource 'projects/team-a' (or it may not exist)."

check "team-b's token gets 403 for team-a's job" "$(call GET "$V1/customJobs/$job_id" "$OTHER")" 403
real=$(body .error.message)
check "and 403 for a job that does not exist" "$(call GET "$V1/customJobs/999999" "$OTHER")" 403
check "in the same words" "$(body .error.message)" "$real"
check "team-b's token cannot cancel it" "$(call POST "$V1/customJobs/$job_id:cancel" "$OTHER")" 403
call GET "$V1/customJobs/$job_id" "$EDITOR" >/dev/null
[[ "$(body .state)" != *CANCEL* ]] && pass "it is still not cancelled" || fail "state: $(body .state)"

check "the fleet view needs the fleet admin" "$(call GET "$BASE/trainyard/v1/fleet" "$OTHER")" 403
check "which gets it" "$(call GET "$BASE/trainyard/v1/fleet" "$FLEET")" 200

# --- the trainyard CLI sends --token ----------------------------------------------------------
if "$TRAINYARD_BIN" jobs list --endpoint "$BASE" --project team-a --token "$VIEWER" \
  >"$E2E_DIR/cli.out" 2>&1; then
  grep -q with-token "$E2E_DIR/cli.out" && pass "trainyard jobs list with --token" ||
    fail "cli output: $(cat "$E2E_DIR/cli.out")"
else
  fail "trainyard jobs list with --token: $(cat "$E2E_DIR/cli.out")"
fi
"$TRAINYARD_BIN" jobs list --endpoint "$BASE" --project team-a >"$E2E_DIR/cli.out" 2>&1 && rc=0 || rc=$?
check "without a token the CLI exits 1" "$rc" 1
grep -q UNAUTHENTICATED "$E2E_DIR/cli.out" && pass "saying UNAUTHENTICATED" ||
  fail "cli said: $(cat "$E2E_DIR/cli.out")"

# --- tokens list shows no secret; revoke takes effect within the cache time -----------------
"$TRAINYARD_BIN" tokens list --data-dir "$DATA" >"$E2E_DIR/list" 2>/dev/null
check "tokens list shows the 4 tokens" "$(grep -c '^[0-9]' "$E2E_DIR/list")" 4
# The secret is what follows "ty1_<id>_"; it may itself hold '_', so strip the prefix, not up to
# the last '_' (that left a few characters that the listing matched by chance).
secret=${VIEWER#ty1_*_}
check "the secret is the token's 43-character tail" "${#secret}" 43
grep -qF -- "$secret" "$E2E_DIR/list" && fail "tokens list printed a secret" || pass "tokens list prints no secret"
viewer_id=$(echo "$VIEWER" | cut -d_ -f2)
"$TRAINYARD_BIN" tokens revoke --data-dir "$DATA" "$viewer_id" >/dev/null 2>&1
wait_until 10 "the revoked token refused" \
  bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $VIEWER' '$V1/customJobs')\" = 401 ]" &&
  pass "a revoked token is refused within seconds" || fail "the revoked token still works"

# --- gcloud with auth/access_token_file ----------------------------------------------------------
if command -v gcloud >/dev/null 2>&1; then
  export CLOUDSDK_CONFIG="$E2E_DIR/gcloud"
  export CLOUDSDK_CORE_DISABLE_PROMPTS=1
  echo "$EDITOR" >"$E2E_DIR/token.txt"
  gcloud config set auth/access_token_file "$E2E_DIR/token.txt" >/dev/null 2>&1
  gcloud config set core/project team-a >/dev/null 2>&1
  gcloud config set api_endpoint_overrides/aiplatform "$BASE/" >/dev/null 2>&1
  gcloud config set component_manager/disable_update_check true >/dev/null 2>&1
  if gcloud ai custom-jobs describe "$job_id" --region=us-central1 --format='value(displayName)' \
    >"$E2E_DIR/gcloud.out" 2>"$E2E_DIR/gcloud.err"; then
    check "gcloud describe with the token file" "$(cat "$E2E_DIR/gcloud.out")" with-token
  else
    fail "gcloud describe with the token file: $(cat "$E2E_DIR/gcloud.err")"
  fi
  echo "$OTHER" >"$E2E_DIR/token.txt"
  if gcloud ai custom-jobs describe "$job_id" --region=us-central1 >/dev/null 2>"$E2E_DIR/gcloud.err"; then
    fail "gcloud with team-b's token read team-a's job"
  else
    grep -q "PERMISSION_DENIED\|Permission 'aiplatform.customJobs.get' denied" "$E2E_DIR/gcloud.err" &&
      pass "gcloud with team-b's token is denied" || fail "gcloud said: $(cat "$E2E_DIR/gcloud.err")"
  fi
else
  echo "# gcloud is not installed (it is not in Debian's archive): its part is skipped"
fi

# --- the Node SDK with the header ----------------------------------------------------------------
if (install_node_sdk) >"$E2E_DIR/npm.out" 2>&1; then
  NODE_DIR="$(dirname "$TRAINYARD_BIN")/node-sdk"
  if PORT=$PORT TOKEN=$EDITOR OTHER=$OTHER node "$NODE_DIR/auth_test.js" >"$E2E_DIR/node.out" 2>&1; then
    cat "$E2E_DIR/node.out"
    pass "the Node SDK with a token"
  else
    cat "$E2E_DIR/node.out"
    fail "the Node SDK with a token"
  fi
else
  echo "# the Node SDK could not be installed: its part is skipped ($(tail -n 1 "$E2E_DIR/npm.out"))"
fi

finish
