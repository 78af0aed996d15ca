#!/usr/bin/env bash
# The gateway for Windows, built and run here (tests/run.sh's last step): a Debian sid chroot with
# Debian's rustc + rust-src, mingw-w64 and Wine builds copyq-mcp.exe in the release profile (std built
# from source with -Zbuild-std, since no registry carries a Windows std for Debian's rustc), then:
#   1. the lib's unit tests, built as a Windows .exe on the same std and dependencies, run under Wine;
#   2. the .exe under Wine as a gateway on loopback with the CLI backend, `copyq.command` pointing at
#      a stand-in copyq.exe (examples/copyq_stand_in.rs, same target): /healthz, a token issued by
#      the .exe's own CLI, tools/list, and an mcp_write add read back with mcp_read over /mcp;
#   3. the same with the socket backend, answered by a stand-in CopyQ server
#      (examples/copyq_socket_stand_in.rs) on the named pipe the gateway computes for the session;
#   4. install-logon and uninstall-logon against Wine's schtasks.
# Each part prints its time; a table of them closes the run. Root; idempotent: the chroot is built
# once (a marker file holds the recipe), the target dir inside it is kept between runs (both are
# rebuilt from nothing when missing).
#
# One std and one set of dependencies serve both builds: the same -Zbuild-std list for both
# commands, and the first builds the stand-in example beside the .exe, which turns on the
# dev-dependencies' features, so `cargo test --lib` afterwards compiles only the crate.
#
#   tests/windows.sh              all of it
#   SKIP_UNIT=1 tests/windows.sh  without the unit tests
#   WIN_DEBUG=1 tests/windows.sh  the debug profile instead (faster to rebuild while working on it)
#   WIN_LTO=1 tests/windows.sh    the release profile as the manifest has it, fat LTO and one codegen
#                                 unit (by default both are turned off here, see below)
#
# Last, the .exe and deploy/windows/README-windows.txt are zipped into
# target/windows/copyq-mcp-VERSION-windows-x86_64.zip, the Windows artefact (-debug before .zip for
# a WIN_DEBUG build, which is not one to hand out). The unit tests run on the release build too: one
# std and one set of dependencies for both, and the tests run on the code that is shipped.
# The manifest's release profile has fat LTO and one codegen unit (the Linux binary's memory, issue
# 22); here both are off unless WIN_LTO=1, since every executable of the step (the .exe, two
# stand-ins, the unit tests) pays its own serial LTO link: from nothing 15 min 24 s instead of
# 9 min 26 s on the quiet machine, far more under load, for a zip of 8.1 MB instead of 14.4.
#
# Environment: WIN_CHROOT (default /var/cache/copyq-mcp-chroots/win-sid), COPYQ_MCP_DEBIAN_MIRROR,
# WIN_PORT (default 18799; the socket backend's gateway takes the next port).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
source "$HERE/lib/install.sh"
source "$HERE/lib/mirror.sh"
source "$HERE/lib/mcp.sh"

CHROOT=${WIN_CHROOT:-/var/cache/copyq-mcp-chroots/win-sid}
PACKAGES=(rustc cargo rust-src gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 ca-certificates wine64 wine curl)
RECIPE=1
TARGET=x86_64-pc-windows-gnu
STD=std,panic_abort,test
PORT=${WIN_PORT:-18799}
PROFILE=(--release); OUT=/var/cache/win-target/$TARGET/release; SUFFIX=
if [[ ${WIN_DEBUG:-0} == 1 ]]; then
    PROFILE=(); OUT=/var/cache/win-target/$TARGET/debug; SUFFIX=-debug
fi
LTO=(CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16)
[[ ${WIN_LTO:-0} == 1 ]] && LTO=()
# The work dir, under the chroot's /tmp (Wine's Z: drive maps / there, so Z:\tmp\... inside).
WORK=/tmp/copyq-mcp-windows

[[ $(id -u) == 0 ]] || { echo "windows.sh: run as root (debootstrap, chroot, mounts)" >&2; exit 1; }
install_begin windows "/var/lock/copyq-mcp-windows.lock"
apt_install /usr/sbin/debootstrap debootstrap
apt_install /usr/bin/jq jq

TIMES=()
part() {   # part NAME SECONDS: one row of the closing table
    TIMES+=("$(printf '%-34s %5d s' "$1" "$2")")
    echo "windows: $1: $2 s"
}

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
    part "chroot (debootstrap, apt)" $((SECONDS - started))
fi
# cargo in the chroot reaches crates.io with the host's CA bundle.
cp /etc/ssl/certs/ca-certificates.crt "$CHROOT/etc/host-ca.crt"

# The sources, mounted where the chroot builds them; /proc and /dev for Wine.
mkdir -p "$CHROOT/src/copyq-mcp" "$CHROOT/proc" "$CHROOT/dev"
mountpoint -q "$CHROOT/proc" || mount -t proc proc "$CHROOT/proc"
mountpoint -q "$CHROOT/dev" || mount --bind /dev "$CHROOT/dev"
mountpoint -q "$CHROOT/src/copyq-mcp" || mount --bind "$REPO" "$CHROOT/src/copyq-mcp"
cleanup() {
    in_chroot /usr/lib/x86_64-linux-gnu/wine/wineserver -k 2>/dev/null || true
    [[ -n ${GATEWAY_PID:-} ]] && kill "$GATEWAY_PID" 2>/dev/null || true
    [[ -n ${SOCKET_STAND_IN_PID:-} ]] && kill "$SOCKET_STAND_IN_PID" 2>/dev/null || true
    for m in src/copyq-mcp dev proc; do umount "$CHROOT/$m" 2>/dev/null || true; done
    rm -f "$INSTALL_LOG" "$INSTALL_LOG.constraints"
}
trap cleanup EXIT

cargo_win() {   # cargo_win SUBCOMMAND ARGS...
    local sub=$1; shift
    in_chroot "${LTO[@]}" sh -c 'cd /src/copyq-mcp && exec cargo "$@"' cargo "$sub" "${PROFILE[@]}" --locked \
        "-Zbuild-std=$STD" --target "$TARGET" "$@"
}

started=$SECONDS
fetch "build copyq-mcp.exe and the stand-in copyq.exe" \
    cargo_win build --bin copyq-mcp --example copyq_stand_in --example copyq_socket_stand_in
no_warnings() {   # the Windows build stays warning-free, as the Linux one (cargo replays a fresh crate's)
    if grep -E '^warning' "$INSTALL_LOG" >&2; then
        echo "windows: $1 has warnings" >&2
        exit 1
    fi
}
no_warnings "the .exe's build"
part "build copyq-mcp.exe + stand-in" $((SECONDS - started))
EXE=$OUT/copyq-mcp.exe
STAND_IN=$OUT/examples/copyq_stand_in.exe
SOCKET_STAND_IN=$OUT/examples/copyq_socket_stand_in.exe

if [[ ${SKIP_UNIT:-0} != 1 ]]; then
    started=$SECONDS
    run "build the unit tests" cargo_win test --lib --no-run
    # cargo names the test binary: "Executable unittests src/lib.rs (/var/cache/.../copyq_mcp-HASH.exe)".
    tests=$(sed -n 's/^ *Executable unittests src\/lib.rs (\(.*\.exe\))$/\1/p' "$INSTALL_LOG")
    [[ -n $tests ]] || { echo "windows: no unit test binary named in cargo's output" >&2; cat "$INSTALL_LOG" >&2; exit 1; }
    no_warnings "the unit tests' build"
    part "build the unit tests (crate only)" $((SECONDS - started))
    started=$SECONDS
    in_chroot wine "$tests" --test-threads=2 >"$INSTALL_LOG" 2>&1 || true
    grep -E '^test result|FAILED|panicked' "$INSTALL_LOG" || true
    grep -q '^test result: ok' "$INSTALL_LOG" || {
        echo "windows: unit tests failed under Wine" >&2
        tail -n 60 "$INSTALL_LOG" >&2
        exit 1
    }
    part "unit tests under Wine" $((SECONDS - started))
fi

die() { echo "windows: $*" >&2; [[ -f $CHROOT$WORK/gateway.log ]] && tail -n 20 "$CHROOT$WORK/gateway.log" >&2; exit 1; }

# A token, issued by the .exe's own CLI, for the gateways below.
started=$SECONDS
rm -rf "${CHROOT:?}$WORK"
mkdir -p "$CHROOT$WORK"
gateway_env=(COPYQ_MCP__DATA_DIR="Z:$WORK/data" COPYQ_MCP__COPYQ__COMMAND="Z:$STAND_IN"
    COPYQ_STAND_IN_STATE="Z:$WORK/copyq-state.json")
token=$(in_chroot "${gateway_env[@]}" wine "$EXE" token issue --role write --name wine-test 2>"$CHROOT$WORK/token.err") ||
    die "token issue under Wine failed: $(cat "$CHROOT$WORK/token.err")"
token=${token%$'\r'}
[[ -n $token ]] || die "token issue printed nothing"
part "token issue under Wine" $((SECONDS - started))

# serve_and_call BACKEND PORT HEALTH STATE-JQ: the .exe as a gateway on BACKEND at PORT; its
# /healthz must be HEALTH, then tools/list, an add and a list, and the stand-in's state file must
# pass the jq test STATE-JQ.
serve_and_call() {
    local backend=$1 port=$2 want_health=$3 state_check=$4 health= got want
    started=$SECONDS
    in_chroot "${gateway_env[@]}" COPYQ_MCP__COPYQ__BACKEND="$backend" \
        COPYQ_MCP__SERVER__BIND="127.0.0.1:$port" wine "$EXE" serve >"$CHROOT$WORK/gateway.log" 2>&1 &
    GATEWAY_PID=$!
    base=http://127.0.0.1:$port
    for _ in $(seq 1 240); do
        health=$(curl -s "$base/healthz" || true)
        [[ -n $health ]] && break
        sleep 0.25
    done
    [[ $health == "$want_health" ]] || die "/healthz under Wine ($backend): want $want_health, got ${health:-nothing}"
    part "gateway start, /healthz ($backend)" $((SECONDS - started))

    started=$SECONDS
    MCP_HEADERS=$CHROOT$WORK/headers
    mcp_start windows-test
    tools=$(mcp '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | json_of | jq -c '[.result.tools[].name]')
    [[ $tools == '["mcp_read","mcp_write","mcp_validate"]' ]] || die "tools/list under Wine ($backend): $tools"
    got=$(call 3 mcp_write '{"mode":"add","tab":"workspace/wine","text":"written under wine"}')
    want='ok|mode:add|tab:workspace/wine|full_path:mcp/workspace/wine|index:0|text_len:18|tags:0|note:False'
    [[ $got == "$want" ]] || die "mcp_write add through the $backend stand-in: want $want, got $got"
    got=$(call 4 mcp_read '{"mode":"list","tab":"workspace/wine"}')
    want=$'mode:list|tab:workspace/wine|full_path:mcp/workspace/wine|total:1|showing:0-0\n0|"written under wine"|[]'
    [[ $got == "$want" ]] || die "mcp_read list through the $backend stand-in: want $want, got $got"
    # The write is in the stand-in's state: the gateway reached it, not a cache of its own.
    jq -e "$state_check" "$CHROOT$WORK/copyq-state.json" >/dev/null ||
        die "the $backend stand-in's state does not hold the write: $(cat "$CHROOT$WORK/copyq-state.json")"
    part "tools/list, mcp_write, mcp_read ($backend)" $((SECONDS - started))
    kill "$GATEWAY_PID" 2>/dev/null || true
    GATEWAY_PID=
}
call() {   # call ID TOOL ARGS: the tool's text, or die when it is an error
    local reply
    reply=$(mcp_call "$@")
    [[ $(jq -r '.result.isError' <<<"$reply") == false ]] || die "tools/call $2 is an error: $reply"
    jq -r '.result.content[0].text' <<<"$reply"
}

# The CLI backend: the gateway runs the stand-in copyq.exe for each call.
serve_and_call cli "$PORT" '{"backend":"cli","copyq":"up","copyq_version":"17.0.0","status":"ok"}' \
    '.tabs[0].items[0].text == "written under wine"'

# The socket backend: the stand-in CopyQ server listens on the pipe it computes with the gateway's
# own code (from the same environment), and speaks CopyQ's protocol as a Qt 6 CopyQ 17.0 does.
rm -f "$CHROOT$WORK/copyq-state.json"
in_chroot COPYQ_STAND_IN_STATE="Z:$WORK/copyq-state.json" wine "$SOCKET_STAND_IN" \
    >"$CHROOT$WORK/socket-stand-in.log" 2>&1 &
SOCKET_STAND_IN_PID=$!
for _ in $(seq 1 120); do
    grep -q '^listening on' "$CHROOT$WORK/socket-stand-in.log" 2>/dev/null && break
    sleep 0.25
done
grep -q '^listening on' "$CHROOT$WORK/socket-stand-in.log" ||
    die "the socket stand-in did not start: $(cat "$CHROOT$WORK/socket-stand-in.log")"
echo "windows: socket stand-in $(head -n 1 "$CHROOT$WORK/socket-stand-in.log" | tr -d '\r')"
serve_and_call socket $((PORT + 1)) '{"backend":"socket","copyq":"up","protocol":"Qt 6, CopyQ >= 14.0","status":"ok"}' \
    '.tabs == [{"name":"mcp/workspace/wine","items":["written under wine"]}]'
kill "$SOCKET_STAND_IN_PID" 2>/dev/null || true

# The logon task. install-logon runs schtasks with the README's arguments; Wine's schtasks creates a
# task from /XML only (programs/schtasks/schtasks.c refuses /SC), so there the .exe's call must be
# refused by schtasks itself: the error says schtasks ran and failed, not that it was not found.
# uninstall-logon is shown whole: a task registered through Wine's own schtasks /XML is deleted by
# it, and a second run fails as there is nothing left to delete.
started=$SECONDS
logon() {   # logon SUBCOMMAND: its stdout and stderr, one line each, with the exit status
    local rc=0
    # Into a file, not a pipe: services Wine starts meanwhile inherit the output and never close it.
    in_chroot wine "$EXE" "$1" >"$CHROOT$WORK/logon.out" 2>&1 || rc=$?
    # Without Wine's own complaint about the chroot (no XDG_RUNTIME_DIR), from each Wine process.
    printf '%s rc=%s' "$(tr -d '\r' <"$CHROOT$WORK/logon.out" | grep -v XDG_RUNTIME_DIR)" "$rc"
}
got=$(logon install-logon)
want='error: schtasks failed (exit code: 1) rc=1'
[[ $got == "$want" ]] || die "install-logon under Wine: want $want, got $got"
cat >"$CHROOT$WORK/task.xml" <<'XML'
<?xml version="1.0"?>
<Task xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo><Description>copyq-mcp test task</Description></RegistrationInfo>
  <Settings><Enabled>false</Enabled><Hidden>false</Hidden></Settings>
  <Actions><Exec><Command>copyq-mcp.exe</Command></Exec></Actions>
</Task>
XML
in_chroot wine schtasks /Create /XML "Z:$WORK/task.xml" /TN copyq-mcp /F >"$CHROOT$WORK/schtasks.out" 2>&1 ||
    die "Wine's schtasks did not register the test task"
task=$(find "$CHROOT/root/.wine/drive_c/windows/system32" -maxdepth 2 -ipath "*/tasks/copyq-mcp")
[[ -n $task ]] || die "no task file copyq-mcp under Wine's system32/tasks"
got=$(logon uninstall-logon)
want='scheduled task copyq-mcp: removed rc=0'
[[ $got == "$want" ]] || die "uninstall-logon under Wine: want $want, got $got"
[[ ! -e $task ]] || die "uninstall-logon left $task"
got=$(logon uninstall-logon)
want='error: schtasks failed (exit code: 1) rc=1'
[[ $got == "$want" ]] || die "uninstall-logon of no task under Wine: want $want, got $got"
part "install-logon, uninstall-logon" $((SECONDS - started))

# The artefact: the .exe and its README, zipped.
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO/Cargo.toml" | head -n 1)
zip="$REPO/target/windows/copyq-mcp-$version-windows-x86_64$SUFFIX.zip"
mkdir -p "$REPO/target/windows"
rm -f "$zip"
# Without its debug info (the debug .exe is ~500 MB with it).
run "strip the .exe" in_chroot x86_64-w64-mingw32-strip -o "$WORK/copyq-mcp.exe" "$EXE"
run "zip the artefact" zip -j -q "$zip" "$CHROOT$WORK/copyq-mcp.exe" "$REPO/deploy/windows/README-windows.txt"
echo "windows: $zip ($(stat -c %s "$zip") bytes)"

echo "windows: passed; times:"
printf '  %s\n' "${TIMES[@]}"
