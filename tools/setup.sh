#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Brings in what building and testing LociOS needs, and nothing more: Debian packages,
# a .venv with the pinned Python packages, and the MicroPython 1.25.0 source.
# Idempotent, and silent when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# Debian package -> a file it provides, so the check needs no dpkg database query.
packages=(
    "qemu-system-x86:/usr/bin/qemu-system-x86_64"
    "ovmf:/usr/share/OVMF/OVMF_CODE_4M.fd"
    "gnu-efi:/usr/lib/crt0-efi-x86_64.o"
    "mtools:/usr/bin/mcopy"
    "dosfstools:/usr/sbin/mkfs.fat"
    "gdisk:/usr/sbin/sgdisk"
    "python3-venv:/usr/lib/python3/dist-packages/pip"
    "gcc:/usr/bin/gcc"
    "make:/usr/bin/make"
    "binutils:/usr/bin/objcopy"
    "valgrind:/usr/bin/valgrind"
)
missing=()
for entry in "${packages[@]}"; do
    pkg=${entry%%:*} file=${entry#*:}
    if [ "$pkg" = python3-venv ]; then
        # Any Python 3 that can make a venv with pip will do (pyenv, distro, ...).
        python3 -c 'import venv, ensurepip' 2>/dev/null && continue
    fi
    [ -e "$file" ] || missing+=("$pkg")
done
# OVMF moved between releases; any firmware qemu/launch.py can find is enough.
if [[ " ${missing[*]-} " == *" ovmf "* ]] && python3 -c '
import sys; sys.path.insert(0, "qemu"); import launch; launch.find_ovmf()' 2>/dev/null; then
    missing=("${missing[@]/ovmf}")
fi
read -r -a missing <<<"${missing[*]-}"

if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo"
    else
        die "these Debian/Ubuntu packages are missing and I cannot install them (not root,
no password-less sudo). Install them, then run make again:
    sudo apt-get install ${missing[*]}"
    fi
    say "installing ${missing[*]}"
    $sudo apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >build/apt-install.log 2>&1 \
        || die "apt-get install ${missing[*]} failed; see build/apt-install.log"
fi

# The venv is rebuilt when tools/requirements.txt changes.
mkdir -p build
if ! cmp -s tools/requirements.txt .venv/.requirements 2>/dev/null; then
    say "creating .venv with the pinned Python packages"
    [ -x .venv/bin/python ] || python3 -m venv .venv || die "python3 -m venv failed"
    .venv/bin/pip install -q --disable-pip-version-check -r tools/requirements.txt >build/pip.log 2>&1 \
        || die "pip install failed; see build/pip.log"
    cp tools/requirements.txt .venv/.requirements
fi

if [ -n "${MICROPY_DIR:-}" ] && [ "$MICROPY_DIR" != "build/micropython-1.25.0" ]; then
    stamp=build/.micropython-checked
    if [ "$(cat "$stamp" 2>/dev/null)" != "$MICROPY_DIR" ]; then
        tools/fetch_micropython.sh --check "$MICROPY_DIR"
        printf '%s' "$MICROPY_DIR" >"$stamp"
    fi
else
    tools/fetch_micropython.sh build/micropython-1.25.0
fi
