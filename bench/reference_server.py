"""A reference MCP server from the Python SDK (mcp 2.x MCPServer), stateless JSON over Streamable
HTTP, with three tools like the gateway's: what tools/list costs elsewhere, on the same machine.
Usage: reference_server.py PORT"""
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("reference", log_level="WARNING")


@server.tool(description="Read clipboard tabs and items (reference stand-in).")
def mcp_read(mode: str, tab: str | None = None, index: int | None = None) -> str:
    return "mode:" + mode


@server.tool(description="Change managed tabs (reference stand-in).")
def mcp_write(mode: str, tab: str | None = None, text: str | None = None) -> str:
    return "ok|mode:" + mode


@server.tool(description="Check a call without running it (reference stand-in).")
def mcp_validate(tool: str, params: dict) -> str:
    return "valid:true"


server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), json_response=True, stateless_http=True)
