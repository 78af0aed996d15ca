#!/usr/bin/env bash
# The suites of the HTTP edge run with no CopyQ (tests/support/edge.rs), and this keeps them so (run
# by tests/run.sh before the main step): it runs exactly those tests with `copyq` and `Xvfb` on the
# PATH replaced by scripts that fail at once, and no display, so a test that starts a private CopyQ
# again fails here ("cannot start a private CopyQ"). A new test in these suites that needs CopyQ
# joins the skips below, on purpose. Extra arguments go to `cargo test` (e.g. --locked).
set -euo pipefail
cd "$(dirname "$0")/../.."

fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
for tool in copyq Xvfb; do
    printf '#!/bin/sh\necho "edge_guard.sh: %s was run; this suite must not need CopyQ" >&2\nexit 1\n' \
        "$tool" >"$fake/$tool"
    chmod +x "$fake/$tool"
done

# Both binaries built first, with the normal PATH: the fakes only face the tests.
cargo test "$@" --test oauth --test gateway --no-run
guarded() {
    env -u DISPLAY -u COPYQ_MCP_TEST_CHROOT PATH="$fake:$PATH" cargo test "$@"
}
# --test oauth but for scopes::, whose tokens read tabs through the tools.
guarded "$@" --test oauth -- --skip scopes::
# --test gateway's edge suites, but for the two tests that assert what CopyQ holds or count its
# processes.
guarded "$@" --test gateway -- auth:: hardening:: tls:: idle:: \
    --skip auth::session_mode_serves_session_clients \
    --skip hardening::health_checks_share_one_probe_and_are_limited_per_address
