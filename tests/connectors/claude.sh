#!/usr/bin/env bash
# Claude Code (tests/connectors/install.sh) against a running gateway, in a private HOME, with its
# own MCP client making the tool calls a scripted stand-in model (tests/connectors/model.py, on
# loopback through ANTHROPIC_BASE_URL) asks for.
#
#   claude.sh bearer   `claude mcp add --transport http copyq URL --header "Authorization: Bearer T"`,
#                      `claude mcp list` and `claude mcp get copyq` (health checks), then a
#                      `claude -p` session
#   claude.sh oauth    `claude mcp add` without a header (list: Needs authentication; with
#                      CONNECTOR_CLIENT_ID / CONNECTOR_CALLBACK_PORT: --client-id / --callback-port),
#                      `claude mcp login copyq` under a terminal with $BROWSER approving the consent
#                      page in headless Chromium, list again, wait CONNECTOR_WAIT seconds (the
#                      first access token expires), then a `claude -p` session
#
# The session: with CONNECTOR_ROLE=read the model only answers with the tools it was offered;
# with write it calls mcp_write add to CONNECTOR_TAB and then mcp_read of that item (both allowed
# with --allowedTools); with CONNECTOR_SCRIPT=media it reads a resource with Claude Code's own
# resource tools and an image item with mcp_read. Env: see tests/connectors/common.sh.
#
# Stdout, compared exactly by tests/connectors_cli.rs (URL is CONNECTOR_URL):
#   add: Added HTTP MCP server copyq with URL: URL to local config
#   list: copyq: URL (HTTP) - ✔ Connected           (oauth: first "! Needs authentication")
#   get: Status: ✔ Connected                         (bearer)
#   login: Authenticated with "copyq". Its tools are now available in Claude Code.   (oauth)
#   browser: ok role=ROLE                            (oauth)
#   final: <the session's last answer>
#   deferred: <MCP tools named to the model>         (model.py summary)
#   tools: <MCP tools offered with their schemas>
#   searched: <MCP tools the model's ToolSearch call returned>
#   result: <each gateway tool result fed back to the model>
#   listed: / resource: / image:   (media) the resources listed, the resource read, each image
#                                   fed back (type, size, sha256)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
mode="${1:-}"
CLAUDE="$BIN/claude"
[[ -x "$CLAUDE" ]] || die "Claude Code is not installed: bash tests/connectors/install.sh"

export DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
# Claude Code's default: MCP tools are deferred (named in a system message) until the model loads
# them with its ToolSearch tool, which the stand-in model does. CONNECTOR_TOOL_SEARCH=false puts
# them in the request's tool list at once.
export ENABLE_TOOL_SEARCH="${CONNECTOR_TOOL_SEARCH:-true}"

health() {   # list: and get: lines
    bounded "$CLAUDE" mcp list >"$WORK/list.out" 2>&1
    echo "list: $(norm <"$WORK/list.out" | grep '^copyq:' || echo "(no copyq line) $(norm <"$WORK/list.out" | tail -1)")"
}

session() {   # a -p session against the stand-in model
    start_model
    local allow=()
    [[ "$SCRIPT" == write ]] && allow=(--allowedTools "mcp__copyq__mcp_write,mcp__copyq__mcp_read")
    [[ "$SCRIPT" == media ]] && allow=(--allowedTools "mcp__copyq__mcp_read")
    ANTHROPIC_BASE_URL="$MODEL_URL" ANTHROPIC_API_KEY=sk-ant-stand-in \
        bounded "$CLAUDE" -p "Use the copyq tools as scripted." "${allow[@]}" \
        </dev/null >"$WORK/session.out" 2>"$WORK/session.err"
    echo "final: $(norm <"$WORK/session.out" | tail -1)"
    model_summary
}

case "$mode" in
bearer)
    : "${CONNECTOR_TOKEN:?CONNECTOR_TOKEN is required}"
    bounded "$CLAUDE" mcp add --transport http copyq "$CONNECTOR_URL" \
        --header "Authorization: Bearer $CONNECTOR_TOKEN" >"$WORK/add.out" 2>&1
    echo "add: $(norm <"$WORK/add.out" | head -1)"
    health
    bounded "$CLAUDE" mcp get copyq >"$WORK/get.out" 2>&1
    echo "get: $(norm <"$WORK/get.out" | grep -m1 'Status:' | sed 's/^ *//')"
    session
    ;;
oauth)
    oauth_browser
    # By default Claude Code identifies itself with its client-ID metadata document (when the
    # server supports them, as this one does), https://claude.ai/oauth/claude-code-client-metadata,
    # or the URL in MCP_OAUTH_CLIENT_METADATA_URL. CONNECTOR_CLIENT_ID (+ CONNECTOR_CALLBACK_PORT)
    # use a client registered beforehand instead ("advanced settings" in Claude's connector UI).
    extra=()
    [[ -n "${CONNECTOR_CLIENT_ID:-}" ]] && extra+=(--client-id "$CONNECTOR_CLIENT_ID")
    [[ -n "${CONNECTOR_CALLBACK_PORT:-}" ]] && extra+=(--callback-port "$CONNECTOR_CALLBACK_PORT")
    bounded "$CLAUDE" mcp add --transport http "${extra[@]}" copyq "$CONNECTOR_URL" >"$WORK/add.out" 2>&1
    echo "add: $(norm <"$WORK/add.out" | head -1)"
    health
    login_in_terminal "$WORK/login.out" "$(printf '%q mcp login copyq' "$CLAUDE")"
    login_line 'Authenticated|rror|ailed'
    browser_outcome
    health
    sleep "$WAIT"
    session
    ;;
*)
    echo "usage: claude.sh bearer|oauth   (env: see tests/connectors/common.sh)" >&2
    exit 2
    ;;
esac
