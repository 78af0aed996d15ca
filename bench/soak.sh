#!/usr/bin/env bash
# The soak (tests/soak.rs) for 60 s: 64 clients reading and writing through the real binary while
# CopyQ and then the gateway are SIGKILLed and restarted. Prints its figures and keeps them in
# bench/soak.json (calls/s, p50/p99 read and write latency, errors by kind, memory).
set -euo pipefail
cd "$(dirname "$0")/.."
COPYQ_MCP_SOAK_SECS="${COPYQ_MCP_SOAK_SECS:-60}" cargo test --release --locked --test soak -- --nocapture >/dev/null
cp target/soak.json bench/soak.json
cat bench/soak.json
