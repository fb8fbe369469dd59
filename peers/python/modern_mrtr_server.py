"""MCP 2026-07-28 multi-round-trip (MRTR) test peer built on the official Python SDK (mcp 2.3).

The tools take their client input through mcp 2.x resolvers: a parameter annotated
``Annotated[T, Resolve(fn)]`` is filled by running ``fn``; a resolver that returns an
``Elicit``/``Sample``/``ListRoots`` marker asks the client. On a 2026-07-28 request the
SDK answers ``{"resultType":"input_required","inputRequests":{KEY:{method,params}},
"requestState":"v1...."}``; the client retries the same ``tools/call`` (same name and
arguments: requestState is bound to both) with ``inputResponses: {KEY: result}`` and the
echoed ``requestState``. On a 2025-11-25 (initialize) connection the same resolvers send
ordinary server-to-client requests mid-call instead. KEY is the resolver's
``module:qualname``, e.g. ``__main__:ask_name``.

requestState is sealed (AES-GCM) under a key made at start-up, so it only resumes on the
same process; it expires after 600 s.

Tools:
  echo(message)           plain, never asks
  greet()                 elicitation (form, one required string field ``name``) -> "hello NAME"
  ask_model(question)     sampling -> "MODEL: TEXT"
  show_roots()            roots/list -> "roots: URI, URI" (or "roots: none")
  region_echo(region)     ``region`` carries ``x-mcp-header: Region``: over 2026-07-28 HTTP the
                          call must send ``Mcp-Param-Region`` equal to the argument

Usage (with peers/.venv/bin/python):
  modern_mrtr_server.py                               # stdio (era chosen by the first request)
  modern_mrtr_server.py --http --port 8123            # streamable HTTP at http://127.0.0.1:8123/mcp
  modern_mrtr_server.py --http --port 8123 --json     # application/json replies instead of SSE
"""

import argparse
from typing import Annotated

import mcp_types as types
from mcp.server.mcpserver import Elicit, ListRoots, MCPServer, Resolve, Sample
from pydantic import BaseModel, Field

mcp = MCPServer("golem-py-mrtr-peer", version="0.1.0")


class Name(BaseModel):
    """The form greet asks for: one required string."""

    name: str = Field(description="Your name")


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_capital(question: str) -> Sample:
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=50,
        system_prompt="answer briefly",
    )


def ask_roots() -> ListRoots:
    return ListRoots()


@mcp.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@mcp.tool()
def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Ask the user's name (form elicitation) and greet them."""
    return f"hello {who.name}"


@mcp.tool()
def ask_model(question: str, answer: Annotated[types.CreateMessageResult, Resolve(ask_capital)]) -> str:
    """Ask the client's model (sampling) and return its model name and answer."""
    content = answer.content
    return f"{answer.model}: {getattr(content, 'text', content)}"


@mcp.tool()
def show_roots(roots: Annotated[types.ListRootsResult, Resolve(ask_roots)]) -> str:
    """Ask the client for its roots and list their URIs."""
    uris = [str(root.uri) for root in roots.roots]
    return "roots: " + (", ".join(uris) if uris else "none")


@mcp.tool()
def region_echo(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Echo the region; over HTTP its value must also ride the Mcp-Param-Region header."""
    return f"region: {region}"


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
