"""The MCP Python SDK's client against Uplink: initialize, list tools, call channel_list.

Usage: python_client.py http <mcp_url> <token>
       python_client.py stdio <command> [args...]   (the server gets the SDK's default environment
                                                    plus UPLINK_DATA_DIR from ours)
Prints one JSON line: server name, tool names, and channel_list's result.
"""
import json
import os
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def exercise(read, write):
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        listed = await session.call_tool("channel_list", {})
        return {
            "server": init.server_info.name,
            "tools": [t.name for t in tools.tools],
            "is_error": bool(listed.is_error),
            "text": listed.content[0].text if listed.content else None,
            "channels": [c["channel"] for c in (listed.structured_content or {}).get("channels", [])],
        }


async def main(argv):
    if argv[0] == "http":
        url, token = argv[1], argv[2]
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(url, http_client=http) as (read, write, *_):
                return await exercise(read, write)
    params = StdioServerParameters(command=argv[1], args=argv[2:], env={"UPLINK_DATA_DIR": os.environ["UPLINK_DATA_DIR"]})
    async with stdio_client(params) as (read, write, *_):
        return await exercise(read, write)


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, sys.argv[1:])))
