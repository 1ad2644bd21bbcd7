#!/usr/bin/env bash
# Interop suite of mcp-pruner: official MCP clients (Python `mcp`, TypeScript
# `@modelcontextprotocol/sdk`) against the real binary over stdio and Streamable HTTP.
#
#   bash interop/run.sh                      # builds the server (release), installs clients, runs both
#   MCP_PRUNER_BIN=/path/to/mcp-pruner bash interop/run.sh   # skip the build
#   INTEROP_ONLY=python|node bash interop/run.sh             # one language only
#
# Installs its own clients: a venv in interop/.venv (interop/python/requirements.txt) and
# `npm ci` in interop/ (package.json + package-lock.json). Exits non-zero if any check failed.
# Last line: `interop: N passed, M failed[, K skipped]`.
set -uo pipefail
# The servers these checks start write their savings-ledger rows to a temp file, never into the
# user's data directory (test.sh sets its own).
if [[ -z "${MCP_PRUNER_LEDGER:-}" ]]; then
  MCP_PRUNER_LEDGER="$(mktemp -d)/ledger.sqlite3"
  export MCP_PRUNER_LEDGER
fi

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
RESULTS="$HERE/results"
mkdir -p "$RESULTS/logs"
export INTEROP_LOG_DIR="$RESULTS/logs"

passed=0
failed=0
skipped=0

say() { printf '%s\n' "$*"; }

# Adds the counts of a suite's closing line "<suite> (...): N passed, M failed, K skipped".
tally() { # $1 = log file, $2 = suite exit code, $3 = label
  local line p f s
  line="$(grep -E '^[a-z]+ suite .*: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n1)"
  if [[ -z "$line" ]]; then
    say "$3: FAILED without a summary (exit $2); see $1"
    failed=$((failed + 1))
    return
  fi
  p="$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$line")"
  f="$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")"
  s="$(sed -nE 's/.* ([0-9]+) skipped.*/\1/p' <<<"$line")"
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + ${s:-0}))
  if [[ "$2" != 0 && "$f" == 0 ]]; then
    say "$3: exited $2 with no failed check recorded"
    failed=$((failed + 1))
  fi
}

# ---------------------------------------------------------------------------- server binary
if [[ -n "${MCP_PRUNER_BIN:-}" ]]; then
  BIN="$MCP_PRUNER_BIN"
  say "interop: using MCP_PRUNER_BIN=$BIN"
else
  say "interop: building mcp-pruner (release)…"
  if ! (cd "$REPO" && cargo build --release --quiet --bin mcp-pruner); then
    say "interop: cargo build failed"
    say "interop: 0 passed, 1 failed"
    exit 1
  fi
  BIN="${CARGO_TARGET_DIR:-$REPO/target}/release/mcp-pruner"
fi
if [[ ! -x "$BIN" ]]; then
  say "interop: server binary not found or not executable: $BIN"
  say "interop: 0 passed, 1 failed"
  exit 1
fi
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"

only="${INTEROP_ONLY:-}"

# ---------------------------------------------------------------------------- Python
if [[ -n "$only" && "$only" != python ]]; then
  :
elif ! command -v python3 >/dev/null 2>&1; then
  say "python: skipped: python3 not found"
  skipped=$((skipped + 1))
else
  VENV="$HERE/.venv"
  want="$(sed -nE 's/^mcp==(.*)$/\1/p' "$HERE/python/requirements.txt")"
  have="$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("mcp"))' 2>/dev/null || true)"
  ok=1
  if [[ "$have" != "$want" ]]; then
    say "python: installing mcp==$want into interop/.venv…"
    if [[ ! -x "$VENV/bin/python" ]]; then
      python3 -m venv "$VENV" || ok=0
    fi
    if [[ $ok == 1 ]]; then
      "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/python/requirements.txt" || ok=0
    fi
  fi
  if [[ $ok == 0 ]]; then
    say "python: FAILED to set up the venv with mcp==$want"
    failed=$((failed + 1))
  else
    say "python: running interop/python/test_interop.py (mcp $want)"
    "$VENV/bin/python" "$HERE/python/test_interop.py" --bin "$BIN" --results "$RESULTS/python.json" \
      2>"$RESULTS/python.stderr.log" | tee "$RESULTS/python.log"
    tally "$RESULTS/python.log" "${PIPESTATUS[0]}" python
  fi
fi

# ---------------------------------------------------------------------------- Node
if [[ -n "$only" && "$only" != node ]]; then
  :
elif ! command -v node >/dev/null 2>&1; then
  say "node: skipped: node not found"
  skipped=$((skipped + 1))
elif ! command -v npm >/dev/null 2>&1; then
  say "node: skipped: npm not found"
  skipped=$((skipped + 1))
else
  ok=1
  if ! (cd "$HERE" && node -e 'const l=require("./package-lock.json"),p=require("./node_modules/@modelcontextprotocol/sdk/package.json");process.exit(l.packages["node_modules/@modelcontextprotocol/sdk"].version===p.version?0:1)' 2>/dev/null); then
    say "node: npm ci in interop/…"
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || ok=0
  fi
  if [[ $ok == 0 ]]; then
    say "node: FAILED to install @modelcontextprotocol/sdk (npm ci)"
    failed=$((failed + 1))
  else
    say "node: running interop/node/test_interop.mjs ($(node --version))"
    node "$HERE/node/test_interop.mjs" --bin "$BIN" --results "$RESULTS/node.json" \
      2>"$RESULTS/node.stderr.log" | tee "$RESULTS/node.log"
    tally "$RESULTS/node.log" "${PIPESTATUS[0]}" node
  fi
fi

summary="interop: $passed passed, $failed failed"
if [[ $skipped -gt 0 ]]; then
  summary+=", $skipped skipped"
fi
say "$summary"
[[ $failed == 0 ]]
