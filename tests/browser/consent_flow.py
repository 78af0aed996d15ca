"""The whole OAuth flow of a connector, with the consent done by a person in a real browser
(Debian's headless Chromium, driven by Playwright), against a running copyq-mcp gateway on its
default configuration (only the owner passphrase set).

    target/clients/browser/bin/python tests/browser/consent_flow.py --base http://127.0.0.1:PORT

Env: COPYQ_MCP_TEST_PASSPHRASE (the owner passphrase; required), COPYQ_MCP_SCREENSHOTS (default
<repo>/target/screenshots; files flow-*.png).

Steps, as a connector and its user go through them:
  discovery     POST /mcp without a token -> 401 with WWW-Authenticate resource_metadata ->
                protected-resource metadata -> authorization-server metadata
  registration  dynamic registration of a public client (no secret) with a loopback redirect to
                a callback server this script runs
  consent       the authorize URL (PKCE S256, state, resource) opened in the browser
  wrong         a wrong passphrase with Write selected: the form comes back, Write still checked,
                an error message shown
  approve       the right passphrase, Approve: the browser lands on the callback with code, state,
                iss
  token         the code exchanged (PKCE verifier)
  tools         tools/list over /mcp with the access token: mcp_read, mcp_validate, mcp_write
  deny          a second authorization, Deny: the callback gets error=access_denied and the state
  unknown_app   /authorize with a client_id nobody registered: an HTML page with a sentence
  bad_redirect  /authorize with a redirect_uri the app did not register: the same
  expired       the denied request's form posted again (the request is gone): the same

Prints one JSON line: what each step saw (the Rust test tests/browser.rs compares it exactly),
"texts" (what the pages said, for people) and "screenshots". On the first step that goes wrong it
stops with "ok": false, "failed_at": STEP and "error"; exit status 1.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import secrets
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from approve import launch  # noqa: E402
from common import Callback, is_human_page, mcp_body, request, screenshot_dir, visible_text  # noqa: E402

TIMEOUT_MS = 15000
CLIENT_NAME = "Browser test app"


class StepFailed(Exception):
    pass


def check(cond, message):
    if not cond:
        raise StepFailed(message)


def pkce():
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the gateway, e.g. http://127.0.0.1:PORT")
    args = ap.parse_args()
    base = args.base.rstrip("/")
    passphrase = os.environ.get("COPYQ_MCP_TEST_PASSPHRASE")
    if not passphrase:
        print("consent_flow.py: set COPYQ_MCP_TEST_PASSPHRASE", file=sys.stderr)
        return 2

    out = {"ok": False}
    texts = {}
    shots = []
    started = time.monotonic()
    step = "start"
    shot_dir = screenshot_dir()
    callback = Callback()

    def shot(page, name):
        path = os.path.join(shot_dir, f"flow-{name}.png")
        page.screenshot(path=path, full_page=True)
        shots.append(os.path.basename(path))

    try:
        from playwright.sync_api import sync_playwright

        # ---- discovery ------------------------------------------------------------------
        step = "discovery"
        status, h, _ = request(
            "POST",
            f"{base}/mcp",
            body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
        check(status == 401, f"POST /mcp without a token: HTTP {status}, expected 401")
        www = h.get("www-authenticate", "")
        m = re.search(r'resource_metadata="([^"]+)"', www)
        check(m, f"401 without resource_metadata in WWW-Authenticate: {www!r}")
        rm_url = m.group(1)
        status, _, body = request("GET", rm_url)
        check(status == 200, f"GET {rm_url}: HTTP {status}")
        rm = json.loads(body)
        resource = rm["resource"]
        issuer = rm["authorization_servers"][0]
        u = urllib.parse.urlsplit(issuer)
        as_url = f"{u.scheme}://{u.netloc}/.well-known/oauth-authorization-server{u.path.rstrip('/')}"
        status, _, body = request("GET", as_url)
        check(status == 200, f"GET {as_url}: HTTP {status}")
        asm = json.loads(body)
        check(asm.get("issuer") == issuer, f"metadata issuer {asm.get('issuer')!r} != {issuer!r}")
        out["discovery"] = {
            "status": 401,
            "resource_metadata": rm_url,
            "resource": resource,
            "issuer": issuer,
            "pkce": asm.get("code_challenge_methods_supported"),
            "iss_parameter": asm.get("authorization_response_iss_parameter_supported"),
        }

        # ---- registration -----------------------------------------------------------------
        step = "registration"
        status, _, body = request(
            "POST",
            asm["registration_endpoint"],
            body={
                "client_name": CLIENT_NAME,
                "redirect_uris": [callback.url],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            },
        )
        check(status == 201, f"registration: HTTP {status}: {body[:300]}")
        reg = json.loads(body)
        client_id = reg["client_id"]
        out["registration"] = {
            "status": status,
            "auth_method": reg.get("token_endpoint_auth_method"),
            "secret": "client_secret" in reg,
        }

        def authorize_url(challenge, state):
            return asm["authorization_endpoint"] + "?" + urllib.parse.urlencode(
                {
                    "response_type": "code",
                    "client_id": client_id,
                    "redirect_uri": callback.url,
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                    "state": state,
                    "resource": resource,
                }
            )

        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": 900, "height": 1000})
            page.set_default_timeout(TIMEOUT_MS)
            page.set_default_navigation_timeout(TIMEOUT_MS)
            # Main-frame responses, redirects included (the 303 back to the app).
            hops = []
            page.on(
                "response",
                lambda r: hops.append((r.url, r.status, r.headers.get("content-type", "")))
                if r.request.is_navigation_request() and r.frame == page.main_frame
                else None,
            )

            def submit(button_value):
                """Click a form button and wait for the page it leads to: (last hop status, ctype)."""
                hops.clear()
                with page.expect_navigation(wait_until="load"):
                    page.click(f"form button[name=action][value={button_value}]")
                return hops[-1] if hops else (page.url, None, "")

            def on_gateway():
                return page.url.startswith(asm["authorization_endpoint"])

            # ---- consent page ---------------------------------------------------------------
            step = "consent"
            verifier, challenge = pkce()
            state = secrets.token_urlsafe(12)
            res = page.goto(authorize_url(challenge, state), wait_until="load")
            text = visible_text(page)
            texts["consent"] = text
            shot(page, "1-consent")
            ctype = res.headers.get("content-type", "")
            check(
                res.status == 200 and page.locator("input[name=passphrase]").count() == 1,
                f"the authorize URL did not show the consent form: HTTP {res.status} ({ctype}): {text[:300]}",
            )
            low = text.lower()
            out["consent"] = {
                "status": res.status,
                "html": ctype.startswith("text/html"),
                "names_app": CLIENT_NAME in text,
                "names_redirect_host": "127.0.0.1" in text,
                "roles": sorted(
                    page.eval_on_selector_all("input[name=role]", "els => els.map(e => e.value)")
                ),
                # What a person must be told before approving (issue 9, item 7).
                "says_history": "clipboard history" in low,
                "says_lifetimes": bool(re.search(r"\b1\s*h(our)?\b", low))
                and bool(re.search(r"\b30\s*d(ays?)?\b", low)),
                "says_revoke": "copyq-mcp clients revoke" in low,
            }

            # ---- a wrong passphrase, with Write chosen --------------------------------------
            step = "wrong"
            page.check("input[name=role][value=write]")
            page.fill("input[name=passphrase]", passphrase + " wrong")
            url, status, ctype = submit("approve")
            text = visible_text(page)
            texts["wrong"] = text
            shot(page, "2-wrong-passphrase")
            check(
                on_gateway() and page.locator("input[name=passphrase]").count() == 1,
                f"after a wrong passphrase: expected the form again, got HTTP {status} ({ctype}) at {page.url}: {text[:300]}",
            )
            msg = page.locator(".msg, [role=alert]")
            message = msg.first.inner_text() if msg.count() else ""
            texts["wrong_message"] = message
            out["wrong"] = {
                "status": status,
                "form_again": True,
                "role_checked": page.eval_on_selector_all(
                    "input[name=role]", "els => els.filter(e => e.checked).map(e => e.value)"
                ),
                "message": bool(re.search(r"wrong|incorrect|not right|does not match", message, re.I)),
                "passphrase_cleared": page.input_value("input[name=passphrase]") == "",
            }
            check(
                out["wrong"]["role_checked"] == ["write"],
                f"after a wrong passphrase the form has {out['wrong']['role_checked']} checked, not write",
            )
            check(out["wrong"]["message"], f"no error message after a wrong passphrase: {text[:300]}")

            # ---- the right passphrase, Approve (Write still chosen from before) --------------
            step = "approve"
            page.fill("input[name=passphrase]", passphrase)
            url, status, ctype = submit("approve")
            redirect = next((h for h in hops if h[0].startswith(asm["authorization_endpoint"])), None)
            text = visible_text(page)
            texts["approve"] = text
            shot(page, "3-approved-callback")
            got = callback.take(timeout=10)
            check(
                got is not None and page.url.startswith(callback.url),
                f"after Approve: expected the app's callback, got HTTP {status} ({ctype}) at {page.url}: {text[:300]}",
            )
            out["approve"] = {
                "redirect_status": redirect[1] if redirect else None,
                "code": bool(got.get("code")),
                "state": got.get("state") == state,
                "iss": got.get("iss"),
                "error": got.get("error"),
            }
            check(got.get("code"), f"the callback got no code: {got}")

            # ---- token exchange ---------------------------------------------------------------
            step = "token"
            status, h, body = request(
                "POST",
                asm["token_endpoint"],
                form={
                    "grant_type": "authorization_code",
                    "code": got["code"],
                    "redirect_uri": callback.url,
                    "client_id": client_id,
                    "code_verifier": verifier,
                    "resource": resource,
                },
            )
            check(status == 200, f"token exchange: HTTP {status}: {body[:300]}")
            tok = json.loads(body)
            out["token"] = {
                "status": status,
                "token_type": tok.get("token_type"),
                "expires_in": tok.get("expires_in"),
                "refresh_token": bool(tok.get("refresh_token")),
                "no_store": "no-store" in h.get("cache-control", ""),
            }
            access = tok["access_token"]

            # ---- tools/list with the access token ---------------------------------------------
            step = "tools"
            mcp_headers = {
                "Authorization": f"Bearer {access}",
                "Accept": "application/json, text/event-stream",
            }
            status, h, body = request(
                "POST",
                resource,
                headers=mcp_headers,
                body={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "consent_flow.py", "version": "1"},
                    },
                },
            )
            check(status == 200, f"initialize with the access token: HTTP {status}: {body[:300]}")
            if h.get("mcp-session-id"):
                mcp_headers["Mcp-Session-Id"] = h["mcp-session-id"]
            request(
                "POST",
                resource,
                headers=mcp_headers,
                body={"jsonrpc": "2.0", "method": "notifications/initialized"},
            )
            status, _, body = request(
                "POST",
                resource,
                headers=mcp_headers,
                body={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            )
            check(status == 200, f"tools/list with the access token: HTTP {status}: {body[:300]}")
            listing = mcp_body(body)
            out["tools"] = sorted(t["name"] for t in listing["result"]["tools"])

            # ---- a second authorization, denied -------------------------------------------------
            step = "deny"
            _, challenge2 = pkce()
            state2 = secrets.token_urlsafe(12)
            res = page.goto(authorize_url(challenge2, state2), wait_until="load")
            check(
                res.status == 200 and page.locator("input[name=passphrase]").count() == 1,
                f"second authorization: no consent form (HTTP {res.status}): {visible_text(page)[:300]}",
            )
            # What the form would post: kept to post it again once the request is gone.
            old_form = page.evaluate(
                "Object.fromEntries(new FormData(document.querySelector('form')))"
            )
            url, status, ctype = submit("deny")
            redirect = next((h for h in hops if h[0].startswith(asm["authorization_endpoint"])), None)
            text = visible_text(page)
            texts["deny"] = text
            shot(page, "4-denied-callback")
            got = callback.take(timeout=10)
            check(
                got is not None and page.url.startswith(callback.url),
                f"after Deny: expected the app's callback, got HTTP {status} ({ctype}) at {page.url}: {text[:300]}",
            )
            out["deny"] = {
                "redirect_status": redirect[1] if redirect else None,
                "error": got.get("error"),
                "state": got.get("state") == state2,
                "iss": got.get("iss"),
                "code": "code" in got,
            }

            # ---- error pages a person can meet --------------------------------------------------
            out["errors"] = {}

            def error_page(name, number, res_status, ctype):
                text = visible_text(page)
                texts[name] = text
                shot(page, f"{number}-{name.replace('_', '-')}")
                out["errors"][name] = {
                    "status_class": f"{res_status // 100}xx" if res_status else None,
                    "html": is_human_page(ctype, text),
                }
                check(
                    out["errors"][name]["html"],
                    f"{name}: not an HTML page with a sentence: HTTP {res_status} ({ctype}): {text[:300]}",
                )

            step = "unknown_app"
            res = page.goto(
                asm["authorization_endpoint"]
                + "?"
                + urllib.parse.urlencode(
                    {
                        "response_type": "code",
                        "client_id": "no-such-app-" + secrets.token_hex(4),
                        "redirect_uri": callback.url,
                        "code_challenge": challenge2,
                        "code_challenge_method": "S256",
                        "state": "s",
                    }
                ),
                wait_until="load",
            )
            error_page("unknown_app", 5, res.status, res.headers.get("content-type", ""))

            step = "bad_redirect"
            res = page.goto(
                asm["authorization_endpoint"]
                + "?"
                + urllib.parse.urlencode(
                    {
                        "response_type": "code",
                        "client_id": client_id,
                        "redirect_uri": "https://elsewhere.example/callback",
                        "code_challenge": challenge2,
                        "code_challenge_method": "S256",
                        "state": "s",
                    }
                ),
                wait_until="load",
            )
            check(callback.take(timeout=0.2) is None, "a bad redirect_uri reached the callback")
            error_page("bad_redirect", 6, res.status, res.headers.get("content-type", ""))

            step = "expired"
            # The denied request is gone; its form, posted again from a page of the gateway
            # (as a person re-submitting an old tab would), with the right passphrase.
            old_form.update({"passphrase": passphrase, "role": "write", "action": "approve"})
            hops.clear()
            with page.expect_navigation(wait_until="load"):
                page.evaluate(
                    """fields => {
                        const f = document.createElement('form');
                        f.method = 'post';
                        f.action = '/authorize';
                        for (const [k, v] of Object.entries(fields)) {
                            const i = document.createElement('input');
                            i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i);
                        }
                        document.body.appendChild(f);
                        f.submit();
                    }""",
                    old_form,
                )
            last = hops[-1] if hops else (page.url, None, "")
            check(callback.take(timeout=0.2) is None, "a gone request's form reached the callback")
            error_page("expired", 7, last[1], last[2])

            out["ok"] = True
            step = "done"
    except StepFailed as e:
        out["failed_at"] = step
        out["error"] = str(e)
    except Exception as e:  # noqa: BLE001 - reported in the JSON line like any failure
        out["failed_at"] = step
        out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        callback.close()
    out["texts"] = texts
    out["screenshots"] = shots
    out["seconds"] = round(time.monotonic() - started, 2)
    print(json.dumps(out, ensure_ascii=False), flush=True)
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
