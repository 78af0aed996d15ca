# Sourced by tests/connectors/claude.sh and codex.sh: a private HOME, the stand-in model, the
# OAuth browser, and output normalisation. Diagnostics go to stderr and $WORK; stdout carries
# only the lines the tests compare exactly.
#
# Env (set by the caller):
#   CONNECTOR_URL       the gateway's /mcp URL (required)
#   CONNECTOR_TOKEN     bearer token (bearer mode)
#   CONNECTOR_ROLE      read | write: the model's script and, through OAuth, the role approved
#                       on the consent page (default read)
#   CONNECTOR_SCRIPT    the stand-in model's script when it is not the role's: media (Claude
#                       Code's resource tools on CONNECTOR_URI, then mcp_read of CONNECTOR_TAB's
#                       item 0; see model.py)
#   CONNECTOR_URI       the resource the media script reads
#   CONNECTOR_TAB       tab the write script adds to (default workspace/connectors)
#   CONNECTOR_TEXT      text it adds (default "written by a connector")
#   CONNECTOR_WAIT      OAuth: seconds to wait between login and the model session, so that the
#                       first access token has expired and the client must refresh (default 0)
#   CONNECTOR_WORK      working dir (private HOME, logs); default a new dir under
#                       <repo>/target/connectors-runs
#   CONNECTOR_TIMEOUT   seconds for each client command (default 90)
#   COPYQ_MCP_TEST_PASSPHRASE   OAuth: the owner's passphrase typed on the consent page
#   BROWSER             OAuth: the browser the CLI opens (default tests/browser/browser.sh,
#                       headless Chromium approving the consent page)
#   CLIENTS_DIR         where tests/connectors/install.sh put the CLIs (default <repo>/target/clients)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
CLIENTS_DIR="${CLIENTS_DIR:-$repo/target/clients}"
BIN="$CLIENTS_DIR/connectors/bin"
PYTHON="${PYTHON:-python3}"

: "${CONNECTOR_URL:?CONNECTOR_URL is required}"
ROLE="${CONNECTOR_ROLE:-read}"
TAB="${CONNECTOR_TAB:-workspace/connectors}"
TEXT="${CONNECTOR_TEXT:-written by a connector}"
SCRIPT="${CONNECTOR_SCRIPT:-$ROLE}"
URI="${CONNECTOR_URI:-}"
WAIT="${CONNECTOR_WAIT:-0}"
TIMEOUT="${CONNECTOR_TIMEOUT:-90}"
case "$ROLE" in read|write) ;; *) echo "CONNECTOR_ROLE must be read or write" >&2; exit 2 ;; esac

# Nothing of a real Claude Code / Codex session leaks in (keys, base URLs, config dirs).
for v in $(compgen -e); do
    case "$v" in ANTHROPIC_*|CLAUDE_*|CLAUDECODE|OPENAI_*|CODEX_*) unset "$v" ;; esac
done

if [[ -z "${CONNECTOR_WORK:-}" ]]; then
    mkdir -p "$repo/target/connectors-runs"
    CONNECTOR_WORK="$(mktemp -d "$repo/target/connectors-runs/$(basename "$0" .sh)-XXXXXX")"
fi
WORK="$CONNECTOR_WORK"
mkdir -p "$WORK/home"
WORK="$(cd "$WORK" && pwd)"
export HOME="$WORK/home"
export XDG_CONFIG_HOME="$HOME/.config" XDG_DATA_HOME="$HOME/.local/share" XDG_CACHE_HOME="$HOME/.cache"
export NO_COLOR=1
cd "$HOME"
echo "work dir: $WORK" >&2

MODEL_PID=""
cleanup() {
    if [[ -n "$MODEL_PID" ]]; then kill "$MODEL_PID" 2>/dev/null; wait "$MODEL_PID" 2>/dev/null; fi
}
trap cleanup EXIT

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

# norm: strip ANSI escapes (colours, hyperlinks), CRs and trailing blanks; squeeze runs of spaces.
norm() {
    sed -e 's/\x1b\][^\x07]*\x07//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\r//g' \
        -e 's/[[:space:]]*$//' -e 's/  */ /g'
}

# bounded CMD...: run with the per-command timeout (its output as is).
bounded() { timeout -k 5 "$TIMEOUT" "$@"; }

# start_model: the stand-in model API on loopback, playing the $SCRIPT script; sets MODEL_URL.
start_model() {
    rm -f "$WORK/model.port" "$WORK/model.log"
    "$PYTHON" "$here/model.py" serve --log "$WORK/model.log" --port-file "$WORK/model.port" \
        --script "$SCRIPT" --tab "$TAB" --text "$TEXT" --uri "$URI" 2>"$WORK/model.err" &
    MODEL_PID=$!
    for _ in $(seq 100); do
        [[ -s "$WORK/model.port" ]] && break
        kill -0 "$MODEL_PID" 2>/dev/null || die "the stand-in model did not start: $(cat "$WORK/model.err")"
        sleep 0.1
    done
    [[ -s "$WORK/model.port" ]] || die "the stand-in model did not start in 10 s"
    MODEL_URL="http://127.0.0.1:$(cat "$WORK/model.port")"
}

# model_summary: what the client sent to the model (tools: / result: lines).
model_summary() {
    [[ -s "$WORK/model.log" ]] || die "the client never called the stand-in model"
    "$PYTHON" "$here/model.py" summary "$WORK/model.log"
}

# login_in_terminal LOGFILE CMD: run the login CMD (a shell string) under a pseudo-terminal
# (`script`); its screen goes to LOGFILE. Bounded by CONNECTOR_TIMEOUT, and stopped soon after the
# browser reports a failure (the CLI would otherwise wait for a callback that never comes).
login_in_terminal() {
    local out="$1" cmd="$2" pid waited=0 failed_at=""
    rm -f "$WORK/login.stopped"
    timeout -k 5 "$TIMEOUT" script -q -e -c "$cmd" /dev/null </dev/null >"$out" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        if [[ -z "$failed_at" && -s "$WORK/browser.json" ]] && ! grep -q '"ok": true' "$WORK/browser.json"; then
            failed_at=$waited
        fi
        if [[ -n "$failed_at" ]] && (( waited - failed_at >= 20 )); then
            kill -TERM "$pid" 2>/dev/null
            echo "stopped: the browser did not complete the consent" >"$WORK/login.stopped"
            break
        fi
        sleep 0.25
        waited=$((waited + 1))
    done
    wait "$pid" 2>/dev/null
}

# login_line PATTERN: the login's outcome from its screen: the first line matching PATTERN, or
# why it was stopped, or its last line.
login_line() {
    local line
    line="$(norm <"$WORK/login.out" | grep -m1 -E "$1")" \
        || line="$(cat "$WORK/login.stopped" 2>/dev/null)" \
        || line="$(norm <"$WORK/login.out" | grep -v '^$' | tail -1)"
    echo "login: $line"
}

# oauth_browser: the $BROWSER for a login, approving $ROLE with the passphrase; its JSON outcome
# lands in $WORK/browser.json.
oauth_browser() {
    : "${COPYQ_MCP_TEST_PASSPHRASE:?COPYQ_MCP_TEST_PASSPHRASE is required for OAuth}"
    export BROWSER="${BROWSER:-$repo/tests/browser/browser.sh}"
    [[ -x "$BROWSER" ]] || die "no browser script at $BROWSER (tests/browser/browser.sh comes from the browser branch)"
    export COPYQ_MCP_TEST_ROLE="$ROLE" COPYQ_MCP_TEST_ACTION=approve
    export COPYQ_MCP_BROWSER_RESULT="$WORK/browser.json"
    export COPYQ_MCP_BROWSER_TAG="${COPYQ_MCP_BROWSER_TAG:-$(basename "$0" .sh)-$ROLE-$$}"
    rm -f "$WORK/browser.json"
}

# browser_outcome: one line from the browser's JSON result, waiting for it (bounded).
browser_outcome() {
    for _ in $(seq 300); do [[ -s "$WORK/browser.json" ]] && break; sleep 0.2; done
    [[ -s "$WORK/browser.json" ]] || { echo "browser: no result"; return 0; }
    "$PYTHON" -c 'import json,sys; r=json.load(open(sys.argv[1]))
print("browser: ok role=%s" % r.get("role") if r.get("ok") else "browser: FAILED %s" % r.get("error"))' \
        "$WORK/browser.json"
}
