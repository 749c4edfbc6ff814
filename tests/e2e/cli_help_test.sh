#!/usr/bin/env bash
# `trainyard --help` lists every verb the binary has (checked against CLI11's own tree: --help-all
# and each group's --help), one line each within 100 columns; every verb's --help ends with an
# "Example:", which docs/cli.md shows too; and every example runs as written, with bash -c, from
# the repository's root against a running server (TRAINYARD_ENDPOINT, TRAINYARD_PROJECT and
# TRAINYARD_LOCATION set), exiting 0. The root is a mirror of the clone whose build/ is the tested
# binary's folder and whose .trainyard is this server's data directory, so what the examples write
# (sim-spot/, .trainyard/8090/) stays in this test's directory.
source "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TY=$TRAINYARD_BIN

# The order the examples run in: each finds what an earlier one left (a job to get, one that
# ended to delete, an operation, the resource `warm`). A verb not named here runs after these.
ORDER=(
  "jobs create" "jobs list" "jobs get" "jobs wait" "jobs logs" "jobs cancel" "jobs delete"
  "ops list" "ops get" "ops wait" "ops cancel" "ops delete"
  "resources create" "resources get" "resources list" "resources update" "resources reboot"
  "resources delete"
  "tokens create" "tokens list" "tokens revoke"
  "migrate" "simulate" "serve"
)

# example_of: the command(s) of the "Example:" block that ends the help text on stdin; nothing when
# the help does not end with one.
example_of() {
  awk '/^Example:$/ { ex = ""; open = 1; next }
       open && /^  / { ex = ex (ex == "" ? "" : "\n") substr($0, 3); next }
       /^$/ { next }
       { open = 0; ex = "" }
       END { if (open) printf "%s", ex }'
}

# run_example NAME COMMAND: runs COMMAND from the mirror with bash -c (at most 120 s); its output
# goes to $E2E_DIR/example.out. Returns its exit status.
run_example() {
  (cd "$MIRROR" && timeout 120 bash -c "$2") >"$E2E_DIR/example.out" 2>&1
}

# --- the top-level list --------------------------------------------------------------------------
TOP=$("$TY" --help) || fail "trainyard --help exits 0"
VERB_LINES=$(sed -n '/^Verbs:$/,/^$/p' <<<"$TOP" | sed -n 's/^  //p')
VERBS=()
[ -n "$VERB_LINES" ] && mapfile -t VERBS < <(awk -F '   *' '{ print $1 }' <<<"$VERB_LINES")
[ "${#VERBS[@]}" -gt 0 ] && pass "trainyard --help lists ${#VERBS[@]} verbs" ||
  fail "no Verbs: section in trainyard --help: $TOP"
long=$(awk 'length($0) + 2 > 100' <<<"$VERB_LINES")
[ -z "$long" ] && pass "each verb's line fits 100 columns" || fail "lines over 100 columns: $long"
check "one line per verb, none without a description" \
  "$(awk -F '   *' 'NF >= 2 && $2 != ""' <<<"$VERB_LINES" | wc -l)" "${#VERBS[@]}"
grep -q "TRAINYARD_ENDPOINT, TRAINYARD_PROJECT and TRAINYARD_LOCATION" <<<"$TOP" &&
  pass "the help says what the examples need" || fail "no word of the examples' environment"

# The verbs the binary has, from CLI11's own formatting: the top-level commands of --help-all, and
# for a group (one with Subcommands:), the verbs its --help lists.
ALL=$("$TY" --help-all) || fail "trainyard --help-all exits 0"
APP_VERBS=()
for command in $(sed -n '/^Subcommands:$/,$p' <<<"$ALL" | grep -E '^[a-z][a-z-]*$'); do
  group_help=$("$TY" "$command" --help) || fail "trainyard $command --help exits 0"
  subs=$(sed -n '/^Subcommands:$/,/^$/p' <<<"$group_help" | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
  if [ -z "$subs" ]; then
    APP_VERBS+=("$command")
  else
    for sub in $subs; do APP_VERBS+=("$command $sub"); done
  fi
done
[ "${#APP_VERBS[@]}" -ge 20 ] && pass "the binary has ${#APP_VERBS[@]} verbs" ||
  fail "only ${#APP_VERBS[@]} verbs found in --help-all: ${APP_VERBS[*]}"
missing=$(comm -23 <(printf '%s\n' "${APP_VERBS[@]}" | sort) <(printf '%s\n' "${VERBS[@]}" | sort))
extra=$(comm -13 <(printf '%s\n' "${APP_VERBS[@]}" | sort) <(printf '%s\n' "${VERBS[@]}" | sort))
[ -z "$missing" ] && pass "the top-level list has every verb" || fail "not in trainyard --help: $missing"
[ -z "$extra" ] && pass "and nothing else" || fail "listed but not a verb: $extra"

# --- every verb's --help ends with an example, which docs/cli.md shows too ----------------------
declare -A EXAMPLE
for verb in "${VERBS[@]}"; do
  # shellcheck disable=SC2086  # the verb's words are separate arguments
  if ! help=$("$TY" $verb --help 2>&1); then
    fail "trainyard $verb --help exits 0: $help"
    continue
  fi
  EXAMPLE[$verb]=$(example_of <<<"$help")
  if [ -z "${EXAMPLE[$verb]}" ]; then
    fail "trainyard $verb --help does not end with an Example:"
    continue
  fi
  pass "$verb --help ends with an example"
  grep -qF -- "${EXAMPLE[$verb]}" "$ROOT/docs/cli.md" && pass "docs/cli.md shows $verb's example" ||
    fail "docs/cli.md lacks $verb's example: ${EXAMPLE[$verb]}"
done
# The parser itself: a help without an example, or with text after it, has none.
check "a help whose Example: is followed by more text has no example" \
  "$(printf 'Usage: x\n\nExample:\n  x run\n\nExit codes: 0\n' | example_of)" ""
check "a help ending with an example yields its command" \
  "$(printf 'Usage: x\n\nExample:\n  x run "$(y)"\n' | example_of)" 'x run "$(y)"'

# --- run them, from a mirror of the repository's root --------------------------------------------
start_server --sim-speed 100
export TRAINYARD_ENDPOINT=$BASE TRAINYARD_PROJECT=my-project TRAINYARD_LOCATION=us-central1
unset TRAINYARD_TOKEN TRAINYARD_CA_FILE
MIRROR="$E2E_DIR/root"
mkdir "$MIRROR"
for entry in "$ROOT"/* "$ROOT"/.[!.]*; do
  [ -e "$entry" ] || continue
  name=${entry##*/}
  case $name in build | build-* | .trainyard | sim-* | node_modules) continue ;; esac
  ln -s "$entry" "$MIRROR/$name"
done
ln -s "$(cd "$(dirname "$TY")" && pwd)" "$MIRROR/build"
ln -s "$E2E_DIR/data" "$MIRROR/.trainyard"
[ "$(cd "$MIRROR" && realpath build/trainyard)" = "$(realpath "$TY")" ] &&
  pass "the mirror's build/trainyard is the binary under test" || fail "build/trainyard in the mirror"

# The runner reports a broken example: one that needs a job that does not exist.
if run_example planted "build/trainyard jobs get \"\$(build/trainyard jobs list --filter state=JOB_STATE_EXPIRED --json | jq -r '.customJobs[0].name')\""; then
  fail "a broken example passed: $(cat "$E2E_DIR/example.out")"
else
  pass "a broken example fails"
fi

declare -A ORDERED
RUN=()
for verb in "${ORDER[@]}"; do
  ORDERED[$verb]=1
  [ -n "${EXAMPLE[$verb]+set}" ] && RUN+=("$verb")
done
for verb in "${VERBS[@]}"; do
  [ -n "${ORDERED[$verb]+set}" ] || RUN+=("$verb")
done

for verb in "${RUN[@]}"; do
  example=${EXAMPLE[$verb]}
  [ -n "$example" ] || continue
  if [ "$verb" = serve ]; then
    # A server runs until it is stopped: it must answer /readyz on its --listen address, then exit
    # 0 on SIGTERM.
    listen=$(grep -oE -- '--listen[ =][^ ]+' <<<"$example" | sed 's/--listen[ =]//')
    if curl -s -o /dev/null "http://$listen/healthz"; then
      fail "serve's example: $listen is already taken on this host"
      continue
    fi
    (cd "$MIRROR" && exec bash -c "exec $example") >"$E2E_DIR/serve-example.log" 2>&1 &
    pid=$!
    if wait_until 120 "the serve example ready" curl -fsS "http://$listen/readyz"; then
      pass "serve's example serves on $listen"
    else
      fail "serve's example never got ready: $(tail -n 5 "$E2E_DIR/serve-example.log")"
    fi
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" && rc=0 || rc=$?
    check "serve's example exits 0 on SIGTERM" "$rc" 0
    continue
  fi
  if run_example "$verb" "$example"; then
    pass "$verb's example runs: $example"
  else
    fail "$verb's example exits $?: $example
$(tail -n 5 "$E2E_DIR/example.out")"
  fi
done

finish
