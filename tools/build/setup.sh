#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Brings in what building and testing LociOS needs, and nothing more: Debian packages,
# a .venv with the pinned Python packages, and the MicroPython 1.25.0 source.
# Idempotent, and silent when everything is already there.
#
#   tools/build/setup.sh            what `make build`, `make run` and `make test` need
#   tools/build/setup.sh GROUP...   that, plus the packages of the named groups (below),
#                                   which the targets that need them ask for on first use
#
# Every failure names the step, the command and the log it wrote (under build/setup/).
set -euo pipefail
cd "$(dirname "$0")/../.."

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

LOG_DIR=build/setup
mkdir -p "$LOG_DIR"

# group  package  why (one line each; the reason is for people reading this table)
package_table='
base  make               the build itself
base  gcc                kernel, port and host test builds
base  libc6-dev          C headers for the host builds (cffi modules, unix ports)
base  binutils           ld, objcopy: the kernel link and the PE32+ loader
base  patch              applies vm/patches/ to the MicroPython tree
base  xz-utils           unpacks the MicroPython source tarball (.tar.xz)
base  ca-certificates    TLS for the git fallback of the MicroPython fetch
base  gnu-efi            headers, crt0 and linker script of the UEFI loader
base  mtools             fills the FAT32 system partition without root
base  dosfstools         mkfs.fat for the system partition
base  gdisk              sgdisk writes the GPT
base  e2fsprogs          mkfs.ext4 for the stand-in disks of the tools/flash.py tests
base  qemu-system-x86    boots the image (make run, the QEMU tests)
base  ovmf               UEFI firmware for QEMU
base  fonts-spleen       bitmap fonts of the screen console (PSF, BSD-2-Clause), converted at build time
base  python3-venv       the .venv of the host tools
base  python3-dev        Python.h for the cffi host builds in the tests
callgrind valgrind       instruction counts of host builds (bench-vm, verifier-bench)
sign  sbsigntool         signs BOOTX64.EFI for Secure Boot (make sign, make test-machines)
sign  openssl            unlocks the snakeoil test key (make test-machines)
arm   gcc-arm-none-eabi  the official ports/qemu reference build (upstream-ref-arm)
arm   libnewlib-arm-none-eabi  its C library
arm   qemu-system-arm    runs that reference build
'

# Whether a package's job is already done. Python's two are judged by the interpreter
# that will make the venv (it may be a pyenv or distro build); the rest by dpkg.
python_ok() {
    case $1 in
    python3-venv) python3 -c 'import venv, ensurepip' 2>/dev/null ;;
    python3-dev) python3 -c 'import os, sysconfig, sys
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null ;;
    esac
}

groups=(base "$@")
wanted=()
while read -r group pkg _; do
    [ -n "${group:-}" ] || continue
    for g in "${groups[@]}"; do
        [ "$g" = "$group" ] && wanted+=("$pkg")
    done
done <<<"$package_table"
for g in "${groups[@]}"; do
    grep -qE "^$g " <<<"$package_table" || die "unknown set-up group '$g' (known: $(awk 'NF{print $1}' <<<"$package_table" | sort -u | tr '\n' ' '))"
done

command -v python3 >/dev/null || die "python3 is missing: install it (sudo apt-get install python3), then run make again"

missing=()
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${wanted[@]}" 2>/dev/null || true)
for pkg in "${wanted[@]}"; do
    case $pkg in python3-venv | python3-dev)
        python_ok "$pkg" || missing+=("$pkg")
        continue ;;
    esac
    grep -qE "^$pkg ii" <<<"$installed" || missing+=("$pkg")
done

if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then sudo=()
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo)
    else
        die "these Debian/Ubuntu packages are missing and I cannot install them (not root,
no password-less sudo). Install them, then run make again:
    sudo apt-get install --no-install-recommends ${missing[*]}"
    fi
    command -v apt-get >/dev/null || die "these packages are missing and this system has no apt-get:
    ${missing[*]}
(LociOS's set-up knows Debian and Ubuntu; install their equivalents by hand)"
    log=$LOG_DIR/apt.log
    say "installing ${missing[*]} (log: $log)"
    export DEBIAN_FRONTEND=noninteractive
    : >"$log"
    # A fresh root often has no package lists yet; an update that fails is reported
    # only if the install then fails too.
    "${sudo[@]}" apt-get update -q >>"$log" 2>&1 || say "apt-get update failed (see $log); trying the install anyway"
    cmd=(apt-get install -y -q --no-install-recommends "${missing[@]}")
    if ! "${sudo[@]}" "${cmd[@]}" >>"$log" 2>&1; then
        tail -n 5 "$log" | sed 's/^/    /' >&2
        die "'${sudo[*]:+${sudo[*]} }${cmd[*]}' failed; the full log is $log"
    fi
fi

# The venv is rebuilt when tools/build/requirements.txt changes.
if ! cmp -s tools/build/requirements.txt .venv/.requirements 2>/dev/null; then
    log=$LOG_DIR/pip.log
    say "creating .venv with the pinned Python packages (log: $log)"
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv >"$log" 2>&1 || die "'python3 -m venv .venv' failed; the full log is $log"
    fi
    cmd=(.venv/bin/pip install --disable-pip-version-check -r tools/build/requirements.txt)
    if ! "${cmd[@]}" >>"$log" 2>&1; then
        tail -n 5 "$log" | sed 's/^/    /' >&2
        die "'${cmd[*]}' failed; the full log is $log"
    fi
    cp tools/build/requirements.txt .venv/.requirements
fi

if [ -n "${MICROPY_DIR:-}" ] && [ "$MICROPY_DIR" != "build/micropython-1.25.0" ]; then
    stamp=build/.micropython-checked
    if [ "$(cat "$stamp" 2>/dev/null)" != "$MICROPY_DIR" ]; then
        tools/build/fetch_micropython.sh --check "$MICROPY_DIR"
        printf '%s' "$MICROPY_DIR" >"$stamp"
    fi
else
    tools/build/fetch_micropython.sh build/micropython-1.25.0
fi
