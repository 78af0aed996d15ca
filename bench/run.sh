#!/usr/bin/env bash
# The benchmark, in one command: installs what it needs (CopyQ, Xvfb, the Python reference server's
# SDK), builds in release mode, and writes bench/results.md (also printed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-copyq.sh
bash tests/clients/install.sh
cargo bench --locked --bench gateway
