#!/usr/bin/env bash
# The layers' arrows, from the includes (tests/check_layers): no include across layers the design
# does not allow, no services port in the SDK, no new cycle between services/ folders. Needs no
# server; the binary's path is ignored.
set -euo pipefail
python3 "$(dirname "$0")/../check_layers" "$(dirname "$0")/../.." && echo "1 passed, 0 failed" ||
  { echo "0 passed, 1 failed"; exit 1; }
