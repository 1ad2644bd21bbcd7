"""A round-robin HTTP/1.1 reverse proxy in a few lines, for interop/replicas.sh: every request goes
to the next backend (per request, not per connection, as an L7 load balancer does), with
`Connection: close` to the backend and to the client; a backend that refuses the connection is
skipped (like nginx's `proxy_next_upstream error`). Backends are the ports listed, one a line, in
the file given, re-read when it changes, so a restarted replica can join.

    python3 rr_proxy.py PORT_FILE BACKENDS_FILE

Writes the port it listens on to PORT_FILE. Not a general proxy: one request per connection,
bodies by Content-Length only (what MCP clients send)."""

import asyncio
import itertools
import os
import sys

backends_file = sys.argv[2]
state = {"mtime": None, "ports": [], "next": itertools.count()}


def ports() -> list[int]:
    try:
        m = os.stat(backends_file).st_mtime_ns
    except OSError:
        return state["ports"]
    if m != state["mtime"]:
        with open(backends_file) as f:
            state["ports"] = [int(l) for l in f.read().split() if l.strip()]
        state["mtime"] = m
    return state["ports"]


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        kept = [lines[0]]
        for h in lines[1:]:
            if not h:
                continue
            name = h.split(":", 1)[0].strip().lower()
            if name == "content-length":
                length = int(h.split(":", 1)[1])
            if name in ("connection", "keep-alive"):
                continue
            kept.append(h)
        kept.append("Connection: close")
        body = await reader.readexactly(length) if length else b""
        request = ("\r\n".join(kept) + "\r\n\r\n").encode("latin-1") + body
        ps = ports()
        first = next(state["next"])
        for k in range(len(ps)):
            port = ps[(first + k) % len(ps)]
            try:
                br, bw = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                continue
            bw.write(request)
            await bw.drain()
            while chunk := await br.read(65536):
                writer.write(chunk)
                await writer.drain()
            bw.close()
            return
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        try:
            writer.close()
        except Exception:  # noqa: BLE001 - the client may be gone
            pass


async def main() -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    async with server:
        await server.serve_forever()


asyncio.run(main())
