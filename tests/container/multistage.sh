#!/usr/bin/env bash
# The Dockerfile's default, multi-stage target built here, where rust:1-bookworm cannot be pulled: a
# stand-in builder image (the local debootstrapped base + gcc + this machine's Rust toolchain and
# cargo registry cache, building offline), then the image, then tests/container/run.sh's checks on it.
# Run as root after tests/container/run.sh has made localhost/debian:bookworm-slim. About 6 minutes on
# 2 cores (the release build), so CI runs only the prebuilt target (tests/container/run.sh).
# Each run leaves the build stage as an untagged image (about 2.7 GB): `podman image prune` ends it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=localhost/debian:bookworm-slim
BUILDER=localhost/rust-builder:local
IMAGE=localhost/copyq-mcp:multistage
podman image exists "$BASE" || { echo "multistage.sh: no $BASE: run tests/container/run.sh first" >&2; exit 1; }
started=$SECONDS
ctx=$(mktemp -d /var/tmp/copyq-mcp-builder.XXXXXX)
trap 'rm -rf --one-file-system "$ctx"' EXIT
sysroot=$(rustc --print sysroot)
# Hard links (same file system) or copies: the build context must hold the toolchain and crates.
cp -al "$sysroot" "$ctx/toolchain" 2>/dev/null || cp -a "$sysroot" "$ctx/toolchain"
cp -al "${CARGO_HOME:-$HOME/.cargo}/registry" "$ctx/registry" 2>/dev/null ||
    cp -a "${CARGO_HOME:-$HOME/.cargo}/registry" "$ctx/registry"
cat >"$ctx/Containerfile" <<EOC
FROM $BASE
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev make && rm -rf /var/lib/apt/lists/*
COPY toolchain /usr/local/rust
COPY registry /usr/local/cargo/registry
ENV PATH=/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CARGO_HOME=/usr/local/cargo CARGO_NET_OFFLINE=true
EOC
podman build --isolation chroot --network host -t "$BUILDER" "$ctx"
echo "multistage.sh: builder image in $((SECONDS - started)) s" >&2
started=$SECONDS
podman build --isolation chroot --network host --build-arg BASE="$BASE" --build-arg BUILDER="$BUILDER" \
    -t "$IMAGE" "$ROOT"
echo "multistage.sh: multi-stage image in $((SECONDS - started)) s" >&2
COPYQ_MCP_CONTAINER_BUILD=0 COPYQ_MCP_CONTAINER_IMAGE=$IMAGE "$ROOT/tests/container/run.sh"
