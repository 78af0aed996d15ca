#!/usr/bin/env python3
"""The fastmcp 4.x Python client against the gateway, for tests/connectors_misc.rs.

Run it with the venv tests/connectors2/install.sh makes (usually through run.sh):

    fastmcp_client.py --url URL (--token T | --oauth) OP...
    OP := list | call NAME JSON_ARGS | sleep SECS

--token T    auth=BearerAuth(T)
--oauth      auth=OAuth(client_name="copyq-mcp fastmcp test"): fastmcp's own flow (discovery,
             dynamic registration, PKCE, a loopback callback server); it opens the authorize URL
             with Python's webbrowser module, which runs $BROWSER.

All OPs run in ONE client session, in order, so a `sleep` longer than the access-token lifetime
makes the next request need a refreshed token.

One JSON line on stdout:
    {"client": "fastmcp 4.x.y", "results": [R...]}
with R per OP: list -> {"tools": [names]}; call -> {"isError": bool, "text": "..."} or, for a
JSON-RPC error, {"protocolError": "...", "code": int}; sleep -> {"slept": SECS}.
Exit status non-zero (and the exception on stderr) when the client itself fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import traceback
import warnings

import fastmcp
from fastmcp import Client
from fastmcp.client.auth import BearerAuth, OAuth
from mcp.shared.exceptions import MCPError


def parse_ops(words: list[str]) -> list[tuple]:
    ops, i = [], 0
    while i < len(words):
        w = words[i]
        if w == "list":
            ops.append(("list",))
            i += 1
        elif w == "call" and i + 2 < len(words):
            ops.append(("call", words[i + 1], json.loads(words[i + 2])))
            i += 3
        elif w == "sleep" and i + 1 < len(words):
            ops.append(("sleep", float(words[i + 1])))
            i += 2
        else:
            raise SystemExit(f"fastmcp_client.py: bad OP at {words[i:]!r}")
    return ops


def text_of(content) -> str:
    return "\n".join(getattr(b, "text", "") for b in (content or []) if getattr(b, "type", None) == "text")


async def run(args, ops) -> dict:
    if args.oauth:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Using in-memory token storage": intended here
            auth = OAuth(client_name="copyq-mcp fastmcp test", callback_timeout=args.timeout)
    else:
        auth = BearerAuth(args.token)
    results = []
    async with Client(args.url, auth=auth, timeout=args.timeout) as client:
        for op in ops:
            if op[0] == "list":
                results.append({"tools": [t.name for t in await client.list_tools()]})
            elif op[0] == "call":
                try:
                    r = await client.call_tool(op[1], op[2], raise_on_error=False)
                    results.append({"isError": bool(r.is_error), "text": text_of(r.content)})
                except MCPError as e:
                    err = getattr(e, "error", None)
                    results.append({"protocolError": getattr(err, "message", str(e)), "code": getattr(err, "code", None)})
            else:
                await asyncio.sleep(op[1])
                results.append({"slept": op[1]})
    return {"client": f"fastmcp {fastmcp.__version__}", "results": results}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--token")
    g.add_argument("--oauth", action="store_true")
    p.add_argument("--timeout", type=float, default=90.0)
    args, rest = p.parse_known_args()
    ops = parse_ops(rest)
    try:
        out = asyncio.run(run(args, ops))
    except BaseException as e:  # noqa: BLE001 - report every failure the same way
        print(f"fastmcp_client.py: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        traceback.print_exception(e, file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
