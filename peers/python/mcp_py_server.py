"""Minimal MCP server built on the official Python SDK (mcp 2.x), used as a test peer.

mcp 2.x renamed FastMCP to MCPServer (``from mcp.server.mcpserver import MCPServer``);
``mcp.server.fastmcp`` now raises ModuleNotFoundError.

Usage (with peers/.venv/bin/python):
  mcp_py_server.py                                   # stdio
  mcp_py_server.py --http --port 8123                # streamable HTTP, SSE responses, stateful sessions
  mcp_py_server.py --http --port 8123 --json         # streamable HTTP, application/json responses
  mcp_py_server.py --http --port 8123 --stateless    # no Mcp-Session-Id (add --json for JSON)
The HTTP endpoint is http://127.0.0.1:PORT/mcp.

A call to an unknown tool is answered with the JSON-RPC error the MCP specification shows
for it (-32602 "Unknown tool: NAME"); the SDK's own default is an isError result. The tool
``refuse`` is listed but always answered with a JSON-RPC error (-32602 "refused: ..."). The
interop suite (scripts/interop.sh) relies on both: golem-mcp exits 2 for the first (a tool
the server does not list) and 3 for the second.
"""

import argparse
import asyncio
import warnings

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS


class SpecServer(MCPServer):
    """An MCPServer that answers an unknown tool with a JSON-RPC error, as the spec shows."""

    async def call_tool(self, name, arguments, context=None):
        if name not in {tool.name for tool in await self.list_tools()}:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        if name == "refuse":
            raise MCPError(code=INVALID_PARAMS, message="refused: this tool never runs")
        return await super().call_tool(name, arguments, context)


mcp = SpecServer("golem-py-peer", version="0.1.0")


@mcp.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
async def slow(steps: int, ctx: Context, delay: float = 0.1) -> str:
    """Sleep `steps` times `delay` seconds, reporting progress after each step."""
    for i in range(1, steps + 1):
        await asyncio.sleep(delay)
        await ctx.report_progress(i, steps, f"step {i}/{steps}")
    return f"done after {steps} steps"


@mcp.tool()
def fail(reason: str = "requested failure") -> str:
    """Always fail: the SDK turns ToolError into a result with isError=true and text=reason."""
    raise ToolError(reason)


@mcp.tool()
def refuse() -> str:
    """Listed, but every call is answered with a JSON-RPC error (see SpecServer)."""
    return "unreachable"


class Contact(BaseModel):
    """What ask_user asks for: a name (required) and an age (with a default)."""

    name: str
    age: int = 36


@mcp.tool()
async def ask_model(question: str, ctx: Context) -> str:
    """Ask the client's model (sampling) and return its model name and answer."""
    with warnings.catch_warnings():
        # mcp 2.x marks sampling deprecated for the 2026-07-28 revision; it is
        # still the 2025-11-25 protocol this peer speaks.
        warnings.simplefilter("ignore")
        result = await ctx.session.create_message(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
            max_tokens=50,
            system_prompt="answer briefly",
            related_request_id=ctx.request_id,
        )
    content = result.content
    text = getattr(content, "text", str(content))
    return f"{result.model}: {text}"


@mcp.tool()
async def ask_user(ctx: Context) -> str:
    """Ask the client's user (elicitation) for a Contact."""
    result = await ctx.elicit("Who are you?", Contact)
    if result.action == "accept":
        return f"hello {result.data.name}, {result.data.age}"
    return result.action


@mcp.tool()
async def chatty(ctx: Context) -> str:
    """Send two log messages through the context, then answer."""
    await ctx.info("starting", logger_name="py-peer")
    await ctx.warning("careful", logger_name="py-peer")
    return "logged"


# Resources, a template, prompts and completion (golem's resources/prompts tests).

COLOURS = ["red", "green", "blue"]
SHADES = {"red": ["crimson", "scarlet"], "green": ["lime", "olive"], "blue": ["navy", "teal"]}


@mcp.resource("note://readme", name="readme", mime_type="text/plain", description="A short note.")
def readme() -> str:
    """The note's text."""
    return "Hello from the Python peer."


@mcp.resource("note://logo", name="logo", mime_type="application/octet-stream")
def logo() -> bytes:
    """Four bytes, sent as a base64 blob."""
    return bytes([0, 1, 2, 255])


@mcp.resource("colour://{name}", name="colour", mime_type="text/plain")
def colour(name: str) -> str:
    """A colour by name."""
    return f"the colour {name}"


@mcp.prompt(title="Paint", description="Ask for a painting in a colour.")
def paint(colour: str, shade: str = "") -> str:
    """A prompt with one required and one optional argument."""
    return f"Paint something {colour}" + (f" ({shade})" if shade else "") + "."


@mcp.completion()
async def complete(ref, argument, context):
    """Completes the colour (for the paint prompt and the colour:// template) and, given
    the colour in context, the shade."""
    if argument.name in ("colour", "name"):
        return types.Completion(values=[c for c in COLOURS if c.startswith(argument.value)])
    if argument.name == "shade":
        chosen = (context.arguments or {}).get("colour", "") if context else ""
        values = [s for s in SHADES.get(chosen, []) if s.startswith(argument.value)]
        return types.Completion(values=values, total=len(values), has_more=False)
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--json", action="store_true", help="json_response=True (no SSE for POST replies)")
    ap.add_argument("--stateless", action="store_true", help="stateless_http=True (no sessions)")
    args = ap.parse_args()
    if args.http:
        mcp.run(
            "streamable-http",
            host=args.host,
            port=args.port,
            json_response=args.json,
            stateless_http=args.stateless,
        )
    else:
        mcp.run("stdio")


if __name__ == "__main__":
    main()
