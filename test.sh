#!/usr/bin/env bash
# The project's test command (README, .ci/run): the Rust suites, the benchmarks compiled (they run
# with `cargo bench`), then the interop suite and the official conformance scenarios, which drive
# the binary just built with the official Python and TypeScript MCP SDKs, and the client bindings
# check (TypeScript and pydantic bindings generated from the contract bundle, live results validated)
# and the savings page (`stats --html`) opened in headless Chromium.
#
# Prerequisites: Rust (cargo) for the Rust suites. The interop parts also need Node.js >= 20 with
# npm, Python 3 with venv, and network access to npm and PyPI; each part skips itself with a printed
# reason when its runtime is missing.
#
# What it installs:
#   in this checkout only: interop/.venv, interop/node_modules, interop/conformance/node_modules,
#     interop/upstreams/node_modules, interop/upstreams/.venv (the proxy tests' upstream servers),
#     bindings/.venv, bindings/node_modules (pinned versions; delete them to clean up);
#   system-wide, only as root, only when /usr/bin/chromium is missing: Debian's `chromium` and
#     `fonts-liberation` (apt-get), for the savings-page check.
#   system-wide, only as root, only when neither valkey-server nor redis-server is on PATH:
#     Debian's `redis-server` (apt-get), for the replicas suite (interop/replicas.sh).
#
# Switches (yes/no: 1, true, yes, on or 0, false, no, off; anything else exits 2):
#   MCP_PRUNER_SKIP_INTEROP=1        the Rust suites only: nothing is installed
#   MCP_PRUNER_NO_SYSTEM_INSTALL=1   never install system-wide: without Chromium the savings-page
#                                    check is skipped, and without a Valkey/Redis server the
#                                    replicas suite, each saying so
set -euo pipefail
cd "$(dirname "$0")"

# The same spellings as the server's own yes/no settings (src/config.rs, BOOL_SPELLINGS).
yes_no() { # $1 = variable name; prints 1 or 0, or exits 2 on an unreadable value
  local raw="${!1-}"
  case "$(printf '%s' "$raw" | tr '[:upper:]' '[:lower:]' | tr -d '[:space:]')" in
    1 | true | yes | on) echo 1 ;;
    0 | false | no | off | "") echo 0 ;;
    *)
      echo "test.sh: $1: expected one of 1, true, yes, on (yes) or 0, false, no, off (no), got \"$raw\"" >&2
      exit 2
      ;;
  esac
}
skip_interop="$(yes_no MCP_PRUNER_SKIP_INTEROP)"
no_system_install="$(yes_no MCP_PRUNER_NO_SYSTEM_INSTALL)"

if [ "$skip_interop" = 1 ]; then
  echo "test.sh: MCP_PRUNER_SKIP_INTEROP=1: the Rust suites only; nothing is installed"
else
  echo "test.sh: the interop parts install pinned clients and servers into this checkout (interop/.venv, interop/node_modules, interop/upstreams/node_modules, interop/upstreams/.venv, interop/conformance/node_modules, bindings/.venv, bindings/node_modules)"
  if [ -x /usr/bin/chromium ] || [ -n "${STATS_PAGE_CHROMIUM:-}" ]; then
    :
  elif [ "$no_system_install" = 1 ]; then
    echo "test.sh: MCP_PRUNER_NO_SYSTEM_INSTALL=1: no system-wide install; the savings-page check will be skipped (no /usr/bin/chromium)"
  else
    echo "test.sh: /usr/bin/chromium is missing: the savings-page check installs Debian's chromium and fonts-liberation system-wide with apt-get when run as root (MCP_PRUNER_NO_SYSTEM_INSTALL=1 skips it)"
  fi
  if command -v valkey-server >/dev/null || command -v redis-server >/dev/null; then
    :
  elif [ "$no_system_install" = 1 ]; then
    echo "test.sh: MCP_PRUNER_NO_SYSTEM_INSTALL=1: no system-wide install; the replicas suite will be skipped (no valkey-server or redis-server)"
  else
    echo "test.sh: no valkey-server or redis-server: the replicas suite installs Debian's redis-server system-wide with apt-get when run as root (MCP_PRUNER_NO_SYSTEM_INSTALL=1 skips it)"
  fi
fi

# The suites' servers write their savings-ledger rows here, never into the user's data directory.
MCP_PRUNER_LEDGER="$(mktemp -d)/ledger.sqlite3"
export MCP_PRUNER_LEDGER
if [ "$skip_interop" != 1 ]; then
  # The upstream servers tests/proxy.rs puts the proxy in front of (without them, those tests skip).
  bash interop/upstreams/install.sh
  # The store server tests/store_redis.rs starts (without it, those tests skip).
  bash interop/replicas.sh --install-only
fi
cargo test
cargo test --benches --no-run --quiet
if [ "$skip_interop" != 1 ]; then
  target="${CARGO_TARGET_DIR:-target}"
  case "$target" in /*) ;; *) target="$(pwd)/$target" ;; esac
  export MCP_PRUNER_BIN="${MCP_PRUNER_BIN:-$target/debug/mcp-pruner}"
  bash interop/conformance.sh
  # The same suite against `mcp-pruner proxy` in front of a fixture server (Python SDK): over
  # stdio (the handshake upstream) and over Streamable HTTP (the proxy speaks 2026-07-28 upstream).
  bash interop/proxy_conformance.sh
  PROXY_CONFORMANCE_UPSTREAM=http bash interop/proxy_conformance.sh
  bash interop/run.sh
  bash interop/replicas.sh
  bash bindings/check.sh
  if [ "$no_system_install" = 1 ] && [ ! -x "${STATS_PAGE_CHROMIUM:-/usr/bin/chromium}" ]; then
    echo "stats page: skipped: no Chromium at ${STATS_PAGE_CHROMIUM:-/usr/bin/chromium}, and MCP_PRUNER_NO_SYSTEM_INSTALL=1 forbids installing it system-wide"
  else
    bash interop/stats_page.sh
  fi
fi
