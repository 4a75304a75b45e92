#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Launch profiles for booting the LociOS disk image in QEMU.

  run    serial console on this terminal for people (Ctrl-A X quits, Ctrl-A C monitor)
  debug  as run, plus QEMU's gdb stub on :1234, paused before the firmware starts
  test   serial on stdio with no QEMU escape key (the raw REPL needs Ctrl-A), for tools;
         with --serial-socket PATH the serial line is a Unix socket instead, a clean
         byte stream with no terminal line discipline (QEMU waits for the client)
  check  only report the QEMU, firmware and accelerator that would be used

All profiles boot the same GPT image a user writes to a USB stick, through OVMF, with
isa-debug-exit at 0xf4 so the kernel can end QEMU with a status. KVM is used only if a
probe shows it can run the firmware; otherwise TCG. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"

# (code, vars) pairs where Debian, Ubuntu, Fedora and Arch install OVMF.
OVMF_CANDIDATES = [
    ("/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd"),
    ("/usr/share/OVMF/OVMF_CODE.fd", "/usr/share/OVMF/OVMF_VARS.fd"),
    ("/usr/share/edk2/ovmf/OVMF_CODE.fd", "/usr/share/edk2/ovmf/OVMF_VARS.fd"),
    ("/usr/share/edk2/x64/OVMF_CODE.4m.fd", "/usr/share/edk2/x64/OVMF_VARS.4m.fd"),
    ("/usr/share/edk2/x64/OVMF_CODE.fd", "/usr/share/edk2/x64/OVMF_VARS.fd"),
]

# isa-debug-exit: the guest writes v, QEMU exits with (v << 1) | 1.
DEBUG_EXIT_DEVICE = "isa-debug-exit,iobase=0xf4,iosize=0x04"


class LaunchError(Exception):
    """A problem the user can fix; printed without a traceback."""


def find_qemu() -> str:
    qemu = shutil.which("qemu-system-x86_64")
    if not qemu:
        raise LaunchError(
            "qemu-system-x86_64 not found: run `make setup` (Debian/Ubuntu package "
            "qemu-system-x86)"
        )
    return qemu


def find_ovmf() -> tuple[str, str | None]:
    """Returns (code, vars template); vars is None for a combined OVMF.fd."""
    override = os.environ.get("OVMF")
    if override:
        if not Path(override).is_file():
            raise LaunchError(f"OVMF={override}: no such file")
        return override, os.environ.get("OVMF_VARS")
    for code, vars_ in OVMF_CANDIDATES:
        if Path(code).is_file() and Path(vars_).is_file():
            return code, vars_
    for combined in ("/usr/share/ovmf/OVMF.fd", "/usr/share/qemu/OVMF.fd"):
        if Path(combined).is_file():
            return combined, None
    raise LaunchError(
        "no OVMF firmware found: `make setup` installs it (Debian/Ubuntu package ovmf; "
        "Fedora edk2-ovmf), or pass OVMF=/path/to/OVMF_CODE.fd"
    )


def kvm_works(qemu: str, code: str) -> bool:
    """True if KVM can run the firmware here. /dev/kvm can exist yet fail on OVMF
    (nested, paravirtual KVM), so run the firmware for a few seconds and see whether
    QEMU is still alive. The answer is cached per QEMU binary and kernel release."""
    choice = os.environ.get("LOCIOS_ACCEL")
    if choice in ("kvm", "tcg"):
        return choice == "kvm"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    key = f"{qemu} {os.stat(qemu).st_mtime_ns} {os.uname().release}"
    cache = BUILD / ".kvm-probe"
    if cache.is_file():
        lines = cache.read_text().splitlines()
        if len(lines) == 2 and lines[0] == key:
            return lines[1] == "yes"
    ok = _firmware_reaches_boot_manager(qemu, code, "kvm")
    BUILD.mkdir(exist_ok=True)
    cache.write_text(f"{key}\n{'yes' if ok else 'no'}\n")
    return ok


def _firmware_reaches_boot_manager(qemu: str, code: str, accel: str) -> bool:
    """Runs OVMF alone and watches its serial output for the boot manager (BdsDxe).
    A broken KVM stops with "KVM internal error" while QEMU itself stays alive."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            qemu, "-accel", accel, "-machine", "q35", "-m", "128M", "-display", "none",
            "-serial", "stdio", "-monitor", "none", "-no-reboot", "-net", "none",
            "-drive", f"if=pflash,format=raw,readonly=on,file={code}",
        ]
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, timeout=8)
            out = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"") + (e.stderr or b"")
    return b"BdsDxe" in out and b"KVM internal error" not in out


def qemu_command(
    profile: str,
    image: Path,
    mem: str,
    vars_copy: Path | None,
    icount: bool,
    extra: list[str],
    serial_socket: Path | None = None,
    machine: str = "q35",
    cpu: str | None = None,
    firmware: tuple[str, str | None] | None = None,
    secure_boot: bool = False,
    serial: str = "com1",
    reboot: bool = False,
    qmp: Path | None = None,
    usb_stick: bool = False,
    vga: str | None = None,
    writable: bool = False,
    incoming: Path | None = None,
) -> list[str]:
    """serial: "com1" (the console on COM1), "none" (no UART at all), or
    "port:IOBASE:IRQ" (the console on a 16550 at another I/O port, COM1 absent).
    qmp: a QMP socket there (screendump, send-key, device_add). usb_stick: the image as a
    USB mass-storage stick on an xHCI controller, as a spare PC boots it. vga: the
    display device instead of QEMU's default (e.g. "VGA,xres=3840,yres=2160", "none").
    writable: the guest writes to the image itself, as `make run` does (a test that
    checks what survives a reboot boots a copy with it).
    incoming: start from a machine state saved there (QMP `migrate`) instead of booting;
    the rest of the command must be the one the state was saved from."""
    qemu = find_qemu()
    code, vars_template = firmware or find_ovmf()
    if not image.is_file():
        raise LaunchError(f"{image}: no such image; build it with `make image`")
    if secure_boot:
        machine += ",smm=on"
    cmd = [qemu, "-machine", machine, "-m", mem, "-net", "none"]
    if not reboot:
        cmd.append("-no-reboot")
    if secure_boot:
        cmd += ["-global", "driver=cfi.pflash01,property=secure,value=on"]
    if icount:
        # Guest time follows the instruction count: reruns are identical.
        cmd += ["-accel", "tcg,thread=single", "-icount", "shift=0,align=off,sleep=off"]
        if cpu:
            cmd += ["-cpu", cpu]
    elif cpu:
        cmd += ["-accel", "tcg", "-cpu", cpu]
    elif kvm_works(qemu, code):
        cmd += ["-accel", "kvm", "-cpu", "host"]
    else:
        cmd += ["-accel", "tcg", "-cpu", "max"]
    if vars_template and vars_copy:
        shutil.copyfile(vars_template, vars_copy)
        cmd += [
            "-drive", f"if=pflash,format=raw,readonly=on,file={code}",
            "-drive", f"if=pflash,format=raw,file={vars_copy}",
        ]
    else:
        cmd += ["-bios", code]
    # `make run` and `make debug` write to the image, so what the guest saves in /data is
    # there at the next run; tests use snapshot=on and never change the image under test.
    snap = "" if writable or profile in ("run", "debug") else ",snapshot=on"
    if usb_stick:
        cmd += ["-device", "qemu-xhci,id=xhci",
                "-drive", f"if=none,id=stick,format=raw,file={image}{snap}",
                "-device", "usb-storage,bus=xhci.0,drive=stick,removable=on,bootindex=0,"
                           "id=stickdev"]
    else:
        cmd += ["-drive", f"format=raw,file={image},if=virtio{snap}"]
    cmd += ["-device", DEBUG_EXIT_DEVICE, "-display", "none"]
    if vga == "none":
        cmd += ["-vga", "none"]
    elif vga:
        cmd += ["-vga", "none", "-device", vga]
    if qmp:
        cmd += ["-qmp", f"unix:{qmp},server=on,wait=off"]
    if profile in ("run", "debug") and serial == "com1":
        cmd += ["-serial", "mon:stdio"]
    elif serial == "none":
        cmd += ["-serial", "none", "-monitor", "none"]
    else:
        if serial_socket:
            cmd += ["-chardev", f"socket,id=con0,path={serial_socket},server=on,wait=on"]
        else:
            cmd += ["-chardev", "stdio,id=con0,signal=off"]
        if serial == "com1":
            cmd += ["-serial", "chardev:con0"]
        else:
            _, iobase, irq = serial.split(":")
            cmd += ["-serial", "none", "-device",
                    f"isa-serial,chardev=con0,iobase={iobase},irq={irq}"]
        cmd += ["-monitor", "none"]
    if profile == "debug":
        cmd += ["-s", "-S"]
    if incoming:
        if not incoming.is_file():
            raise LaunchError(f"{incoming}: no saved machine state there")
        # QEMU 7.2 has no file: migration; exec: runs the command through /bin/sh.
        cmd += ["-incoming", "exec:cat " + shlex.quote(str(incoming))]
    return cmd + extra


def _find_prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _find_prctl()   # looked up before any fork: the child only makes the call
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child between fork and exec: ask Linux to send SIGTERM when our parent dies,
    so no emulator outlives the launcher (or the test that started it) when that is
    killed outright. Where prctl does not exist it does nothing."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", choices=("run", "debug", "test", "check"))
    ap.add_argument("--image", type=Path, default=BUILD / "lociOS.img")
    ap.add_argument("--mem", default="512M", help="guest RAM (QEMU -m syntax)")
    ap.add_argument("--elf", type=Path, default=BUILD / "kernel.elf",
                    help="kernel ELF with symbols, for the debug profile's hint")
    ap.add_argument("--icount", action="store_true",
                    help="deterministic guest time (TCG, instruction counting)")
    ap.add_argument("--serial-socket", type=Path,
                    help="test profile: serial line on this Unix socket, not stdio")
    ap.add_argument("--machine", default="q35", help="QEMU machine and its properties, "
                    "e.g. pc or q35,hpet=off")
    ap.add_argument("--cpu", help="CPU model (TCG), e.g. qemu64 or max,-nx")
    ap.add_argument("--firmware", help="OVMF code file (default: the first one found)")
    ap.add_argument("--vars", help="OVMF variable store template to go with --firmware")
    ap.add_argument("--secure-boot", action="store_true",
                    help="SMM and secure flash, as Secure Boot firmware needs")
    ap.add_argument("--serial", default="com1",
                    help="com1 | none | port:IOBASE:IRQ (the console UART elsewhere)")
    ap.add_argument("--reboot", action="store_true",
                    help="let a guest reset restart the machine (default: QEMU exits)")
    ap.add_argument("--qmp", type=Path, help="a QMP socket at this path")
    ap.add_argument("--usb-stick", action="store_true",
                    help="boot the image as a USB stick on an xHCI controller")
    ap.add_argument("--vga", help="display device instead of the default, or none")
    ap.add_argument("--writable", action="store_true",
                    help="the guest writes to the image (run and debug always do; tests "
                    "boot with snapshot=on unless given this)")
    ap.add_argument("--incoming", type=Path,
                    help="resume a machine state saved by QMP migrate (same options) "
                    "instead of booting")
    ap.add_argument("--print", action="store_true", help="print the command, don't run it")
    ap.epilog = "Extra QEMU arguments go after --, e.g. launch.py run -- -vga none"
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    args = ap.parse_args(argv)
    args.extra = extra

    if args.profile == "check":
        try:
            qemu, (code, _) = find_qemu(), find_ovmf()
        except LaunchError as e:
            print(f"launch: {e}", file=sys.stderr)
            return 2
        accel = "kvm" if kvm_works(qemu, code) else "tcg"
        print(f"qemu {qemu}\nfirmware {code}\naccel {accel}")
        return 0
    with tempfile.TemporaryDirectory(prefix="lociOS-") as tmp:
        try:
            firmware = (args.firmware, args.vars) if args.firmware else None
            cmd = qemu_command(args.profile, args.image, args.mem,
                               Path(tmp) / "OVMF_VARS.fd", args.icount, args.extra,
                               args.serial_socket, machine=args.machine, cpu=args.cpu,
                               firmware=firmware, secure_boot=args.secure_boot,
                               serial=args.serial, reboot=args.reboot, qmp=args.qmp,
                               usb_stick=args.usb_stick, vga=args.vga,
                               writable=args.writable, incoming=args.incoming)
        except LaunchError as e:
            print(f"launch: {e}", file=sys.stderr)
            return 2
        if args.print:
            print(shlex.join(cmd))
            return 0
        if args.profile in ("run", "debug"):
            accel = cmd[cmd.index("-accel") + 1].split(",")[0].upper()
            print(f"LociOS: booting {args.image.name} in QEMU ({accel}, {args.mem} RAM). "
                  "The serial console follows; OVMF takes a few seconds.\n"
                  "        Quit: Ctrl-A then X.   QEMU monitor: Ctrl-A then C.",
                  file=sys.stderr)
        if args.profile == "debug":
            print(f"        Paused for gdb on :1234. In another terminal:\n"
                  f"        gdb {args.elf} -ex 'target remote :1234' -ex continue",
                  file=sys.stderr)
        proc = subprocess.Popen(cmd, preexec_fn=die_with_parent)
        # Whoever ends this launcher ends QEMU too: no orphaned emulators.
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda signum, _frame: proc.send_signal(signum))
        return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
