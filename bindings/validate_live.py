#!/usr/bin/env python3
"""Validates live results of every tool (success and error) from the real server against the
pydantic v2 models generated from `generated/contract.schema.json` (bindings/check.sh).

Speaks JSON-RPC over `mcp-pruner stdio` directly (no SDK), so what is validated is exactly what
a client receives: a tool's structured result (`_meta["mcp-pruner/result"]` merged with
`structuredContent`, or for seed 001's tools the JSON in `content[0].text`) against the tool's
result model, a failed call's against `ToolFailure`, a JSON-RPC error against `RpcError`.

Usage: validate_live.py --bin PATH --models PATH/TO/contract.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

RESULT_META = "mcp-pruner/result"


class Server:
    def __init__(self, binary: str, root: Path) -> None:
        self.proc = subprocess.Popen(
            [binary, "stdio", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            # A check, not usage: no rows in the user's savings ledger.
            env={**os.environ, "MCP_PRUNER_NO_LEDGER": "1"},
        )
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        assert self.proc.stdout
        self.proc.stdout.close()


def structured(result: dict[str, Any]) -> dict[str, Any]:
    meta = (result.get("_meta") or {}).get(RESULT_META)
    if isinstance(meta, dict):
        out = dict(meta)
        out.update(result.get("structuredContent") or {})
        return out
    return json.loads(result["content"][0]["text"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--models", required=True)
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("contract", args.models)
    assert spec and spec.loader
    models = importlib.util.module_from_spec(spec)
    sys.modules["contract"] = models  # pydantic resolves generic models through sys.modules
    spec.loader.exec_module(models)

    root = Path(tempfile.mkdtemp(prefix="mcp-pruner-bindings-"))
    (root / "src").mkdir()
    (root / "src" / "lib.rs").write_text("".join(f"pub fn step_{i}() -> u32 {{ {i} }}\n" for i in range(1, 80)))
    log = "".join(f"INFO step {i} ok\n" for i in range(1, 120)) + "ERROR disk full on /dev/sda1\n"
    s = Server(args.bin, root)
    s.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bindings", "version": "1"}})

    failures: list[str] = []
    checked: list[str] = []
    state: dict[str, Any] = {}

    def call(tool: str, arguments: dict[str, Any], expect: str) -> None:
        """`expect`: 'ok' (the tool's result model), 'failure' (ToolFailure), 'rpc' (RpcError)."""
        reply = s.request("tools/call", {"name": tool, "arguments": arguments})
        label = f"{tool} {expect}"
        try:
            if expect == "rpc":
                if "error" not in reply:
                    raise AssertionError(f"expected a JSON-RPC error, got {json.dumps(reply)[:300]}")
                models.RpcError.model_validate(reply["error"])
            else:
                if "error" in reply:
                    raise AssertionError(f"JSON-RPC error {reply['error']}")
                result = reply["result"]
                body = structured(result)
                if expect == "failure":
                    if not result.get("isError"):
                        raise AssertionError(f"expected isError, got {json.dumps(body)[:300]}")
                    models.ToolFailure.model_validate(body)
                else:
                    if result.get("isError"):
                        raise AssertionError(f"isError: {json.dumps(body)[:300]}")
                    name = {"read": "ReadResult", "bash": "BashResult", "grep": "GrepResult",
                            "prune_text": "PruneTextResult", "recover_text": "RecoverTextResult",
                            "health": "HealthResult"}[tool]
                    parsed = getattr(models, name).model_validate(body)
                    if tool == "prune_text":
                        state["prune_id"] = parsed.prune_id
            checked.append(label)
        except Exception as e:  # noqa: BLE001 - every mismatch is reported
            failures.append(f"{label}: {type(e).__name__}: {str(e)[:500]}")

    call("read", {"path": "src/lib.rs", "context_focus_question": "where is step_42 defined?"}, "ok")
    call("read", {"path": "no/such/file.rs"}, "failure")
    call("read", {}, "rpc")
    call("bash", {"cmd": "echo bindings; echo warn >&2"}, "ok")
    call("bash", {"cmd": "exit 3"}, "failure")
    call("bash", {"cmd": "sleep 5", "timeout_ms": 200}, "failure")
    call("grep", {"pattern": "step_4[0-9]", "paths": ["."]}, "ok")
    call("grep", {"pattern": "(", "paths": ["."]}, "failure")
    call("prune_text", {"text": log, "goal_hint": "why did the job fail?", "source_type": "logs"}, "ok")
    call("prune_text", {"text": log}, "rpc")
    call("recover_text", {"prune_id": state.get("prune_id", "prn_missing"), "ranges": [{"start_line": 120, "end_line": 120}]}, "ok")
    # By question: the lines come plain in content[0].text; the result (no raw_text) is in _meta.
    call("recover_text", {"prune_id": state.get("prune_id", "prn_missing"), "context_focus_question": "which disk is full?"}, "ok")
    call("recover_text", {"prune_id": "prn_1_00000000000000000000"}, "rpc")
    call("recover_text", {"prune_id": state.get("prune_id", "prn_missing"), "ranges": [{"start_line": 9, "end_line": 2}]}, "rpc")
    call("health", {}, "ok")
    call("health", {"unexpected": 1}, "rpc")
    s.close()
    # The models reject what the contract rejects (else "valid" above would mean nothing).
    live = len(checked)
    rejected: list[str] = []
    for name, bad in [("ReadResult", {"tool": "read"}), ("ToolFailure", {"tool": "read", "error": {}}),
                      ("RpcError", {"code": 1, "message": "x"})]:
        try:
            getattr(models, name).model_validate(bad)
            failures.append(f"{name} accepted an invalid value: {bad}")
        except Exception:  # noqa: BLE001 - pydantic.ValidationError
            rejected.append(f"{name} rejects {json.dumps(bad)}")

    for c in checked:
        print(f"bindings: valid  {c}")
    for r in rejected:
        print(f"bindings: ok     {r}")
    for f in failures:
        print(f"bindings: INVALID {f}")
    print(f"bindings: {live} live results valid against the generated pydantic models, "
          f"{len(rejected)} invalid values rejected, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
