#!/usr/bin/env bash
# Every reference to a Markdown file leads to a file of the repository (tests/check_doc_refs):
# Markdown links and bare mentions in comments alike, read relative to the file or to the root.
# Needs no server; the binary's path is ignored. The check must also fail on a tree that points
# to documents it does not hold, and pass over what is not a reference.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
bad() { echo "FAILED: $1"; failed=$((failed + 1)); }

if python3 "$here/../check_doc_refs" "$root"; then ok "every .md reference of the tree resolves"; else bad "the tree"; fi

planted="$(mktemp -d)"
trap 'rm -rf "$planted"' EXIT
git -C "$planted" init -q
mkdir -p "$planted/docs" "$planted/src"
# The planted names are spelt with $m, so that this file itself holds no reference to check.
m=md
cat >"$planted/README.$m" <<EOF
See [the design](docs/design.$m), [the notes](docs/notes.$m#layers) and [upstream](https://example.com/x/README.$m).
EOF
echo "# Design" >"$planted/docs/design.$m"
cat >"$planted/docs/guide.$m" <<EOF
Back to [the README](../README.$m); the design is [here](design.$m); see also \`../outside/DESIGN.$m\`.
EOF
cat >"$planted/src/code.cpp" <<EOF
// Limits from vertex-wire.$m §7; the layers are in docs/design.$m; every *.$m counts.
// Recorded at /srv/notes/samples.$m, described at github.com/org/repo/blob/main/docs/x.$m.
const char* kOut = "comparison.$m";  // what a run writes (NOT_DOCUMENTS)
EOF
cat >"$planted/src/run.sh" <<EOF
python3 - "\$root/docs/computed.$m"   # a computed path, not a reference
EOF
out="$(python3 "$here/../check_doc_refs" "$planted" || true)"
for want in "README.$m:1: docs/notes.$m" \
  "docs/guide.$m:1: ../outside/DESIGN.$m" \
  "src/code.cpp:1: vertex-wire.$m" \
  "src/code.cpp:2: /srv/notes/samples.$m" \
  "slurm-api-samples.$m is no longer mentioned"; do
  if grep -qF "$want" <<<"$out"; then ok "named: $want"; else bad "not named: $want"; echo "$out"; fi
done
for unwanted in "docs/design.$m:" "README.$m:1: docs/design.$m" "../README.$m" "example.com" \
  "github.com" "docs/x.$m" "computed.$m" ": comparison.$m" "*.$m"; do
  if grep -qF -- "$unwanted" <<<"$out"; then bad "named though fine: $unwanted"; echo "$out"; else ok "not named: $unwanted"; fi
done
if python3 "$here/../check_doc_refs" "$planted" >/dev/null; then bad "a planted tree passes"; else ok "a planted tree fails"; fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
