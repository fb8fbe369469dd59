"""An MCP stdio server built on the official Python SDK (mcp 2.x) whose tool names
no model provider accepts as they are, used as a test peer of the `golem` command:
a dotted name, a name with a space and non-ASCII letters, and a 90-character name.

Usage (with peers/.venv/bin/python): odd_names_server.py
Each tool answers with the name it was called by, so a test sees that the call
reached the server under the server's own name.
"""

import logging

from mcp.server.mcpserver import MCPServer

# The SDK logs a warning for names outside its recommended pattern; these are on purpose.
logging.disable(logging.WARNING)

mcp = MCPServer("golem-odd-names", version="0.1.0")

LONG_NAME = "summarize_" + "the_quarterly_report_" * 3 + "x" * 17


@mcp.tool(name="get.weather")
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"get.weather: sunny in {city}"


@mcp.tool(name="wetter für köln")
def wetter() -> str:
    """Das Wetter in Köln."""
    return "wetter für köln: sonnig"


@mcp.tool(name=LONG_NAME)
def long_name() -> str:
    """A tool with a 90-character name."""
    return f"{LONG_NAME}: done"


if __name__ == "__main__":
    assert len(LONG_NAME) == 90, len(LONG_NAME)
    mcp.run()
