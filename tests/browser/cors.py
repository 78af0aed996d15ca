"""CORS from a real browser: a web page calls the gateway's /mcp with fetch(), as a browser-based
MCP client does. The page is served by a small HTTP server on loopback under two made-up origins
(Chromium maps their names to it with --host-resolver-rules, so the page's origin is exactly
http://NAME): one the gateway lists in server.allowed_origins, one it does not.

    target/clients/browser/bin/python tests/browser/cors.py --base http://127.0.0.1:PORT \\
        --token BEARER --allowed http://app.example --other http://other.example [--expect TEXT]

From the allowed origin the page makes three calls: tools/call mcp_read mode=tree with the bearer
token (non-simple: Authorization, Content-Type: application/json, Mcp-Protocol-Version, so the
browser sends a preflight first), POST /mcp without a token (a 401 whose WWW-Authenticate the page
must be able to read, for discovery), and GET of the protected-resource metadata. From the other
origin the tool call must be refused by the browser (fetch rejects).

Env: COPYQ_MCP_SCREENSHOTS (default <repo>/target/screenshots; files cors-*.png).
Prints one JSON line (tests/browser.rs compares it exactly); exit 0 when every check held.
"""

import argparse
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from approve import CHROMIUM  # noqa: E402
from common import screenshot_dir  # noqa: E402

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Browser MCP client</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}pre{white-space:pre-wrap;word-break:break-all}</style>
</head><body>
<h1>Browser MCP client</h1>
<p>Origin: <code id="origin"></code></p>
<pre id="result">running...</pre>
<script>
const params = new URLSearchParams(location.hash.slice(1));
const mcp = params.get("mcp");
const token = params.get("token");
const call = {jsonrpc: "2.0", id: 1, method: "tools/call",
              params: {name: "mcp_read", arguments: {mode: "tree"}}};

// A JSON-RPC reply may come as JSON or as one server-sent event.
function rpc(text) {
  text = text.trim();
  if (text.startsWith("{")) return JSON.parse(text);
  for (const line of text.split("\\n"))
    if (line.startsWith("data:") && line.slice(5).trim().startsWith("{")) return JSON.parse(line.slice(5));
  throw new Error("no JSON-RPC message in " + text.slice(0, 200));
}

async function attempt(fn) {
  try { return await fn(); } catch (e) { return {rejected: true, error: String(e)}; }
}

async function run() {
  document.getElementById("origin").textContent = location.origin;
  const out = {origin: location.origin};
  out.tool_call = await attempt(async () => {
    const r = await fetch(mcp, {method: "POST", body: JSON.stringify(call), headers: {
      "Authorization": "Bearer " + token,
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "Mcp-Protocol-Version": "2025-06-18",
    }});
    const reply = rpc(await r.text());
    const res = reply.result || {};
    return {status: r.status, is_error: !!res.isError,
            text: (res.content || []).map(c => c.text || "").join("")};
  });
  if (params.get("more") === "1") {
    out.unauthorized = await attempt(async () => {
      const r = await fetch(mcp, {method: "POST", body: JSON.stringify(call), headers: {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}});
      return {status: r.status, www_authenticate: r.headers.get("WWW-Authenticate")};
    });
    out.metadata = await attempt(async () => {
      const r = await fetch(new URL("/.well-known/oauth-protected-resource/mcp", mcp));
      return {status: r.status, resource: (await r.json()).resource};
    });
  }
  document.getElementById("result").textContent = JSON.stringify(out, null, 1);
  document.body.dataset.done = "1";
}
run();
</script></body></html>
"""


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        if urllib.parse.urlsplit(self.path).path != "/":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def host_of(origin):
    u = urllib.parse.urlsplit(origin)
    if u.scheme != "http" or u.port not in (None, 80) or not u.hostname:
        raise SystemExit(f"cors.py: origins must be http://NAME (port 80), not {origin!r}")
    return u.hostname


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--allowed", required=True, help="an origin listed in server.allowed_origins")
    ap.add_argument("--other", required=True, help="an origin that is not listed")
    ap.add_argument("--expect", default="", help="text the tool result must contain")
    args = ap.parse_args()
    mcp = args.base.rstrip("/") + "/mcp"

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    rules = ", ".join(
        f"MAP {host_of(o)}:80 127.0.0.1:{port}" for o in (args.allowed, args.other)
    )
    shots = screenshot_dir()
    out = {"ok": False}
    started = time.monotonic()
    raw = {}
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-dev-shm-usage", f"--host-resolver-rules={rules}"],
            )
            try:
                for name, origin, more in (("allowed", args.allowed, True), ("other", args.other, False)):
                    page = browser.new_page(viewport={"width": 900, "height": 700})
                    messages = []
                    page.on("console", lambda m, messages=messages: messages.append(m.text))
                    frag = urllib.parse.urlencode({"mcp": mcp, "token": args.token, "more": int(more)})
                    page.goto(f"{origin}/#{frag}", wait_until="load", timeout=15000)
                    page.wait_for_selector("body[data-done='1']", timeout=15000)
                    raw[name] = json.loads(page.inner_text("#result"))
                    raw[name]["console"] = messages
                    page.screenshot(path=os.path.join(shots, f"cors-{name}.png"), full_page=True)
                    page.close()
            finally:
                browser.close()

        a, o = raw["allowed"], raw["other"]
        call = a.get("tool_call", {})
        out["allowed"] = {
            "origin": a.get("origin"),
            "tool_call": {
                "status": call.get("status"),
                "is_error": call.get("is_error"),
                "expected_text": bool(call.get("text")) and args.expect in call.get("text", ""),
            }
            if not call.get("rejected")
            else {"rejected": True},
            "unauthorized": {
                "status": a["unauthorized"].get("status"),
                "www_authenticate": "resource_metadata=" in (a["unauthorized"].get("www_authenticate") or ""),
            }
            if not a.get("unauthorized", {}).get("rejected")
            else {"rejected": True},
            "metadata": a["metadata"] if not a.get("metadata", {}).get("rejected") else {"rejected": True},
        }
        out["other"] = {
            "origin": o.get("origin"),
            "tool_call": {"rejected": bool(o.get("tool_call", {}).get("rejected"))},
        }
        out["ok"] = (
            out["allowed"]["tool_call"].get("status") == 200
            and out["allowed"]["tool_call"].get("is_error") is False
            and out["allowed"]["tool_call"].get("expected_text") is True
            and out["allowed"]["unauthorized"].get("www_authenticate") is True
            and out["allowed"]["metadata"].get("status") == 200
            and out["other"]["tool_call"]["rejected"] is True
        )
    except Exception as e:  # noqa: BLE001 - reported in the JSON line
        out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        server.shutdown()
        server.server_close()
    # What the pages saw (errors, console lines), for people; the Rust test ignores it.
    for v in raw.values():
        if isinstance(v.get("tool_call"), dict):
            v["tool_call"].pop("text", None)
    out["raw"] = raw
    out["screenshots"] = ["cors-allowed.png", "cors-other.png"]
    out["seconds"] = round(time.monotonic() - started, 2)
    print(json.dumps(out, ensure_ascii=False), flush=True)
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
