"""A small MCP server written with the official Python SDK (`mcp`, PyPI), the upstream of the
proxy tests (tests/proxy.rs): long JSON and log results (one as structured output, one a log
wrapped in a JSON object), progress, a slow tool to cancel, a tool
that fails, one that kills its own process, one that defines `context_focus_question` itself, one that tells its pid,
a resource and a prompt. Deterministic: the same bytes on every run.

    python issues_server.py            # stdio
    python issues_server.py --http N   # Streamable HTTP on 127.0.0.1:N/mcp (the SDK serves both eras)
"""

import asyncio
import json
import os
from typing_extensions import TypedDict

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import TextContent

from build_log import build_log_text

server = MCPServer("issues", instructions="A fake issue tracker for the proxy tests.")

COMPONENTS = ["parser", "scheduler", "websocket", "storage", "auth", "ui", "cli", "metrics"]


def issue(n: int) -> dict:
    comp = COMPONENTS[n % len(COMPONENTS)]
    title = f"{comp}: slow responses #{n} under load"
    body = f"Seen on build {1000 + n}. Steps: start the {comp} service, run the soak test, wait."
    if n == 137:
        title = "websocket: memory leak in reconnect loop after TLS handshake timeout"
        body = "Each reconnect after a TLS handshake timeout keeps the old buffer alive; RSS grows 40 MB/hour."
    return {
        "id": n,
        "title": title,
        "state": "open" if n % 3 else "closed",
        "labels": [comp, "bug" if n % 2 else "flaky"],
        "assignee": f"dev{n % 17}",
        "body": body,
    }


@server.tool(structured_output=False)
def list_issues(state: str = "all") -> str:
    """All issues of the tracker as a JSON array (200 records)."""
    items = [issue(n) for n in range(1, 201) if state == "all" or issue(n)["state"] == state]
    return json.dumps(items, indent=2)


class Report(TypedDict):
    """The structured output of `issue_report`."""

    total: int
    items: list[dict]


@server.tool()
def issue_report() -> Report:
    """The tracker's issues as structured output (the SDK's default): `structuredContent` is the
    object, the text content its JSON."""
    return {"total": 200, "items": [issue(n) for n in range(1, 201)]}


@server.tool()
def issue_items() -> list[Report]:
    """The same as a list (the SDK wraps it: `structuredContent` is `{"result": [...]}`, one text
    per item)."""
    return [issue_report()]


@server.tool()
def changed_files() -> list[str]:
    """1,000 paths of about 200 bytes (the SDK sends one text per item, and `{"result": [...]}`)."""
    return [f"src/{COMPONENTS[i % 8]}/{'deeply/' * 20}module_{i:04}.py" for i in range(1, 1001)]


@server.tool(structured_output=False)
def notes() -> list[TextContent]:
    """A long report, then 40 short notes, each its own text content."""
    report = "\n".join(f"report line {i}: all green" for i in range(1, 2001))
    return [TextContent(type="text", text=report)] + [
        TextContent(type="text", text=f"note {i}: ok") for i in range(1, 41)
    ]


@server.tool(structured_output=False)
def wide_line() -> str:
    """One line of 50,000 bytes."""
    return "y" * 50_000


@server.tool(structured_output=False)
def build_log() -> str:
    """The log of the last CI build (3,000 lines)."""
    return build_log_text()


@server.tool(structured_output=False)
def run_build() -> str:
    """Runs the CI build: its command, exit code and output (the build log) as one JSON object."""
    return json.dumps({"command": "make all", "exit_code": 2, "output": build_log_text()})


@server.tool(structured_output=False)
def run_check() -> str:
    """Runs the quick checks: a short output wrapped as `run_build`'s is."""
    output = "checking format ... ok\nchecking lint ... ok\nchecking links ... ok\n"
    return json.dumps({"command": "make check", "exit_code": 0, "output": output})


@server.tool(structured_output=False)
async def slow(seconds: float, ctx: Context, marker: str = "") -> str:
    """Reports progress every 100 ms for `seconds` seconds; writes `marker` if cancelled."""
    steps = max(1, int(seconds * 10))
    try:
        for i in range(steps):
            await ctx.report_progress(i + 1, steps, f"step {i + 1} of {steps}")
            await asyncio.sleep(0.1)
    except BaseException:
        if marker:
            with open(marker, "w") as f:
                f.write("cancelled")
        raise
    return f"slept {seconds} s"


@server.tool(structured_output=False)
def fail() -> str:
    """Always fails (an isError result)."""
    raise ValueError("the tracker is read-only today " + "x" * 50)


@server.tool(structured_output=False)
def crash() -> str:
    """Kills this server's process."""
    os._exit(3)


@server.tool(structured_output=False)
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@server.tool(structured_output=False)
def own_question(context_focus_question: str) -> str:
    """Defines context_focus_question itself: the proxy must forward it."""
    return f"the upstream got: {context_focus_question}"


@server.resource("issues://readme", mime_type="text/markdown")
def readme() -> str:
    """The tracker's README."""
    return "# Tracker\n\n" + "\n".join(f"- rule {i}: be kind to issue {i}" for i in range(1, 401)) + "\n"


@server.prompt()
def triage(issue_id: str) -> str:
    """Asks for a triage of one issue."""
    return f"Triage issue {issue_id}: component, severity, owner."


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--http"]:
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
