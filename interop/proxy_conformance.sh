#!/usr/bin/env bash
# The official conformance suite (@modelcontextprotocol/conformance 0.2.0, installed by
# interop/conformance.sh as `conformance-next`) against `mcp-pruner proxy --listen http` in front of
# interop/upstreams/conformance_fixtures.py, an upstream written with the official Python SDK that
# implements the suite's fixture tools, resources and prompts. One proxy for all scenarios; each
# scenario runs in the handshake era (2025-11-25) and, when the suite has it there, in 2026-07-28.
# Not run: server-stateless (its fixture `test_missing_capability` needs sampling, which the proxy
# does not forward) and the scenarios of server-to-client requests (sampling, elicitation).
#
#   MCP_PRUNER_BIN=/path/to/mcp-pruner bash interop/proxy_conformance.sh
#
# PROXY_CONFORMANCE_UPSTREAM=http runs the fixtures over Streamable HTTP instead of stdio, so that
# the proxy speaks the 2026-07-28 revision to them (docs/proxy.md, the upstream's era).
#
# Needs interop/upstreams/.venv (bash interop/upstreams/install.sh) and the suite under
# interop/conformance/node_modules (bash interop/conformance.sh installs it); skips, saying why,
# without them. Last line: `proxy conformance: N passed, M failed` (scenarios).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$HERE/results/proxy_conformance"
mkdir -p "$OUT"
BIN="${MCP_PRUNER_BIN:?set MCP_PRUNER_BIN to the mcp-pruner binary}"
PY="$HERE/upstreams/.venv/bin/python"
SUITE="$HERE/conformance/node_modules/conformance-next/dist/index.js"
NODE="$HERE/conformance/node_modules/node/bin/node"
[[ -x "$NODE" ]] || NODE=node
[[ -x "$PY" ]] || { echo "proxy conformance: skipped: no $PY (bash interop/upstreams/install.sh)"; exit 0; }
[[ -f "$SUITE" ]] || { echo "proxy conformance: skipped: no $SUITE (bash interop/conformance.sh installs it)"; exit 0; }
[[ "$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 22 ]] \
  || { echo "proxy conformance: skipped: the suite needs Node >= 22"; exit 0; }

SCENARIOS="${PROXY_CONFORMANCE_SCENARIOS:-server-initialize ping tools-list logging-set-level completion-complete caching http-header-validation dns-rebinding-protection sep-2164-resource-not-found server-sse-multiple-streams tools-call-simple-text tools-call-image tools-call-audio tools-call-embedded-resource tools-call-mixed-content tools-call-with-logging tools-call-error tools-call-with-progress resources-list resources-read-text resources-read-binary resources-templates-read prompts-list prompts-get-simple prompts-get-with-args prompts-get-embedded-resource prompts-get-with-image}"

log="$OUT/proxy.log"
if [[ "${PROXY_CONFORMANCE_UPSTREAM:-stdio}" == http ]]; then
  # The fixtures over Streamable HTTP: the proxy discovers 2026-07-28 and speaks it upstream.
  up_port="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$PY" "$HERE/upstreams/conformance_fixtures.py" --http "$up_port" >"$OUT/upstream.log" 2>&1 &
  up_pid=$!
  for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$up_port") 2>/dev/null && break
    sleep 0.1
  done
  upstream=(--upstream "http://127.0.0.1:$up_port/mcp")
else
  up_pid=""
  upstream=(-- "$PY" "$HERE/upstreams/conformance_fixtures.py")
fi
: >"$log" # emptied before the job starts: a late redirection would leave an old ready line to read
MCP_PRUNER_NO_LEDGER=1 "$BIN" proxy --listen http --port 0 "${upstream[@]}" >>"$log" 2>&1 &
pid=$!
trap 'kill $pid $up_pid 2>/dev/null; wait $pid $up_pid 2>/dev/null' EXIT
port=""
for _ in $(seq 1 200); do
  port="$(sed -nE 's/.*"event":"mcp_pruner.ready".*"port":([0-9]+).*/\1/p' "$log" | head -n1)"
  [[ -n "$port" ]] && break
  sleep 0.1
done
[[ -n "$port" ]] || { echo "proxy conformance: the proxy did not start; see $log"; echo "proxy conformance: 0 passed, 1 failed"; exit 1; }

MODERN="$("$NODE" "$SUITE" list 2>/dev/null | sed -nE 's/^ +- ([a-z0-9-]+) \[.*2026-07-28.*\]$/\1/p')"
HANDSHAKE="$("$NODE" "$SUITE" list 2>/dev/null | sed -nE 's/^ +- ([a-z0-9-]+) \[.*2025-11-25.*\]$/\1/p')"
passed=0
failed=0
for s in $SCENARIOS; do
  for era in 2025-11-25 2026-07-28; do
    if [[ $era == 2026-07-28 ]] && ! grep -qx "$s" <<<"$MODERN"; then
      continue
    fi
    if [[ $era == 2025-11-25 ]] && ! grep -qx "$s" <<<"$HANDSHAKE"; then
      continue
    fi
    out="$OUT/$s.$era.log"
    if (cd "$OUT" && timeout 120 "$NODE" "$SUITE" server --url "http://127.0.0.1:$port/mcp" --scenario "$s" --spec-version "$era" >"$out" 2>&1) \
      && grep -qE "Passed: ([0-9]+)/\1, 0 failed" "$out"; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      echo "proxy conformance: $s ($era) FAILED; see $out"
    fi
  done
done
echo "proxy conformance: $passed passed, $failed failed"
[[ $failed == 0 ]]
