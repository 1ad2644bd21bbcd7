#!/usr/bin/env bash
# The project's test command (README, .ci/run): the Rust suites, then the interop suite when present.
set -euo pipefail
cd "$(dirname "$0")"
cargo test --all-targets
if [ -x interop/run.sh ] && [ "${MCP_PRUNER_SKIP_INTEROP:-0}" != "1" ]; then
  bash interop/run.sh
fi
