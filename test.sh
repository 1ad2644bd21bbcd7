#!/usr/bin/env bash
# The project's test command (README, .ci/run): the Rust suites, the benchmarks compiled (they run
# with `cargo bench`), then the interop suite and the official conformance scenarios, which drive
# the binary just built with the official Python and TypeScript MCP SDKs, and the client bindings
# check (TypeScript and pydantic bindings generated from the contract bundle, live results validated)
# and the savings page (`stats --html`) opened in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")"
# The suites' servers write their savings-ledger rows here, never into the user's data directory.
MCP_PRUNER_LEDGER="$(mktemp -d)/ledger.sqlite3"
export MCP_PRUNER_LEDGER
cargo test
cargo test --benches --no-run --quiet
if [ "${MCP_PRUNER_SKIP_INTEROP:-0}" != "1" ]; then
  target="${CARGO_TARGET_DIR:-target}"
  case "$target" in /*) ;; *) target="$(pwd)/$target" ;; esac
  export MCP_PRUNER_BIN="${MCP_PRUNER_BIN:-$target/debug/mcp-pruner}"
  bash interop/conformance.sh
  bash interop/run.sh
  bash bindings/check.sh
  bash interop/stats_page.sh
fi
