#!/usr/bin/env python3
"""Issue 13's attack pass and issue 35's hostile-client pass (rows `35.N`), case by case, against
one build: leaks, peak RSS, wall time, leftovers.

usage: python3 benches/hardening.py BIN [CASE ...]   (default: every case)

Run it on an old build and on a new one, in the same session (the machine is shared and noisy),
and put the two tables side by side. Each case starts its own server (`stdio`, or `serve` on
127.0.0.1:0) with the defaults, on a temporary root; peak RSS is the server's VmHWM from /proc,
read just before it is killed. A server above 3 GB is killed and the row says so (the old build
reached 6.1 GB on /dev/zero). The Rust suites assert the same fixes (tests/confinement.rs,
tests/memory.rs, tests/tools_stdio.rs, tests/tools_http.rs, and tests/bad_inputs.rs for the
oversized stdio line); this script prints the figures.
"""
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1]
RSS_LIMIT_MB = 3072
MB = 1 << 20


def hwm(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def alive(pid):
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return False


class Stdio:
    """A stdio server and a line-oriented JSON-RPC client with per-call deadlines."""

    def __init__(self, root, *flags):
        self.p = subprocess.Popen(
            [BIN, "stdio", "--root", root, *flags],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "MCP_PRUNER_NO_LEDGER": "1"})
        self.next_id = 0
        self.buf = b""
        self.peak = 0
        self.killed_for_rss = False
        self.call_raw("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "hardening", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.send_bytes(json.dumps(msg).encode() + b"\n")

    def send_bytes(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def call_raw(self, method, params, timeout=120):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.wait(rid, timeout)

    def call(self, name, args, timeout=120):
        return self.call_raw("tools/call", {"name": name, "arguments": args}, timeout)

    def wait(self, rid, timeout):
        """The response to `rid`, or None on timeout (or when the server had to be killed)."""
        deadline = time.time() + timeout
        fd = self.p.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, list):
                    if rid == "batch":
                        return msg
                    continue
                ids = rid if isinstance(rid, tuple) else (rid,)
                if msg.get("id") in ids and (msg.get("id") is not None or "error" in msg):
                    return msg
            self.peak = max(self.peak, hwm(self.p.pid))
            if self.peak > RSS_LIMIT_MB:
                self.killed_for_rss = True
                self.p.kill()
                return None
            left = deadline - time.time()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, 0.1))
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                self.buf += chunk

    def close(self):
        self.peak = max(self.peak, hwm(self.p.pid))
        self.p.kill()
        self.p.wait()
        return self.peak


def text_of(r):
    if not r or "result" not in r:
        return ""
    return "".join(c.get("text", "") for c in r["result"].get("content", []))


def rss_cell(c):
    return f">{RSS_LIMIT_MB} MB, killed" if c.killed_for_rss else f"{c.peak} MB"


ROWS = []


def row(case, outcome, rss, wall, leftovers="-"):
    ROWS.append((case, outcome, rss, wall, leftovers))
    print(f"| {case} | {outcome} | {rss} | {wall} | {leftovers} |", flush=True)


def write_inside(path):
    with open(path, "w") as f:
        f.write("inside\n")


class Swapper:
    """A thread that keeps replacing ROOT/NAME (atomically, by rename) with what `make(tmp, odd)`
    creates at `tmp`, alternating odd and even, until stopped."""

    def __init__(self, root, name, make):
        self.stop_event = threading.Event()

        def loop():
            n = 0
            while not self.stop_event.is_set():
                n += 1
                tmp = os.path.join(root, f".tmp{n}")
                make(tmp, n % 2 == 1)
                os.replace(tmp, os.path.join(root, name))

        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()

    def stop(self):
        self.stop_event.set()
        self.thread.join()


def swap_race(kind, tries):
    """A path swapped between an inside file and a link out of the root while `read` runs."""
    root, outside = tempfile.mkdtemp(), tempfile.mkdtemp()
    with open(os.path.join(outside, "secret.txt"), "w") as f:
        f.write("OUTSIDE-SECRET\n")
    os.mkdir(os.path.join(outside, "d"))
    with open(os.path.join(outside, "d", "f.txt"), "w") as f:
        f.write("OUTSIDE-SECRET\n")
    os.mkdir(os.path.join(root, "real"))
    write_inside(os.path.join(root, "real", "f.txt"))
    if kind == "file":
        write_inside(os.path.join(root, "swap"))
        path, name = "swap", "swap"
        secret = os.path.join(outside, "secret.txt")

        def make(tmp, odd):
            os.symlink(secret, tmp) if odd else write_inside(tmp)
    else:
        os.symlink("real", os.path.join(root, "swapdir"))
        path, name = "swapdir/f.txt", "swapdir"

        def make(tmp, odd):
            os.symlink(os.path.join(outside, "d") if odd else "real", tmp)
    c = Stdio(root)
    swapper = Swapper(root, name, make)
    leaks, start = 0, time.time()
    for _ in range(tries):
        r = c.call("read", {"path": path}, timeout=10)
        leaks += "OUTSIDE-SECRET" in text_of(r)
    wall = time.time() - start
    swapper.stop()
    c.close()
    row(f"1. race: {kind} swapped with a link out, {tries} reads", f"{leaks} leaks",
        rss_cell(c), f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(outside, ignore_errors=True)


def dev_zero_race():
    """The same swap, with a link to /dev/zero; the old build grew until killed."""
    root = tempfile.mkdtemp()
    write_inside(os.path.join(root, "swap"))
    c = Stdio(root)
    swapper = Swapper(root, "swap",
                      lambda tmp, odd: os.symlink("/dev/zero", tmp) if odd else write_inside(tmp))
    start, answered, tries = time.time(), 0, 200
    for _ in range(tries):
        r = c.call("read", {"path": "swap"}, timeout=10)
        if r is None:
            break
        answered += 1
    wall = time.time() - start
    swapper.stop()
    c.close()
    row(f"1. race: link to /dev/zero swapped in, {tries} reads", f"{answered}/{tries} answered",
        rss_cell(c), f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)


def fifo():
    root = tempfile.mkdtemp()
    os.mkfifo(os.path.join(root, "pipe"))
    c = Stdio(root)
    start = time.time()
    r = c.call("read", {"path": "pipe"}, timeout=20)
    wall = time.time() - start
    outcome = "no answer in 20 s" if r is None else text_of(r).splitlines()[0][:90]
    # Then stdin EOF: the server must exit within the kill grace.
    c.p.stdin.close()
    t = time.time()
    try:
        c.p.wait(timeout=20)
        eof = f"exits {time.time() - t:.1f} s after EOF"
    except subprocess.TimeoutExpired:
        eof = "still running 20 s after EOF"
    c.close()
    row("1. FIFO in the root", f"{outcome}; {eof}", rss_cell(c), f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)


def big_file(size):
    root = tempfile.mkdtemp()
    with open(os.path.join(root, "big.txt"), "w") as f:
        line = "x" * 38 + "\n"
        chunk = line * (MB // len(line))
        written = 0
        while written < size:
            f.write(chunk)
            written += len(chunk)
    return root


def read_big():
    root = big_file(200 * MB)
    c = Stdio(root)
    start = time.time()
    r = c.call("read", {"path": "big.txt"}, timeout=120)
    wall = time.time() - start
    c.close()
    row("2. read of a 200 MB file", "answered" if r else "no answer", rss_cell(c), f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)


def read_sparse():
    root = tempfile.mkdtemp()
    with open(os.path.join(root, "sparse.bin"), "w") as f:
        f.truncate(1 << 30)
    c = Stdio(root)
    start = time.time()
    r = c.call("read", {"path": "sparse.bin"}, timeout=120)
    wall = time.time() - start
    c.close()
    row("2. read of a 1 GB sparse file", "answered" if r else "no answer", rss_cell(c),
        f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)


def bash_case(case, cmd, timeout_ms):
    root = tempfile.mkdtemp()
    c = Stdio(root)
    start = time.time()
    r = c.call("bash", {"cmd": cmd, "timeout_ms": timeout_ms}, timeout=timeout_ms / 1000 + 60)
    wall = time.time() - start
    c.close()
    row(case, "answered" if r else "no answer", rss_cell(c), f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)


def grep_all():
    root = big_file(200 * MB)
    c = Stdio(root)
    start = time.time()
    r = c.call("grep", {"pattern": "x", "paths": ["big.txt"]}, timeout=300)
    wall = time.time() - start
    c.close()
    row("2. grep where all 5.4M lines of 200 MB match", "answered" if r else "no answer",
        rss_cell(c), f"{wall:.1f} s")
    start = time.time()
    c = Stdio(root)
    start = time.time()
    r = c.call("grep", {"pattern": "x", "paths": ["big.txt"], "timeout_ms": 100}, timeout=300)
    wall = time.time() - start
    c.close()
    row("3. grep `timeout_ms: 100` on that file", "answered" if r else "no answer", rss_cell(c),
        f"{wall:.2f} s")
    shutil.rmtree(root, ignore_errors=True)


def stdio_line():
    root = tempfile.mkdtemp()
    c = Stdio(root)
    start = time.time()
    c.send_bytes(b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"'
                 + b"a" * (50 * MB) + b'"}}\n')
    # A line refused unparsed has no id to answer to (the error has id null); one parsed has.
    r = c.wait(("big", None), 60)
    after = c.call_raw("ping", {}, timeout=30)
    wall = time.time() - start
    c.close()
    outcome = "refused (-32600)" if r and r.get("error", {}).get("code") == -32600 else (
        "held, parsed and answered" if r else "no answer")
    outcome += "; next request answered" if after and "result" in after else "; server gone"
    row("2. one 50 MB line on stdio", outcome, rss_cell(c), f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)


def serve(root, *flags):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([BIN, "serve", "--root", root, "--port", str(port), *flags],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env={**os.environ, "MCP_PRUNER_NO_LEDGER": "1"})
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    return p, port


def post(port, body, extra=""):
    s = socket.create_connection(("127.0.0.1", port))
    data = json.dumps(body).encode()
    s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
               f"Accept: application/json, text/event-stream\r\n{extra}"
               f"Content-Length: {len(data)}\r\n\r\n").encode() + data)
    return s


def sse_disconnect():
    root = tempfile.mkdtemp()
    p, port = serve(root)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "bash", "_meta": {"progressToken": "t"},
                       "arguments": {"cmd": "echo $$ > sleep.pid; exec sleep 30"}}}
    s = post(port, call)
    pid_file = os.path.join(root, "sleep.pid")
    for _ in range(200):
        if os.path.exists(pid_file) and open(pid_file).read().strip():
            break
        time.sleep(0.02)
    time.sleep(1)
    s.close()
    time.sleep(5)
    pid = int(open(pid_file).read())
    left = alive(pid)
    if left:
        os.kill(pid, 9)
    peak = hwm(p.pid)
    p.kill()
    row("4. SSE call whose client leaves after 1 s", "sleep still running 5 s later" if left
        else "sleep killed", f"{peak} MB", "-", "1" if left else "0")
    shutil.rmtree(root, ignore_errors=True)


def stalled(n=150, wait=12):
    root = tempfile.mkdtemp()
    p, port = serve(root)
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        socks.append(s)
    time.sleep(wait)
    still = 0
    for s in socks:
        s.setblocking(False)
        try:
            still += s.recv(1) != b""
        except BlockingIOError:
            still += 1
        except OSError:
            pass
        s.close()
    peak = hwm(p.pid)
    p.kill()
    row(f"5. {n} connections that sent half a header", f"{still}/{n} open after {wait} s",
        f"{peak} MB", "-")
    shutil.rmtree(root, ignore_errors=True)


def escaped():
    root = tempfile.mkdtemp()
    c = Stdio(root, "--kill-grace-ms", "300")
    cmd = ("set -m; (trap '' TERM; sleep 60) & echo $! > pgid.pid; set +m; "
           "setsid bash -c 'echo $$ > sid.pid; trap \"\" TERM; sleep 60' & "
           "(setsid bash -c 'echo $$ > orphan.pid; trap \"\" TERM; exec sleep 60' &); "
           "sleep 60")
    start = time.time()
    c.call("bash", {"cmd": cmd, "timeout_ms": 700}, timeout=30)
    wall = time.time() - start
    time.sleep(1.5)
    names = ["pgid.pid", "sid.pid", "orphan.pid"]
    left = []
    for name in names:
        pid = int(open(os.path.join(root, name)).read())
        if alive(pid):
            left.append(name.split(".")[0])
            os.kill(pid, 9)
    c.close()
    row("6. timeout with children in another group, session, and a double-forked daemon",
        "timed out", rss_cell(c), f"{wall:.1f} s",
        f"{len(left)} ({', '.join(left)})" if left else "0")
    shutil.rmtree(root, ignore_errors=True)


def store_cap():
    root = tempfile.mkdtemp()
    c = Stdio(root, "--store-max-bytes", "10000", "--max-output-bytes", "2000")
    small = c.call("bash", {"cmd": "seq 1 1500"})  # 6,393 bytes: cut, so stored
    big = c.call("bash", {"cmd": "seq 1 10000"})  # 48,894 bytes
    ids = []
    for r in (small, big):
        meta = (r or {}).get("result", {}).get("_meta", {}).get("mcp-pruner/result", {})
        ids.append(meta.get("artifactRef") or meta.get("full_output_ref"))
    listed = c.call_raw("resources/list", {})
    uris = [r.get("uri", "") for r in (listed or {}).get("result", {}).get("resources", [])]
    c.close()
    stored = [bool(i) and any(i in u for u in uris) for i in ids]
    row("7. a 48,894-byte output under a 10,000-byte store cap",
        f"big one stored: {stored[1]}; the earlier 6,393-byte one kept: {stored[0]}",
        rss_cell(c), "-")
    shutil.rmtree(root, ignore_errors=True)


# ---- issue 35: a hostile client ------------------------------------------------------------------

def http_raw(port, data, wait=10.0):
    """Sends raw bytes on a new connection and returns what came back before close or `wait`."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(data)
    s.settimeout(wait)
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
            head, _, body = got.partition(b"\r\n\r\n")
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:") and len(body) >= int(line.split(b":")[1]):
                    s.close()
                    return got
    except OSError:
        pass
    s.close()
    return got


def post_bytes(port, body, extra=""):
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json\r\n{extra}Content-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n").encode() + body


def still_open(socks):
    """How many of `socks` the server has not closed (what it sent before closing is read)."""
    n = 0
    for s in socks:
        s.setblocking(False)
        try:
            while s.recv(65536):
                pass
        except BlockingIOError:
            n += 1
        except OSError:
            pass
        s.close()
    return n


def h2_preface(n=200, wait=12):
    root = tempfile.mkdtemp()
    p, port = serve(root)
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        socks.append(s)
    time.sleep(wait)
    still = still_open(socks)
    peak = hwm(p.pid)
    p.kill()
    row(f"35.1 {n} connections that sent only the HTTP/2 preface", f"{still}/{n} open after {wait} s",
        f"{peak} MB", "-")
    shutil.rmtree(root, ignore_errors=True)


def session_ids_without_fds(limit=64):
    import resource
    root = tempfile.mkdtemp()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen([BIN, "serve", "--root", root, "--port", str(port), "--header-timeout-ms", "30000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env={**os.environ, "MCP_PRUNER_NO_LEDGER": "1"},
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit)))
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    fds = lambda: len(os.listdir(f"/proc/{p.pid}/fd"))
    idle, stable, deadline = [], 0, time.time() + 20
    while stable < 10 and time.time() < deadline:
        n = fds()
        if n < limit - 1:
            idle.append(socket.create_connection(("127.0.0.1", port)))
            stable = 0
        elif n == limit and idle:
            idle.pop(0).close()
            stable = 0
        else:
            stable += 1
        time.sleep(0.02)
    init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "h"}}}).encode()
    ids = []
    for _ in range(3):
        got = http_raw(port, post_bytes(port, init)).decode("latin-1")
        sid = [l.split(":", 1)[1].strip() for l in got.split("\r\n") if l.lower().startswith("mcp-session-id:")]
        ids.append(sid[0] if sid else got.split("\r\n", 1)[0][9:12] or "none")
    zero = sum(i == "0" * 32 for i in ids)
    peak = hwm(p.pid)
    p.kill()
    for s in idle:
        s.close()
    row(f"35.2 3 initialize with one descriptor left (limit {limit})",
        f"{zero}/3 all-zero ids; {len(set(ids))} distinct ({', '.join(i[:8] for i in ids)})", f"{peak} MB", "-")
    shutil.rmtree(root, ignore_errors=True)


def stalled_bodies(n=60, wait=35):
    root = tempfile.mkdtemp()
    p, port = serve(root)
    socks = []
    size = 16 * MB - 1
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {size}\r\n\r\n").encode())
        try:
            s.settimeout(5)
            s.sendall(b"[" + b" " * (size - 2))
        except OSError:
            pass
        socks.append(s)
    time.sleep(wait)
    peak = hwm(p.pid)
    still = still_open(socks)
    p.kill()
    row(f"35.3 {n} connections: header, then 16 MiB-1 of body less its last byte",
        f"{still}/{n} open after {wait} s", f"{peak} MB", "-")
    shutil.rmtree(root, ignore_errors=True)


def ten_mib_root():
    root = tempfile.mkdtemp()
    with open(os.path.join(root, "ten.txt"), "w") as f:
        f.write(("y" * 99 + "\n") * (10 * MB // 100))
    return root


def batch_calls():
    return [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "read", "arguments": {"path": "ten.txt", "max_output_bytes": 10 * MB}}} for i in range(1, 41)]


def big_batch():
    root = ten_mib_root()
    p, port = serve(root)
    start = time.time()
    got = http_raw(port, post_bytes(port, json.dumps(batch_calls()).encode()), wait=300)
    wall = time.time() - start
    peak = hwm(p.pid)
    p.kill()
    row("35.4 batch of 40 reads at max_output_bytes 10 MiB, HTTP", f"{len(got) // MB} MB of replies",
        f"{peak} MB", f"{wall:.1f} s")
    c = Stdio(root)
    start = time.time()
    c.send(batch_calls())
    c.wait("batch", 300)
    wall = time.time() - start
    c.close()
    row("35.4 the same batch over stdio", "answered", rss_cell(c), f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)


def store_memory(calls=250):
    root = tempfile.mkdtemp()
    c = Stdio(root)
    start = time.time()
    for i in range(calls):
        c.call("bash", {"cmd": f"seq {i * 10_000_000} {i * 10_000_000 + 800_000}"}, timeout=120)
    wall = time.time() - start
    h = c.call("health", {})
    try:
        stored = json.loads(text_of(h))["store"]["bytes"] // MB
    except (ValueError, KeyError):
        stored = "?"
    c.close()
    row(f"35.5 {calls} bash calls of 7.2 MB each", f"store reports {stored} MB", rss_cell(c), f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)


def cpu_seconds(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def abandoned_greps(n=8, after=20):
    root = tempfile.mkdtemp()
    words = ["alpha", "beta", "gamma", "delta", "eps1", "zeta22", "eta", "theta"]
    import random
    rnd = random.Random(1)
    with open(os.path.join(root, "big.txt"), "w") as f:
        for _ in range(400_000):
            f.write(" ".join(rnd.choice(words) for _ in range(12)) + "\n")
    p, port = serve(root)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "grep", "arguments": {
        "pattern": "(\\w+\\s){4}\\w{7}", "paths": ["big.txt"] * 100, "timeout_ms": 120000}}}).encode()
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    for s in socks:
        s.sendall(post_bytes(port, body))
    time.sleep(1)
    for s in socks:
        s.close()
    before = cpu_seconds(p.pid)
    time.sleep(after)
    burned = cpu_seconds(p.pid) - before
    peak = hwm(p.pid)
    p.kill()
    row(f"35.6 {n} greps whose HTTP clients left after 1 s", f"{burned:.1f} CPU-s in the next {after} s",
        f"{peak} MB", "-")
    shutil.rmtree(root, ignore_errors=True)


def stdout_unread(n=20_000, wait=30):
    root = tempfile.mkdtemp()
    with open(os.path.join(root, "page.txt"), "w") as f:
        f.write("some text to read\n" * 2000)
    p = subprocess.Popen([BIN, "stdio", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env={**os.environ, "MCP_PRUNER_NO_LEDGER": "1"})
    sent = [0]

    def feed():
        try:
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "h"}}}).encode() + b"\n")
            for i in range(1, n + 1):
                p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                    "name": "read", "arguments": {"path": "page.txt"}}}).encode() + b"\n")
                sent[0] = i
            p.stdin.flush()
        except (OSError, ValueError):
            pass

    threading.Thread(target=feed, daemon=True).start()
    time.sleep(wait)
    rss = 0
    for line in open(f"/proc/{p.pid}/status"):
        if line.startswith("VmRSS"):
            rss = int(line.split()[1]) // 1024
    peak = hwm(p.pid)
    p.kill()
    p.wait()
    row(f"35.7 {n} reads from a client that never reads stdout", f"{sent[0]} taken; {rss} MB after {wait} s",
        f"{peak} MB", "-")
    shutil.rmtree(root, ignore_errors=True)


def cwd_swap(tries=500):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    root, outside = tempfile.mkdtemp(), tempfile.mkdtemp()
    os.mkdir(os.path.join(root, "d"))
    open(os.path.join(root, "d", "where"), "w").write("in-the-root\n")
    open(os.path.join(outside, "where"), "w").write("OUTSIDE\n")
    os.symlink(outside, os.path.join(root, "x"))
    stop = threading.Event()
    a, b = os.path.join(root, "d").encode(), os.path.join(root, "x").encode()

    def swap():
        while not stop.is_set():
            libc.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE

    t = threading.Thread(target=swap, daemon=True)
    t.start()
    c = Stdio(root)
    outside_n, start = 0, time.time()
    for _ in range(tries):
        outside_n += "OUTSIDE" in text_of(c.call("bash", {"cmd": "cat where", "cwd": "d"}, timeout=30))
    wall = time.time() - start
    stop.set()
    t.join()
    c.close()
    row(f"35.8 {tries} bash calls with cwd swapped for a link out", f"{outside_n} started outside the root",
        rss_cell(c), f"{wall:.1f} s")
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(outside, ignore_errors=True)


def token_exposure():
    root = tempfile.mkdtemp()
    token = "tok-hardening-35"
    found = []
    for way, flags, env in [("MCP_PRUNER_AUTH_TOKEN", [], {"MCP_PRUNER_AUTH_TOKEN": token}),
                            ("--auth-token", ["--auth-token", token], {})]:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        p = subprocess.Popen([BIN, "serve", "--root", root, "--port", str(port), *flags],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "MCP_PRUNER_NO_LEDGER": "1", **env})
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        for what in ("cmdline", "environ"):
            if token.encode() in open(f"/proc/{p.pid}/{what}", "rb").read():
                found.append(f"{way} in {what}")
        p.kill()
        p.wait()
    row("35.9 the bearer token in /proc/PID of the server", "; ".join(found) or "not readable", "-", "-")
    shutil.rmtree(root, ignore_errors=True)


def forged_cursor():
    root = tempfile.mkdtemp()
    c = Stdio(root)
    r = c.call("bash", {"cmd": "seq 1 3000"})
    ref = r["result"]["_meta"]["mcp-pruner/result"].get("artifactRef")
    args = {"prune_id": ref, "ranges": [{"start_line": 1, "end_line": 3000}], "max_output_bytes": 1024}
    first = json.loads(text_of(c.call("recover_text", args)))
    cur = first.get("nextCursor") or first.get("next_cursor")
    parts = cur.split(".")
    parts[3] = "2"
    forged = c.call("recover_text", {**args, "cursor": ".".join(parts)})
    c.close()
    outcome = "refused" if forged and "error" in forged else "accepted: " + text_of(forged)[:60]
    row("35.10 a recover_text cursor with its skip edited", outcome, rss_cell(c), "-")
    shutil.rmtree(root, ignore_errors=True)


def minors():
    root = tempfile.mkdtemp()
    p, port = serve(root)
    esc = http_raw(port, post_bytes(port, b'{"jsonrpc":"2.0","id":"\\u00e9","method":"ping","params":{}}'))
    dup = http_raw(port, post_bytes(port, b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{},"id":2}'))
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}'
    absolute = http_raw(port, (f"POST http://evil.example/mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                               f"Connection: close\r\n\r\n").encode() + body)
    p.kill()
    tail = lambda b: b.split(b"\r\n\r\n", 1)[-1].decode("utf-8", "replace")[:70]
    row("35.m id written \\u00e9", tail(esc), "-", "-")
    row("35.m two \"id\" members", tail(dup), "-", "-")
    row("35.m POST http://evil.example/mcp, Host loopback", absolute.split(b"\r\n", 1)[0].decode(), "-", "-")
    shutil.rmtree(root, ignore_errors=True)


CASES = {
    "race-file": lambda: swap_race("file", 2000),
    "race-dir": lambda: swap_race("dir", 2000),
    "dev-zero": dev_zero_race,
    "fifo": fifo,
    "read-200mb": read_big,
    "read-sparse": read_sparse,
    "yes": lambda: bash_case("2. `bash` running `yes` for 10 s", "timeout 10 yes", 20_000),
    "grep": grep_all,
    "bash-line": lambda: bash_case("2. `bash` printing one 100 MB line",
                                   "head -c 100000000 /dev/zero | tr '\\0' a", 60_000),
    "stdio-line": stdio_line,
    "sse": sse_disconnect,
    "stalled": stalled,
    "escaped": escaped,
    "store-cap": store_cap,
    "h2-preface": h2_preface,
    "session-ids": session_ids_without_fds,
    "stalled-body": stalled_bodies,
    "big-batch": big_batch,
    "store-memory": store_memory,
    "abandoned-grep": abandoned_greps,
    "stdout-unread": stdout_unread,
    "cwd-swap": cwd_swap,
    "token": token_exposure,
    "forged-cursor": forged_cursor,
    "minors": minors,
}

if __name__ == "__main__":
    chosen = sys.argv[2:] or list(CASES)
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{BIN}: {version}\n")
    print("| case | outcome | peak RSS | wall | leftover processes |")
    print("|---|---|---|---|---|")
    for name in chosen:
        CASES[name]()
