#!/usr/bin/env python3
"""MCP resources through the Python SDK 2.x over Streamable HTTP with a bearer token, for
end-to-end tests (run it with target/clients/py2/bin/python).

    py_resources.py --url URL --token TOKEN [--modern] list
    (--token -: prints {"ready": true}, then reads the token from stdin's first line)
        -> {"resources": [{"uri", "name", "title", "mimeType"}...], "pages": N}   (every page)
    ... caps
        -> {"resources": <the resources capability the server announced, or null>}
    ... templates
        -> {"resourceTemplates": [{"uriTemplate", "name", "mimeType"}...]}
    ... read URI
        -> {"contents": [{"uri", "mimeType", "text"}...]}
    ... flood URI COUNT
        -> {"subscribed": N, "refused": "<message>" or null}: resources/subscribe of
        URI?index=0 .. URI?index=COUNT-1 in one session, stopping at the first refusal
    ... watch URI
        prints {"watching": URI} once the subscription holds (resources/subscribe, or with
        --modern subscriptions/listen), then {"updated": URI} for the first change of URI, or
        (--modern) {"ended": URI} when the server closes the subscription first.
    a JSON-RPC error: {"protocolError": "<message>", "code": <int>}   (exit 0)

`--modern` skips `initialize` and negotiates 2026-07-28 with `server/discover`. One JSON line per
answer on stdout; a non-zero exit only on a transport failure (on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys

import anyio
import httpx2
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated, listen
from mcp.shared.exceptions import MCPError


def emit(payload: dict) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def dump(model) -> dict:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def list_all(session: ClientSession) -> dict:
    resources, cursor, pages = [], None, 0
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_resources(params=params)
        pages += 1
        for r in page.resources:
            d = dump(r)
            resources.append({k: d.get(k) for k in ("uri", "name", "title", "mimeType")})
        cursor = page.next_cursor
        if not cursor:
            return {"resources": resources, "pages": pages}


async def watch_legacy(session: ClientSession, uri: str, updates) -> None:
    await session.subscribe_resource(uri)
    emit({"watching": uri})
    async for changed in updates:
        if changed == uri:
            emit({"updated": uri})
            return


async def watch_modern(session: ClientSession, uri: str) -> None:
    async with listen(session, resource_subscriptions=[uri]) as subscription:
        emit({"watching": uri})
        async for event in subscription:
            if isinstance(event, ResourceUpdated) and event.uri == uri:
                emit({"updated": uri})
                return
    # The server closed the subscription gracefully (its token expired or was revoked).
    emit({"ended": uri})


async def command(session: ClientSession, args, updates) -> dict | None:
    if args.command == "list":
        return await list_all(session)
    if args.command == "templates":
        page = await session.list_resource_templates()
        return {"resourceTemplates": [
            {k: dump(t).get(k) for k in ("uriTemplate", "name", "mimeType")} for t in page.resource_templates
        ]}
    if args.command == "read":
        result = await session.read_resource(args.uri)
        return {"contents": [
            {k: dump(c).get(k) for k in ("uri", "mimeType", "text")} for c in result.contents
        ]}
    if args.command == "flood":
        done = 0
        for i in range(args.count):
            try:
                await session.subscribe_resource(f"{args.uri}?index={i}")
            except MCPError as e:
                return {"subscribed": done, "refused": e.error.message}
            done += 1
        return {"subscribed": done, "refused": None}
    if args.modern:
        await watch_modern(session, args.uri)
    else:
        await watch_legacy(session, args.uri, updates)
    return None


async def run(args) -> None:
    headers = {"Authorization": f"Bearer {args.token}"}
    send, updates = anyio.create_memory_object_stream[str](16)

    async def on_message(message) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            await send.send(root.params.uri)

    with anyio.fail_after(args.timeout):
        timeout = httpx2.Timeout(args.timeout, read=args.timeout)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
            async with streamable_http_client(args.url, http_client=http) as (read, write):
                async with ClientSession(read, write, message_handler=on_message) as session:
                    if args.modern:
                        hello = await session.discover()
                    else:
                        hello = await session.initialize()
                    try:
                        if args.command == "caps":
                            resources = hello.capabilities.resources
                            payload = {"resources": dump(resources) if resources else None}
                        else:
                            payload = await command(session, args, updates)
                    except MCPError as e:
                        payload = {"protocolError": e.error.message, "code": e.error.code}
                    if payload is not None:
                        emit(payload)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--modern", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list")
    sub.add_parser("caps")
    sub.add_parser("templates")
    for name in ("read", "watch"):
        sub.add_parser(name).add_argument("uri")
    flood = sub.add_parser("flood")
    flood.add_argument("uri")
    flood.add_argument("count", type=int)
    args = p.parse_args()
    if args.token == "-":
        # The caller issues the token once this client has loaded (seconds on a loaded machine),
        # so that a short-lived one's lifetime starts at the connection, not before the imports.
        emit({"ready": True})
        args.token = sys.stdin.readline().strip()
    anyio.run(run, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
