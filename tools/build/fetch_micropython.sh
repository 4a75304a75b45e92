#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Puts the MicroPython 1.25.0 source tree at $1 (normally build/micropython-1.25.0),
# checked against a pinned SHA-256. Sources, in order:
#   1. MICROPY_DIR=/path given by the user: used in place (--check), its content pinned;
#   2. Debian's source package micropython 1.25.0+ds-1 (suite trixie), fetched with
#      `apt-get source --download-only` through a private apt configuration under
#      build/apt/ whose deb-src line reuses the mirror of this machine's own sources;
#   3. a git clone of tag v1.25.0, where a network allows.
set -euo pipefail

usage="usage: fetch_micropython.sh DEST_DIR | --check EXISTING_DIR"
mode=fetch
if [ "${1:-}" = "--check" ]; then mode=check; shift; fi
dest=${1:?$usage}
mkdir -p "$(dirname "$dest")"
dest=$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")
work=$(dirname "$dest")/apt
orig=micropython_1.25.0+ds.orig.tar.xz
orig_sha256=7b25be99a502f070b2de81dafc08da7051d992325d6e67daa9045a918fffdbea
git_url=https://github.com/micropython/micropython.git

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# SHA-256 over the sorted per-file SHA-256 lines of the directories LociOS builds from.
# Measured on the Debian orig tarball above; a clean v1.25.0 checkout has the same files.
core_dirs="py extmod shared lib/libm_dbl lib/crypto-algorithms mpy-cross"
core_sha256=780aacad7bbff51e920bf876cbf2b634ba960cf88ef4c084becca072a46b2531

check_core_digest() {
    local got
    # shellcheck disable=SC2086
    got=$(cd "$1" && find $core_dirs -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
    [ "$got" = "$core_sha256" ] || die "$2 is not pristine MicroPython 1.25.0:
  expected core digest $core_sha256
  got                  $got
(digest over: $core_dirs). Use an unmodified 1.25.0 tree."
}

looks_like_micropython() {
    [ -f "$1/py/mpconfig.h" ] && grep -qE '^#define MICROPY_VERSION_MINOR 25$' "$1/py/mpconfig.h"
}

if [ "$mode" = check ]; then
    looks_like_micropython "$dest" || die "MICROPY_DIR=$dest is not a MicroPython 1.25.0 tree"
    check_core_digest "$dest" "MICROPY_DIR=$dest"
    exit 0
fi
if looks_like_micropython "$dest"; then
    exit 0
fi

# Finds the first http(s) Debian mirror URI in the machine's own apt sources
# (one-line .list format and deb822 .sources format both).
mirror_uri() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '$1 == "deb" || $1 == "deb-src" {
                 for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { print $i; exit }
             }' "$f" | grep -E '/debian/?$' | head -n1 && return 0
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' "$f" \
            | grep -E '^https?://.*/debian/?$' | head -n1 && return 0
    done
    return 1
}

fetch_debian() {
    command -v apt-get >/dev/null || return 1
    local uri
    uri=$(mirror_uri) || { say "no Debian mirror found in /etc/apt sources"; return 1; }
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    [ -f "$keyring" ] || { say "no $keyring"; return 1; }
    mkdir -p "$work"/{lists/partial,cache/archives/partial,etc/sources.list.d,etc/preferences.d,src}
    printf 'deb-src [signed-by=%s] %s trixie main\n' "$keyring" "$uri" >"$work/etc/sources.list"
    cat >"$work/apt.conf" <<CONF
Dir::Etc::sourcelist "$work/etc/sources.list";
Dir::Etc::sourceparts "$work/etc/sources.list.d";
Dir::Etc::preferencesparts "$work/etc/preferences.d";
Dir::State::Lists "$work/lists";
Dir::Cache "$work/cache";
Dir::State::status "/dev/null";
APT::Sandbox::User "root";
CONF
    say "fetching MicroPython 1.25.0 (Debian source package micropython 1.25.0+ds-1)"
    APT_CONFIG="$work/apt.conf" apt-get -qq update >"$work/update.log" 2>&1 \
        || { say "private apt update failed (see $work/update.log)"; return 1; }
    (cd "$work/src" && APT_CONFIG="$work/apt.conf" apt-get -qq source --download-only \
        micropython=1.25.0+ds-1 >"$work/source.log" 2>&1) \
        || { say "apt-get source failed (see $work/source.log)"; return 1; }
    [ -f "$work/src/$orig" ] || return 1
    return 0
}

check_and_unpack() {
    local got
    got=$(sha256sum "$work/src/$orig" | cut -d' ' -f1)
    if [ "$got" != "$orig_sha256" ]; then
        die "checksum mismatch for $orig:
  expected $orig_sha256
  got      $got
The download is corrupt or not the pinned release. Delete $work and retry, or pass
MICROPY_DIR=/path/to/micropython-1.25.0."
    fi
    rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
    tar -xf "$work/src/$orig" -C "$dest.tmp" --strip-components=1 >"$work/unpack.log" 2>&1 \
        || die "'tar -xf $work/src/$orig -C $dest.tmp --strip-components=1' failed; the full log is $work/unpack.log"
    mv "$dest.tmp" "$dest"
}

fetch_git() {
    command -v git >/dev/null || return 1
    say "trying a git clone of tag v1.25.0"
    rm -rf "$dest.tmp"
    git clone -q --depth 1 --branch v1.25.0 "$git_url" "$dest.tmp" 2>/dev/null || return 1
    # A git checkout has no release tarball to hash: check_core_digest pins its content.
    check_core_digest "$dest.tmp" "the git clone of v1.25.0"
    mv "$dest.tmp" "$dest"
}

if [ -f "$work/src/$orig" ] || fetch_debian; then
    check_and_unpack
elif fetch_git; then
    :
else
    die "could not obtain MicroPython 1.25.0. Either pass MICROPY_DIR=/path/to/micropython-1.25.0,
or give this machine access to a Debian mirror (for 'apt-get source micropython') or to GitHub."
fi
looks_like_micropython "$dest" || die "$dest does not look like MicroPython 1.25.0"
say "MicroPython 1.25.0 ready in $dest"
