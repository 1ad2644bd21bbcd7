"""An MCP upstream that speaks only the 2026-07-28 revision, over Streamable HTTP, written with
plain http.server (no SDK): `server/discover` and self-contained requests carrying the envelope
in `params._meta` and the mirrored `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers.
`initialize`, any `Mcp-Session-Id` and any request without its envelope are refused.

Usage: python3 modern_only.py LOG  -- prints `PORT n` once listening on 127.0.0.1; appends one
line per message received to LOG (`METHOD` or `REFUSED METHOD: why`), for tests to assert on.
Tools: `slow` (answers after `seconds` on an SSE stream; logs `CLOSED slow` when the client
closes it first), `build_log` (a 3,000-line build log whose link step fails; asked with a `logLevel` in the
envelope, it answers on an SSE stream after a log notification) and `fail` (answers -32602 with
data). resources/read answers -32002 naming the URI."""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from build_log import build_log_text

VERSION = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_SERVER = "io.modelcontextprotocol/serverInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = {"name": "modern-only", "version": "1.0.0"}
LOG = sys.argv[1]

TOOLS = [
    {
        "name": "build_log",
        "description": "The log of the last build.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "slow",
        "description": "Answers after `seconds`, on an SSE stream kept alive meanwhile.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "fail",
        "description": "Always answers with a JSON-RPC error.",
        "inputSchema": {"type": "object", "properties": {"why": {"type": "string"}}},
    },
]


def record(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, mid, code, message, data=None):
        err = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self.reply(status, {"jsonrpc": "2.0", "id": mid, "error": err})

    def do_GET(self):
        self.send_response(405)
        self.end_headers()

    def do_DELETE(self):
        self.send_response(405)
        self.end_headers()

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            record(f"NOTIFICATION {method}")
            self.send_response(202)
            self.end_headers()
            return
        why = self.refusal(msg)
        if why:
            record(f"REFUSED {method}: {why}")
            status, code = (404, -32601) if method == "initialize" else (400, -32602)
            return self.error(status, mid, code, why)
        params = msg.get("params") or {}
        level = (params.get("_meta") or {}).get(META_LOG_LEVEL)
        record(f"{method} logLevel={level}" if level else method)
        if method == "server/discover":
            return self.result(mid, {"supportedVersions": [VERSION], "capabilities": {"tools": {"listChanged": False}, "resources": {}}, "instructions": "A modern-only test server.", "ttlMs": 5, "cacheScope": "public"})
        if method == "tools/list":
            return self.result(mid, {"tools": TOOLS, "ttlMs": 5, "cacheScope": "public"})
        if method == "tools/call" and params.get("name") == "build_log":
            result = {"content": [{"type": "text", "text": build_log_text()}]}
            if level:
                return self.stream(mid, result, "linking websocket/client.o")
            return self.result(mid, result)
        if method == "tools/call" and params.get("name") == "slow":
            return self.slow(mid, float((params.get("arguments") or {}).get("seconds", 1)))
        if method == "tools/call" and params.get("name") == "fail":
            why = (params.get("arguments") or {}).get("why", "")
            return self.error(400, mid, -32602, f"fail was asked to fail: {why}", {"why": why})
        if method == "resources/read":
            return self.error(400, mid, -32002, "Resource not found", {"uri": params.get("uri")})
        return self.error(404, mid, -32601, f"Method not found: {method}")

    def refusal(self, msg):
        """Why a request is not a self-contained 2026-07-28 request, or None."""
        method = msg.get("method")
        if method == "initialize":
            return "initialize was removed in 2026-07-28"
        if self.headers.get("mcp-session-id"):
            return "no sessions in 2026-07-28"
        meta = (msg.get("params") or {}).get("_meta") or {}
        if meta.get(META_VERSION) != VERSION or not isinstance(meta.get(META_CAPS), dict):
            return "the envelope is missing from params._meta"
        if self.headers.get("mcp-protocol-version") != VERSION:
            return "MCP-Protocol-Version header missing or wrong"
        if self.headers.get("mcp-method") != method:
            return "Mcp-Method header missing or wrong"
        if method == "tools/call" and self.headers.get("mcp-name") != msg["params"].get("name"):
            return "Mcp-Name header missing or wrong"
        return None

    def stream(self, mid, result, log):
        """The answer on an SSE stream, after a log notification (the request asked for logs)."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "logger": "modern-only", "data": log}}
        self.wfile.write(f"event: message\ndata: {json.dumps(note)}\n\n".encode())
        self.wfile.flush()
        result["resultType"] = "complete"
        answer = {"jsonrpc": "2.0", "id": mid, "result": result}
        self.wfile.write(f"event: message\ndata: {json.dumps(answer)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def slow(self, mid, seconds):
        """Keeps an SSE stream alive for `seconds`, then answers; logs `CLOSED slow` when the
        client closes the stream first (the revision's cancellation)."""
        import time

        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.close_connection = True
        try:
            for _ in range(int(seconds * 10)):
                self.wfile.write(b": waiting\n\n")
                self.wfile.flush()
                time.sleep(0.1)
            answer = {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": f"slept {seconds} s"}], "resultType": "complete"}}
            self.wfile.write(f"event: message\ndata: {json.dumps(answer)}\n\n".encode())
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            record("CLOSED slow")

    def result(self, mid, result):
        result["resultType"] = "complete"
        result["_meta"] = {META_SERVER: SERVER_INFO}
        self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": result})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"PORT {server.server_address[1]}", flush=True)
server.serve_forever()
