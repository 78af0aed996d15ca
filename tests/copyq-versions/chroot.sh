#!/usr/bin/env bash
# Debian chroots holding other CopyQ versions than the host's, for the version matrix (tests/run.sh).
#
#   chroot.sh build SUITE DIR   debootstrap SUITE into DIR (if not built yet) and install copyq, xvfb
#                               and xauth in it; SUITE is bookworm-backports (9.0), trixie (10.0) or
#                               sid (17.0). Leaves DIR mounted (see mount).
#   chroot.sh mount DIR         bind-mount /proc, /dev, /dev/pts, /dev/shm and /tmp into DIR at the
#                               same paths, so temp dirs, the X socket and CopyQ's socket have one path
#                               inside and outside. Idempotent.
#   chroot.sh umount DIR        undo mount (innermost first, lazily only as a last resort).
#   chroot.sh delete DIR        umount, check nothing is mounted below DIR, then remove it.
#   chroot.sh version DIR       print the chroot's `copyq --version` first line.
#
# A chroot that cannot be built fails with a message naming it. A finished chroot has DIR/.copyq-mcp-ready
# (holding the CopyQ version), so a second build of the same DIR only mounts it.
set -euo pipefail

# The host's own Debian mirror (its apt sources), or $COPYQ_MCP_DEBIAN_MIRROR: tests/lib/mirror.sh.
source "$(dirname "$0")/../lib/mirror.sh"
MIRROR=$(debian_mirror)
MOUNTS=(proc dev dev/pts dev/shm tmp)
# What a chroot holds; bump RECIPE when it changes, and the next build installs what is missing.
# copyq-plugins matters: without any plugin CopyQ never applies item_data_threshold, so no format
# is ever kept in a file (DataFile) - unlike every desktop install, which has the plugins.
PACKAGES=(copyq copyq-plugins xvfb xauth)
RECIPE=2
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() { echo "chroot.sh: $*" >&2; exit 1; }

mounted() { mountpoint -q "$1"; }

do_mount() {
    local dir=$1 m
    [[ -d $dir/usr ]] || die "$dir is not a chroot"
    for m in "${MOUNTS[@]}"; do
        mkdir -p "$dir/$m"
        mounted "$dir/$m" || mount --bind "/$m" "$dir/$m"
    done
}

do_umount() {
    local dir=$1 i m
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        m=$dir/${MOUNTS[i]}
        if mounted "$m"; then
            umount "$m" 2>/dev/null || umount --lazy "$m"
        fi
    done
}

in_chroot() {
    local dir=$1
    shift
    DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 chroot "$dir" /usr/bin/env PATH="$CHROOT_PATH" "$@"
}

build() {
    local suite=$1 dir=$2 base=$1 target=() started=$SECONDS
    if [[ -f $dir/.copyq-mcp-ready ]] && grep -qx "recipe $RECIPE" "$dir/.copyq-mcp-ready"; then
        do_mount "$dir"
        return
    fi
    case $suite in
        bookworm-backports) base=bookworm target=(-t bookworm-backports) ;;
        trixie | sid) ;;
        *) die "unknown suite $suite (bookworm-backports, trixie or sid)" ;;
    esac
    # On a fresh machine the package lists may not have been fetched yet.
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; } ||
        die "cannot install debootstrap (apt-get install debootstrap failed)"
    local log=$dir.log
    if [[ -f $dir/.copyq-mcp-ready ]]; then
        echo "chroot.sh: updating $suite in $dir to recipe $RECIPE (log: $log)" >&2
        install_packages "$suite" "$dir" "$log" "${target[@]}"
        return
    fi
    # A half-built chroot from an earlier failed run is started afresh.
    if [[ -e $dir ]]; then do_delete "$dir"; fi
    mkdir -p "$(dirname "$dir")"
    echo "chroot.sh: building $suite in $dir (log: $log)" >&2
    if ! debootstrap --variant=minbase "$base" "$dir" "$MIRROR" >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        do_umount "$dir"
        die "the $suite chroot could not be built: debootstrap failed (see $log)"
    fi
    # The archive this machine reaches serves a frozen snapshot: sid's Release file is past its
    # Valid-Until date, which apt refuses by default. Signatures are still checked.
    echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99copyq-mcp-snapshot"
    if [[ $suite == bookworm-backports ]]; then
        echo "deb $MIRROR bookworm-backports main" >"$dir/etc/apt/sources.list.d/backports.list"
    fi
    install_packages "$suite" "$dir" "$log" "${target[@]}"
    echo "chroot.sh: built in $((SECONDS - started)) s" >&2
}

install_packages() {
    local suite=$1 dir=$2 log=$3
    shift 3
    do_mount "$dir"
    if ! { in_chroot "$dir" apt-get update -qq &&
        in_chroot "$dir" apt-get install -y -qq --no-install-recommends "$@" "${PACKAGES[@]}" &&
        in_chroot "$dir" apt-get clean; } >>"$log" 2>&1; then
        tail -n 20 "$log" >&2
        die "the $suite chroot could not be built: installing ${PACKAGES[*]} failed (see $log)"
    fi
    local version
    version=$(version "$dir") || die "the $suite chroot could not be built: its copyq does not run"
    printf '%s\nrecipe %s\n' "$version" "$RECIPE" >"$dir/.copyq-mcp-ready"
    echo "chroot.sh: $suite ready in $dir: $version" >&2
}

version() {
    local dir=$1
    in_chroot "$dir" copyq --version 2>/dev/null | head -n 1 | grep . || return 1
}

do_delete() {
    local dir=$1
    do_umount "$dir"
    if findmnt -rn -o TARGET | grep -q "^$(realpath "$dir")/"; then
        die "refusing to delete $dir: something is still mounted below it"
    fi
    rm -rf --one-file-system "$dir"
}

cmd=${1:-}
case $cmd in
    build) (($# == 3)) || die "usage: chroot.sh build SUITE DIR"; build "$2" "$3" ;;
    mount) (($# == 2)) || die "usage: chroot.sh mount DIR"; do_mount "$2" ;;
    umount) (($# == 2)) || die "usage: chroot.sh umount DIR"; do_umount "$2" ;;
    delete) (($# == 2)) || die "usage: chroot.sh delete DIR"; do_delete "$2" ;;
    version) (($# == 2)) || die "usage: chroot.sh version DIR"; version "$2" ;;
    *) die "usage: chroot.sh build SUITE DIR | mount DIR | umount DIR | delete DIR | version DIR" ;;
esac
