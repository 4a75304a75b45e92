#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs what the official ports/qemu ARM reference build needs, only if missing:
# Debian's gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm.
set -e
pkgs="gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    apt-get install -y --no-install-recommends $missing
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo apt-get install -y --no-install-recommends $missing
else
    echo "upstream-ref-arm needs:$missing -- run: sudo apt-get install$missing" >&2
    exit 1
fi
