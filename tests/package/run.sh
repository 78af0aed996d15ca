#!/usr/bin/env bash
# The Debian package, for real (issue 19 item 7): build it (deploy/deb/build.sh), check what it holds,
# install it with dpkg in the Debian 13 chroot (CopyQ 10.0), then, as a person would after
# `apt install ./copyq-mcp_*.deb`: `copyq-mcp doctor` with the default config file
# (~/.config/copyq-mcp/config.toml, no flags), a token issued with no flags, the gateway started with
# no flags, and a tools/call of mcp_read against that chroot's CopyQ. Removes the package at the end,
# so the chroot the version matrix uses stays as it was.
#
#   sudo tests/package/run.sh [CHROOT]      (default /var/cache/copyq-mcp-chroots/trixie)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHROOT=${1:-${COPYQ_MCP_PACKAGE_CHROOT:-/var/cache/copyq-mcp-chroots/trixie}}
PORT=${COPYQ_MCP_PACKAGE_PORT:-18766}
CHROOT_PATH=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SESSION=pkg$$

die() { echo "package/run.sh: FAIL: $*" >&2; exit 1; }
log() { echo "package/run.sh: $*" >&2; }
[[ $(id -u) == 0 ]] || die "run as root (dpkg in a chroot)"
[[ -f $CHROOT/.copyq-mcp-ready ]] || die "no CopyQ chroot at $CHROOT (tests/copyq-versions/chroot.sh build trixie $CHROOT)"

SANDBOX= XVFB_PID= COPYQ_PID= GATEWAY_PID= INSTALLED=
cleanup() {
    local rc=$?
    set +e
    [[ -n $GATEWAY_PID ]] && kill "$GATEWAY_PID" 2>/dev/null
    if [[ -n $COPYQ_PID ]]; then
        timeout 5 "${IN[@]}" "${copyq_env[@]}" copyq exit >/dev/null 2>&1
        kill -- "-$COPYQ_PID" 2>/dev/null
    fi
    [[ -n $XVFB_PID ]] && kill -- "-$XVFB_PID" 2>/dev/null
    sleep 0.3
    [[ -n $COPYQ_PID ]] && kill -9 -- "-$COPYQ_PID" 2>/dev/null
    [[ -n $XVFB_PID ]] && kill -9 -- "-$XVFB_PID" 2>/dev/null
    wait 2>/dev/null
    if ((rc != 0)) && [[ -n $SANDBOX ]]; then
        for f in doctor.out gateway.log copyq.log; do
            [[ -s $SANDBOX/$f ]] && { echo "--- $f ---" >&2; tail -n 30 "$SANDBOX/$f" >&2; }
        done
    fi
    [[ -n $INSTALLED ]] && "${IN[@]}" dpkg --purge copyq-mcp >/dev/null 2>&1
    [[ -n $SANDBOX && -d $SANDBOX ]] && rm -rf --one-file-system "$SANDBOX"
    if ((rc == 0)); then echo "package/run.sh: PASS" >&2; else echo "package/run.sh: FAILED (exit $rc)" >&2; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. The package.
deb=$(bash "$ROOT/deploy/deb/build.sh") || die "deploy/deb/build.sh failed"
[[ -f $deb ]] || die "build.sh named no .deb: '$deb'"
log "built $deb ($(stat -c %s "$deb") bytes)"
contents=$(dpkg-deb --contents "$deb")
for path in ./usr/bin/copyq-mcp ./usr/share/man/man1/copyq-mcp.1.gz \
    ./usr/share/bash-completion/completions/copyq-mcp ./usr/share/zsh/vendor-completions/_copyq-mcp \
    ./usr/share/fish/vendor_completions.d/copyq-mcp.fish ./usr/lib/systemd/user/copyq-mcp.service \
    ./usr/share/doc/copyq-mcp/config.toml; do
    grep -q " $path\$" <<<"$contents" || die "the package lacks $path"
done
depends=$(dpkg-deb --field "$deb" Depends)
grep -q libc6 <<<"$depends" || die "Depends does not name libc6: '$depends'"

# 2. Installed in the chroot with dpkg, as `apt install ./copyq-mcp.deb` would.
"$ROOT/tests/copyq-versions/chroot.sh" mount "$CHROOT"
SANDBOX=$(mktemp -d /tmp/copyq-mcp-package.XXXXXX)
chmod 0755 "$SANDBOX"
cp "$deb" "$SANDBOX/copyq-mcp.deb"
IN=(chroot "$CHROOT" /usr/bin/env -i "$CHROOT_PATH" LC_ALL=C.UTF-8 HOME="$SANDBOX/home")
"${IN[@]}" dpkg -i "$SANDBOX/copyq-mcp.deb" >"$SANDBOX/dpkg.log" 2>&1 || die "dpkg -i failed: $(tail -n 5 "$SANDBOX/dpkg.log")"
INSTALLED=1
"${IN[@]}" copyq-mcp --version >/dev/null || die "copyq-mcp --version fails in the chroot"
"${IN[@]}" sh -c 'zcat /usr/share/man/man1/copyq-mcp.1.gz | grep -q "^\.TH"' || die "the man page is not a man page"
"${IN[@]}" bash -c 'source /usr/share/bash-completion/completions/copyq-mcp && complete -p copyq-mcp' >/dev/null ||
    die "the bash completion does not register for copyq-mcp"
grep -q '^ExecStart=/usr/bin/copyq-mcp serve$' "$CHROOT/usr/lib/systemd/user/copyq-mcp.service" ||
    die "the systemd user unit does not start /usr/bin/copyq-mcp serve"

# 3. The chroot's CopyQ, in a private session.
mkdir -p "$SANDBOX"/{home,config,data,run,cache}
chmod 0700 "$SANDBOX/run" "$SANDBOX/home"
setsid "${IN[@]}" Xvfb -displayfd 1 -screen 0 1024x768x24 -nolisten tcp >"$SANDBOX/display" 2>"$SANDBOX/xvfb.log" &
XVFB_PID=$!
for _ in $(seq 50); do grep -q '[0-9]' "$SANDBOX/display" 2>/dev/null && break; sleep 0.1; done
display=:$(tr -dc 0-9 <"$SANDBOX/display")
[[ $display != : ]] || die "Xvfb did not report a display: $(tail -n 3 "$SANDBOX/xvfb.log")"
copyq_env=(DISPLAY="$display" QT_QPA_PLATFORM=xcb COPYQ_SESSION_NAME="$SESSION"
    COPYQ_SETTINGS_PATH="$SANDBOX/config" XDG_DATA_HOME="$SANDBOX/data"
    XDG_RUNTIME_DIR="$SANDBOX/run" XDG_CACHE_HOME="$SANDBOX/cache")
setsid "${IN[@]}" "${copyq_env[@]}" copyq >"$SANDBOX/copyq.log" 2>&1 &
COPYQ_PID=$!
socket=$SANDBOX/config/copyq-$SESSION/.copyq-${SESSION}_s
for _ in $(seq 100); do [[ -S $socket ]] && break; sleep 0.1; done
[[ -S $socket ]] || die "CopyQ made no socket at $socket: $(tail -n 5 "$SANDBOX/copyq.log")"
"${IN[@]}" "${copyq_env[@]}" copyq eval -- 'tab("mcp/info"); add("installed from the package")' >/dev/null ||
    die "copyq eval in $CHROOT failed"

# 4. The person's config, at the natural place, and every command with no flags.
mkdir -p "$SANDBOX/home/.config/copyq-mcp"
cat >"$SANDBOX/home/.config/copyq-mcp/config.toml" <<TOML
[server]
bind = "127.0.0.1:$PORT"
[copyq]
session = "$SESSION"
settings_path = "$SANDBOX/config"
TOML
# The gateway's own state goes to ~/.local/share/copyq-mcp (XDG default under HOME).
USER_ENV=(XDG_RUNTIME_DIR="$SANDBOX/run")
set +e
"${IN[@]}" "${USER_ENV[@]}" copyq-mcp doctor --json >"$SANDBOX/doctor.json" 2>"$SANDBOX/doctor.err"
doctor_rc=$?
"${IN[@]}" "${USER_ENV[@]}" copyq-mcp doctor >"$SANDBOX/doctor.out" 2>&1
set -e
log "doctor (exit $doctor_rc): $(tr '\n' ' ' <"$SANDBOX/doctor.out" | head -c 600)"
((doctor_rc == 0)) || die "doctor found a problem in a working setup (exit $doctor_rc)"
python3 - "$SANDBOX/doctor.json" "$SANDBOX/home/.config/copyq-mcp/config.toml" "$SANDBOX/config/copyq-$SESSION" <<'PY' ||
import json, sys
report = json.load(open(sys.argv[1]))
checks = {c["check"]: c for c in report["checks"]}
assert report["ok"] is True and report["problems"] == 0, report
assert sys.argv[2] in checks["config"]["detail"], f"doctor did not read the default config: {checks['config']}"
assert checks["copyq"]["status"] == "ok", f"CopyQ is not ok: {checks['copyq']}"
assert "CopyQ 10." in checks["copyq"]["detail"], f"doctor does not name the chroot's CopyQ 10: {checks['copyq']}"
assert sys.argv[3] in json.dumps(report["checks"]), "doctor does not name the CopyQ socket dir it used"
PY
    die "doctor's report is not what an installed, working setup gives: $(cat "$SANDBOX/doctor.json")"
token=$("${IN[@]}" "${USER_ENV[@]}" copyq-mcp token issue --role read --name package-test 2>"$SANDBOX/token.err") ||
    die "token issue failed: $(cat "$SANDBOX/token.err")"
grep -q "$SANDBOX/home/.local/share/copyq-mcp" "$SANDBOX/token.err" ||
    die "token issue did not say which data dir it used: $(cat "$SANDBOX/token.err")"
setsid "${IN[@]}" "${USER_ENV[@]}" copyq-mcp serve >"$SANDBOX/gateway.log" 2>&1 &
GATEWAY_PID=$!
base=http://127.0.0.1:$PORT
for _ in $(seq 100); do curl -s -o /dev/null "$base/healthz" && break; sleep 0.1; done
health=$(curl -sS --fail "$base/healthz") || die "GET /healthz did not answer 200: $health"
reply=$(curl -sS --fail -H "authorization: Bearer $token" -H "content-type: application/json" \
    -H "accept: application/json, text/event-stream" \
    --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_read","arguments":{"mode":"list","tab":"info"}}}' \
    "$base/mcp") || die "tools/call failed: $reply"
text=$(sed -n 's/^data: //p; /^{/p' <<<"$reply" | head -n 1 | jq -r '.result.content[0].text')
expected=$'mode:list|tab:info|full_path:mcp/info|total:1|showing:0-0\n0|"installed from the package"|[]'
[[ $text == "$expected" ]] || die "mcp_read list gave: $text"
log "tools/call through the installed package: ok"
