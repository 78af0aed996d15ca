#!/usr/bin/env bash
# Codex CLI (tests/connectors/install.sh) against a running gateway, in a private HOME and
# CODEX_HOME, with its own MCP client making the tool calls a scripted stand-in model
# (tests/connectors/model.py on loopback: a model provider with wire_api = "responses") asks for.
#
#   codex.sh bearer   `codex mcp add copyq --url URL --bearer-token-env-var COPYQ_MCP_TOKEN`,
#                     `codex mcp list`, then a `codex exec` session with the token in that variable
#   codex.sh oauth    `codex mcp add copyq --url URL --oauth-client-registration
#                     ${CONNECTOR_CODEX_REGISTRATION:-auto}` under a terminal: Codex detects OAuth and logs
#                     in at once, $BROWSER approving the consent page in headless Chromium;
#                     `codex mcp list`, wait CONNECTOR_WAIT seconds (the first access token
#                     expires), then a `codex exec` session
#
# The session: with CONNECTOR_ROLE=read the model only answers with the tools it was offered;
# with write it calls mcp_write add to CONNECTOR_TAB and then mcp_read of that item, with the
# server's tools approved as the README says (`default_tools_approval_mode = "approve"`, given as
# `codex exec -c`): mcp_write is a destructiveHint tool, which `codex exec` would otherwise refuse
# ("requires approval, but approval policy is never"). Env: see tests/connectors/common.sh.
#
# Stdout, compared exactly by tests/connectors_cli.rs (URL is CONNECTOR_URL):
#   add: Added global MCP server 'copyq'.
#   login: Successfully logged in.                          (oauth)
#   browser: ok role=ROLE                                   (oauth)
#   list: copyq URL COPYQ_MCP_TOKEN enabled Bearer token    (oauth: copyq URL - enabled OAuth)
#   final: <the session's last answer>
#   tools: <MCP tools offered to the model>                 (model.py summary)
#   result: <each tool result fed back to the model>
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
mode="${1:-}"
CODEX="$BIN/codex"
[[ -x "$CODEX" ]] || die "Codex is not installed: bash tests/connectors/install.sh"
export CODEX_HOME="$HOME/.codex"
mkdir -p "$CODEX_HOME"

# The stand-in model as the only model provider. Top-level keys come before any table, so this
# is written before `codex mcp add` appends its [mcp_servers.copyq].
config() {
    start_model
    cat >"$CODEX_HOME/config.toml" <<EOF
model = "stand-in"
model_provider = "stand-in"
mcp_oauth_credentials_store = "file"
check_for_update_on_startup = false

[model_providers.stand-in]
name = "stand-in model on loopback"
base_url = "$MODEL_URL/v1"
wire_api = "responses"
env_key = "STAND_IN_API_KEY"
supports_websockets = false

EOF
}

list() {
    bounded "$CODEX" mcp list >"$WORK/list.out" 2>"$WORK/list.err"
    echo "list: $(norm <"$WORK/list.out" | grep '^copyq ' || echo "(no copyq line) $(norm <"$WORK/list.err" | tail -1)")"
}

session() {
    local approve=()
    [[ "$ROLE" == write ]] && approve=(-c 'mcp_servers.copyq.default_tools_approval_mode="approve"')
    STAND_IN_API_KEY=stand-in bounded "$CODEX" exec --skip-git-repo-check "${approve[@]}" \
        --output-last-message "$WORK/last.txt" "Use the copyq tools as scripted." \
        </dev/null >"$WORK/session.out" 2>"$WORK/session.err"
    echo "final: $(norm <"$WORK/last.txt" 2>/dev/null | tail -1)"
    model_summary
}

case "$mode" in
bearer)
    : "${CONNECTOR_TOKEN:?CONNECTOR_TOKEN is required}"
    config
    bounded "$CODEX" mcp add copyq --url "$CONNECTOR_URL" --bearer-token-env-var COPYQ_MCP_TOKEN \
        >"$WORK/add.out" 2>"$WORK/add.err"
    echo "add: $(norm <"$WORK/add.out" | head -1)"
    export COPYQ_MCP_TOKEN="$CONNECTOR_TOKEN"
    list
    session
    ;;
oauth)
    oauth_browser
    config
    # CONNECTOR_CODEX_REGISTRATION: auto (Codex's default: its client-ID metadata document
    # https://chatgpt.com/oauth/codex/client.json when the server supports them), cimd or dcr.
    login_in_terminal "$WORK/login.out" "$(printf '%q mcp add copyq --url %q --oauth-client-registration %q' \
        "$CODEX" "$CONNECTOR_URL" "${CONNECTOR_CODEX_REGISTRATION:-auto}")"
    echo "add: $(norm <"$WORK/login.out" | grep -m1 '^Added' || echo "(none) $(norm <"$WORK/login.out" | tail -1)")"
    login_line 'logged in|rror|ailed'
    browser_outcome
    list
    sleep "$WAIT"
    session
    ;;
*)
    echo "usage: codex.sh bearer|oauth   (env: see tests/connectors/common.sh)" >&2
    exit 2
    ;;
esac
