#!/usr/bin/env bash
# Installs Debian's copyq and xvfb when missing (the demo and the tests run a private headless CopyQ).
set -euo pipefail
missing=()
command -v copyq >/dev/null 2>&1 || missing+=(copyq)
command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
((${#missing[@]})) || exit 0
sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
echo "installing ${missing[*]} (apt-get)" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
