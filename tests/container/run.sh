#!/usr/bin/env bash
# The container image, for real (issue 10 item 8): build it with podman from a locally made base image,
# run it as its non-root user (uid 1000) with a CopyQ 17.0 (Qt 6) socket mounted in, and check that it
# answers /healthz ("copyq":"up", "backend":"socket") and an authenticated tools/call of mcp_read tree.
#
#   sudo tests/container/run.sh
#
# Run as root (podman rootful, chroot). Idempotent: installs podman and runc if missing; makes the base
# image localhost/debian:bookworm-slim from debootstrap when it does not exist (rootfs tarball cached in
# /var/cache/copyq-mcp-container); builds the image with --target prebuilt from the host's
# target/release/copyq-mcp (no Rust image can be pulled here); cleans up the container, CopyQ and Xvfb
# on exit. Environment:
#   COPYQ_MCP_CONTAINER_CHROOT  the CopyQ chroot (default /var/cache/copyq-mcp-chroots/sid, made by
#                               tests/copyq-versions/chroot.sh build sid DIR; it is mounted, never unmounted)
#   COPYQ_MCP_CONTAINER_PORT    the gateway's port on the host's loopback (default 18765)
#   COPYQ_MCP_CONTAINER_IMAGE   the image tag (default localhost/copyq-mcp:test)
#   COPYQ_MCP_CONTAINER_BUILD   0: do not build, check the existing $COPYQ_MCP_CONTAINER_IMAGE
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHROOT=${COPYQ_MCP_CONTAINER_CHROOT:-/var/cache/copyq-mcp-chroots/sid}
PORT=${COPYQ_MCP_CONTAINER_PORT:-18765}
IMAGE=${COPYQ_MCP_CONTAINER_IMAGE:-localhost/copyq-mcp:test}
BASE=localhost/debian:bookworm-slim
CACHE=/var/cache/copyq-mcp-container
# The host's own Debian mirror (its apt sources), or $COPYQ_MCP_DEBIAN_MIRROR: tests/lib/mirror.sh.
source "$(dirname "$0")/../lib/mirror.sh"
source "$(dirname "$0")/../lib/mcp.sh"
MIRROR=$(debian_mirror)
CHROOT_PATH=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SESSION=ctr$$
UID_IN=1000 # the image's copyq-mcp user; CopyQ runs as this uid too, so the socket is its own
PODMAN=(podman --runtime runc)

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
T0=$(now_ms)
STEP_T=$T0
STEP="podman+runc"
TIMINGS=()
secs() { printf '%d.%03d s' $(($1 / 1000)) $(($1 % 1000)); }
step() { # step NAME: time the step that just ended; the next one is NEXT (for a failure's message)
    local t
    t=$(now_ms)
    TIMINGS+=("$(printf '%-24s %10s' "$1" "$(secs $((t - STEP_T)))")")
    STEP_T=$t
    STEP=${2:-}
}
die() { echo "container/run.sh: FAIL: $*" >&2; exit 1; }
log() { echo "container/run.sh: $*" >&2; }

[[ $(id -u) == 0 ]] || die "run as root (rootful podman, chroot)"

SANDBOX= XVFB_PID= COPYQ_PID= CONTAINER=
AS_USER=() copyq_env=()
cleanup() {
    local rc=$?
    set +e
    if [[ -n $CONTAINER ]]; then
        if ((rc != 0)); then
            echo "--- container log ---" >&2
            podman logs "$CONTAINER" 2>&1 | tail -n 30 >&2
        fi
        "${PODMAN[@]}" rm -f -t 2 "$CONTAINER" >/dev/null 2>&1
    fi
    if [[ -n $COPYQ_PID ]]; then
        timeout 5 "${AS_USER[@]}" "${copyq_env[@]}" copyq exit >/dev/null 2>&1
        kill -- "-$COPYQ_PID" 2>/dev/null
    fi
    [[ -n $XVFB_PID ]] && kill -- "-$XVFB_PID" 2>/dev/null
    sleep 0.3
    [[ -n $COPYQ_PID ]] && kill -9 -- "-$COPYQ_PID" 2>/dev/null
    [[ -n $XVFB_PID ]] && kill -9 -- "-$XVFB_PID" 2>/dev/null
    wait 2>/dev/null
    [[ -n $SANDBOX && -d $SANDBOX ]] && rm -rf --one-file-system "$SANDBOX"
    ((rc == 0)) || step "${STEP:-?} (failed)"
    step cleanup
    echo "--- timings ---" >&2
    printf '%s\n' "${TIMINGS[@]}" >&2
    printf '%-24s %10s\n' total "$(secs $(($(now_ms) - T0)))" >&2
    if ((rc == 0)); then echo "container/run.sh: PASS" >&2; else echo "container/run.sh: FAILED (exit $rc)" >&2; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. podman and runc (crun fails on this machine's cgroups: always --runtime runc).
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
    log "installing podman and runc"
    { apt-get install -y -qq podman runc || { apt-get update -qq && apt-get install -y -qq podman runc; }; } \
        >"$CACHE.apt.log" 2>&1 || die "apt-get install podman runc failed (see $CACHE.apt.log)"
fi
# `--ulimit host` alone is not enough here ("error setting rlimit type 7: operation not permitted"):
# containers.conf's default ulimits (nofile) must go too.
mkdir -p "$CACHE"
if [[ -z ${CONTAINERS_CONF:-} ]]; then
    printf '[containers]\ndefault_ulimits = []\n' >"$CACHE/containers.conf"
    export CONTAINERS_CONF=$CACHE/containers.conf
fi
step "podman+runc" "base image"

# 2. The base image, made from Debian's archive (no registry is reachable).
mkdir -p "$CACHE"
if ! podman image exists "$BASE"; then
    tarball=$CACHE/bookworm-minbase.tar
    if [[ ! -s $tarball ]]; then
        rootfs=$CACHE/rootfs
        if [[ ! -f $rootfs/.copyq-mcp-done ]]; then
            rm -rf --one-file-system "$rootfs"
            log "debootstrap bookworm into $rootfs (log: $CACHE/debootstrap.log)"
            debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
                die "debootstrap failed (see $CACHE/debootstrap.log)"
            # The archive here may be a frozen snapshot past Valid-Until (signatures are still checked).
            echo 'Acquire::Check-Valid-Until "false";' >"$rootfs/etc/apt/apt.conf.d/99copyq-mcp-snapshot"
            rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
            touch "$rootfs/.copyq-mcp-done"
        fi
        # Keep /proc, /dev and /tmp themselves (empty): apt needs /tmp.
        tar -C "$rootfs" --exclude='./proc/*' --exclude='./dev/*' --exclude='./tmp/*' --exclude=./.copyq-mcp-done \
            -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    fi
    log "importing $tarball as $BASE"
    podman import "$tarball" "$BASE" >/dev/null || die "podman import of $tarball failed"
fi
step "base image" "cargo build --release"

# COPYQ_MCP_CONTAINER_BUILD=0 checks $IMAGE as it is (e.g. one built by the default, multi-stage target).
if [[ ${COPYQ_MCP_CONTAINER_BUILD:-1} != 0 ]]; then
    # 3. The binary, built on the host (a no-op when up to date). The host is bookworm like the base.
    if command -v cargo >/dev/null; then
        (cd "$ROOT" && cargo build --release --locked --bin copyq-mcp) >"$CACHE/cargo.log" 2>&1 ||
            die "cargo build --release failed (see $CACHE/cargo.log)"
    fi
    [[ -x $ROOT/target/release/copyq-mcp ]] || die "no $ROOT/target/release/copyq-mcp (and no cargo to build it)"
    step "cargo build --release" "podman build"

    # 4. The image. --isolation chroot: the default OCI isolation fails at the first RUN here.
    # --network host: the runtime stage's apt-get (ca-certificates) needs the package archive.
    # BUILDER points at the local base too, so nothing ever tries to pull rust:1-bookworm (the prebuilt
    # target does not use the build stage).
    podman build --isolation chroot --network host --target prebuilt \
        --build-arg BASE="$BASE" --build-arg BUILDER="$BASE" \
        -t "$IMAGE" -f "$ROOT/Dockerfile" "$ROOT" >"$CACHE/build.log" 2>&1 ||
        { tail -n 20 "$CACHE/build.log" >&2; die "podman build failed (see $CACHE/build.log)"; }
else
    podman image exists "$IMAGE" || die "COPYQ_MCP_CONTAINER_BUILD=0 but there is no image $IMAGE"
    log "checking the existing image $IMAGE (not rebuilt)"
fi
user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
[[ $user == copyq-mcp ]] || die "the image runs as '$user', not copyq-mcp"
step "podman build" "CopyQ 17.0 start"

# 5. A private CopyQ 17.0 and its Xvfb inside the chroot, both as uid 1000: the socket directory
# (0700, owned by CopyQ's user) then belongs to the container's user, as on a desktop where the
# container runs as the desktop user's uid. No chmod of the socket is needed.
[[ -f $CHROOT/.copyq-mcp-ready ]] || die "no CopyQ chroot at $CHROOT (tests/copyq-versions/chroot.sh build sid $CHROOT)"
"$ROOT/tests/copyq-versions/chroot.sh" mount "$CHROOT"
version=$(head -n 1 "$CHROOT/.copyq-mcp-ready")
SANDBOX=$(mktemp -d /tmp/copyq-mcp-container.XXXXXX)
mkdir -p "$SANDBOX"/{config,data,run,cache,gateway}
chmod 0700 "$SANDBOX/run"
chmod 0755 "$SANDBOX"
chown -R "$UID_IN:$UID_IN" "$SANDBOX"
# An array, not a function: `"${AS_USER[@]}" prog &` makes $! the program itself (chroot and env exec),
# and setsid makes it a process group, so cleanup can end it with everything it started.
AS_USER=(chroot --userspec="$UID_IN:$UID_IN" "$CHROOT" /usr/bin/env -i "$CHROOT_PATH" LC_ALL=C.UTF-8 HOME="$SANDBOX")
as_user() { "${AS_USER[@]}" "$@"; }
setsid "${AS_USER[@]}" Xvfb -displayfd 1 -screen 0 1024x768x24 -nolisten tcp >"$SANDBOX/display" 2>"$SANDBOX/xvfb.log" &
XVFB_PID=$!
for _ in $(seq 50); do grep -q '[0-9]' "$SANDBOX/display" 2>/dev/null && break; sleep 0.1; done
display=:$(tr -dc 0-9 <"$SANDBOX/display")
[[ $display != : ]] || die "Xvfb in $CHROOT did not report a display: $(tail -n 3 "$SANDBOX/xvfb.log")"
copyq_env=(DISPLAY="$display" QT_QPA_PLATFORM=xcb COPYQ_SESSION_NAME="$SESSION"
    COPYQ_SETTINGS_PATH="$SANDBOX/config" XDG_DATA_HOME="$SANDBOX/data"
    XDG_RUNTIME_DIR="$SANDBOX/run" XDG_CACHE_HOME="$SANDBOX/cache")
setsid "${AS_USER[@]}" "${copyq_env[@]}" copyq >"$SANDBOX/copyq.log" 2>&1 &
COPYQ_PID=$!
socket=$SANDBOX/config/copyq-$SESSION/.copyq-${SESSION}_s
for _ in $(seq 100); do [[ -S $socket ]] && break; sleep 0.1; done
[[ -S $socket ]] || die "CopyQ ($version) made no socket at $socket: $(tail -n 5 "$SANDBOX/copyq.log")"
as_user "${copyq_env[@]}" copyq eval -- 'tab("mcp/container"); add("from the container test")' >/dev/null ||
    die "copyq eval in $CHROOT failed"
log "$version serving $socket as uid $UID_IN on $display"
step "CopyQ 17.0 start" "token issue"

# 6. A token, issued by the image itself into the gateway's data dir, then the gateway.
run_image() {
    "${PODMAN[@]}" run --ulimit host --network host \
        -v "$SANDBOX/gateway:/home/copyq-mcp/data" \
        -v "$SANDBOX/config:/home/copyq-mcp/.config/copyq" \
        -e COPYQ_MCP__COPYQ__SESSION="$SESSION" \
        -e COPYQ_MCP__COPYQ__SETTINGS_PATH=/home/copyq-mcp/.config/copyq \
        -e COPYQ_MCP__SERVER__BIND="127.0.0.1:$PORT" \
        "$@"
}
token=$(run_image --rm "$IMAGE" token issue --role read --name container-test 2>"$SANDBOX/token.err") ||
    die "token issue in the container failed: $(cat "$SANDBOX/token.err")"
[[ -n $token ]] || die "token issue printed nothing"
step "token issue" "container start"
CONTAINER=copyq-mcp-test-$$
run_image -d --rm --name "$CONTAINER" "$IMAGE" >/dev/null || die "podman run of $IMAGE failed"
uid_seen=$("${PODMAN[@]}" exec "$CONTAINER" id -u 2>/dev/null || echo "?")
[[ $uid_seen == "$UID_IN" ]] || die "the container's process runs as uid $uid_seen, not $UID_IN"
base=http://127.0.0.1:$PORT
for _ in $(seq 100); do curl -s -o /dev/null "$base/healthz" && break; sleep 0.1; done
step "container start" "checks"

# 7. The checks.
health=$(curl -sS --fail "$base/healthz") || die "GET /healthz did not answer 200: $health"
log "/healthz: $health"
[[ $(jq -r .copyq <<<"$health") == up ]] || die "/healthz does not say \"copyq\":\"up\": $health"
[[ $(jq -r .backend <<<"$health") == socket ]] || die "/healthz does not say \"backend\":\"socket\": $health"

MCP_HEADERS=$SANDBOX/headers
mcp_start container-test
reply=$(mcp_call 2 mcp_read '{"mode":"tree"}')
jq -e '.result.content[0].text' >/dev/null <<<"$reply" || die "tools/call mcp_read returned no result: $reply"
[[ $(jq -r '.result.isError // false' <<<"$reply") == false ]] || die "tools/call mcp_read is an error: $reply"
text=$(jq -r '.result.content[0].text' <<<"$reply")
grep -q container <<<"$text" || die "mcp_read tree does not show the seeded tab mcp/container: $text"
log "tools/call mcp_read tree: $(head -c 300 <<<"$text")"
step "checks"
