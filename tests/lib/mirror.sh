# Sourced by the scripts that debootstrap (tests/copyq-versions/chroot.sh, tests/container/run.sh):
# debian_mirror prints the Debian mirror to use. $COPYQ_MCP_DEBIAN_MIRROR when set, else the first
# URI serving Debian's main archive (a Debian suite, not -security) in the host's own apt sources
# (deb822 *.sources and one-line *.list), so a machine behind its own mirror uses it; Debian's
# public mirror only when the host names none.
debian_mirror() {
    if [[ -n ${COPYQ_MCP_DEBIAN_MIRROR:-} ]]; then
        echo "$COPYQ_MCP_DEBIAN_MIRROR"
        return
    fi
    local found
    # Debian's own suites (not -security, which lives elsewhere; not a third party's "nodistro").
    local suites='^(buster|bullseye|bookworm|trixie|forky|duke|sid|oldstable|stable|testing|unstable)(-updates|-backports)?$'
    found=$(
        shopt -s nullglob
        local etc=${COPYQ_MCP_APT_ETC:-/etc/apt}
        for f in "$etc"/sources.list "$etc"/sources.list.d/*.list; do
            [[ -f $f ]] || continue
            awk -v debian="$suites" '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($(i+1) ~ debian) print $i; break } }' "$f"
        done
        for f in "$etc"/sources.list.d/*.sources; do
            # One stanza per paragraph: its first URI when its first suite is Debian's, and only
            # stanzas signed by Debian's archive keyring (or naming no keyring).
            awk -v debian="$suites" 'BEGIN { RS = ""; FS = "\n" }
                 /Signed-By: *\/usr\/share\/keyrings\/debian-archive-keyring/ || !/Signed-By:/ {
                     uris = ""; suite = ""
                     for (i = 1; i <= NF; i++) {
                         if ($i ~ /^URIs:/) { uris = $i; sub(/^URIs: */, "", uris) }
                         if ($i ~ /^Suites:/) { suite = $i; sub(/^Suites: */, "", suite); sub(/ .*/, "", suite) }
                     }
                     if (uris != "" && suite ~ debian) { split(uris, u, " "); print u[1] }
                 }' "$f"
        done
    )
    found=$(head -n 1 <<<"$found")
    echo "${found:-http://deb.debian.org/debian}"
}
