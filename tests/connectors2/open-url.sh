#!/usr/bin/env bash
# The $BROWSER that run.sh gives the connector clients: `open-url.sh URL`.
#
# Records URL in $CONNECTORS2_STATE/opens.log, then starts the real browser
# ($CONNECTORS2_BROWSER, e.g. tests/browser/browser.sh: headless Chromium approving the consent
# page) on it in the background, in a process group of its own whose id goes to
# $CONNECTORS2_STATE/browser.pgids (run.sh and tests/connectors_misc.rs kill what is left), with
# its stdout / stderr in $CONNECTORS2_STATE/browser-N.out / .err. Exits 0 at once: fastmcp calls
# $BROWSER synchronously (Python's webbrowser waits for it) and only starts its callback server
# afterwards, so a browser that blocked until the callback loaded would dead-lock it.
# tests/browser/browser.sh is run with COPYQ_MCP_BROWSER_WAIT=1 (it then stays in the foreground
# of that process group, so it can be killed, and prints its JSON result to browser-N.out) and
# COPYQ_MCP_BROWSER_TAG=connectors2-<client>-<N>-<pid> (names its screenshots).
set -euo pipefail
url="${1:?usage: open-url.sh URL}"
state="${CONNECTORS2_STATE:?CONNECTORS2_STATE is not set}"
browser="${CONNECTORS2_BROWSER:?CONNECTORS2_BROWSER is not set}"
exec 8>>"$state/opens.lock"
flock 8
n=1
if [[ -f "$state/opens.log" ]]; then n=$(( $(wc -l <"$state/opens.log") + 1 )); fi
printf '%s\n' "$url" >>"$state/opens.log"
export COPYQ_MCP_BROWSER_WAIT=1
export COPYQ_MCP_BROWSER_TAG="${COPYQ_MCP_BROWSER_TAG:-connectors2-${CONNECTORS2_CLIENT:-client}-$n-$$}"
setsid "$browser" "$url" >"$state/browser-$n.out" 2>"$state/browser-$n.err" </dev/null 8>&- &
echo "$!" >>"$state/browser.pgids"
