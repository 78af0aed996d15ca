#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need when it is missing (Debian's
# copyq and xvfb; the pinned third-party MCP clients under target/clients), then runs formatting,
# lints and every test against a private real CopyQ.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-copyq.sh ip:iproute2 curl:curl
bash tests/clients/install.sh
bash tests/browser/install.sh      # Debian's chromium + a pinned Playwright (no browser download)
bash tests/connectors/install.sh   # Claude Code and Codex CLIs, pinned
bash tests/connectors2/install.sh  # mcp-remote, MCP Inspector 2.x, fastmcp, pinned

cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
# Everything, with copyq.backend = auto (CopyQ's socket, natively)...
cargo test --locked --lib --bins --tests
# ...and the integration suites that drive CopyQ once more through the copyq CLI backend: the same
# byte-exact expectations hold for both.
COPYQ_MCP_TEST_BACKEND=cli cargo test --locked --test read --test write --test safety --test copyq_down --test audit --test faults
