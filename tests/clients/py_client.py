#!/usr/bin/env python3
"""Tiny MCP client CLI over Streamable HTTP with a bearer token, for end-to-end tests.

Works with the Python `mcp` SDK 1.x (httpx) and 2.x (httpx2); run it with the
interpreter of the venv to test (target/clients/py1 or py2, see install.sh).

    py_client.py --url URL --token TOKEN list
        -> {"tools": [{"name": ..., "title": ..., "description": ..., "annotations": {...}}, ...]}
           (plus "outputSchema" and "icons" for a tool that has them)
    py_client.py --url URL --token TOKEN call NAME JSON_ARGS
        -> {"isError": bool, "text": "<text content blocks joined with \\n>"}
           plus "structured": <structuredContent> when the server sent one (the 2.x SDK
           has validated it against the tool's outputSchema by then)
           plus "images": [{"mimeType": ..., "data": "<base64>"}, ...] when the result has any
    on a JSON-RPC error reply (unknown tool, bad params, ...):
        -> {"protocolError": "<message>", "code": <int or null>}        (exit 0)

Exactly one JSON line goes to stdout. Exit status is non-zero only when the
transport fails (connection refused, timeout, HTTP 401/403/5xx, a 404 for the
session, ...); the exception then goes to stderr. A JSON-RPC error body sent
with HTTP 400 or 404 counts as a protocol error; any other HTTP error status is
a transport failure whatever its body. `title` is the tool's top-level title,
falling back to annotations.title; null if neither is set.

Options:
    --token ''         send no Authorization header
    --timeout SECS     overall deadline (default 30)
    --modern           (mcp 2.x only) skip `initialize`; negotiate 2026-07-28 with
                       `server/discover` and run stateless
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from importlib.metadata import version as _dist_version

import anyio

MCP_VERSION = _dist_version("mcp")
MCP_MAJOR = int(MCP_VERSION.split(".")[0])

from mcp import ClientSession  # noqa: E402
from mcp import types  # noqa: E402

if MCP_MAJOR >= 2:
    import httpx2 as _httpx
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError as _RpcError
else:
    import httpx as _httpx  # noqa: F401
    from mcp.client.streamable_http import streamablehttp_client
    from mcp.shared.exceptions import McpError as _RpcError


def _dump(model) -> dict | None:
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _tool_json(tool) -> dict:
    annotations = _dump(getattr(tool, "annotations", None))
    title = getattr(tool, "title", None)
    if title is None and annotations:
        title = annotations.get("title")
    out = {
        "name": tool.name,
        "title": title,
        "description": tool.description,
        "annotations": annotations if annotations is not None else {},
    }
    output_schema = getattr(tool, "output_schema", None) if MCP_MAJOR >= 2 else getattr(tool, "outputSchema", None)
    if output_schema is not None:
        out["outputSchema"] = output_schema
    icons = getattr(tool, "icons", None)
    if icons:
        out["icons"] = [_dump(i) for i in icons]
    return out


def _text_of(result) -> str:
    parts = []
    for block in result.content or []:
        if getattr(block, "type", None) == "text":
            parts.append(block.text)
    return "\n".join(parts)


def _images_of(result) -> list:
    out = []
    for block in result.content or []:
        if getattr(block, "type", None) == "image":
            mime = getattr(block, "mime_type", None) or getattr(block, "mimeType", None)
            out.append({"mimeType": mime, "data": block.data})
    return out


async def _run_command(session: ClientSession, args) -> dict:
    try:
        if args.command == "list":
            tools = []
            cursor = None
            while True:
                params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                tools.extend(_tool_json(t) for t in page.tools)
                cursor = page.next_cursor if MCP_MAJOR >= 2 else page.nextCursor
                if not cursor:
                    break
            return {"tools": tools}
        else:
            try:
                arguments = json.loads(args.json_args)
            except json.JSONDecodeError as e:
                raise SystemExit(f"py_client.py: JSON_ARGS is not JSON: {e}")
            result = await session.call_tool(args.name, arguments)
            is_error = bool(getattr(result, "is_error", None) if MCP_MAJOR >= 2 else result.isError)
            out = {"isError": is_error, "text": _text_of(result)}
            structured = getattr(result, "structured_content", None) if MCP_MAJOR >= 2 else result.structuredContent
            if structured is not None:
                out["structured"] = structured
            images = _images_of(result)
            if images:
                out["images"] = images
            return out
    except _RpcError as e:
        err = getattr(e, "error", None)
        code = getattr(err, "code", None)
        message = getattr(err, "message", None) or str(e)
        return {"protocolError": message, "code": code if isinstance(code, int) else None}


async def _session(read, write, args) -> dict:
    async with ClientSession(read, write) as session:
        if args.modern:
            await session.discover()
        else:
            await session.initialize()
        return await _run_command(session, args)


class HttpFailure(Exception):
    """A POST answered with a non-2xx status whose body is not a JSON-RPC error.

    Both SDKs turn some such statuses (404 on a session, any 4xx in 2.x) into
    synthesized JSON-RPC errors; this keeps them transport failures here."""


# HTTP statuses the 2026-07-28 transport uses for JSON-RPC errors (400: bad params,
# header mismatch, unsupported version, missing capability; 404: method not found).
# A JSON-RPC error body with one of these is a protocol error; any other HTTP error
# status (401, 403, 5xx, ...) is a transport failure whatever its body says.
RPC_ERROR_STATUSES = (400, 404)


class _HttpLog:
    """httpx event hook noting POST answers with an HTTP error status: a JSON-RPC
    error body at 400/404 (a protocol error) or anything else (a failure)."""

    def __init__(self) -> None:
        self.failures: list[str] = []
        self.rpc_errors: list[dict] = []

    async def on_response(self, response) -> None:
        if response.request.method != "POST" or response.status_code < 400:
            return
        body = await response.aread()
        try:
            msg = json.loads(body)
            if response.status_code in RPC_ERROR_STATUSES and isinstance(msg, dict) and isinstance(msg.get("error"), dict) and "code" in msg["error"]:
                self.rpc_errors.append(msg["error"])
                return
        except ValueError:
            pass
        text = body[:300].decode("utf-8", "replace")
        self.failures.append(f"HTTP {response.status_code} from POST {response.request.url}: {text}")

    def hooks(self) -> dict:
        return {"response": [self.on_response]}


async def _main(args, out: dict) -> None:
    try:
        await _main_inner(args, out)
    except TimeoutError as e:
        if "payload" in out or str(e):
            raise
        raise TimeoutError(f"no complete answer within {args.timeout:g}s (--timeout)") from None


async def _main_inner(args, out: dict) -> None:
    """Fills `out["payload"]` once the command has its answer; the transport's
    cleanup (DELETE of the session) runs after that and may still raise."""
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    http_log = _HttpLog()
    try:
        with anyio.fail_after(args.timeout):
            if MCP_MAJOR >= 2:
                timeout = _httpx.Timeout(args.timeout, read=args.timeout)
                async with _httpx.AsyncClient(headers=headers, timeout=timeout, event_hooks=http_log.hooks()) as http:
                    async with streamable_http_client(args.url, http_client=http) as (read, write):
                        payload = await _session(read, write, args)
                        if http_log.failures:
                            raise HttpFailure(http_log.failures[0])
                        out["payload"] = payload
            else:

                def factory(headers=None, timeout=None, auth=None):
                    return _httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth, event_hooks=http_log.hooks())

                async with streamablehttp_client(
                    args.url,
                    headers=headers,
                    timeout=args.timeout,
                    sse_read_timeout=args.timeout,
                    httpx_client_factory=factory,
                ) as (read, write, _get_session_id):
                    payload = await _session(read, write, args)
                    if http_log.failures:
                        raise HttpFailure(http_log.failures[0])
                    out["payload"] = payload
    except BaseException as e:
        if "payload" in out or isinstance(e, (HttpFailure, KeyboardInterrupt)):
            raise
        if http_log.failures:
            raise HttpFailure(http_log.failures[0]) from e
        if http_log.rpc_errors:
            # 1.x raises HTTPStatusError for a JSON-RPC error sent with an HTTP 4xx; report it
            # as the protocol error it is, as 2.x (and the 2xx case) do.
            err = http_log.rpc_errors[-1]
            code = err.get("code")
            out["payload"] = {"protocolError": str(err.get("message", "")), "code": code if isinstance(code, int) else None}
            return
        raise


def _leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in _leaves(sub)]
    return [e]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True)
    p.add_argument("--token", default="", help="bearer token ('' sends no Authorization header)")
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--modern", action="store_true", help="mcp 2.x: server/discover (2026-07-28) instead of initialize")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list")
    c = sub.add_parser("call")
    c.add_argument("name")
    c.add_argument("json_args", nargs="?", default="{}")
    args = p.parse_args()
    if args.modern and MCP_MAJOR < 2:
        p.error(f"--modern needs mcp 2.x (this is mcp {MCP_VERSION})")

    out: dict = {}
    failure: BaseException | None = None
    try:
        anyio.run(_main, args, out)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:  # transport failure (often wrapped in an ExceptionGroup)
        failure = e
    if "payload" in out:
        sys.stdout.write(json.dumps(out["payload"], ensure_ascii=False) + "\n")
        sys.stdout.flush()
    if failure is not None:
        where = " while closing the session" if "payload" in out else ""
        leaves = "; ".join(f"{type(e).__name__}: {e}" for e in _leaves(failure))
        print(f"py_client.py (mcp {MCP_VERSION}): transport failure{where}: {leaves}", file=sys.stderr)
        traceback.print_exception(failure, file=sys.stderr)
        return 1
    if "payload" not in out:
        print("py_client.py: no answer", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
