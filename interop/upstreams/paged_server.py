"""A minimal stdio MCP server (standard library only) whose tools come in two `tools/list` pages:
`first` on page one, `later` on page two, and `later` defines `context_focus_question` itself.
Every call answers the arguments it received, as JSON. The upstream of
`tests/proxy.rs::a_tool_on_a_later_page_keeps_its_own_question`.

    python3 paged_server.py
"""

import json
import sys

PAGES = {
    None: ({"name": "first", "inputSchema": {"type": "object"}}, "page-2"),
    "page-2": (
        {
            "name": "later",
            "inputSchema": {
                "type": "object",
                "properties": {"context_focus_question": {"type": "string"}},
            },
        },
        None,
    ),
}


def answer(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "paged", "version": "1"},
        }
    if method == "tools/list":
        tool, next_cursor = PAGES[params.get("cursor")]
        page = {"tools": [tool]}
        if next_cursor:
            page["nextCursor"] = next_cursor
        return page
    if method == "tools/call":
        text = json.dumps(params.get("arguments") or {}, sort_keys=True)
        return {"content": [{"type": "text", "text": text}]}
    if method == "ping":
        return {}
    return None


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    result = answer(msg)
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    if result is None:
        reply["error"] = {"code": -32601, "message": f"unknown method {msg['method']}"}
    else:
        reply["result"] = result
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
