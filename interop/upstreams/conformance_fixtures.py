"""The fixture tools, resources and prompts of the official conformance suite
(`@modelcontextprotocol/conformance` 0.2.0) written with the official Python SDK, so that the
suite's scenarios can run against `mcp-pruner proxy` in front of it
(`interop/proxy_conformance.sh`). Serves stdio.
"""

import asyncio
import base64

import mcp.types as t
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("conformance-fixtures")

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
    "0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082"
)).decode()
WAV = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00"
                       b"\x88X\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00").decode()


@server.tool(structured_output=False)
def test_simple_text() -> list[t.TextContent]:
    """Simple text."""
    return [t.TextContent(type="text", text="This is a simple text response for testing.")]


@server.tool(structured_output=False)
def test_image_content() -> list[t.ImageContent]:
    """An image."""
    return [t.ImageContent(type="image", data=PNG, mime_type="image/png")]


@server.tool(structured_output=False)
def test_audio_content() -> list[t.AudioContent]:
    """Audio."""
    return [t.AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


def embedded() -> t.EmbeddedResource:
    return t.EmbeddedResource(type="resource", resource=t.TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."))


@server.tool(structured_output=False)
def test_embedded_resource() -> list[t.EmbeddedResource]:
    """An embedded resource."""
    return [embedded()]


@server.tool(structured_output=False)
def test_multiple_content_types() -> list:
    """Text, image and resource."""
    return [t.TextContent(type="text", text="Multiple content types test:"),
            t.ImageContent(type="image", data=PNG, mime_type="image/png"), embedded()]


@server.tool(structured_output=False)
async def test_tool_with_logging(ctx: Context) -> str:
    """Three log messages."""
    for m in ["Tool execution started", "Tool processing data", "Tool execution completed"]:
        await ctx.info(m)
        await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@server.tool(structured_output=False)
async def test_tool_with_progress(ctx: Context) -> str:
    """Three progress notifications."""
    for p in (0, 50, 100):
        await ctx.report_progress(p, 100)
        await asyncio.sleep(0.05)
    return "Tool with progress executed successfully"


@server.tool(structured_output=False)
def test_error_handling() -> str:
    """Always fails."""
    raise ValueError("This tool intentionally returns an error for testing")


@server.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """Static text."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """Static binary."""
    return base64.b64decode(PNG)


@server.resource("test://template/{id}/data", mime_type="application/json")
def template(id: str) -> str:
    """A template."""
    return '{"id":"%s","templateTest":true,"data":"Data for ID: %s"}' % (id, id)


@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list:
    """A prompt with an embedded resource."""
    return [t.EmbeddedResource(type="resource", resource=t.TextResourceContents(
                uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing.")),
            "Please process the embedded resource above."]


@server.prompt()
def test_prompt_with_image() -> list:
    """A prompt with an image."""
    return [t.ImageContent(type="image", data=PNG, mime_type="image/png"),
            "Please analyze the image above."]


@server.completion()
async def complete(ref, argument, context):
    return t.Completion(values=["paris", "park", "party"], total=3, has_more=False)


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--http"]:  # Streamable HTTP on 127.0.0.1:N/mcp (both eras)
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
