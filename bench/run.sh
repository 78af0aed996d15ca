#!/usr/bin/env bash
# The benchmark, in one command: installs what it needs (CopyQ, Xvfb, the Python reference server's
# SDK, Chromium, the CopyQ 17.0 chroot), builds in release mode, and writes bench/results.md (also
# printed): the host's CopyQ 6.4 and CopyQ 17.0 (Qt 6) side by side. COPYQ_MCP_BENCH_CHROOT= (empty)
# skips 17.0.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-copyq.sh
bash tests/clients/install.sh
# Chromium renders the images table's screenshots (bench/images.rs): Debian's package when missing.
bash tests/browser/install.sh
chroots=${COPYQ_MCP_CHROOTS:-/var/cache/copyq-mcp-chroots}
export COPYQ_MCP_BENCH_CHROOT=${COPYQ_MCP_BENCH_CHROOT-$chroots/sid}
if [[ -n $COPYQ_MCP_BENCH_CHROOT ]]; then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo bash tests/copyq-versions/chroot.sh build sid "$COPYQ_MCP_BENCH_CHROOT"
    trap '$sudo bash tests/copyq-versions/chroot.sh umount "$COPYQ_MCP_BENCH_CHROOT"' EXIT
fi
cargo bench --locked --bench gateway
