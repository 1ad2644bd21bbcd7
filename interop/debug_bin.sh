# Sourced by the interop scripts that test the debug build (replicas.sh, stats_page.sh): sets BIN
# to $MCP_PRUNER_BIN, else to target/debug/mcp-pruner (under $CARGO_TARGET_DIR if set), built if
# missing. Expects REPO, and `say` and `give_up` (which exits) from the script sourcing it.
BIN="${MCP_PRUNER_BIN:-}"
if [[ -z "$BIN" ]]; then
  BIN="${CARGO_TARGET_DIR:-$REPO/target}/debug/mcp-pruner"
  case "$BIN" in /*) ;; *) BIN="$REPO/$BIN" ;; esac
  if [[ ! -x "$BIN" ]]; then
    say "building mcp-pruner (debug)…"
    (cd "$REPO" && cargo build --quiet --bin mcp-pruner) || give_up "cargo build failed"
  fi
fi
[[ -x "$BIN" ]] || give_up "server binary not found or not executable: $BIN"
