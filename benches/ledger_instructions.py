#!/usr/bin/env python3
"""The savings ledger's share of a stdio `read`, in instructions rather than seconds.

Wall-clock shares of a few percent drown in the noise of a shared 2-core machine (`bench_read`'s
ledger share swung from -1.9% to 7.2% between runs minutes apart). Instructions do not: this runs
the server under `valgrind --tool=callgrind` (every thread counted, the ledger's writer included),
drives N `tools/call read` of a 4 KiB file over stdio, one in flight, with the ledger on (a temp
SQLite file) and with `--no-ledger`, each also with no call at all, and prints the instructions per
read of both and the ledger's share, `1 - off/on`, with the startup subtracted.

    python3 benches/ledger_instructions.py [BIN] [N]     # BIN: target/release/mcp-pruner, N: 1000
"""

import json
import os
import re
import subprocess
import sys
import tempfile


def drive(cmd, calls):
    """Runs `cmd` (a stdio server), sends `calls` reads, one in flight, and waits for it to exit."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def send(msg, reply=True):
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()
        if reply:
            line = p.stdout.readline()
            if '"result"' not in line or '"isError":true' in line:
                sys.exit(f"unexpected reply: {line[:300]}")

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "ledger_instructions", "version": "1"}}})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"}, reply=False)
    for i in range(calls):
        send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
              "params": {"name": "read", "arguments": {"path": "file.txt"}}})
    p.stdin.close()
    p.wait()


def instructions(binary, root, ledger, calls):
    """Total instructions (all threads) of one server run of `calls` reads."""
    out = os.path.join(root, f"callgrind.{ledger is not None}.{calls}")
    args = ["--ledger", ledger] if ledger else ["--no-ledger"]
    if ledger:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(ledger + suffix):
                os.remove(ledger + suffix)
    drive(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "stdio",
           "--root", root, *args], calls)
    with open(out) as f:
        total = re.search(r"^summary: (\d+)", f.read(), re.M)
    return int(total.group(1))


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/mcp-pruner")
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "file.txt"), "w") as f:
            f.write(("fn read_the_file(path: &str) -> String { String::new() }\n" * 80)[:4096])
        ledger = os.path.join(root, "ledger.sqlite3")
        per_read = {}
        for name, path in (("--no-ledger", None), ("ledger on", ledger)):
            start = instructions(binary, root, path, 0)
            total = instructions(binary, root, path, calls)
            per_read[name] = (total - start) / calls
            print(f"{name:<12} startup {start:>13,} instr, {calls} reads {total:>15,} instr: "
                  f"{per_read[name]:>10,.0f} per read")
        share = 1 - per_read["--no-ledger"] / per_read["ledger on"]
        print(f"ledger_instructions: ledger share of a stdio read {100 * share:.1f}% of the "
              f"server's instructions ({calls} reads)")


if __name__ == "__main__":
    main()
