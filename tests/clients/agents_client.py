#!/usr/bin/env python3
"""ChatGPT's `search` and `fetch` through the OpenAI Agents SDK's MCP client, for end-to-end tests.
Run it with target/clients/agents/bin/python (see install.sh).

    agents_client.py --url URL --token TOKEN list
        -> {"tools": [names], "strict": [names the SDK turned into strict function tools]}
    agents_client.py --url URL --token TOKEN search QUERY
    agents_client.py --url URL --token TOKEN fetch ID
        -> {"isError": bool, "blocks": <number of content blocks>, "json": <the one text block, parsed>}
           or {"isError": true, "text": "..."} for a tool error

Before printing, the JSON of search/fetch is validated against the shapes OpenAI documents for
ChatGPT connectors (deep research / company knowledge); a mismatch exits non-zero.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

import jsonschema
from agents import Agent
from agents.mcp import MCPServerStreamableHttp, MCPUtil
from agents.run_context import RunContextWrapper

# OpenAI's documented result shapes ("Building MCP servers for ChatGPT and API integrations").
SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "url": {"type": "string"}},
                "required": ["id", "title", "url"],
            },
        }
    },
    "required": ["results"],
}
FETCH_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "text": {"type": "string"},
        "url": {"type": "string"},
        "metadata": {"type": ["object", "null"], "additionalProperties": {"type": ["string", "number", "boolean", "array", "object", "null"]}},
    },
    "required": ["id", "title", "text", "url"],
}


async def main(args) -> dict:
    params = {"url": args.url, "headers": {"Authorization": f"Bearer {args.token}"}, "timeout": 30}
    async with MCPServerStreamableHttp(params=params, client_session_timeout_seconds=30) as server:
        if args.command == "list":
            tools = await server.list_tools()
            strict = await MCPUtil.get_function_tools(server, True, RunContextWrapper(None), Agent(name="t"))
            return {"tools": [t.name for t in tools], "strict": [t.name for t in strict if t.strict_json_schema]}
        arg = {"search": "query", "fetch": "id"}[args.command]
        result = await server.call_tool(args.command, {arg: args.value})
        texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
        is_error = bool(getattr(result, "is_error", None) or getattr(result, "isError", False))
        if is_error:
            return {"isError": True, "text": "\n".join(texts)}
        payload = json.loads(texts[0])
        jsonschema.validate(payload, SEARCH_SCHEMA if args.command == "search" else FETCH_SCHEMA)
        return {"isError": False, "blocks": len(result.content), "json": payload}


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("command", choices=["list", "search", "fetch"])
    p.add_argument("value", nargs="?", default="")
    print(json.dumps(asyncio.run(main(p.parse_args())), ensure_ascii=False))
    sys.stdout.flush()
