"""Test peer built on fastmcp 4.1.6 (which runs on mcp 2.3's low-level server).

fastmcp is not in peers/requirements.txt: run this with a Python that has both
``mcp==2.3.0`` and ``fastmcp==4.1.6`` installed (pip resolves them together, see
/work/notes/python-peers-2026.md).

fastmcp 4 serves both eras through mcp 2.3: on stdio the first request decides
(``initialize`` -> 2025-11-25 handshake; a request whose ``_meta`` carries
``io.modelcontextprotocol/protocolVersion`` -> stateless 2026-07-28); over HTTP the
``MCP-Protocol-Version`` header decides per request.

``ctx.elicit()`` only works on a handshake-era connection (fastmcp raises a ToolError on
2026-07-28), so ``greet`` uses it there and fastmcp's "guard pattern" on 2026-07-28: the
tool body returns an ``InputRequiredResult`` with ``input_requests={"name": elicitation}``
and, on the client's retry, reads ``ctx.input_responses["name"]``; ``ctx.request_state``
carries a plaintext marker the SDK seals on the wire.

Tools:
  echo(message)   plain
  greet()         form elicitation, one required string field ``name`` -> "hello NAME"

Usage:
  modern_fastmcp_server.py                              # stdio
  modern_fastmcp_server.py --http --port 8124           # streamable HTTP at http://127.0.0.1:8124/mcp
  modern_fastmcp_server.py --http --port 8124 --json    # application/json replies instead of SSE
"""

import argparse

import mcp_types as types
from fastmcp import Context, FastMCP
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

mcp = FastMCP("golem-fastmcp-peer", version="0.1.0")

NAME_KEY = "name"
NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}


class Name(BaseModel):
    name: str = Field(description="Your name")


@mcp.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@mcp.tool()
async def greet(ctx: Context) -> str | types.InputRequiredResult:
    """Ask the user's name (form elicitation) and greet them."""
    rc = ctx.request_context
    if rc is not None and rc.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answer = (ctx.input_responses or {}).get(NAME_KEY)
        if answer is None or ctx.request_state != "asked-name":
            return types.InputRequiredResult(
                input_requests={
                    NAME_KEY: types.ElicitRequest(
                        params=types.ElicitRequestFormParams(message="What is your name?", requested_schema=NAME_SCHEMA)
                    )
                },
                request_state="asked-name",
            )
        if not isinstance(answer, types.ElicitResult):
            return "expected an elicitation result"
        if answer.action != "accept":
            return answer.action
        return f"hello {(answer.content or {}).get('name')}"
    result = await ctx.elicit("What is your name?", Name)
    if result.action == "accept":
        return f"hello {result.data.name}"
    return result.action


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--json", action="store_true", help="json_response=True (no SSE for POST replies)")
    ap.add_argument("--stateless", action="store_true", help="stateless_http=True (legacy era: no sessions)")
    args = ap.parse_args()
    if args.http:
        mcp.run(
            transport="http",
            host=args.host,
            port=args.port,
            path="/mcp",
            json_response=args.json,
            stateless_http=args.stateless,
            show_banner=False,
        )
    else:
        mcp.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
