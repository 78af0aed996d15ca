# Multi-stage build: the gateway binary on a slim Debian, running as a non-root user. It talks to
# the desktop's CopyQ natively through CopyQ's local socket, mounted in (README, "In a container"),
# so the image needs no CopyQ and no Qt.
#
#   docker build -t copyq-mcp .                     the binary built in the builder image (default)
#   docker build --target prebuilt -t copyq-mcp .   the binary built on the host beforehand
#                                                   (cargo build --release --locked --bin copyq-mcp,
#                                                   on a glibc no newer than the base image's)
#
# Both end in the same runtime stage; only where /usr/local/bin/copyq-mcp comes from differs. The
# base images are build arguments, so a machine without a registry can use locally made ones
# (tests/container/run.sh: --build-arg BASE=localhost/debian:bookworm-slim).
ARG BASE=debian:bookworm-slim
ARG BUILDER=rust:1-bookworm

FROM $BUILDER AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
# jemalloc's settings (.cargo/config.toml) are baked in at build time.
COPY .cargo .cargo
COPY src src
COPY config config
# The manifest names the benchmark target; cargo wants its file present even when not building it.
COPY bench bench
RUN cargo build --release --locked --bin copyq-mcp

# The runtime, without the binary.
FROM $BASE AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 --user-group copyq-mcp
USER copyq-mcp
WORKDIR /home/copyq-mcp
# Inside the container the gateway must listen on all interfaces for a published port: publish it on
# the host's loopback only (-p 127.0.0.1:8765:8765) unless you mean to expose it (then configure TLS,
# or set COPYQ_MCP__SERVER__ALLOW_PLAIN_HTTP=true behind a TLS proxy).
ENV COPYQ_MCP__SERVER__BIND=0.0.0.0:8765 \
    COPYQ_MCP__SERVER__ALLOW_PLAIN_HTTP=true \
    COPYQ_MCP__COPYQ__BACKEND=socket \
    COPYQ_MCP__DATA_DIR=/home/copyq-mcp/data
EXPOSE 8765
VOLUME ["/home/copyq-mcp/data"]
ENTRYPOINT ["copyq-mcp"]
CMD ["serve"]

# --target prebuilt: the host's target/release/copyq-mcp (.dockerignore lets only it into the context).
FROM runtime AS prebuilt
COPY target/release/copyq-mcp /usr/local/bin/copyq-mcp

# The default (last) stage: the binary from the builder stage.
FROM runtime
COPY --from=build /src/target/release/copyq-mcp /usr/local/bin/copyq-mcp
