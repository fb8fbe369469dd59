"""An MCP server on the official Python SDK's 1.x line (FastMCP), served over the deprecated
HTTP+SSE transport of protocol 2024-11-05, used as a test peer.

Servers deployed with this transport mostly run the 1.x line (FastMCP), so this one does,
in its own virtual environment, peers/.venv-sse (peers/requirements-sse.txt, installed by
scripts/install-peers.sh): peers/.venv holds the 2.x line.

Usage (with peers/.venv-sse/bin/python):
  sse_fastmcp_server.py --port 8124
The event stream is http://127.0.0.1:PORT/sse; its first event names the URL to POST
messages to (/messages/?session_id=...).

Tools: echo, add, slow (progress notifications), fail (an isError result), ask_name (an
elicitation request to the client, on the event stream), summarize (a sampling request to
the client), big (a text of N bytes).
"""

import argparse
import asyncio

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel

mcp = FastMCP("golem-sse-peer")


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
    """Always fail: FastMCP turns the exception into a result with isError=true."""
    raise ValueError(reason)


class Name(BaseModel):
    """What ask_name asks the client for."""

    name: str


@mcp.tool()
async def ask_name(ctx: Context) -> str:
    """Ask the client for a name (elicitation) and greet it."""
    answer = await ctx.elicit(message="What is your name?", schema=Name)
    if answer.action == "accept":
        return f"Hello, {answer.data.name}!"
    return f"no name ({answer.action})"


@mcp.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model to summarize the text (sampling)."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=text))],
        max_tokens=50,
    )
    content = result.content
    return f"summary: {content.text}" if isinstance(content, TextContent) else "summary: (not text)"


@mcp.tool()
def big(size: int) -> str:
    """A text of `size` bytes."""
    return "x" * size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    mcp.settings.host = "127.0.0.1"
    mcp.settings.port = args.port
    mcp.settings.log_level = "WARNING"
    mcp.run(transport="sse")


if __name__ == "__main__":
    main()
