"""Approve one copyq-mcp OAuth consent in headless Chromium, the way a person would.

Usually run through tests/browser/browser.sh (the `$BROWSER` for OAuth CLIs); it can also be run
directly with the venv that tests/browser/install.sh makes:

    target/clients/browser/bin/python tests/browser/approve.py AUTHORIZE_URL

What it does: opens AUTHORIZE_URL in headless Chromium (Debian's /usr/bin/chromium driven by
Playwright), expects copyq-mcp's consent page, selects the role, types the passphrase, clicks
Approve, and lets the browser follow the gateway's redirect and actually load the app's callback
(`redirect_uri` of AUTHORIZE_URL, usually a loopback server the CLI runs), so that the app gets
the code. A screenshot of every page is written. A callback that refuses the connection is loaded
again for up to 10 s (fastmcp, for one, opens the browser before its callback server listens).

Environment:
    COPYQ_MCP_TEST_PASSPHRASE   the owner passphrase (required)
    COPYQ_MCP_TEST_ROLE         read | write (default write)
    COPYQ_MCP_TEST_TABS         the Tabs choice: all | managed | list:TAB[,TAB...] (default: leave
                                the page's default, all tabs); a list is typed one tab per line
    COPYQ_MCP_TEST_ACTION       approve | deny (default approve; deny clicks Deny and expects
                                error=access_denied at the callback)
    COPYQ_MCP_SCREENSHOTS       screenshot directory (default <repo>/target/screenshots); files are
                                approve-<tag>-1-consent.png, approve-<tag>-2-callback.png, or
                                approve-<tag>-error.png for a page that is not the expected one
    COPYQ_MCP_BROWSER_TAG       <tag> in the file names (default: HHMMSS-<pid>)
    COPYQ_MCP_BROWSER_TIMEOUT   seconds for the whole run (default 60)
    COPYQ_MCP_BROWSER_RESULT    if set, the JSON result line is also written to this file
                                (atomically, when done): poll it to learn the outcome of a
                                detached run
    CHROMIUM                    the browser binary (default /usr/bin/chromium)

Output: log lines on stderr; one JSON line on stdout, e.g.
    {"ok": true, "role": "write", "callback": "http://127.0.0.1:PORT/cb?code=...&state=..&iss=..",
     "callback_status": 200, "screenshots": [...]}
    {"ok": false, "error": "expected the consent page, got HTTP 400 ...: Unknown app ...", ...}
The same line is appended to <repo>/target/browser/approve.jsonl.

Exit status: 0 when the callback got a code (or, for deny, error=access_denied); 1 when a page was
not the expected one (the message says which and what it said); 2 on bad usage or environment.
"""

import json
import os
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def log(*parts):
    print(time.strftime("%H:%M:%S"), "approve:", *parts, file=sys.stderr, flush=True)


def launch(playwright):
    """Debian's Chromium, headless, driven by Playwright (never a downloaded browser)."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=["--no-sandbox", "--disable-dev-shm-usage"],
    )


def screenshot_dir():
    d = os.environ.get("COPYQ_MCP_SCREENSHOTS") or os.path.join(REPO, "target", "screenshots")
    os.makedirs(d, exist_ok=True)
    return d


def page_text(page, limit=400):
    """What the page says, in one line (for messages)."""
    try:
        text = page.inner_text("body", timeout=2000)
    except Exception:  # noqa: BLE001 - a page without a body still gets reported
        try:
            text = page.content()
        except Exception:  # noqa: BLE001
            text = ""
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "")


def page_message(page):
    """The page's own error or notice line, if it shows one (class msg, error or role=alert)."""
    try:
        loc = page.locator(".msg, .error, [role=alert]")
        if loc.count():
            return " ".join(loc.first.inner_text(timeout=2000).split())
    except Exception:  # noqa: BLE001
        pass
    return None


def is_consent_page(page):
    return (
        page.locator("form input[name=passphrase]").count() == 1
        and page.locator("form button[name=action][value=approve]").count() == 1
    )


class Failure(Exception):
    pass


def strip_query(url):
    u = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, u.path, "", ""))


def choose_tabs(page, tabs, result):
    """Click the Tabs choice `tabs` names (and type the list), as a person would."""
    if not tabs:
        return
    choice, _, listed = tabs.partition(":")
    if choice not in ("all", "managed", "list"):
        raise Failure(f"COPYQ_MCP_TEST_TABS must be all, managed or list:..., not {tabs!r}")
    radio = page.locator(f"form input[name=tabs][value={choice}]")
    if radio.count() != 1:
        shot(page, "error")
        raise Failure(f"the consent page has no '{choice}' tabs choice: {page_text(page)}")
    radio.check()
    if choice == "list":
        page.fill("form textarea[name=tab_list]", "\n".join(listed.split(",")))
    result["tabs"] = tabs
    log("tabs:", tabs)


def run(authorize_url, passphrase, role, action, timeout_s, tag, result):
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(authorize_url).query))
    redirect_uri = q.get("redirect_uri")
    want_state = q.get("state")
    shots = screenshot_dir()
    result["screenshots"] = []

    def shot(page, name):
        path = os.path.join(shots, f"approve-{tag}-{name}.png")
        try:
            page.screenshot(path=path, full_page=True)
            result["screenshots"].append(path)
        except Exception as e:  # noqa: BLE001 - a missing screenshot must not hide the outcome
            log("screenshot failed:", e)

    deadline = time.monotonic() + timeout_s

    def left_ms():
        return max(1000, int((deadline - time.monotonic()) * 1000))

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 900})
            # Every main-frame response, redirects included: how the callback was reached.
            hops = []
            # Where the gateway's redirects pointed (the callback URL with the code in it).
            locations = []

            def on_response(r):
                if r.request.frame == page.main_frame and r.request.is_navigation_request():
                    hops.append((r.url, r.status))
                    if 300 <= r.status < 400 and r.headers.get("location"):
                        locations.append(urllib.parse.urljoin(r.url, r.headers["location"]))

            page.on("response", on_response)

            log("opening", authorize_url)
            try:
                res = page.goto(authorize_url, wait_until="load", timeout=left_ms())
            except PlaywrightError as e:
                raise Failure(f"cannot open the authorize URL: {e.message.splitlines()[0]}")
            status = res.status if res else None
            if not is_consent_page(page):
                shot(page, "error")
                said = page_message(page)
                raise Failure(
                    f"expected the consent page, got HTTP {status} at {page.url} "
                    f"({res.headers.get('content-type') if res else '?'})"
                    + (f" saying {said!r}" if said else "")
                    + f": {page_text(page)}"
                )
            log("consent page:", page_text(page, 200))
            gateway = strip_query(page.url)

            radio = page.locator(f"form input[name=role][value={role}]")
            if radio.count() != 1:
                shot(page, "error")
                raise Failure(f"the consent page has no '{role}' choice: {page_text(page)}")
            radio.check()
            choose_tabs(page, os.environ.get("COPYQ_MCP_TEST_TABS") or "", result)
            page.fill("form input[name=passphrase]", passphrase)
            shot(page, "1-consent")

            button = page.locator(f"form button[name=action][value={action}]")
            if button.count() != 1:
                raise Failure(f"the consent page has no {action} button")
            log("clicking", action, "with role", role)
            hops.clear()
            nav_error = None
            try:
                with page.expect_navigation(wait_until="load", timeout=left_ms()):
                    button.click()
            except PlaywrightError as e:
                nav_error = e.message.splitlines()[0]
            result["hops"] = hops

            def callback_hop():
                # The first hop at the registered redirect URI. The app's server may itself
                # redirect on to a success page elsewhere, which need not load here: the app has
                # its code once its callback answered.
                return next(
                    (
                        (u, s)
                        for u, s in hops
                        if redirect_uri and strip_query(u) == strip_query(redirect_uri)
                    ),
                    None,
                )

            cb = callback_hop()
            target = next(
                (u for u in locations if redirect_uri and strip_query(u) == strip_query(redirect_uri)),
                None,
            )
            tries = 0
            while nav_error and cb is None and target and "ERR_CONNECTION_REFUSED" in nav_error:
                # Some CLIs (fastmcp) open the browser before their callback server listens.
                # Nobody has received the code yet, so loading the callback again is safe; for
                # ten seconds at most.
                if tries >= 20 or time.monotonic() > deadline:
                    break
                tries += 1
                time.sleep(0.5)
                log("the app's callback refused the connection; loading it again")
                try:
                    page.goto(target, wait_until="load", timeout=left_ms())
                    nav_error = None
                except PlaywrightError as e:
                    nav_error = e.message.splitlines()[0]
                cb = callback_hop()
            if nav_error and cb is None:
                # The redirect went to a callback that did not answer (the app's local server is
                # gone or never started): nobody got the code.
                shot(page, "error")
                raise Failure(
                    f"after {action}: the browser could not load the next page ({nav_error}); "
                    f"responses seen: {hops}"
                )
            if nav_error:
                log("after the callback answered, the next page did not load:", nav_error)
            if cb is None and strip_query(page.url) != gateway:
                cb = (page.url, hops[-1][1] if hops else None)
            if cb is None:
                shot(page, "error")
                last = hops[-1][1] if hops else None
                ctype = ""
                try:
                    ctype = page.evaluate("document.contentType")
                except Exception:  # noqa: BLE001
                    pass
                said = page_message(page)
                raise Failure(
                    f"after {action}: expected a redirect to the app ({redirect_uri}), got HTTP "
                    f"{last} ({ctype}) at {page.url}"
                    + (f" saying {said!r}" if said else "")
                    + f": {page_text(page)}"
                )
            cb_url, cb_status = cb
            result["callback"] = cb_url
            result["callback_status"] = cb_status
            shot(page, "2-callback")
            got = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(cb_url).query))
            log("callback loaded:", strip_query(cb_url), "HTTP", cb_status, "params", sorted(got))
            if want_state is not None and got.get("state") != want_state:
                raise Failure(f"the callback's state is {got.get('state')!r}, sent {want_state!r}")
            if action == "approve":
                if "code" not in got:
                    raise Failure(
                        f"the callback got no code: error={got.get('error')!r} "
                        f"({got.get('error_description')!r})"
                    )
            elif got.get("error") != "access_denied":
                raise Failure(f"deny: the callback got {sorted(got)}, expected error=access_denied")
            result["iss"] = got.get("iss")
        finally:
            browser.close()


def main(argv):
    url = next((a for a in argv[1:] if a.startswith(("http://", "https://"))), None)
    tag = os.environ.get("COPYQ_MCP_BROWSER_TAG") or time.strftime("%H%M%S-") + str(os.getpid())
    role = os.environ.get("COPYQ_MCP_TEST_ROLE") or "write"
    action = os.environ.get("COPYQ_MCP_TEST_ACTION") or "approve"
    passphrase = os.environ.get("COPYQ_MCP_TEST_PASSPHRASE")
    result = {"ok": False, "tag": tag, "role": role, "action": action, "url": url}
    started = time.monotonic()
    code = 1
    try:
        if not url:
            raise Failure(f"usage: approve.py AUTHORIZE_URL (got arguments {argv[1:]!r})")
        if role not in ("read", "write"):
            raise Failure(f"COPYQ_MCP_TEST_ROLE must be read or write, not {role!r}")
        if action not in ("approve", "deny"):
            raise Failure(f"COPYQ_MCP_TEST_ACTION must be approve or deny, not {action!r}")
        if passphrase is None and action == "approve":
            raise Failure("COPYQ_MCP_TEST_PASSPHRASE is not set")
        if not os.access(CHROMIUM, os.X_OK):
            raise Failure(f"{CHROMIUM} is missing: run tests/browser/install.sh")
        timeout_s = float(os.environ.get("COPYQ_MCP_BROWSER_TIMEOUT") or 60)
        run(url, passphrase or "", role, action, timeout_s, tag, result)
        result["ok"] = True
        code = 0
    except Failure as e:
        result["error"] = str(e)
        code = 2 if not url or "must be" in str(e) or "is not set" in str(e) else 1
    except Exception as e:  # noqa: BLE001 - any crash is reported the same way
        result["error"] = f"{type(e).__name__}: {e}"
    result["seconds"] = round(time.monotonic() - started, 2)
    line = json.dumps(result, ensure_ascii=False)
    if result["ok"]:
        log("OK:", action, "as", role, "->", result.get("callback"))
    else:
        log("FAILED:", result["error"])
    print(line, flush=True)
    try:
        d = os.path.join(REPO, "target", "browser")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "approve.jsonl"), "a", encoding="utf-8") as f:
            f.write(line + "\n")
        out = os.environ.get("COPYQ_MCP_BROWSER_RESULT")
        if out:
            tmp = f"{out}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(line + "\n")
            os.replace(tmp, out)
    except OSError as e:
        log("cannot write the result:", e)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
