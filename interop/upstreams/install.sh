#!/usr/bin/env bash
# Installs the upstream servers of tests/proxy.rs into this directory: the npm reference servers
# (package.json, package-lock.json: `npm ci`) and a venv with the official Python SDK
# (requirements.txt). Skips a part whose runtime is missing, saying why; the tests then skip too.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
status=0
if ! command -v npm >/dev/null 2>&1; then
  echo "proxy upstreams: npm not found: the server-everything and server-filesystem tests will skip"
elif [[ -x "$HERE/node_modules/.bin/mcp-server-everything" && -x "$HERE/node_modules/.bin/mcp-server-filesystem" ]] \
  && (cd "$HERE" && node -e 'const l=require("./package-lock.json");for(const n of ["server-everything","server-filesystem"]){const p=require("./node_modules/@modelcontextprotocol/"+n+"/package.json");if(l.packages["node_modules/@modelcontextprotocol/"+n].version!==p.version)process.exit(1)}' 2>/dev/null); then
  :
else
  echo "proxy upstreams: npm ci in interop/upstreams/…"
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) || { echo "proxy upstreams: npm ci FAILED"; status=1; }
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "proxy upstreams: python3 not found: the Python SDK server tests will skip"
else
  want="$(sed -nE 's/^mcp==(.*)$/\1/p' "$HERE/requirements.txt")"
  have="$("$HERE/.venv/bin/python" -c 'from importlib.metadata import version; print(version("mcp"))' 2>/dev/null || true)"
  if [[ "$have" != "$want" ]]; then
    echo "proxy upstreams: installing mcp==$want into interop/upstreams/.venv…"
    { [[ -x "$HERE/.venv/bin/python" ]] || python3 -m venv "$HERE/.venv"; } \
      && "$HERE/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt" \
      || { echo "proxy upstreams: pip install FAILED"; status=1; }
  fi
fi
exit $status
