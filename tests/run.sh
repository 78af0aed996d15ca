#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need when it is missing (Debian's
# copyq and xvfb; the pinned third-party MCP clients under target/clients), then runs formatting,
# lints and every test against a private real CopyQ.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v copyq >/dev/null 2>&1 || missing+=(copyq)
command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
if ((${#missing[@]})); then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo=sudo
    echo "installing ${missing[*]} (apt-get)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
bash tests/clients/install.sh

cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --all-targets --locked
