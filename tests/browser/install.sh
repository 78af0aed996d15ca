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

mkdir -p "$CLIENTS_DIR"
CLIENTS_DIR="$(cd "$CLIENTS_DIR" && pwd)"
# shellcheck source=../lib/install.sh
source "$repo/tests/lib/install.sh"
# Serialize concurrent runs (e.g. several tests calling this at once); its own lock, so that it
# never waits for tests/clients/install.sh.
install_begin tests/browser/install.sh "$CLIENTS_DIR/.browser-install.lock"

# ---- Chromium (Debian) --------------------------------------------------------
apt_install /usr/bin/chromium chromium fonts-liberation fonts-dejavu-core
run "chromium runs (/usr/bin/chromium --version)" /usr/bin/chromium --version

# ---- Python venv with playwright ---------------------------------------------
py_tag="$(python_tag 3.9)" || exit 1
# Launching the system Chromium once proves the driver and the browser speak to each other.
py_venv "$CLIENTS_DIR/browser" \
    "playwright==$PLAYWRIGHT_VERSION $py_tag constraints:$(constraints_sum)" \
    "playwright==$PLAYWRIGHT_VERSION" playwright '
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    pg = b.new_page(); pg.set_content("<p>ok</p>"); assert pg.inner_text("p") == "ok"
    b.close()
'
