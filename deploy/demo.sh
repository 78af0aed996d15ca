#!/usr/bin/env bash
# One command for a fresh machine: installs CopyQ and Xvfb when missing, builds, and runs
# `copyq-mcp demo` (a private headless CopyQ with sample tabs; never your own CopyQ).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v copyq >/dev/null 2>&1 || missing+=(copyq)
command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
if ((${#missing[@]})); then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
exec cargo run --release --locked --quiet -- demo "$@"
