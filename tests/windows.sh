#!/usr/bin/env bash
# The gateway for Windows, built and run here: a Debian sid chroot with Debian's rustc + rust-src,
# mingw-w64 and Wine builds copyq-mcp.exe (std built from source with -Zbuild-std, since no
# registry carries a Windows std for Debian's rustc), builds the unit tests as .exe and runs them
# under Wine, then runs the .exe under Wine as a gateway on loopback and checks that /healthz
# answers. Root; idempotent (the chroot is built once, the target dir kept). Not run by run.sh.
#
#   tests/windows.sh            all of it
#   SKIP_UNIT=1 tests/windows.sh  without the unit tests (their build is a second std + deps build)
#
# Environment: WIN_CHROOT (default /var/cache/copyq-mcp-chroots/win-sid), COPYQ_MCP_DEBIAN_MIRROR.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
source "$HERE/lib/install.sh"
source "$HERE/lib/mirror.sh"

CHROOT=${WIN_CHROOT:-/var/cache/copyq-mcp-chroots/win-sid}
PACKAGES=(rustc cargo rust-src gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 ca-certificates wine64 wine curl)
RECIPE=1
TARGET=x86_64-pc-windows-gnu
PORT=${WIN_PORT:-18799}

[[ $(id -u) == 0 ]] || { echo "windows.sh: run as root (debootstrap, chroot, mounts)" >&2; exit 1; }
install_begin windows "/var/lock/copyq-mcp-windows.lock"
apt_install /usr/sbin/debootstrap debootstrap

in_chroot() {
    chroot "$CHROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        CARGO_HOME=/root/.cargo CARGO_TARGET_DIR=/var/cache/win-target RUSTC_BOOTSTRAP=1 \
        CARGO_HTTP_CAINFO=/etc/host-ca.crt SSL_CERT_FILE=/etc/host-ca.crt WINEDEBUG=-all "$@"
}

# The chroot, once: debootstrap, then the toolchain and Wine.
if ! grep -qx "recipe $RECIPE" "$CHROOT/.copyq-mcp-ready" 2>/dev/null; then
    started=$SECONDS
    [[ -d $CHROOT/usr ]] || fetch "debootstrap sid" debootstrap --variant=minbase sid "$CHROOT" "$(debian_mirror)"
    # The mirror's Release files may be past their Valid-Until (a snapshot).
    echo 'Acquire::Check-Valid-Until "false";' >"$CHROOT/etc/apt/apt.conf.d/99copyq-mcp-snapshot"
    fetch "apt-get update (chroot)" chroot "$CHROOT" apt-get update -q
    fetch "apt-get install (chroot)" chroot "$CHROOT" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
    echo "recipe $RECIPE" >"$CHROOT/.copyq-mcp-ready"
    echo "windows: chroot ready in $((SECONDS - started)) s"
fi
# cargo in the chroot reaches crates.io with the host's CA bundle.
cp /etc/ssl/certs/ca-certificates.crt "$CHROOT/etc/host-ca.crt"

# The sources, mounted where the chroot builds them; /proc for Wine.
mkdir -p "$CHROOT/src/copyq-mcp" "$CHROOT/proc" "$CHROOT/dev"
mountpoint -q "$CHROOT/proc" || mount -t proc proc "$CHROOT/proc"
mountpoint -q "$CHROOT/dev" || mount --bind /dev "$CHROOT/dev"
mountpoint -q "$CHROOT/src/copyq-mcp" || mount --bind "$REPO" "$CHROOT/src/copyq-mcp"
cleanup() {
    [[ -n ${GATEWAY_PID:-} ]] && kill "$GATEWAY_PID" 2>/dev/null || true
    in_chroot /usr/lib/x86_64-linux-gnu/wine/wineserver -k 2>/dev/null || true
    umount "$CHROOT/src/copyq-mcp" 2>/dev/null || true
    rm -f "$INSTALL_LOG" "$INSTALL_LOG.constraints"
}
trap cleanup EXIT

cargo_win() {   # cargo_win SUBCOMMAND STD-CRATES ARGS...
    local sub=$1 std=$2; shift 2
    in_chroot sh -c 'cd /src/copyq-mcp && exec nice -n 10 cargo "$@"' cargo "$sub" --release --locked \
        "-Zbuild-std=$std" --target "$TARGET" "$@"
}

started=$SECONDS
fetch "build copyq-mcp.exe" cargo_win build std,panic_abort --bin copyq-mcp
echo "windows: copyq-mcp.exe built in $((SECONDS - started)) s"
EXE=/var/cache/win-target/$TARGET/release/copyq-mcp.exe

if [[ ${SKIP_UNIT:-0} != 1 ]]; then
    started=$SECONDS
    run "build the unit tests" cargo_win test std,panic_abort,test --lib --no-run
    echo "windows: unit tests built in $((SECONDS - started)) s"
    started=$SECONDS
    # The newest lib test binary (cargo names it copyq_mcp-HASH.exe).
    tests=$(in_chroot sh -c "ls -t /var/cache/win-target/$TARGET/release/deps/copyq_mcp-*.exe | head -1")
    in_chroot wine "$tests" --test-threads=2 | tee "$INSTALL_LOG" | grep -E '^test result|FAILED|panicked' || true
    grep -q '^test result: ok' "$INSTALL_LOG" || { echo "windows: unit tests failed under Wine" >&2; exit 1; }
    echo "windows: unit tests ran under Wine in $((SECONDS - started)) s"
fi

# The .exe as a gateway on loopback: /healthz answers (503 "copyq":"down": no CopyQ for Windows here).
started=$SECONDS
data=/tmp/copyq-mcp-windows-data
in_chroot rm -rf "$data"
in_chroot sh -c "COPYQ_MCP__DATA_DIR='$data' COPYQ_MCP__SERVER__BIND=127.0.0.1:$PORT wine '$EXE' serve" \
    >"$INSTALL_LOG" 2>&1 &
GATEWAY_PID=$!
for _ in $(seq 1 120); do
    body=$(curl -s "http://127.0.0.1:$PORT/healthz" || true)
    [[ -n $body ]] && break
    sleep 0.5
done
[[ -n ${body:-} ]] || { echo "windows: the gateway under Wine never answered /healthz" >&2; cat "$INSTALL_LOG" >&2; exit 1; }
echo "windows: /healthz under Wine after $((SECONDS - started)) s: $body"
