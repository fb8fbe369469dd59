"""MCP 2026-07-28 subscriptions and caching test peer built on the official Python SDK (mcp 2.3).

mcp 2.3 serves ``subscriptions/listen`` (stdio, and streamable HTTP's event streams): it
acknowledges the filter it was asked for, then sends the list changes and resource updates
its tools publish. ``--ttl-ms N`` makes its ``tools/list`` and ``resources/read`` results
say they stay fresh for N ms (``ttlMs``; ``cacheScope: "private"``); without it they say 0.

Tools:
  echo(message)        "Echo: MESSAGE"
  add_tool(name)       adds a tool NAME (it answers "NAME here") and announces the change
  touch(uri)           announces an update of the resource at URI

Resources:
  memo://note          "note N": N counts the reads

Usage (with peers/.venv/bin/python):
  modern_listen_server.py [--ttl-ms N]                        # stdio
  modern_listen_server.py --http --port 8123 [--ttl-ms N]     # streamable HTTP at /mcp
"""

import argparse

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer

counts = {"reads": 0}


def build(ttl_ms: int) -> MCPServer:
    hints = {
        "tools/list": CacheHint(ttl_ms=ttl_ms, scope="private"),
        "resources/read": CacheHint(ttl_ms=ttl_ms, scope="private"),
    }
    mcp = MCPServer("golem-py-listen-peer", version="0.1.0", cache_hints=hints)

    @mcp.tool()
    def echo(message: str) -> str:
        """Echo the message back."""
        return f"Echo: {message}"

    @mcp.tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Add a tool called NAME and announce that the tools changed."""

        def added() -> str:
            return f"{name} here"

        mcp.add_tool(added, name=name, description=f"added at run time: {name}")
        await ctx.notify_tools_changed()
        return f"added {name}"

    @mcp.tool()
    async def touch(uri: str, ctx: Context) -> str:
        """Announce an update of the resource at URI."""
        await ctx.notify_resource_updated(uri)
        return f"touched {uri}"

    @mcp.resource("memo://note")
    def note() -> str:
        """A note that counts its reads."""
        counts["reads"] += 1
        return f"note {counts['reads']}"

    return mcp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--ttl-ms", type=int, default=0)
    args = ap.parse_args()
    mcp = build(args.ttl_ms)
    if args.http:
        mcp.run("streamable-http", host=args.host, port=args.port)
    else:
        mcp.run("stdio")


if __name__ == "__main__":
    main()
