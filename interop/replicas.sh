#!/usr/bin/env bash
# Many replicas, one recovery store (issue 38): runs interop/python/replicas.py, which starts a
# real Valkey/Redis server, three `mcp-pruner serve --store redis://…` replicas on it and a
# round-robin proxy in front (interop/python/rr_proxy.py), and drives them with the official Python
# MCP SDK pinned to the stateless 2026-07-28 revision: a read answered by one replica recovered
# byte-exact by the other two, a replica killed mid-run losing no id, the store restarted giving
# the clear -32004, and REPLICAS_CLIENTS clients (32) for REPLICAS_SECONDS (60) with 0 errors.
#
# Installs what it needs: the server (valkey-server or redis-server on PATH; else Debian's
# `redis-server` with apt-get when we are root, unless MCP_PRUNER_NO_SYSTEM_INSTALL=1: then the
# suite is skipped, saying so) and the Python `mcp` SDK pinned in interop/python/requirements.txt
# (interop/.venv, shared with interop/run.sh).
#
#   bash interop/replicas.sh                        # builds target/debug/mcp-pruner if missing
#   bash interop/replicas.sh --install-only         # only makes sure a store server is installed
#   MCP_PRUNER_BIN=path/to/mcp-pruner REPLICAS_SECONDS=10 bash interop/replicas.sh
#
# Last line: `replicas suite: N passed, M failed` (or `replicas: skipped: why`); exits non-zero
# on any failure. The output is also left in interop/results/replicas.log.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
say() { printf 'replicas: %s\n' "$*"; }
give_up() { say "FAILED: $*"; echo "replicas suite: 0 passed, 1 failed"; exit 1; }

# The store: Valkey or Redis from the distribution.
SERVER="$(command -v valkey-server || command -v redis-server || true)"
if [[ -z "$SERVER" ]]; then
  if [[ "${MCP_PRUNER_NO_SYSTEM_INSTALL:-0}" =~ ^([1Yy]|[Tt][Rr][Uu][Ee]|[Yy][Ee][Ss]|[Oo][Nn])$ ]]; then
    say "skipped: no valkey-server or redis-server, and MCP_PRUNER_NO_SYSTEM_INSTALL forbids installing one system-wide"
    exit 0
  elif [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    say "installing redis-server (apt-get)…"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        redis-server; } >"${TMPDIR:-/tmp}/replicas_apt.log" 2>&1 \
      || give_up "apt-get install redis-server failed; see ${TMPDIR:-/tmp}/replicas_apt.log"
    SERVER="$(command -v redis-server || echo /usr/bin/redis-server)"
  else
    say "skipped: no valkey-server or redis-server on PATH, and not root to apt-get install redis-server"
    exit 0
  fi
fi
# `--install-only`: the store server is there (test.sh runs this before `cargo test`, so that
# tests/store_redis.rs finds it); nothing else.
if [[ "${1:-}" == --install-only ]]; then
  say "store server: $SERVER"
  exit 0
fi
source "$HERE/debug_bin.sh"

# Debian starts the packaged service on 6379; the suite uses its own server on a free port.

command -v python3 >/dev/null || { say "skipped: python3 not found"; exit 0; }
VENV="$HERE/.venv"
want="$(sed -nE 's/^mcp==(.*)$/\1/p' "$HERE/python/requirements.txt")"
have="$("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("mcp"))' 2>/dev/null || true)"
if [[ "$have" != "$want" ]]; then
  say "installing mcp==$want into interop/.venv…"
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV" || give_up "python3 -m venv failed"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/python/requirements.txt" \
    || give_up "pip install mcp==$want failed"
fi

mkdir -p "$HERE/results"
"$VENV/bin/python" "$HERE/python/replicas.py" --bin "$BIN" --redis-server "$SERVER" \
  --clients "${REPLICAS_CLIENTS:-32}" --seconds "${REPLICAS_SECONDS:-60}" 2>"$HERE/results/replicas.stderr.log" \
  | tee "$HERE/results/replicas.log"
exit "${PIPESTATUS[0]}"
