#!/usr/bin/env bash
# The official Vertex AI Node SDK (@google-cloud/aiplatform 7.4.0, pinned in tests/node's
# package-lock.json, REST fallback, no credentials) against the real server: tests/node/sdk_test.js.
source "$(dirname "$0")/lib.sh"

install_node_sdk

start_server --sim-speed 200
if PORT=$PORT node "$NODE_DIR/sdk_test.js" >"$E2E_DIR/node.out" 2>&1; then
  cat "$E2E_DIR/node.out"
  pass "the Node SDK suite"
else
  cat "$E2E_DIR/node.out"
  fail "the Node SDK suite"
fi
finish
