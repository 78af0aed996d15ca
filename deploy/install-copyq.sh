#!/usr/bin/env bash
# Installs Debian's copyq and xvfb when missing (the demo and the tests run a private headless CopyQ),
# copyq-plugins (what `apt install copyq` brings with it on a desktop: the tests prove the gateway
# with CopyQ's pinned-items plugin at work), make (building the gateway on Linux builds jemalloc,
# its allocator, from C: Cargo.toml), and any further COMMAND:PACKAGE pairs given as arguments
# (e.g. ip:iproute2 curl:curl).
set -euo pipefail
missing=()
for pair in copyq:copyq Xvfb:xvfb make:make "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
dpkg-query -W -f '${Status}' copyq-plugins 2>/dev/null | grep -q 'ok installed' || missing+=(copyq-plugins)
((${#missing[@]})) || exit 0
sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
echo "installing ${missing[*]} (apt-get)" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
