"""A scripted MCP client on the official Python SDK, a test peer: it runs a plan of operations
against a server and prints what each returned, as one JSON document on stdout.

It runs on both lines of the SDK: 1.x (peers/.venv-sse: `ClientSession`, the initialize
handshake) and 2.x (peers/.venv: `mcp.Client`, which probes `server/discover` and speaks
2026-07-28 where the server does, else falls back to the handshake).

Usage:
  plan_client.py --plan PLAN_JSON (--stdio COMMAND_JSON | --url URL) [--legacy]

COMMAND_JSON is the server command and its arguments as a JSON list of strings.

PLAN_JSON is a list of operations, each an object with "op":
  {"op": "list_tools"}                       -> the tool names, sorted
  {"op": "call", "tool": T, "args": {...}}   -> {"text": [...], "isError": bool}
                                                (a JSON-RPC error: {"error": code, "message": m})
  {"op": "call_progress", "tool": T, "args": {...}}
                                             -> the call's result, and "progress": the number of
                                                progress notifications received for it
  {"op": "list_resources"}                   -> the resource URIs
  {"op": "read", "uri": U}                   -> the texts of its contents
  {"op": "list_prompts"}                     -> the prompt names, sorted
  {"op": "prompt", "name": N, "args": {...}} -> the texts of its messages
The client declares elicitation and answers every form with ELICIT_CONTENT (a JSON object from
the environment, default {}) accepted; "elicited" in the output counts the requests answered.
--legacy makes the 2.x client skip the probe (mode="legacy"); "era" in the output says which
protocol version was negotiated.
"""

import argparse
import json
import os
import sys
from importlib.metadata import version

import anyio

SDK_MAJOR = int(version("mcp").split(".")[0])
ELICIT_CONTENT = json.loads(os.environ.get("ELICIT_CONTENT", "{}"))
elicited = 0


async def on_elicit(*args):
    """Accepts every form with ELICIT_CONTENT (both lines pass (context, params))."""
    global elicited
    elicited += 1
    from mcp import types

    return types.ElicitResult(action="accept", content=ELICIT_CONTENT)


def texts(items):
    out = []
    for item in items or []:
        text = getattr(item, "text", None)
        if text is None:
            resource = getattr(item, "resource", None)
            text = getattr(resource, "text", None)
        if text is None:
            content = getattr(item, "content", None)
            text = getattr(content, "text", None)
        if text is not None:
            out.append(text)
    return out


async def run_plan(session, plan):
    results = []
    for step in plan:
        op = step["op"]
        try:
            if op == "list_tools":
                listed = await session.list_tools()
                results.append(sorted(tool.name for tool in listed.tools))
            elif op in ("call", "call_progress"):
                reports = []

                async def on_progress(progress, total, message):
                    reports.append(progress)

                kwargs = {}
                if op == "call_progress":
                    kwargs["progress_callback"] = on_progress
                result = await session.call_tool(step["tool"], step.get("args", {}), **kwargs)
                failed = getattr(result, "isError", None) or getattr(result, "is_error", False)
                entry = {"text": texts(result.content), "isError": bool(failed)}
                if op == "call_progress":
                    entry["progress"] = len(reports)
                results.append(entry)
            elif op == "list_resources":
                listed = await session.list_resources()
                results.append([str(resource.uri) for resource in listed.resources])
            elif op == "read":
                read = await session.read_resource(step["uri"])
                results.append([getattr(item, "text", None) for item in read.contents])
            elif op == "list_prompts":
                listed = await session.list_prompts()
                results.append(sorted(prompt.name for prompt in listed.prompts))
            elif op == "prompt":
                got = await session.get_prompt(step["name"], step.get("args") or None)
                results.append(texts([message.content for message in got.messages]))
            else:
                raise SystemExit(f"unknown op {op!r}")
        except Exception as error:  # a JSON-RPC error is a result of the plan too
            inner = getattr(error, "error", None)
            code = getattr(inner, "code", None)
            message = getattr(inner, "message", None) or str(error)
            results.append({"error": code, "message": message})
    return results


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plan", required=True)
    parser.add_argument("--url")
    parser.add_argument("--legacy", action="store_true")
    parser.add_argument("--stdio")
    options = parser.parse_args()
    plan = json.loads(options.plan)
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    stdio = None
    if options.stdio:
        command = json.loads(options.stdio)
        stdio = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    if SDK_MAJOR >= 2:
        from mcp import Client

        server = stdio if stdio else options.url
        mode = "legacy" if options.legacy else "auto"
        async with Client(server, mode=mode, elicitation_callback=on_elicit) as client:
            era = client.session.protocol_version if hasattr(client.session, "protocol_version") else None
            results = await run_plan(client, plan)
    else:
        if stdio:
            opened = stdio_client(stdio)
        else:
            from mcp.client.streamable_http import streamablehttp_client

            opened = streamablehttp_client(options.url)
        async with opened as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
                initialized = await session.initialize()
                era = initialized.protocolVersion
                results = await run_plan(session, plan)
    json.dump({"sdk": version("mcp"), "era": era, "results": results, "elicited": elicited}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    anyio.run(main)
