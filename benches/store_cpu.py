#!/usr/bin/env python3
"""CPU per call of `serve` on the shared (redis) store against one on the in-memory store, in
the same run (issue 38). Not a test: it prints figures.

Lock-step calls in interleaved blocks; CPU is read from /proc/PID/task/*/schedstat (every thread
of the replica, and of redis-server) around each block. The new-output workloads first fill the
shared store to its entry cap (1,000), so every put evicts.

usage: python3 benches/store_cpu.py BIN[,BIN2...] [CALLS] [BLOCK] [WORKLOAD...]
  BIN,BIN2     release binaries to compare (each gets a shared replica; the first one also runs
               the in-memory baseline)
  WORKLOAD     new (a new output every read), same (the same output read again), newpage (a new
               read, then a 40-line page from the same replica), newother (the page from a second
               replica, which holds no near copy: a round trip)
Needs redis-server on PATH.
"""
import json, os, socket, subprocess, sys, tempfile, threading, time, urllib.request

BINS = sys.argv[1].split(",")
BIN = BINS[0]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
BLOCK = int(sys.argv[3]) if len(sys.argv) > 3 else 100
WORK = sys.argv[4:] or ["new", "same"]

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def cpu(pid):
    # ns of CPU of every live thread (schedstat), far finer than stat's clock ticks; a thread
    # that exits mid-block loses its share (tokio's workers live throughout).
    t = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try: t += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
        except OSError: pass
    return t / 1e9

rport = free_port()
redis = subprocess.Popen(["redis-server", "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
                          "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    try: socket.create_connection(("127.0.0.1", rport)).close(); break
    except OSError: time.sleep(0.05)
root = tempfile.mkdtemp()
file = "".join(f"    let value_{i} = compute(input, {i}); // step {i} of the pipeline\n" for i in range(1, 2001))
open(os.path.join(root, "file.rs"), "w").write(file)
body = "".join(l + " // new\n" for l in file.splitlines()[:1000])

def serve(extra, bin=None):
    p = subprocess.Popen([bin or BIN, "serve", "--port", "0", "--no-ledger", "--root", root] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = []
    ev = threading.Event()
    def drain():
        for line in p.stdout:
            try: v = json.loads(line)
            except Exception: continue
            if v.get("event") == "mcp_pruner.ready" and not port:
                port.append(v["data"]["port"]); ev.set()
    threading.Thread(target=drain, daemon=True).start()
    assert ev.wait(30), "no ready event"
    return p, f"http://127.0.0.1:{port[0]}/mcp"

mem, mem_url = serve([])
shs = [serve(["--store", f"redis://127.0.0.1:{rport}/0"], b) for b in BINS]
# A second replica of each binary: "newother" pages on it what the first stored (no near copy).
others = {u: serve(["--store", f"redis://127.0.0.1:{rport}/0"], b) for b, (_, u) in zip(BINS, shs)}
others[None] = None
sh, sh_url = shs[0]
H = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
seq = [0]

def call(url, name, args):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": args}}).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=H)) as r:
        assert r.status == 200
        v = json.loads(r.read())
    assert "result" in v and not v["result"].get("isError"), v
    return v

def stored_id(v):
    r = v["result"]
    return (r.get("_meta", {}).get("mcp-pruner/result", {}).get("artifactRef")
            or r.get("structuredContent", {}).get("artifactRef"))

def one(url, work, pid_acc=None):
    if work == "same":
        call(url, "read", {"path": "file.rs"}); return
    seq[0] += 1
    name = "new-0.rs"
    open(os.path.join(root, name), "w").write(f"// output {seq[0]}\n{body}")
    v = call(url, "read", {"path": name})
    if work in ("newpage", "newother"):
        k = seq[0] % 960
        if work == "newother" and url in others:
            url = others[url][1]
        call(url, "recover_text", {"prune_id": stored_id(v), "ranges": [{"start_line": 1 + k, "end_line": 40 + k}]})

rp = redis.pid
results = {}
sides = [("mem", mem_url, mem.pid)] + [(f"shared{i}", u, p.pid) for i, (p, u) in enumerate(shs)]
for work in WORK:
    for _, url, _ in sides:  # warm-up
        for _ in range(50): one(url, work)
    if work != "same":  # fill the shared store to its entry cap (1000): every put then evicts
        for _ in range(1000): one(sides[1][1], work)
    acc = {k: [0.0, 0.0, 0.0] for k, _, _ in sides}  # replica cpu, redis cpu, wall
    done = 0
    while done < N:
        for side, url, pid in sides:
            o = others.get(url)
            both = lambda: cpu(pid) + (cpu(o[0].pid) if o else 0)
            c0, r0, t0 = both(), cpu(rp), time.perf_counter()
            for _ in range(BLOCK): one(url, work)
            a = acc[side]
            a[0] += both() - c0; a[1] += cpu(rp) - r0; a[2] += time.perf_counter() - t0
        done += BLOCK
    us = lambda x: x / done * 1e6
    m = acc["mem"]
    line = f"{work:8} {done} calls each: replica CPU mem {us(m[0]):.0f} us"
    for k, _, _ in sides[1:]:
        s_ = acc[k]
        line += f" | {k} {us(s_[0]):.0f} us (x{s_[0]/m[0]:.3f}) +redis {us(s_[1]):.0f}"
    print(line + f"  [redis during mem {us(m[1]):.0f}]", flush=True)
    if os.environ.get("CMDSTATS"):
        print(subprocess.run(["redis-cli", "-p", str(rport), "info", "commandstats"], capture_output=True, text=True).stdout)
for p in [mem, redis] + [p for p, _ in shs] + [o[0] for o in others.values() if o]: p.kill(); p.wait()
