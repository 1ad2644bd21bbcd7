#!/usr/bin/env python3
"""What `mcp-pruner proxy` adds to a call over stdio: the same tool called on the upstream itself
and through the proxy in front of it, in the same run.

usage: python3 benches/proxy_overhead.py BIN [CALLS] [ROUNDS]

The upstream is `@modelcontextprotocol/server-everything` from interop/upstreams (install it with
`bash interop/upstreams/install.sh`). Each round makes CALLS (default 300) sequential calls of
`echo` (a short text) and of `get-env` (about 4 KB of JSON) on the direct server and on the
proxied one, the two interleaved call by call so that machine noise falls on both; the first
20 calls of each are warm-up. Prints p50/p90 per call for each and the added p50 in ms: the
proxy's transparent path (no question, within the budget), which the issue wants under 1 ms.
The proxy runs with `--no-ledger` unless PROXY_BENCH_LEDGER=1 (then it writes its rows, and counts
each result's tokens for them, into a temporary ledger).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EVERYTHING = os.path.join(HERE, "..", "interop", "upstreams", "node_modules", ".bin", "mcp-server-everything")


class Client:
    def __init__(self, argv):
        env = {k: v for k, v in os.environ.items() if k != "MCP_PRUNER_NO_LEDGER"}
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.id = 0
        self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "proxy-overhead", "version": "1"}})
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.p.stdin.flush()

    def call(self, method, params):
        self.id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.id:
                return msg

    def timed(self, tool, args):
        t = time.perf_counter()
        r = self.call("tools/call", {"name": tool, "arguments": args})
        assert "result" in r, r
        return time.perf_counter() - t

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def main():
    binary = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    if not os.path.exists(EVERYTHING):
        sys.exit(f"no {EVERYTHING}: run bash interop/upstreams/install.sh")
    direct = Client([EVERYTHING, "stdio"])
    ledger = (["--ledger", os.path.join(tempfile.mkdtemp(), "ledger.sqlite3")]
              if os.environ.get("PROXY_BENCH_LEDGER") == "1" else ["--no-ledger"])
    proxied = Client([binary, "proxy", *ledger, "--", EVERYTHING, "stdio"])
    for tool, args in [("echo", {"message": "hello"}), ("get-env", {})]:
        d, p = [], []
        for _ in range(rounds):
            for i in range(calls):
                a, b = direct.timed(tool, args), proxied.timed(tool, args)
                if i >= 20:
                    d.append(a)
                    p.append(b)
        q = lambda xs, f: statistics.quantiles(xs, n=100)[f - 1] * 1000
        dm, pm = statistics.median(d) * 1000, statistics.median(p) * 1000
        print(f"{tool:8} direct p50 {dm:.3f} ms p90 {q(d, 90):.3f} ms | proxied p50 {pm:.3f} ms "
              f"p90 {q(p, 90):.3f} ms | added p50 {pm - dm:+.3f} ms ({pm / dm:.2f}x), {len(d)} calls each")
    direct.close()
    proxied.close()


if __name__ == "__main__":
    main()
