#!/usr/bin/env bash
# The layers' arrows, from the includes (tests/check_layers): no include across layers the design
# does not allow, no services port in the SDK, no new cycle between services/ folders, no SQL
# outside storage/, no state written as a number in storage's SQL. Needs no server; the binary's
# path is ignored. The check must also fail on a tree that breaks its rules.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
bad() { echo "FAILED: $1"; failed=$((failed + 1)); }

if python3 "$here/../check_layers" "$root"; then ok "the tree keeps its arrows"; else bad "the tree"; fi

planted="$(mktemp -d)"
trap 'rm -rf "$planted"' EXIT
for d in api services storage workers sdk cmd; do cp -r "$root/$d" "$planted/$d"; done
cat >"$planted/storage/planted.cpp" <<'CPP'
constexpr const char* kPlanted = "UPDATE nodes SET state = CASE WHEN state = :node_ready "
                                 "THEN 3 ELSE state END WHERE state IN (1, 2)";
CPP
cat >"$planted/services/planted.cpp" <<'CPP'
constexpr const char* kPlanted = "SELECT id FROM custom_jobs";
CPP
out="$(python3 "$here/../check_layers" "$planted" || true)"
for want in "storage/planted.cpp: a state as a number in SQL ('state = CASE" \
  "storage/planted.cpp: a state as a number in SQL ('state IN (1" \
  "services/planted.cpp: holds SQL"; do
  if grep -qF "$want" <<<"$out"; then ok "a planted breach is named: $want"; else bad "not named: $want"; echo "$out"; fi
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
