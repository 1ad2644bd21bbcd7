#!/usr/bin/env python3
"""Peak RSS growth of a server for one large request (issue 15), a benchmark, not a test: prints
the growth as a ratio to the request's size. tests/memory.rs asserts the bound (< 4x).

  python3 benches/request_memory.py BIN zeros 16         # HTTP: 16 MiB body of [0,0,...]
  python3 benches/request_memory.py BIN zeros_params 16  # HTTP: the same array inside params
  python3 benches/request_memory.py BIN prune_text 16    # HTTP: a 16 MiB prune_text
  python3 benches/request_memory.py BIN stdio 50         # stdio: a 50 MiB prune_text line
"""
import json, socket, subprocess, sys, tempfile, time, urllib.request

bin_, kind, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
root = tempfile.mkdtemp()
n = int(mb * (1 << 20))


def hwm(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmHWM"):
            return int(l.split()[1]) // 1024
    return 0


def prune_text_call(size):
    text = ("let x = compute(alpha, beta); // line\n" * (size // 39 + 1))[:size]
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "prune_text", "arguments": {"text": text, "goal_hint": "where is compute called"}}}


common = ["--root", root, "--max-body-bytes", str(200 << 20), "--no-ledger"]
if kind == "stdio":
    p = subprocess.Popen([bin_, "stdio", *common], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "health", "arguments": {}}}).encode() + b"\n")
    p.stdin.flush(); p.stdout.readline()
    body = json.dumps(prune_text_call(n)).encode()
    base, t = hwm(p.pid), time.time()
    p.stdin.write(body + b"\n"); p.stdin.flush()
    out = p.stdout.readline()
else:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    p = subprocess.Popen([bin_, "serve", "--port", str(port), *common], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz"); break
        except Exception:
            time.sleep(0.05)
    if kind == "zeros":
        body = b"[" + b"0," * (n // 2 - 1) + b"0]"
    elif kind == "zeros_params":
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":[' + b"0," * (n // 2 - 1) + b'0]}}'
    else:
        body = json.dumps(prune_text_call(n)).encode()
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=json.dumps(
        {"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "health", "arguments": {}}}).encode(), headers=headers)).read()
    base, t = hwm(p.pid), time.time()
    try:
        out = urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=body, headers=headers), timeout=300).read()
    except urllib.error.HTTPError as e:
        out = e.read()
dt, peak = time.time() - t, hwm(p.pid)
p.kill()
size = len(body) / (1 << 20)
print(f"{kind}: body {size:.1f} MiB, peak RSS growth {peak - base} MB = {(peak - base) / size:.1f}x the body, {dt:.2f} s; reply {out[:100]!r}")
