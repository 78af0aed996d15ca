"""Helpers shared by the browser tests: plain HTTP without redirects, a loopback callback server,
screenshots, and checks that a page is one a person can read."""

import http.server
import json
import os
import queue
import re
import threading
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


_opener = urllib.request.build_opener(NoRedirect)


def request(method, url, body=None, headers=None, form=None, timeout=15):
    """One request, redirects not followed: (status, headers as a lower-cased dict, body text)."""
    headers = dict(headers or {})
    data = None
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    elif body is not None:
        data = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with _opener.open(req, timeout=timeout) as res:
            return res.status, {k.lower(): v for k, v in res.headers.items()}, res.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode()


def mcp_body(text):
    """A JSON-RPC reply that may come as JSON or as one server-sent event."""
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip().startswith("{"):
            return json.loads(line[5:])
    raise ValueError(f"no JSON-RPC message in {text[:200]!r}")


def screenshot_dir():
    d = os.environ.get("COPYQ_MCP_SCREENSHOTS") or os.path.join(REPO, "target", "screenshots")
    os.makedirs(d, exist_ok=True)
    return d


def visible_text(page, limit=2000):
    try:
        text = page.inner_text("body", timeout=3000)
    except Exception:  # noqa: BLE001 - a page without a body is reported as empty
        text = ""
    text = " ".join(text.split())
    return text[:limit]


def sentences(text):
    """The whole sentences a person reads in `text`: a capital, four words or more, a full stop."""
    out = []
    for m in re.finditer(r"[^.!?]+[.!?]", text or ""):
        s = m.group(0).strip()
        if s[:1].isupper() and len(re.findall(r"[A-Za-z]{2,}", s)) >= 4:
            out.append(s)
    return out


def is_human_page(ctype, text):
    """An HTML page (never text/plain or JSON) with at least one whole sentence in it."""
    return (ctype or "").startswith("text/html") and bool(sentences(text))


class Callback:
    """The app's loopback redirect target: records every request's query, answers a small page."""

    def __init__(self):
        self.hits = queue.Queue()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                u = urllib.parse.urlsplit(self.path)
                if u.path == "/callback":
                    outer.hits.put(dict(urllib.parse.parse_qsl(u.query)))
                    page = b"<!doctype html><title>Test app</title><h1>Test app</h1><p>Back in the app.</p>"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self, timeout=10):
        """The query of the next callback request, or None if none came in time."""
        try:
            return self.hits.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self):
        self.server.shutdown()
        self.server.server_close()
