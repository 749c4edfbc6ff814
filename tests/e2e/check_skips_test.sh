#!/usr/bin/env bash
# tests/check_skips (what `make test` runs after ctest) against hand-written JUnit files in ctest
# 3.25's form and a fake PATH: a clean run passes; a skip tests/allowed_skips does not list fails;
# a listed skip passes only while its tool is absent. Needs no build: the trainyard binary ctest
# passes as $1 is ignored. Never exits 77 (a skip here would hide the check itself).
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
CHECKER="$HERE/../check_skips"
# The interpreter itself (not a shim such as pyenv's, which needs the PATH the tests replace).
PY=$(python3 -c 'import sys; print(sys.executable)') || { echo "not ok - no python3" >&2; exit 1; }
T=$(mktemp -d /tmp/trainyard-check-skips.XXXXXX)
trap 'rm -rf "$T"' EXIT
FAILURES=0
PASSES=0
pass() { PASSES=$((PASSES + 1)); echo "ok - $1"; }
fail() { FAILURES=$((FAILURES + 1)); echo "not ok - $1" >&2; }

# junit FILE CASE…: a ctest JUnit file; each CASE is NAME:run, NAME:fail, NAME:skip (exit 77),
# NAME:regex (SKIP_REGULAR_EXPRESSION), NAME:disabled or NAME:noexe (executable not found).
junit() {
  local file=$1 c name
  shift
  {
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="trainyard" tests="%d">\n' $#
    for c in "$@"; do
      name=${c%%:*}
      case ${c#*:} in
        run) printf '\t<testcase name="%s" classname="%s" time="0.1" status="run">\n\t\t<system-out>ok</system-out>\n\t</testcase>\n' "$name" "$name" ;;
        fail) printf '\t<testcase name="%s" classname="%s" time="0.1" status="fail">\n\t\t<failure message=""/>\n\t\t<system-out>not ok</system-out>\n\t</testcase>\n' "$name" "$name" ;;
        skip) printf '\t<testcase name="%s" classname="%s" time="0.1" status="notrun">\n\t\t<skipped message="SKIP_RETURN_CODE=77"/>\n\t\t<system-out>SKIP: %s is not installed\n</system-out>\n\t</testcase>\n' "$name" "$name" "$name" ;;
        regex) printf '\t<testcase name="%s" classname="%s" time="0.1" status="notrun">\n\t\t<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>\n\t\t<system-out>SKIPME</system-out>\n\t</testcase>\n' "$name" "$name" ;;
        disabled) printf '\t<testcase name="%s" classname="%s" time="0" status="disabled">\n\t\t<system-out>Disabled</system-out>\n\t</testcase>\n' "$name" "$name" ;;
        noexe) printf '\t<testcase name="%s" classname="%s" time="0" status="notrun">\n\t\t<skipped message="Unable to find executable"/>\n\t\t<system-out>Unable to find executable: /nonexistent</system-out>\n\t</testcase>\n' "$name" "$name" ;;
      esac
    done
    printf '</testsuite>\n'
  } >"$file"
}

# A fake PATH without any tool, and one where "gcloud" is present.
mkdir -p "$T/bare" "$T/with-gcloud"
printf '#!/bin/sh\nexit 0\n' >"$T/with-gcloud/gcloud"
chmod 755 "$T/with-gcloud/gcloud"

cat >"$T/allowed" <<'EOF'
# a comment, then a blank line

e2e_gcloud_test  gcloud  gcloud is not in Debian's archive
e2e_logs_test	gcloud	its gcloud part, tab-separated
EOF

# run NAME PATH JUNIT [ALLOWED] → sets rc and out (stdout and stderr) of the checker.
run() {
  out=$(env PATH="$2" "$PY" "$CHECKER" "$3" ${4:+"$4"} 2>&1)
  rc=$?
  printf '%s\n' "$out" | sed "s/^/  [$1] /"
}
# expect NAME WANT_RC [GREP_PATTERN…]: the last run's status, and lines its output must hold.
expect() {
  local name=$1 want=$2 p ok=1
  shift 2
  [ "$rc" = "$want" ] || { fail "$name: exit status $rc, want $want"; ok=0; }
  for p in "$@"; do
    # A here-string, not a pipe: grep -q stops at the first match, and under pipefail the writer's
    # SIGPIPE would fail a check that matched.
    grep -qE -- "$p" <<<"$out" || { fail "$name: no line matching [$p]"; ok=0; }
  done
  [ $ok = 1 ] && pass "$name"
}

junit "$T/clean.xml" unit_tests:run e2e_curl_test:run e2e_gcloud_test:run fuzz_page_token:run
run clean "$T/bare" "$T/clean.xml" "$T/allowed"
expect "a clean run passes" 0 '^check_skips: 4 tests, 0 did not run: 0 allowed, 0 not allowed - ok$'

junit "$T/failed.xml" unit_tests:run e2e_curl_test:fail
run failed "$T/bare" "$T/failed.xml" "$T/allowed"
expect "a failed test is ctest's to report, not a skip" 0 '0 did not run'

junit "$T/unlisted.xml" unit_tests:run e2e_nginx_test:skip e2e_curl_test:run
run unlisted "$T/bare" "$T/unlisted.xml" "$T/allowed"
expect "a skip not in the list fails" 1 \
  '^check_skips: NOT ALLOWED: e2e_nginx_test: did not run \(SKIP_RETURN_CODE=77: SKIP: e2e_nginx_test is not installed\)' \
  '1 did not run: 0 allowed, 1 not allowed$'

junit "$T/listed.xml" unit_tests:run e2e_gcloud_test:skip e2e_logs_test:skip
run listed-absent "$T/bare" "$T/listed.xml" "$T/allowed"
expect "a listed skip whose tool is absent passes" 0 \
  '^check_skips: allowed: e2e_gcloud_test \(gcloud is not on PATH' \
  '^check_skips: allowed: e2e_logs_test ' '3 tests, 2 did not run: 2 allowed, 0 not allowed - ok$'

run listed-present "$T/with-gcloud" "$T/listed.xml" "$T/allowed"
expect "a listed skip whose tool is present fails" 1 \
  "^check_skips: NOT ALLOWED: e2e_gcloud_test: .*yet gcloud is on PATH \\($T/with-gcloud/gcloud\\)" \
  '^check_skips: NOT ALLOWED: e2e_logs_test: ' '2 did not run: 0 allowed, 2 not allowed$'

junit "$T/other.xml" e2e_x_test:regex e2e_y_test:disabled e2e_z_test:noexe e2e_gcloud_test:skip
run other-kinds "$T/bare" "$T/other.xml" "$T/allowed"
expect "a regex skip, a disabled test and a missing executable fail too" 1 \
  'NOT ALLOWED: e2e_x_test: did not run \(SKIP_REGULAR_EXPRESSION_MATCHED' \
  'NOT ALLOWED: e2e_y_test: did not run \(disabled\)' \
  'NOT ALLOWED: e2e_z_test: did not run \(Unable to find executable\)' \
  '4 did not run: 1 allowed, 3 not allowed$'

run no-junit "$T/bare" "$T/missing.xml" "$T/allowed"
expect "a missing JUnit file is an error" 2 "cannot read ctest's JUnit file"

printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="(empty)" tests="0"/>\n' >"$T/empty.xml"
run empty "$T/bare" "$T/empty.xml" "$T/allowed"
expect "a JUnit file without tests is an error" 2 'holds no test cases'

printf '<testsuite><testcase name="a" status="run">' >"$T/truncated.xml"
run truncated "$T/bare" "$T/truncated.xml" "$T/allowed"
expect "a truncated JUnit file is an error" 2 "cannot read ctest's JUnit file"

printf 'e2e_gcloud_test gcloud\n' >"$T/no-reason"
run no-reason "$T/bare" "$T/clean.xml" "$T/no-reason"
expect "a list line without a reason is an error" 2 'no-reason:1: want TEST TOOL REASON'

printf 'e2e_gcloud_test gcloud one\ne2e_gcloud_test gcloud two\n' >"$T/twice"
run twice "$T/bare" "$T/clean.xml" "$T/twice"
expect "a test listed twice is an error" 2 'twice:2: e2e_gcloud_test is listed twice'

# The committed list: it parses, and each test it names exists (an e2e script or a fuzz target).
run committed "$T/bare" "$T/listed.xml"
expect "the committed tests/allowed_skips allows the gcloud tests where gcloud is absent" 0 \
  '2 did not run: 2 allowed, 0 not allowed - ok$'
while read -r name _; do
  case $name in
    '' | \#*) continue ;;
    e2e_*) [ -f "$HERE/${name#e2e_}.sh" ] && pass "listed $name is a test" ||
      fail "tests/allowed_skips lists $name, but there is no tests/e2e/${name#e2e_}.sh" ;;
    *) grep -qw -- "${name#fuzz_}" "$HERE/../CMakeLists.txt" && pass "listed $name is a test" ||
      fail "tests/allowed_skips lists $name, which tests/CMakeLists.txt does not name" ;;
  esac
done <"$HERE/../allowed_skips"

echo "$PASSES passed, $FAILURES failed"
[ "$FAILURES" -eq 0 ] || exit 1
