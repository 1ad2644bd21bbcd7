#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16) against
# `mcp-pruner serve`, one fresh server per scenario.
#
#   bash interop/conformance.sh                        # builds the server (release) first
#   MCP_PRUNER_BIN=/path/to/mcp-pruner bash interop/conformance.sh
#   CONFORMANCE_SCENARIOS="ping tools-list" bash interop/conformance.sh
#   CONFORMANCE_RUNTIME=polyfill bash interop/conformance.sh   # force the Node 20 + fs.globSync shim
#
# Runtime: 0.1.x imports fs.globSync (Node >= 22). In order: a system node >= 22; the Node 22
# binary of the npm package `node` (pinned in conformance/package.json); else the system node
# with --import ./globsync-polyfill.mjs (see interop/README.md).
# Scenarios missing from 0.1.16 (server-session-lifecycle) run with 0.2.0-alpha.12, installed
# under the alias `conformance-next`; that line's frozen requirement sets then run for both eras
# (2026-07-28 and 2025-11-25), every scenario that needs no fixture tool of the suite's server.
# Results: interop/results/conformance/<scenario>.log plus the suite's own checks.json files.
# Last line: `conformance: N passed, M failed` (scenarios).
set -uo pipefail
# The servers these checks start write their savings-ledger rows to a temp file, never into the
# user's data directory (test.sh sets its own).
if [[ -z "${MCP_PRUNER_LEDGER:-}" ]]; then
  MCP_PRUNER_LEDGER="$(mktemp -d)/ledger.sqlite3"
  export MCP_PRUNER_LEDGER
fi

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
CDIR="$HERE/conformance"
OUT="$HERE/results/conformance"
mkdir -p "$OUT"

SCENARIOS="${CONFORMANCE_SCENARIOS:-server-initialize ping tools-list logging-set-level server-sse-multiple-streams server-session-lifecycle dns-rebinding-protection}"

say() { printf '%s\n' "$*"; }
die() { say "conformance: $*"; say "conformance: 0 passed, 1 failed"; exit 1; }

command -v node >/dev/null 2>&1 || { say "conformance: skipped: node not found"; exit 0; }
command -v npm >/dev/null 2>&1 || { say "conformance: skipped: npm not found"; exit 0; }

# ---------------------------------------------------------------------------- install
want="$(node -p 'require(process.argv[1]).dependencies["@modelcontextprotocol/conformance"]' "$CDIR/package.json")"
have="$(node -p 'require(process.argv[1]).version' "$CDIR/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null || true)"
if [[ "$have" != "$want" || ! -d "$CDIR/node_modules/conformance-next" ]]; then
  say "conformance: npm ci in interop/conformance…"
  (cd "$CDIR" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed"
fi
SUITE="$CDIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
SUITE_NEXT="$CDIR/node_modules/conformance-next/dist/index.js"

# ---------------------------------------------------------------------------- runtime
major() { "$@" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
RUNTIME=()
mode="${CONFORMANCE_RUNTIME:-auto}"
if [[ "$mode" == auto || "$mode" == system ]] && [[ "$(major node)" -ge 22 ]]; then
  RUNTIME=(node)
  say "conformance: runtime: system node $(node --version)"
elif [[ "$mode" == auto || "$mode" == npm-node ]] && [[ -x "$CDIR/node_modules/node/bin/node" ]] \
  && [[ "$(major "$CDIR/node_modules/node/bin/node")" -ge 22 ]]; then
  RUNTIME=("$CDIR/node_modules/node/bin/node")
  say "conformance: runtime: node $("${RUNTIME[0]}" --version) from the npm package 'node' (system node is $(node --version))"
else
  RUNTIME=(node --import "$CDIR/globsync-polyfill.mjs")
  say "conformance: runtime: system node $(node --version) + fs.globSync polyfill (globsync-polyfill.mjs)"
fi

# ---------------------------------------------------------------------------- server binary
if [[ -n "${MCP_PRUNER_BIN:-}" ]]; then
  BIN="$MCP_PRUNER_BIN"
else
  say "conformance: building mcp-pruner (release)…"
  (cd "$REPO" && cargo build --release --quiet --bin mcp-pruner) || die "cargo build failed"
  BIN="${CARGO_TARGET_DIR:-$REPO/target}/release/mcp-pruner"
fi
[[ -x "$BIN" ]] || die "server binary not found: $BIN"

ROOT="$(mktemp -d -t mcp-pruner-conformance-XXXXXX)"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  rm -rf "$ROOT"
}
trap cleanup EXIT

start_server() { # sets SERVER_PID and PORT; log in $1
  local log="$1" i
  # Emptied here, not by the background job's redirection: that may run after the first look
  # below, which would then read the previous run's ready line and its dead port.
  : >"$log"
  "$BIN" serve --port 0 --root "$ROOT" >>"$log" 2>&1 &
  SERVER_PID=$!
  PORT=""
  for i in $(seq 1 100); do
    PORT="$(grep -m1 '"mcp_pruner.ready"' "$log" 2>/dev/null | sed -nE 's/.*"port":([0-9]+).*/\1/p')"
    [[ -n "$PORT" ]] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  return 1
}
stop_server() {
  [[ -n "$SERVER_PID" ]] && { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; }
  SERVER_PID=""
}

has_scenario() { # $1 = suite js, $2 = scenario (no `| grep -q`: with pipefail, SIGPIPE fails it)
  local listing
  listing="$("${RUNTIME[@]}" "$1" list --server 2>/dev/null)"
  grep -qE "^  - $2( |$)" <<<"$listing"
}

passed=0
failed=0
rows=()
for s in $SCENARIOS; do
  suite="$SUITE"
  ver="$want"
  if ! has_scenario "$SUITE" "$s"; then
    if [[ -f "$SUITE_NEXT" ]] && has_scenario "$SUITE_NEXT" "$s"; then
      suite="$SUITE_NEXT"
      ver="$(node -p 'require(process.argv[1]).version' "$CDIR/node_modules/conformance-next/package.json")"
    else
      rows+=("$(printf '%-30s %-8s %s' "$s" FAIL "scenario not found in conformance $want")")
      failed=$((failed + 1))
      continue
    fi
  fi
  log="$OUT/$s.log"
  if ! start_server "$OUT/$s.server.log"; then
    stop_server
    rows+=("$(printf '%-30s %-8s %s' "$s" FAIL "server did not start (see $OUT/$s.server.log)")")
    failed=$((failed + 1))
    continue
  fi
  (cd "$OUT" && timeout 120 "${RUNTIME[@]}" "$suite" server --url "http://127.0.0.1:$PORT/mcp" --scenario "$s" -o "$OUT/checks") >"$log" 2>&1
  rc=$?
  stop_server
  # The suite colours its output; strip ANSI escapes for the logs' summary line.
  line="$(sed -E 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^Passed: ' | tail -n1)"
  detail="${line:-no summary (exit $rc)} [conformance $ver]"
  if [[ $rc == 0 && -n "$line" ]]; then
    rows+=("$(printf '%-30s %-8s %s' "$s" PASS "$detail")")
    passed=$((passed + 1))
  else
    fails="$(sed -E 's/\x1b\[[0-9;]*m//g' "$log" | grep -E 'FAILURE|WARNING' | sed -E 's/^[^[]*//' | head -n 5 | tr '\n' ' ')"
    rows+=("$(printf '%-30s %-8s %s %s' "$s" FAIL "$detail" "$fails")")
    failed=$((failed + 1))
  fi
done

# ---------------------------------------------------------------------------- requirement sets
# The 0.2.0 line's frozen requirement sets, one era each: every scenario of the set that needs no
# fixture tool of the suite's own test server. Checks the suite marks "Not testable" (they need
# its diagnostic tools: test_missing_capability, test_streaming_elicitation, test_logging_tool)
# and the Mcp-Name whitespace check's call of the first listed tool with `{}` (our first tool,
# `read`, needs a `path`: the header passed, the call's arguments did not) are listed as not
# applicable with the suite's reason; any other failed check fails the scenario.
ERA_2026="server-stateless tools-list caching http-header-validation dns-rebinding-protection resources-list sep-2164-resource-not-found prompts-list server-sse-multiple-streams"
ERA_2025="server-initialize ping logging-set-level server-session-lifecycle tools-list resources-list prompts-list dns-rebinding-protection server-sse-multiple-streams"
if [[ -f "$SUITE_NEXT" && -z "${CONFORMANCE_SCENARIOS:-}" ]]; then
  next_ver="$(node -p 'require(process.argv[1]).version' "$CDIR/node_modules/conformance-next/package.json")"
  for era in 2026-07-28 2025-11-25; do
    list="$ERA_2026"
    [[ "$era" == 2025-11-25 ]] && list="$ERA_2025"
    for s in $list; do
      log="$OUT/$era-$s.log"
      if ! start_server "$OUT/$era-$s.server.log"; then
        stop_server
        rows+=("$(printf '%-30s %-8s %s' "$era $s" FAIL "server did not start")")
        failed=$((failed + 1))
        continue
      fi
      (cd "$OUT" && timeout 120 "${RUNTIME[@]}" "$SUITE_NEXT" server --url "http://127.0.0.1:$PORT/mcp" \
        --scenario "$s" --spec-version "$era" -o "$OUT/checks-$era") >"$log" 2>&1
      rc=$?
      stop_server
      plain="$(sed -E 's/\x1b\[[0-9;]*m//g' "$log")"
      line="$(grep -E '^Passed: ' <<<"$plain" | tail -n1)"
      errors="$(grep -E '^    Error: ' <<<"$plain" || true)"
      real="$(grep -vE 'Error: (Not testable:|Expected successful response, got HTTP 400.*Invalid params: /arguments/)' <<<"$errors" || true)"
      na="$(grep -cE 'Error: (Not testable:|Expected successful response, got HTTP 400.*Invalid params: /arguments/)' <<<"$errors" || true)"
      detail="${line:-no summary (exit $rc)} [conformance $next_ver, $era]"
      if [[ -n "$line" && -z "$real" ]]; then
        [[ "$na" != 0 ]] && detail="$detail; $na check(s) not applicable (fixture tools of the suite's server)"
        rows+=("$(printf '%-30s %-8s %s' "$era $s" PASS "$detail")")
        passed=$((passed + 1))
      else
        rows+=("$(printf '%-30s %-8s %s %s' "$era $s" FAIL "$detail" "$(head -n 3 <<<"$real" | tr '\n' ' ')")")
        failed=$((failed + 1))
      fi
    done
  done
fi

say ""
say "scenario                       result   detail"
for r in "${rows[@]}"; do say "$r"; done
say "logs: $OUT"
say "conformance: $passed passed, $failed failed"
[[ $failed == 0 ]]
