#!/usr/bin/env python3
"""Reproduces the cancel-before-registration race of mcp-pruner (stdlib only).

A `notifications/cancelled` that arrives right behind its `tools/call` is dropped when the
server has not registered the call as in flight yet; the call then runs to its timeout
(TOOL_TIMEOUT) instead of ending CANCELLED.

  python3 interop/repro/cancel_race.py BIN [N]

stdio: the call and the cancel go out in ONE write. HTTP: the cancel is POSTed as soon as the
call's POST has been sent. HOME is pointed at the temp root so `bash -lc` skips the machine's
login profile. Prints one line per try and `lost K of N` per transport; exits 1 if any was lost.
"""
import http.client as httpc
import json
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 8
ROOT = tempfile.mkdtemp(prefix="mcp-pruner-race-")
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "race", "version": "0"}}}


def call(i):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"cmd": "sleep 30", "timeout_ms": 3000, "env": {"HOME": ROOT}}}}


def cancel(i):
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i, "reason": "race"}}


def code_of(msg):
    return (((msg.get("result") or {}).get("_meta") or {}).get("mcp-pruner/result") or {}).get("error", {}).get("code")


def stdio():
    p = subprocess.Popen([BIN, "stdio", "--root", ROOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1, start_new_session=True)

    def send(*ms):
        p.stdin.write("".join(json.dumps(m) + "\n" for m in ms))
        p.stdin.flush()

    def recv(i):
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == i:
                return m

    lost = 0
    try:
        send(INIT)
        recv(0)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i in range(1, N + 1):
            t0 = time.monotonic()
            send(call(i), cancel(i))
            code = code_of(recv(i))
            lost += code != "CANCELLED"
            print(f"stdio try {i}: {code} after {time.monotonic() - t0:.2f}s")
    finally:
        p.terminate()
        p.wait()
    print(f"stdio: lost {lost} of {N}")
    return lost


def http():
    p = subprocess.Popen([BIN, "serve", "--port", "0", "--root", ROOT], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    port = None
    for line in p.stdout:
        ev = json.loads(line)
        if ev.get("event") == "mcp_pruner.ready":
            port = ev["data"]["port"]
            break
    threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()

    def post(body, sid=None):
        c = httpc.HTTPConnection("127.0.0.1", port, timeout=60)
        h = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if sid:
            h["mcp-session-id"] = sid
        c.request("POST", "/mcp", json.dumps(body), h)
        return c

    def answer(c):
        r = c.getresponse()
        body = r.read().decode()
        if "text/event-stream" in (r.getheader("content-type") or ""):
            body = [x[5:] for x in body.splitlines() if x.startswith("data:")][-1]
        return r.getheader("mcp-session-id"), (json.loads(body) if body.strip() else None)

    lost = 0
    try:
        sid, _ = answer(post(INIT))
        answer(post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid))
        for i in range(1, N + 1):
            t0 = time.monotonic()
            c = post(call(i), sid)  # request fully sent; response not read yet
            answer(post(cancel(i), sid))
            _, msg = answer(c)
            code = code_of(msg)
            lost += code != "CANCELLED"
            print(f"http  try {i}: {code} after {time.monotonic() - t0:.2f}s")
    finally:
        p.terminate()
        p.wait()
    print(f"http: lost {lost} of {N}")
    return lost


if __name__ == "__main__":
    try:
        total = stdio() + http()
    finally:
        import shutil

        shutil.rmtree(ROOT, ignore_errors=True)
    sys.exit(1 if total else 0)
