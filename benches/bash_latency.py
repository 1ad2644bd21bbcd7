#!/usr/bin/env python3
"""Wall time of a trivial `bash` call (`true`) through the server over stdio, for two builds.

usage: python3 benches/bash_latency.py BASELINE_BIN BIN [CALLS]

Each build serves CALLS (default 200) sequential `tools/call bash {"cmd": "true"}` after one warm-up
call; the two builds alternate for three rounds and the best round of each is printed with the
ratio to the baseline. What it shows: the fixed cost the server adds around a command (spawning
through the shepherd, capture, result shaping); `bash -lc` itself (login profile scripts) is most
of it on a machine with a heavy profile.
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def run(binary, n):
    root = tempfile.mkdtemp()
    p = subprocess.Popen([binary, "stdio", "--root", root], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env={**os.environ, "MCP_PRUNER_NO_LEDGER": "1"})

    def call(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                                   "params": params}) + "\n").encode())
        p.stdin.flush()
        while True:
            msg = json.loads(p.stdout.readline())
            if msg.get("id") == i:
                return msg

    call(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "bash-latency", "version": "1"}})
    bash = {"name": "bash", "arguments": {"cmd": "true"}}
    call(1, "tools/call", bash)
    start = time.perf_counter()
    for i in range(n):
        call(i + 2, "tools/call", bash)
    per_call = (time.perf_counter() - start) / n
    p.kill()
    p.wait()
    return per_call


def main():
    base, new = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    best = {base: float("inf"), new: float("inf")}
    for _ in range(3):
        for b in (base, new):
            best[b] = min(best[b], run(b, n))
    print(f"baseline {base}: {best[base] * 1000:.2f} ms/call")
    print(f"{new}: {best[new] * 1000:.2f} ms/call ({best[new] / best[base]:.2f}x the baseline)")


if __name__ == "__main__":
    main()
