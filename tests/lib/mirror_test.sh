#!/usr/bin/env bash
# Checks tests/lib/mirror.sh's choice of Debian mirror on made-up apt source trees (run by tests/run.sh).
set -euo pipefail
source "$(dirname "$0")/mirror.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/sources.list.d"
fail=0
expect() { # expect WANTED [ENV...]: debian_mirror under these variables prints WANTED
    local want=$1 got
    shift
    got=$(env "$@" bash -c 'source "$1"; debian_mirror' _ "$(dirname "$0")/mirror.sh")
    if [[ $got == "$want" ]]; then echo "ok: $want"; else echo "FAIL: wanted $want, got $got"; fail=1; fi
}
# One-line sources: a third party's line and -security are skipped, options in brackets too.
printf '%s\n' 'deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main' \
    'deb http://mirror.lan/debian-security bookworm-security main' \
    'deb [arch=amd64] http://mirror.lan/debian bookworm main' >"$t/sources.list"
expect http://mirror.lan/debian COPYQ_MCP_APT_ETC="$t"
# deb822: the Debian-signed stanza whose first suite is Debian's; nodesource's is not Debian.
rm "$t/sources.list"
printf '%s\n' 'Types: deb' 'URIs: https://deb.nodesource.com/node_20.x' 'Suites: nodistro' \
    'Signed-By: /usr/share/keyrings/nodesource.gpg' >"$t/sources.list.d/a.sources"
printf '%s\n' 'Types: deb' 'URIs: http://sec.lan/debian-security' 'Suites: trixie-security' \
    'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' 'Types: deb' \
    'URIs: http://m2.lan/debian http://m3.lan/debian' 'Suites: trixie trixie-updates' \
    'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' >"$t/sources.list.d/debian.sources"
expect http://m2.lan/debian COPYQ_MCP_APT_ETC="$t"
# The override wins; no Debian source at all falls back to Debian's public mirror.
expect http://override/debian COPYQ_MCP_APT_ETC="$t" COPYQ_MCP_DEBIAN_MIRROR=http://override/debian
rm "$t"/sources.list.d/*
expect http://deb.debian.org/debian COPYQ_MCP_APT_ETC="$t"
exit "$fail"
