#!/usr/bin/env python3
"""Headless OAuth 2.1 end-to-end client for the gateway, driven by the Python MCP SDK's own
`mcp.client.auth.OAuthClientProvider` (the same code path real Python MCP clients use).

Works with the `mcp` SDK 1.x (httpx) and 2.x (httpx2); run it with the interpreter of the venv
to test (target/clients/py1 or py2, see install.sh):

    py_oauth.py --url B/mcp --passphrase P --role read|write
                [--call NAME JSON_ARGS] [--refresh-after SECONDS] [--wrong-passphrase-first]
                [--auth-method none|client_secret_post|client_secret_basic]
                [--redirect-uri http://127.0.0.1:PORT/callback] [--timeout SECS]

What happens, all through the SDK's provider (nothing is pre-registered, no token is pasted):
  1. an unauthenticated MCP request gets 401 + WWW-Authenticate resource_metadata=...;
  2. the SDK fetches protected-resource metadata (RFC 9728), then authorization-server
     metadata (RFC 8414), then registers a client dynamically (RFC 7591, public client with
     token_endpoint_auth_method "none" unless --auth-method says otherwise);
  3. it builds the authorize URL (PKCE S256, state, resource, scope) and calls our
     redirect_handler, which plays the browser: GET the URL without following redirects,
     parse the consent page's <form> with html.parser, POST passphrase + role + action=approve
     with the copyq_mcp_csrf cookie echoed back, and keep the 303 Location (nothing listens
     on the redirect URI; the Location is parsed directly). With --wrong-passphrase-first it
     first posts a wrong passphrase and insists on a 401 consent page before the real one;
  4. our callback_handler hands code/state(/iss) back; the SDK checks state (and, in 2.x,
     iss per RFC 9207), exchanges the code at /token, and retries the MCP request;
  5. tools/list, optionally one tools/call; with --refresh-after S it sleeps S seconds (set
     it above the server's access-token lifetime) and repeats the call (or the listing) so
     the SDK refreshes the expired token with the refresh_token grant.

Exactly one JSON line goes to stdout:
    {"tools": [names...],
     "call": {"isError": bool, "text": "..."} | null,
     "after_refresh": {"isError": .., "text": ..} (or {"tools": [...]} without --call) | null,
     "token_requests": N,          # HTTP requests the SDK sent to the token endpoint
     "registrations": N,           # HTTP requests the SDK sent to the registration endpoint
     "grants": ["authorization_code", "refresh_token", ...],   # grant_type of each /token request
     "authorizations": N,          # consent forms approved (a 2nd one means the SDK re-authorized
                                   #  from scratch instead of refreshing)
     "iss": "..." | null}          # iss parameter of the last authorization response
To prove a refresh happened, assert grants[-1] == "refresh_token" and authorizations == 1. Both
SDKs refresh only when the token response carried expires_in (they refresh ahead of a request
once their own clock says the token expired); without expires_in, or if the server's access
token dies earlier than expires_in says, the SDK gets a 401 and re-runs the whole
authorization instead (a second consent: authorizations == 2, grants all authorization_code).
The stdout keys grants/authorizations/iss are extras beyond the minimal contract.
A JSON-RPC error answering the tools/call is reported as
    {"isError": true, "text": <message>, "protocolError": <message>, "code": <int|null>}.
Exit status is non-zero on any failure (OAuth, consent page, transport, timeout); the exception
then goes to stderr and nothing to stdout.

mcp 1.x vs 2.x differences handled here (verified against the installed site-packages):
  - HTTP library: httpx (1.x) vs httpx2 (2.x); the provider is an httpx(2).Auth either way and
    rides on an AsyncClient passed to `streamable_http_client(url, http_client=...)`, which
    yields (read, write, get_session_id) in 1.x and (read, write) in 2.x.
  - callback_handler: 1.x must return a `(code, state)` tuple and never looks at `iss` (this
    script then applies 2.x's iss rule itself, against the raw metadata issuer string);
    2.x must return `mcp.shared.auth.AuthorizationCodeResult(code=, state=, iss=)` and then
    enforces RFC 9207: iss must equal the metadata issuer by plain string comparison, and a
    missing iss is an error when the metadata says authorization_response_iss_parameter_supported.
  - 2.x parses issuer URLs with url_preserve_empty_path (no trailing "/" added to
    "http://host:port"), 1.x normalizes to "http://host:port/" on both sides of its
    metadata-issuer check; either way the server's issuer must be the bare origin string
    it puts in PRM authorization_servers and in iss.
  - 2.x registers with `application_type: "native"` (SEP-837) in the DCR body; 1.x doesn't.
  - 2.x rejects a registration answer whose token_endpoint_auth_method it can't use (or a
    secret-based method without a client_secret) before authorizing.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from http.cookies import SimpleCookie
from importlib.metadata import version as _dist_version
from urllib.parse import parse_qs, urlencode, urlsplit

from consent_form import ConsentError, parse_consent_form
from consent_form import snippet as _snippet

import anyio

MCP_VERSION = _dist_version("mcp")
MCP_MAJOR = int(MCP_VERSION.split(".")[0])

from mcp import ClientSession  # noqa: E402
from mcp import types  # noqa: E402
from mcp.client.auth import OAuthClientProvider  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken  # noqa: E402

if MCP_MAJOR >= 2:
    import httpx2 as _httpx
    from mcp.shared.auth import AuthorizationCodeResult
    from mcp.shared.exceptions import MCPError as _RpcError
else:
    import httpx as _httpx
    from mcp.shared.exceptions import McpError as _RpcError

    AuthorizationCodeResult = None  # 1.x: the callback returns a (code, state) tuple

CSRF_COOKIE = "copyq_mcp_csrf"  # one per consent request: copyq_mcp_csrf_<request_id>


def csrf_cookie(fields):
    return f"{CSRF_COOKIE}_{fields['request_id']}"


class MemoryStorage:
    """In-memory TokenStorage (the SDK's Protocol)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def _set_cookies(response) -> dict[str, str]:
    jar = SimpleCookie()
    for header in response.headers.get_list("set-cookie"):
        jar.load(header)
    return {k: m.value for k, m in jar.items()}


class HeadlessBrowser:
    """The redirect_handler / callback_handler pair: approves the consent page itself."""

    def __init__(self, passphrase: str, role: str, redirect_uri: str, wrong_first: bool, timeout: float):
        self.passphrase, self.role, self.redirect_uri = passphrase, role, redirect_uri
        self.wrong_first, self.timeout = wrong_first, timeout
        self.result: dict | None = None
        self.authorizations = 0
        self.last_iss: str | None = None
        self.counter: HttpCounter | None = None  # for the raw AS metadata (1.x iss check)

    async def _post(self, url: str, fields: dict, cookies: dict):
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if cookies:
            # Sent by hand (not via a cookie jar) so a Secure or oddly-pathed cookie still reaches
            # the server on plain http; the cookie's name and value are what the contract fixes.
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        async with _httpx.AsyncClient(follow_redirects=False, timeout=self.timeout) as c:
            return await c.post(url, content=urlencode(fields).encode(), headers=headers)

    async def redirect_handler(self, authorization_url: str) -> None:
        self.result = None
        async with _httpx.AsyncClient(follow_redirects=False, timeout=self.timeout) as c:
            r = await c.get(authorization_url)
        if r.status_code in (301, 302, 303, 307, 308):
            # No consent page: the authorize endpoint answered with an (error) redirect directly.
            location = r.headers.get("location", "")
        else:
            if r.status_code != 200:
                raise ConsentError(f"GET authorize -> HTTP {r.status_code} (want 200 consent page): {_snippet(r.text)}")
            ctype = r.headers.get("content-type", "")
            if "text/html" not in ctype:
                raise ConsentError(f"GET authorize -> Content-Type {ctype!r} (want text/html)")
            cookies = _set_cookies(r)
            if not any(k.startswith(CSRF_COOKIE + "_") for k in cookies):
                raise ConsentError(f"GET authorize set no {CSRF_COOKIE}_* cookie (Set-Cookie: {r.headers.get_list('set-cookie')})")
            page, page_url = r.text, str(r.url)
            if self.wrong_first:
                url, fields = parse_consent_form(page, page_url, self.passphrase + "-wrong", self.role)
                if fields["csrf"] != cookies.get(csrf_cookie(fields)):
                    raise ConsentError("csrf form field differs from the copyq_mcp_csrf cookie")
                w = await self._post(url, fields, cookies)
                if w.status_code != 401:
                    raise ConsentError(f"wrong passphrase -> HTTP {w.status_code} (want 401): {_snippet(w.text)}")
                cookies.update(_set_cookies(w))
                if "<form" in w.text:  # the page again; its request_id / csrf are the ones to use now
                    page, page_url = w.text, str(w.request.url)
            url, fields = parse_consent_form(page, page_url, self.passphrase, self.role)
            if fields["csrf"] != cookies.get(csrf_cookie(fields)):
                raise ConsentError("csrf form field differs from the copyq_mcp_csrf cookie")
            r = await self._post(url, fields, cookies)
            if r.status_code != 303:
                raise ConsentError(f"POST consent -> HTTP {r.status_code} (want 303): {_snippet(r.text)}")
            location = r.headers.get("location", "")
        loc, want = urlsplit(location), urlsplit(self.redirect_uri)
        if (loc.scheme, loc.netloc, loc.path) != (want.scheme, want.netloc, want.path):
            raise ConsentError(f"authorization response goes to {location!r}, not the redirect_uri {self.redirect_uri!r}")
        q = parse_qs(loc.query, keep_blank_values=True)
        for name in ("code", "state", "iss"):
            if len(q.get(name, [])) > 1:
                raise ConsentError(f"authorization response repeats {name}: {location}")
        if "error" in q:
            desc = q.get("error_description", [""])[0]
            raise ConsentError(f"authorization response error={q['error'][0]} {desc}".strip() + f" ({location})")
        if not q.get("code", [""])[0]:
            raise ConsentError(f"authorization response has no code: {location}")
        self.result = {k: q[k][0] if k in q else None for k in ("code", "state", "iss")}
        self.last_iss = self.result["iss"]
        self.authorizations += 1

    async def callback_handler(self):
        if self.result is None:
            raise ConsentError("callback_handler called without a captured authorization response")
        res, self.result = self.result, None
        if MCP_MAJOR < 2 and self.counter is not None:
            # mcp 1.x ignores iss; apply 2.x's RFC 9207 rule here so both versions hold the
            # server to the same standard (plain string comparison with the metadata issuer;
            # absence is an error when the metadata advertises support).
            md = self.counter.as_metadata or {}
            if res["iss"] is not None and res["iss"] != md.get("issuer"):
                raise ConsentError(f"authorization response iss mismatch: {res['iss']} != {md.get('issuer')} (checked by py_oauth.py)")
            if res["iss"] is None and md.get("authorization_response_iss_parameter_supported"):
                raise ConsentError("authorization response lacks iss although the metadata advertises it (checked by py_oauth.py)")
        if MCP_MAJOR >= 2:
            return AuthorizationCodeResult(code=res["code"], state=res["state"], iss=res["iss"])
        return res["code"], res["state"]


class HttpCounter:
    """Request event hook on the MCP client's AsyncClient: sees every request the SDK's auth flow
    makes (discovery, registration, token), since httpx(2) runs hooks for auth-flow requests too."""

    def __init__(self) -> None:
        self.token_requests = 0
        self.registrations = 0
        self.grants: list[str | None] = []
        self.token_path: str | None = None
        self.registration_path: str | None = None
        self.as_metadata: dict | None = None

    async def on_request(self, request) -> None:
        if request.method != "POST":
            return
        path = request.url.path
        body = b""
        try:
            body = request.content
        except Exception:  # a streaming body; not one of ours
            pass
        ctype = request.headers.get("content-type", "")
        if "application/x-www-form-urlencoded" in ctype:
            form = parse_qs(body.decode("utf-8", "replace"))
            if "grant_type" in form:
                self.token_requests += 1
                self.grants.append(form["grant_type"][0])
                self.token_path = path
                return
        if path == self.registration_path or (path.endswith("/register") and "application/json" in ctype):
            try:
                js = json.loads(body or b"{}")
            except ValueError:
                js = {}
            if isinstance(js, dict) and "redirect_uris" in js:
                self.registrations += 1
                self.registration_path = path

    async def on_response(self, response) -> None:
        # Keep the raw authorization-server metadata (1.x's pydantic models re-render the issuer
        # URL, e.g. add a trailing "/", so the exact string is only available here).
        path = response.request.url.path
        if response.request.method == "GET" and response.status_code == 200 and (
            path.startswith("/.well-known/oauth-authorization-server") or "openid-configuration" in path
        ):
            try:
                js = json.loads(await response.aread())
            except ValueError:
                return
            if isinstance(js, dict) and "issuer" in js:
                self.as_metadata = js

    def hooks(self) -> dict:
        return {"request": [self.on_request], "response": [self.on_response]}


def _text_of(result) -> str:
    return "\n".join(b.text for b in (result.content or []) if getattr(b, "type", None) == "text")


async def _call(session: ClientSession, name: str, arguments: dict) -> dict:
    try:
        result = await session.call_tool(name, arguments)
    except _RpcError as e:
        err = getattr(e, "error", None)
        code = getattr(err, "code", None)
        message = getattr(err, "message", None) or str(e)
        return {"isError": True, "text": message, "protocolError": message, "code": code if isinstance(code, int) else None}
    is_error = bool(getattr(result, "is_error", None) if MCP_MAJOR >= 2 else result.isError)
    return {"isError": is_error, "text": _text_of(result)}


async def _tool_names(session: ClientSession) -> list[str]:
    names, cursor = [], None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        names.extend(t.name for t in page.tools)
        cursor = page.next_cursor if MCP_MAJOR >= 2 else page.nextCursor
        if not cursor:
            return names


async def run(args) -> dict:
    browser = HeadlessBrowser(args.passphrase, args.role, args.redirect_uri, args.wrong_passphrase_first, args.timeout)
    client_metadata = OAuthClientMetadata(
        client_name="copyq-mcp py_oauth test",
        redirect_uris=[args.redirect_uri],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=args.auth_method,
    )
    provider = OAuthClientProvider(
        server_url=args.url,
        client_metadata=client_metadata,
        storage=MemoryStorage(),
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )
    counter = HttpCounter()
    browser.counter = counter
    out: dict = {"tools": [], "call": None, "after_refresh": None}
    timeout = _httpx.Timeout(args.timeout, read=args.timeout)
    async with _httpx.AsyncClient(auth=provider, timeout=timeout, event_hooks=counter.hooks()) as http:
        async with streamable_http_client(args.url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                out["tools"] = await _tool_names(session)
                call_args = args.call_args
                if args.call:
                    out["call"] = await _call(session, args.call[0], call_args)
                if args.refresh_after is not None:
                    await anyio.sleep(args.refresh_after)
                    if args.call:
                        out["after_refresh"] = await _call(session, args.call[0], call_args)
                    else:
                        out["after_refresh"] = {"tools": await _tool_names(session)}
    out.update(
        token_requests=counter.token_requests,
        registrations=counter.registrations,
        grants=counter.grants,
        authorizations=browser.authorizations,
        iss=browser.last_iss,
    )
    return out


def _leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in _leaves(sub)]
    return [e]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="MCP endpoint, e.g. http://127.0.0.1:PORT/mcp")
    p.add_argument("--passphrase", required=True)
    p.add_argument("--role", choices=("read", "write"), default="read")
    p.add_argument("--call", nargs=2, metavar=("NAME", "JSON_ARGS"))
    p.add_argument("--refresh-after", type=float, metavar="SECONDS",
                   help="sleep this long after the first call, then call again (token refresh)")
    p.add_argument("--wrong-passphrase-first", action="store_true")
    p.add_argument("--auth-method", default="none", choices=("none", "client_secret_post", "client_secret_basic"),
                   help="token_endpoint_auth_method to register with (default none: public client)")
    p.add_argument("--redirect-uri", default="http://127.0.0.1:33418/callback",
                   help="redirect URI to register (nothing needs to listen there)")
    p.add_argument("--timeout", type=float, default=60.0, help="deadline for everything but --refresh-after")
    args = p.parse_args()
    args.call_args = None
    if args.call:
        try:
            args.call_args = json.loads(args.call[1])
        except json.JSONDecodeError as e:
            p.error(f"JSON_ARGS is not JSON: {e}")
        if not isinstance(args.call_args, dict):
            p.error("JSON_ARGS must be a JSON object")

    out: dict = {}

    async def _main():
        with anyio.fail_after(args.timeout + (args.refresh_after or 0)):
            out["payload"] = await run(args)

    try:
        anyio.run(_main)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:
        leaves = "; ".join(f"{type(x).__name__}: {x}" for x in _leaves(e))
        print(f"py_oauth.py (mcp {MCP_VERSION}): FAILED: {leaves}", file=sys.stderr)
        traceback.print_exception(e, file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(out["payload"], ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
