#!/usr/bin/env bash
# One command for a fresh machine: installs CopyQ and Xvfb when missing, builds, and runs
# `copyq-mcp demo` (a private headless CopyQ with sample tabs; never your own CopyQ).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-copyq.sh
exec cargo run --release --locked --quiet -- demo "$@"
