#!/usr/bin/env bash
# Installs what the real-browser tests (tests/browser.rs, tests/browser/*.py) need:
#
#   /usr/bin/chromium                 Debian's `chromium` (apt-get), only when missing
#   $CLIENTS_DIR/browser/             Python venv with PyPI `playwright` (pinned below)
#                                     (browser/bin/python)
#
# Playwright drives the system Chromium through `executable_path`; nothing here ever runs
# `playwright install` (no browser build can be downloaded on these machines).
#
# Idempotent: the venv holds a stamp naming its pinned versions and is skipped when the stamp
# matches, so a warm run takes well under a second. Quiet on success; on failure the failing
# step and its output are printed and the script exits non-zero.
#
# Env:  CLIENTS_DIR  install root (default <repo>/target/clients)
#       PYTHON       interpreter for the venv (default python3; needs >= 3.9)
#       FORCE=1      reinstall the venv
set -euo pipefail

# ---- pinned versions (seen working together with Debian's chromium 156) -------
PLAYWRIGHT_VERSION=1.65.2
# Its one dependency, frozen from a working install.
PY_CONSTRAINTS="
greenlet==3.5.6
"
# -----------------------------------------------------------------------------

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
CLIENTS_DIR="${CLIENTS_DIR:-$repo/target/clients}"
PYTHON="${PYTHON:-python3}"
FORCE="${FORCE:-0}"

mkdir -p "$CLIENTS_DIR"
CLIENTS_DIR="$(cd "$CLIENTS_DIR" && pwd)"
log="$(mktemp)"
trap 'rm -f "$log" "$log.constraints"' EXIT
# Serialize concurrent runs (e.g. several tests calling this at once); its own lock, so that it
# never waits for tests/clients/install.sh.
exec 9>"$CLIENTS_DIR/.browser-install.lock"
flock 9

# run DESC CMD...: run quietly; on failure dump the output and die.
run() {
    local desc="$1"; shift
    if ! "$@" >"$log" 2>&1; then
        echo "tests/browser/install.sh: FAILED: $desc" >&2
        echo "tests/browser/install.sh: command: $*" >&2
        cat "$log" >&2
        exit 1
    fi
}

# ---- Chromium (Debian) --------------------------------------------------------
if [[ ! -x /usr/bin/chromium ]]; then
    if [[ "$(id -u)" != 0 ]]; then
        echo "tests/browser/install.sh: /usr/bin/chromium is missing; run as root or: apt-get install -y chromium" >&2
        exit 1
    fi
    run "apt-get update" apt-get update -q
    run "apt-get install chromium" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
fi
run "chromium runs (/usr/bin/chromium --version)" /usr/bin/chromium --version

# ---- Python venv with playwright ---------------------------------------------
py_tag="$("$PYTHON" -c 'import sys; print("py%d.%d" % sys.version_info[:2]); sys.exit(sys.version_info < (3, 9))')" || {
    echo "tests/browser/install.sh: $PYTHON is missing or older than 3.9 (set PYTHON=)" >&2; exit 1; }
constraints_sum="$(printf '%s' "$PY_CONSTRAINTS" | md5sum | cut -c1-12)"
dir="$CLIENTS_DIR/browser"
stamp="playwright==$PLAYWRIGHT_VERSION $py_tag constraints:$constraints_sum"
if [[ "$FORCE" == 1 || ! -f "$dir/.stamp" || "$(cat "$dir/.stamp")" != "$stamp" || ! -x "$dir/bin/python" ]] \
   || ! compgen -G "$dir/lib/python*/site-packages/playwright/__init__.py" >/dev/null; then
    rm -rf "$dir"
    run "create venv $dir" "$PYTHON" -m venv "$dir"
    printf '%s\n' "$PY_CONSTRAINTS" >"$log.constraints"
    run "pip install playwright==$PLAYWRIGHT_VERSION into $dir" \
        "$dir/bin/python" -m pip install --disable-pip-version-check --no-input -q \
            -c "$log.constraints" "playwright==$PLAYWRIGHT_VERSION"
    # Launch the system Chromium once: proves the driver and the browser speak to each other.
    run "playwright launches /usr/bin/chromium" "$dir/bin/python" -c '
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    pg = b.new_page(); pg.set_content("<p>ok</p>"); assert pg.inner_text("p") == "ok"
    b.close()
'
    echo "$stamp" >"$dir/.stamp"
fi
