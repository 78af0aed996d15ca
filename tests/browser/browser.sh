#!/usr/bin/env bash
# A `$BROWSER` for OAuth CLIs (Claude Code, Codex, mcp-remote, fastmcp, Inspector) that approves
# copyq-mcp's consent page in headless Chromium, as a person would:
#
#   BROWSER=/path/to/tests/browser/browser.sh COPYQ_MCP_TEST_PASSPHRASE=... some-cli login
#   tests/browser/browser.sh AUTHORIZE_URL            # by hand
#
# The CLI calls `$BROWSER <authorize-url>` (extra arguments are ignored; the first http(s) one is
# the URL). tests/browser/approve.py then opens it, selects the role, types the passphrase, clicks
# Approve and lets the browser load the app's loopback callback, so the CLI's callback server gets
# the code. See approve.py's header for every variable; the main ones:
#
#   COPYQ_MCP_TEST_PASSPHRASE   owner passphrase (required)
#   COPYQ_MCP_TEST_ROLE         read | write (default write)
#   COPYQ_MCP_TEST_ACTION       approve | deny (default approve)
#   COPYQ_MCP_SCREENSHOTS       screenshot dir (default <repo>/target/screenshots, approve-<tag>-*.png)
#   COPYQ_MCP_BROWSER_TAG       names this run's files (default HHMMSS-<pid>)
#   COPYQ_MCP_BROWSER_RESULT    file that gets approve.py's JSON result line when it is done
#   COPYQ_MCP_BROWSER_TIMEOUT   seconds for the whole run (default 60; the run is killed after it)
#   COPYQ_MCP_BROWSER_WAIT=1    run in the foreground and exit with approve.py's status
#
# By default it returns at once (exit 0) and approves in a detached background process: a CLI that
# waits for $BROWSER to exit before it serves its callback (Python's webbrowser does, in the same
# thread) would otherwise deadlock, and a CLI that does not wait is served either way. The
# outcome is then in the log, <repo>/target/browser/approve-<tag>.log, in
# <repo>/target/browser/approve.jsonl (one JSON line per run) and in $COPYQ_MCP_BROWSER_RESULT.
# With COPYQ_MCP_BROWSER_WAIT=1 it exits 0 on success, 1 when a page was not the expected one, 2 on
# bad usage; the log also goes to stderr.
#
# Needs tests/browser/install.sh (run here when its venv is missing).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
clients="${CLIENTS_DIR:-$repo/target/clients}"
python="$clients/browser/bin/python"
export COPYQ_MCP_BROWSER_TAG="${COPYQ_MCP_BROWSER_TAG:-$(date +%H%M%S)-$$}"
timeout_s="${COPYQ_MCP_BROWSER_TIMEOUT:-60}"
logdir="$repo/target/browser"
mkdir -p "$logdir"
log="$logdir/approve-$COPYQ_MCP_BROWSER_TAG.log"

url=""
for a in "$@"; do
    case "$a" in http://*|https://*) url="$a"; break ;; esac
done
if [[ -z "$url" ]]; then
    echo "browser.sh: no http(s) URL among the arguments: $*" >&2
    exit 2
fi

approve() {
    if [[ ! -x "$python" ]]; then
        CLIENTS_DIR="$clients" bash "$here/install.sh" || return 2
    fi
    # Bounded: the whole run, browser included, is killed after the timeout (+ a grace period).
    timeout -k 5 "$(( ${timeout_s%.*} + 10 ))" "$python" "$here/approve.py" "$url"
}

echo "$(date +%H:%M:%S) browser.sh: $url" >>"$log"
if [[ "${COPYQ_MCP_BROWSER_WAIT:-0}" == 1 ]]; then
    approve 2> >(tee -a "$log" >&2)
    rc=$?
    wait
    exit "$rc"
fi

# Detached: its own session, no terminal, nothing inherited on stdin/stdout/stderr, so neither
# the CLI's exit nor its process group's signals cut the approval short.
export -f approve
export here url python clients timeout_s
setsid bash -c approve </dev/null >>"$log" 2>&1 &
echo "browser.sh: approving in headless Chromium in the background; log: $log" >&2
exit 0
