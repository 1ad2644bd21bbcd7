#!/usr/bin/env bash
# The savings page in a headless browser (issue 14): runs interop/stats_page.mjs, which writes
# ledger rows with the real binary in a scripted stdio session, renders them with
# `mcp-pruner stats --html`, opens the page in headless Chromium through playwright-core and checks
# that the charts render (see that file). Installs what it needs: Debian's `chromium` (apt-get,
# when /usr/bin/chromium is missing and we are root, unless MCP_PRUNER_NO_SYSTEM_INSTALL=1: then
# the check is skipped, saying so) and playwright-core, pinned in
# interop/package.json + package-lock.json (`npm ci` in interop/; it downloads no browser).
#
#   bash interop/stats_page.sh                          # builds target/debug/mcp-pruner if missing
#   MCP_PRUNER_BIN=path/to/mcp-pruner bash interop/stats_page.sh
#   STATS_PAGE_CHROMIUM=/path/to/chromium bash interop/stats_page.sh
#
# Results (the page, its screenshot, the stats text and JSON, the server's log) go to
# interop/results/stats_page/. Last line: `stats page: N passed, M failed`; exits non-zero on any
# failure.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
say() { printf 'stats page: %s\n' "$*"; }
# A failure before the checks run still ends with the summary line.
give_up() { say "FAILED: $*"; say "0 passed, 1 failed"; exit 1; }

# The server binary.
source "$HERE/debug_bin.sh"

# The browser: Debian's chromium package, which playwright-core drives through executablePath.
CHROMIUM="${STATS_PAGE_CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM" ]]; then
  if [[ "${MCP_PRUNER_NO_SYSTEM_INSTALL:-0}" =~ ^([1Yy]|[Tt][Rr][Uu][Ee]|[Yy][Ee][Ss]|[Oo][Nn])$ ]]; then
    say "skipped: no Chromium at $CHROMIUM, and MCP_PRUNER_NO_SYSTEM_INSTALL forbids installing it system-wide"
    exit 0
  elif [[ "$CHROMIUM" == /usr/bin/chromium && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    say "installing chromium (apt-get)…"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium fonts-liberation; } >"${TMPDIR:-/tmp}/stats_page_apt.log" 2>&1 \
      || give_up "apt-get install chromium failed; see ${TMPDIR:-/tmp}/stats_page_apt.log"
  else
    give_up "no Chromium at $CHROMIUM (install Debian's chromium, or set STATS_PAGE_CHROMIUM)"
  fi
fi

# playwright-core, at the version package-lock.json pins.
command -v node >/dev/null || give_up "node not found (Node 20+ is needed: playwright-core 1.65)"
if ! (cd "$HERE" && node -e 'const l=require("./package-lock.json"),p=require("./node_modules/playwright-core/package.json");process.exit(l.packages["node_modules/playwright-core"].version===p.version?0:1)' 2>/dev/null); then
  say "npm ci in interop/…"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || give_up "npm ci in interop/ failed"
fi

exec node "$HERE/stats_page.mjs" --bin "$BIN" --chromium "$CHROMIUM" --results "$HERE/results/stats_page"
