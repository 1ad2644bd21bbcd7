#!/usr/bin/env python3
"""Paging a big grep, build against build: the first `grep` call, then every later page by
`nextCursor`, and for comparison one call whose budget holds every match and `recover_text` on the
first call's artifact. Each build runs as `mcp-pruner stdio` over the same tree.

    python3 benches/grep_paging.py [--tree DIR] [--pattern P] [--max-matches N] BIN [BIN...]

Defaults: the cargo registry sources (`$CARGO_HOME/registry/src`), pattern `unsafe`, 500 matches
a page. Prints, per build: matches, pages, first call ms, later pages ms (total, median, max),
one big-budget call ms, recover_text ms. Not run by the tests.
"""
import argparse
import json
import os
import statistics
import subprocess
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=os.path.join(os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo")), "registry", "src"))
    ap.add_argument("--pattern", default="unsafe")
    ap.add_argument("--max-matches", type=int, default=500)
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args()
    print(f"tree {a.tree}, pattern {a.pattern!r}, {a.max_matches} matches a page")
    print(f"{'build':<40} {'matches':>8} {'pages':>6} {'first ms':>9} {'pages ms':>9} {'median':>7} {'max':>7} {'1 call ms':>9} {'recover ms':>10}")
    for b in a.bins:
        row = run(b, a)
        print(f"{b[-40:]:<40} {row['matches']:>8} {row['pages']:>6} {row['first']:>9.1f} {row['rest']:>9.1f} {row['median']:>7.2f} {row['max']:>7.2f} {row['big']:>9.1f} {row['recover']:>10.2f}")


class Client:
    def __init__(self, binary, root):
        env = dict(os.environ, MCP_PRUNER_NO_LEDGER="1", MCP_PRUNER_LOG_LEVEL="error")
        self.p = subprocess.Popen([binary, "stdio", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        self.id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "grep_paging", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")

    def request(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.id:
                return msg

    def call(self, name, args):
        t = time.perf_counter()
        r = self.request("tools/call", {"name": name, "arguments": args})
        ms = (time.perf_counter() - t) * 1e3
        res = r["result"]
        meta = dict(res.get("_meta", {}).get("mcp-pruner/result", {}))
        meta.update(res.get("structuredContent") or {})
        return ms, res, meta

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def run(binary, a):
    c = Client(binary, a.tree)
    args = {"pattern": a.pattern, "paths": ["."], "max_matches": a.max_matches, "timeout_ms": 300000}
    first, _, m = c.call("grep", args)
    matches = m["match_count"]
    artifact = m.get("artifactRef")
    times = []
    cursor = m.get("nextCursor")
    while cursor:
        ms, res, m = c.call("grep", dict(args, cursor=cursor))
        assert not res.get("isError"), res
        times.append(ms)
        cursor = m.get("nextCursor")
    big, _, _ = c.call("grep", dict(args, max_matches=5000, max_output_bytes=10485760))
    recover = 0.0
    if artifact:
        recover, _, _ = c.call("recover_text", {"prune_id": artifact, "ranges": [{"start_line": 1, "end_line": a.max_matches}]})
    c.close()
    return {"matches": matches, "pages": 1 + len(times), "first": first, "rest": sum(times),
            "median": statistics.median(times) if times else 0.0, "max": max(times) if times else 0.0,
            "big": big, "recover": recover}


if __name__ == "__main__":
    main()
