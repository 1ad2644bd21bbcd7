#!/usr/bin/env bash
# Client bindings as a tested path (issue 16): from the bundle `mcp-pruner schema` prints
# (generated/contract.schema.json), generate TypeScript with json-schema-to-typescript and compile
# it with `tsc --strict`, generate pydantic v2 models with datamodel-code-generator, both with no
# warnings, then validate live results of every tool (success and error) from the real server
# against the Python models. Installs its own tools (pinned): bindings/node_modules (npm ci) and
# bindings/.venv (pip). Exits non-zero on any failure.
#
#   bash bindings/check.sh                       # builds target/debug/mcp-pruner if needed
#   MCP_PRUNER_BIN=path/to/mcp-pruner bash bindings/check.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
OUT="$HERE/out"
say() { echo "bindings: $*"; }
fail() { say "FAILED: $*"; exit 1; }

BIN="${MCP_PRUNER_BIN:-}"
if [[ -z "$BIN" ]]; then
  (cd "$ROOT" && cargo build --quiet)
  BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/mcp-pruner"
fi
rm -rf "$OUT" && mkdir -p "$OUT"
"$BIN" schema > "$OUT/contract.schema.json"
cmp -s "$OUT/contract.schema.json" "$ROOT/generated/contract.schema.json" \
  || fail "\`mcp-pruner schema\` differs from generated/contract.schema.json"

# TypeScript.
command -v npm >/dev/null || fail "npm not found (Node 20+ is needed for the TypeScript bindings)"
if [[ ! -x "$HERE/node_modules/.bin/json2ts" || "$HERE/package-lock.json" -nt "$HERE/node_modules/.package-lock.json" ]]; then
  say "installing json-schema-to-typescript and typescript (npm ci)…"
  (cd "$HERE" && npm ci --no-audit --no-fund --silent)
fi
"$HERE/node_modules/.bin/json2ts" -i "$OUT/contract.schema.json" -o "$OUT/contract.d.ts" 2>"$OUT/json2ts.log" \
  || fail "json2ts: $(cat "$OUT/json2ts.log")"
[[ -s "$OUT/json2ts.log" ]] && fail "json2ts warned: $(cat "$OUT/json2ts.log")"
(cd "$HERE" && node_modules/.bin/tsc -p tsconfig.json) || fail "tsc --strict rejected the generated types"
say "TypeScript: $(grep -c '^export' "$OUT/contract.d.ts") types generated, tsc --strict clean (bindings/usage.ts)"

# Python.
VENV="$HERE/.venv"
if ! cmp -s "$HERE/requirements.txt" "$VENV/requirements.installed" 2>/dev/null; then
  say "installing $(tr '\n' ' ' < "$HERE/requirements.txt")into bindings/.venv…"
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
  cp "$HERE/requirements.txt" "$VENV/requirements.installed"
fi
"$VENV/bin/python" -W error "$VENV/bin/datamodel-codegen" --input "$OUT/contract.schema.json" \
  --input-file-type jsonschema --output "$OUT/contract.py" --output-model-type pydantic_v2.BaseModel \
  --target-python-version 3.11 --formatters builtin --use-annotated 2>"$OUT/datamodel-codegen.log" \
  || fail "datamodel-codegen: $(cat "$OUT/datamodel-codegen.log")"
[[ -s "$OUT/datamodel-codegen.log" ]] && fail "datamodel-codegen warned: $(cat "$OUT/datamodel-codegen.log")"
say "Python: $(grep -c '^class' "$OUT/contract.py") pydantic v2 models generated, no warnings"
"$VENV/bin/python" -W error "$HERE/validate_live.py" --bin "$BIN" --models "$OUT/contract.py"
