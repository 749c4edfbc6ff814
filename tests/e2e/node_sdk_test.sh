#!/usr/bin/env bash
# The official Vertex AI Node SDK (@google-cloud/aiplatform 7.4.0, pinned in tests/node's
# package-lock.json, REST fallback, no credentials) against the real server: tests/node/sdk_test.js.
source "$(dirname "$0")/lib.sh"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node and npm are not installed; the Node SDK cannot be driven"
  exit 77
fi
SRC="$(cd "$(dirname "$0")/../node" && pwd)"
# Installed once per lock file next to the binary (outside the clone's tests/), with npm ci.
NODE_DIR="$(dirname "$TRAINYARD_BIN")/node-sdk"
mkdir -p "$NODE_DIR"
cp "$SRC/package.json" "$SRC/package-lock.json" "$SRC/sdk_test.js" "$NODE_DIR/"
if ! cmp -s "$SRC/package-lock.json" "$NODE_DIR/node_modules/.installed-lock" 2>/dev/null; then
  if ! (cd "$NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error >"$E2E_DIR/npm.log" 2>&1); then
    cat "$E2E_DIR/npm.log" >&2
    echo "SKIP: npm ci could not install the Node SDK (no registry here?)"
    exit 77
  fi
  cp "$SRC/package-lock.json" "$NODE_DIR/node_modules/.installed-lock"
fi

start_server --sim-speed 200
if PORT=$PORT node "$NODE_DIR/sdk_test.js" >"$E2E_DIR/node.out" 2>&1; then
  cat "$E2E_DIR/node.out"
  pass "the Node SDK suite"
else
  cat "$E2E_DIR/node.out"
  fail "the Node SDK suite"
fi
finish
