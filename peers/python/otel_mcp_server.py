"""MCP server on the official Python SDK (mcp 2.x) that exports its own OpenTelemetry spans.

The peer of golem's tracing tests. mcp 2.x's low-level server runs ``OpenTelemetryMiddleware``
by default: every inbound request gets a SERVER span (``tools/call echo``, ``initialize``,
``tools/list``, ...; instrumentation scope ``mcp-python-sdk``) whose parent is the W3C trace
context (``traceparent``/``tracestate``) the client put in the request's ``params._meta``, with
attributes such as ``mcp.method.name``, ``mcp.protocol.version``, ``jsonrpc.request.id``,
``gen_ai.operation.name`` and ``gen_ai.tool.name``. This script installs the OpenTelemetry SDK
globally so that those spans are exported over OTLP/HTTP (protobuf), to the endpoint of the
standard variables OTEL_EXPORTER_OTLP_ENDPOINT (``/v1/traces`` is appended) or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is), with resource ``service.name=otel-py-peer``.
A SimpleSpanProcessor exports each span when it ends, i.e. before the response leaves, so a
test may query its receiver (peers/python/otlp_receiver.py) as soon as the call returned.
With neither variable set, no exporter is installed (spans are dropped instead of the exporter
retrying against localhost:4318 for its timeout on every call).

Usage (with peers/.venv/bin/python):
  otel_mcp_server.py                      # stdio
  otel_mcp_server.py --http --port 8123   # streamable HTTP at http://127.0.0.1:8123/mcp,
                                          # stateful sessions (Mcp-Session-Id in the 2025 era)
Both the 2026-07-28 era and the initialize era are served. The tracer provider is shut down
(flushing) when stdin closes (stdio) or on SIGTERM/SIGINT (HTTP).

Tools: ``echo(message)`` -> "Echo: {message}", ``add(a, b)`` -> a + b, ``fail()`` -> an isError
result "requested failure" (its span has status error and ``error.type=tool_error``), ``ask()``
-> asks the client for a name (``elicitation/create``, in the initialize era a request to the
client that carries the trace context of the SDK's own span for it) and returns the action.
"""

import argparse
import os
import signal
import sys

from opentelemetry import propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

SERVICE_NAME = "otel-py-peer"


def setup_tracing() -> TracerProvider:
    """Install the global tracer provider (exporting over OTLP/HTTP) and the W3C propagator."""
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    propagate.set_global_textmap(TraceContextTextMapPropagator())
    return provider


# Installed before the SDK is imported, so every tracer the SDK creates is an SDK tracer.
PROVIDER = setup_tracing()

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from pydantic import BaseModel  # noqa: E402

mcp = MCPServer("golem-otel-py-peer", version="0.1.0")


@mcp.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def fail() -> str:
    """Always fail: the SDK turns ToolError into a result with isError=true."""
    raise ToolError("requested failure")


class Name(BaseModel):
    """What ask asks for."""

    name: str


@mcp.tool()
async def ask(ctx: Context) -> str:
    """Ask the client's user for a name (elicitation); returns what they did."""
    result = await ctx.elicit("Who are you?", Name)
    return result.action


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    args = ap.parse_args()
    # uvicorn shuts down gracefully on SIGTERM, restores this handler and raises the signal
    # again: SystemExit then unwinds to the finally below (instead of the default handler
    # killing the process before the provider is shut down).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        if args.http:
            mcp.run("streamable-http", host=args.host, port=args.port)
        else:
            mcp.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        PROVIDER.shutdown()


if __name__ == "__main__":
    main()
