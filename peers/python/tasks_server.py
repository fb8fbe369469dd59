"""Test peer of the tasks extension of 2026-07-28 (io.modelcontextprotocol/tasks, SEP-2663):
FastMCP with the fastmcp-tasks package (its TasksExtension, on Docket's in-memory backend),
run by peers/.venv-tasks (peers/requirements-tasks.txt).

The server decides which calls become tasks: a tool declared ``task=...`` with mode
"required" is always one (and refused with -32021 to a client that did not declare the
extension on its request), mode "optional" becomes one when the client declared it, and a
plain tool is never one.

Tools:
  slow_echo(message, seconds=0.3)  required task, pollIntervalMs 200 -> "Echo: MESSAGE"
  sleepy(seconds=60)               required task, pollIntervalMs 100: sleeps, for cancellation
  broken()                         optional task that raises -> a completed task with isError
  confirm(question)                required task that asks a form elicitation (a boolean, key
                                   "ok") while it runs -> "confirmed: true/false"
  echo(message)                    never a task

Usage:
  tasks_server.py                          # stdio
  tasks_server.py --http --port 8125       # streamable HTTP at http://127.0.0.1:8125/mcp
"""

import argparse
import asyncio
from datetime import timedelta

import mcp_types as types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

mcp = FastMCP("golem-tasks-peer", version="0.1.0")
mcp.add_extension(TasksExtension())


def required(poll_ms: int) -> TaskConfig:
    return TaskConfig(mode="required", poll_interval=timedelta(milliseconds=poll_ms))


@mcp.tool(task=required(200))
async def slow_echo(message: str, seconds: float = 0.3) -> str:
    await asyncio.sleep(seconds)
    return f"Echo: {message}"


@mcp.tool(task=required(100))
async def sleepy(seconds: float = 60) -> str:
    await asyncio.sleep(seconds)
    return "woke up"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=100)))
async def broken() -> str:
    raise ValueError("it broke")


OK_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@mcp.tool(task=required(100))
async def confirm(question: str, ctx: Context) -> str | types.InputRequiredResult:
    """Asks the question while the task runs (the extension's inputRequests, answered with
    tasks/update; imperative ctx.elicit() is not available inside a task)."""
    answer = (ctx.input_responses or {}).get("ok")
    if answer is None:
        return types.InputRequiredResult(
            input_requests={
                "ok": types.ElicitRequest(
                    params=types.ElicitRequestFormParams(message=question, requested_schema=OK_SCHEMA)
                )
            },
            request_state="asked",
        )
    if not isinstance(answer, types.ElicitResult) or answer.action != "accept":
        return f"not confirmed: {getattr(answer, 'action', answer)}"
    return f"confirmed: {str((answer.content or {}).get('ok')).lower()}"


@mcp.tool
def echo(message: str) -> str:
    return f"Echo: {message}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=8125)
    args = parser.parse_args()
    if args.http:
        mcp.run(transport="http", host="127.0.0.1", port=args.port, path="/mcp", show_banner=False)
    else:
        mcp.run(transport="stdio", show_banner=False)
