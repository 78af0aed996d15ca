#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need when it is missing (Debian's
# copyq and xvfb; the pinned third-party MCP clients under target/clients), builds the Debian chroots
# holding the other CopyQ versions, then runs formatting, lints, a check that every bug
# tests/planted.sh plants still applies to the code, that the HTTP edge's suites run with no
# CopyQ (tests/lib/edge_guard.sh), every test against a private real CopyQ (the
# host's 6.4), and the version matrix: the suites that drive CopyQ, with both backends,
# against CopyQ 9.0, 10.0 and 17.0 in those chroots; last, the container image against 17.0
# (tests/container/run.sh), and the Debian package installed in the Debian 13 chroot
# (tests/package/run.sh), and the Windows .exe built in a sid chroot and run under Wine
# (tests/windows.sh). Each step prints how long it took.
#
# The chroots live in $COPYQ_MCP_CHROOTS (default /var/cache/copyq-mcp-chroots) and are reused
# from run to run; building one takes about a minute (tests/copyq-versions/chroot.sh). Chroots need
# root: the matrix runs as root, or through sudo for the chroot builds (the tests then need root
# too). COPYQ_MCP_MATRIX=0 skips the matrix (a quick local run); CI always runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

# A run starts from a clean clone: incremental compilation's state (4.6 GB of a run's target/)
# would never be used again. A developer's own runs may set CARGO_INCREMENTAL=1.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

timed() {
    local started=$SECONDS
    "$@"
    echo "run.sh: $(( SECONDS - started )) s: ${*:1:8}" >&2
}

bash deploy/install-copyq.sh ip:iproute2 curl:curl
bash tests/clients/install.sh
bash tests/browser/install.sh      # Debian's chromium + a pinned Playwright (no browser download)
bash tests/connectors/install.sh   # Claude Code and Codex CLIs, pinned
bash tests/connectors2/install.sh  # mcp-remote, MCP Inspector 2.x, fastmcp, pinned

CHROOTS=${COPYQ_MCP_CHROOTS:-/var/cache/copyq-mcp-chroots}
# suite:CopyQ version, for the messages.
VERSIONS=(bookworm-backports:9.0 trixie:10.0 sid:17.0)
matrix=${COPYQ_MCP_MATRIX:-1}
sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo

unmount_chroots() {
    for v in "${VERSIONS[@]}"; do
        [[ -d $CHROOTS/${v%%:*} ]] && $sudo bash tests/copyq-versions/chroot.sh umount "$CHROOTS/${v%%:*}"
    done
    return 0
}

upgrade=()
if [[ $matrix != 0 ]]; then
    trap unmount_chroots EXIT
    for v in "${VERSIONS[@]}"; do
        timed $sudo bash tests/copyq-versions/chroot.sh build "${v%%:*}" "$CHROOTS/${v%%:*}"
    done
    # copyq_down then also replaces the host's CopyQ 6.4 by 17.0 under a running gateway.
    upgrade=(env "COPYQ_MCP_TEST_UPGRADE_CHROOT=$CHROOTS/sid")
fi

timed bash tests/lib/mirror_test.sh   # which Debian mirror the chroots use
timed cargo fmt --check
timed cargo clippy --all-targets --locked -- -D warnings
# Every planted bug of tests/planted.sh still applies to the code (the full run is by hand).
timed bash tests/planted.sh --apply-only
# The HTTP edge's suites still need no CopyQ: run with `copyq` and `Xvfb` that fail at once.
timed bash tests/lib/edge_guard.sh --locked
# Everything, with copyq.backend = auto (CopyQ's socket, natively), against the host's CopyQ...
timed "${upgrade[@]}" cargo test --locked --lib --bins --tests
# ...and the integration suites that drive CopyQ once more through the copyq CLI backend: the same
# byte-exact expectations hold for both.
SUITES=(--test copyq)  # read, redact, write, safety, copyq_down, audit, faults, halfdone, versions: tests/copyq/
timed env COPYQ_MCP_TEST_BACKEND=cli cargo test --locked "${SUITES[@]}"

# The version matrix: the same suites, both backends, each CopyQ in its chroot.
if [[ $matrix != 0 ]]; then
    for v in "${VERSIONS[@]}"; do
        for backend in socket cli; do
            echo "run.sh: CopyQ ${v#*:} (${v%%:*} chroot), $backend backend" >&2
            timed env "COPYQ_MCP_TEST_CHROOT=$CHROOTS/${v%%:*}" "COPYQ_MCP_TEST_BACKEND=$backend" \
                cargo test --locked "${SUITES[@]}"
        done
    done
fi

# The container image (podman + runc, a debootstrapped base, the release binary) as its non-root user
# against CopyQ 17.0's socket in the sid chroot: /healthz and a tools/call (tests/container/run.sh).
if [[ $matrix != 0 ]]; then
    timed cargo build --release --locked --bin copyq-mcp
    timed $sudo env "COPYQ_MCP_CONTAINER_CHROOT=$CHROOTS/sid" bash tests/container/run.sh
    # The Debian package (cargo-deb), installed with dpkg in the Debian 13 chroot: doctor, a token and
    # the gateway with no flags, a tools/call against that chroot's CopyQ 10.0 (tests/package/run.sh).
    timed $sudo bash tests/package/run.sh "$CHROOTS/trixie"
fi

# Windows: copyq-mcp.exe (release, zipped as the Windows artefact) built in a Debian sid chroot with
# mingw-w64 and -Zbuild-std, its unit tests under Wine, and the .exe under Wine as a gateway on both
# backends' stand-ins (tests/windows.sh). COPYQ_MCP_WINDOWS=0 skips it.
if [[ $matrix != 0 && ${COPYQ_MCP_WINDOWS:-1} != 0 ]]; then
    timed $sudo bash tests/windows.sh
fi
