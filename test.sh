#!/usr/bin/env bash
# The project's test command (README, .ci/run): the Rust suites, then the interop suite, which
# drives the binary just built with the official Python and TypeScript MCP SDKs.
set -euo pipefail
cd "$(dirname "$0")"
cargo test --all-targets
if [ "${MCP_PRUNER_SKIP_INTEROP:-0}" != "1" ]; then
  target="${CARGO_TARGET_DIR:-target}"
  case "$target" in /*) ;; *) target="$(pwd)/$target" ;; esac
  MCP_PRUNER_BIN="${MCP_PRUNER_BIN:-$target/debug/mcp-pruner}" bash interop/run.sh
fi
