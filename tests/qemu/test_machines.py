# SPDX-License-Identifier: MIT
"""The same image on many virtual PCs: RAM from 128 MiB to 16 GiB, q35 and the older pc
machine, four CPUs, no HPET or no PIT, older and newer CPU models, a CPU without NX, the
kernel forced out of its old place or placed at random, x2APIC, the legacy 2 MiB OVMF,
Secure Boot, a machine with no UART or with its console UART named by ACPI's SPCR
table, power-off and reset. Each boots to the prompt, answers a few statements and
switches off.

The rows marked `machines` run with `make test-machines` (pytest --machines), which also
writes the table build/machines/report.md (tools/test/machines_report.py); the others
run in `make test` as well."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tools.guest.guestconsole import IMAGE, ROOT, Guest, clean

BUILD = ROOT / "build"
OVMF = Path("/usr/share/OVMF")
SNAKEOIL = Path("/usr/share/ovmf")
REPORT = BUILD / "machines" / "report.json"


@dataclass
class Row:
    name: str
    launch: list[str] = field(default_factory=list)
    mem: str = "512M"
    extra: list[str] = field(default_factory=list)
    options: str | None = None      # OPTIONS.TXT text
    quick: bool = False             # also in `make test`
    expect: list[str] = field(default_factory=list)   # regexes the boot log must show
    needs: list[Path] = field(default_factory=list)   # files the row runs only with


ROWS = [
    Row("q35-128M", mem="128M", quick=True),
    Row("q35-3.5G", mem="3584M"),
    Row("q35-8G", mem="8G"),
    Row("q35-16G", mem="16G"),
    Row("pc-512M", launch=["--machine", "pc"], quick=True),
    Row("q35-smp4", extra=["-smp", "4"]),
    Row("q35-no-hpet", launch=["--machine", "q35,hpet=off"],
        expect=[r"tsc [\d.]+ GHz by pm-timer"]),
    Row("q35-pm-timer-only", launch=["--machine", "q35,hpet=off,pit=off"], quick=True,
        expect=[r"tsc [\d.]+ GHz by pm-timer", r"hpet no"]),
    Row("pc-no-pit", launch=["--machine", "pc,pit=off"], expect=[r"by hpet"]),
    Row("cpu-qemu64", launch=["--cpu", "qemu64"]),
    Row("cpu-no-nx", launch=["--cpu", "max,-nx"], quick=True,
        expect=[r"this CPU has no NX"]),
    Row("cpu-skylake", launch=["--cpu", "Skylake-Client"]),
    Row("place-random", options="loader_place=random", quick=True,
        expect=[r"kernel placed at 0x[0-9a-f]+ \(random\)"]),
    Row("place-random-8G", mem="8G", options="loader_place=random",
        expect=[r"kernel placed at 0x[0-9a-f]+ \(random\)"]),
    Row("place-above-4G", mem="8G", options="loader_place=0x180000000",
        expect=[r"kernel placed at 0x180000000 \(fixed\)"]),
    Row("x2apic-by-loader", launch=["--cpu", "max,+x2apic"], options="loader_x2apic=1",
        expect=[r"lapic x2APIC \(set by loader_x2apic=1\)"]),
    Row("legacy-ovmf-2M", launch=["--firmware", str(OVMF / "OVMF_CODE.fd"),
                                  "--vars", str(OVMF / "OVMF_VARS.fd")],
        needs=[OVMF / "OVMF_CODE.fd", OVMF / "OVMF_VARS.fd"]),
    Row("pci-bridge", extra=["-device", "pcie-root-port,id=rp1,chassis=1",
                             "-device", "qemu-xhci,bus=rp1"],
        expect=[r"bus mastering stopped on [1-9]\d* PCI bridge"]),
]


def _image(tmp: Path, options: str | None, loader: Path | None = None,
           extra: list[str] | None = None, name: str = "machine.img") -> Path:
    if options is None and loader is None and not extra:
        return IMAGE
    args = [sys.executable, "tools/build/mkimage.py", "--loader",
            str(loader or BUILD / "boot" / "BOOTX64.EFI"), "--kernel",
            str(BUILD / "kernel.elf"), "-o", str(tmp / name)]
    if options is not None:
        (tmp / "OPTIONS.TXT").write_text(options)
        args += ["--options", str(tmp / "OPTIONS.TXT")]
    for e in extra or []:
        args += ["--extra", e]
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    return tmp / name


def _record(name: str, **facts) -> None:
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    table = json.loads(REPORT.read_text()) if REPORT.exists() else {}
    table[name] = facts
    REPORT.write_text(json.dumps(table, indent=1, sort_keys=True))


def boot_and_check(row: Row, tmp: Path, image: Path | None = None) -> str:
    """Boots, checks the prompt answers, records the row, powers off. Returns the log."""
    missing = [str(p) for p in row.needs if not p.exists()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (Debian 13's ovmf ships only the "
                    "4 MiB build)")
    image = image or _image(tmp, row.options)
    g = Guest(image, mem=row.mem, extra=row.extra, launch=row.launch, log=tmp / "serial.log")
    try:
        banner = g.boot()
        if "loader_x2apic=1 ignored" in banner:
            pytest.skip("this QEMU's CPU model has no x2APIC (QEMU 7.2's TCG); "
                        "the row runs where QEMU emulates one (QEMU 8.1 and newer)")
        for pattern in row.expect:
            assert re.search(pattern, banner), (pattern, banner)
        assert g.eval("1 + 1") == "2"
        assert g.eval("2 ** 100") == str(2 ** 100)
        assert g.eval("'%.6f' % (1 / 3)") == "'0.333333'"
        m = g.ask("__import__('kernel').machine()")
        assert m["kernel_virt"] == 0xFFFFFFFF80000000
        cycles = int(re.search(r"boot (\d+) cycles", banner).group(1))
        _record(row.name, ok=True, boot_cycles=cycles, tsc=m["tsc_reference"],
                tsc_checks=m["tsc_checks"], lapic=m["lapic"], nx=m["nx"],
                placed=hex(m["kernel_phys"]), mem=row.mem,
                launch=" ".join(row.launch + row.extra) or "q35 (default)",
                options=row.options or "")
        g.send("import kernel; kernel.poweroff()\r")
        assert g.wait_exit(timeout=60) == 0
        return banner
    finally:
        g.close()


def _param(row: Row):
    marks = [] if row.quick else [pytest.mark.machines]
    return pytest.param(row, id=row.name, marks=marks)


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_boots_answers_and_powers_off(row, tmp_path):
    boot_and_check(row, tmp_path)


def test_kernel_boots_when_firmware_holds_its_old_address(tmp_path):
    """A UEFI app takes [2 MiB, 16 MiB), as runtime code on real boards can, then starts
    the loader: the kernel goes elsewhere and boots."""
    squatter = BUILD / "boot" / "test" / "squatter.efi"
    image = _image(tmp_path, None, loader=squatter,
                   extra=[f"{BUILD / 'boot' / 'BOOTX64.EFI'}=LOCIOS/LOADER.EFI"])
    banner = boot_and_check(Row("squatter", quick=True), tmp_path, image)
    m = re.search(r"squatter: took (\d+) of (\d+) pages", banner)
    assert m and int(m.group(1)) > 0, banner
    placed = int(re.search(r"kernel placed at (0x[0-9a-f]+)", banner).group(1), 16)
    assert not 0x200000 <= placed < 0x1000000, hex(placed)


def test_no_uart_reaches_the_prompt(tmp_path):
    """-serial none: nothing to read the console on, and nothing must wait for one. The
    boot option at_prompt=poweroff switches off at the prompt: QEMU exits with 0, where a
    fault would give 99 or 101 and a hang the timeout."""
    image = _image(tmp_path, "at_prompt=poweroff")
    p = subprocess.run([sys.executable, "qemu/launch.py", "test", "--image", str(image),
                        "--serial", "none"], cwd=ROOT, capture_output=True, timeout=240)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    _record("no-uart", ok=True, launch="-serial none", options="at_prompt=poweroff")


def _spcr_table(port: int, gsi: int) -> bytes:
    """An ACPI SPCR (revision 2) naming a 16550 at I/O `port` with its interrupt."""
    body = bytearray(80)
    body[0:4] = b"SPCR"
    struct.pack_into("<IB", body, 4, len(body), 2)
    body[10:16] = b"LOCIOS"
    body[16:24] = b"SPCRTEST"
    struct.pack_into("<I4sI", body, 24, 1, b"LOCI", 1)
    body[36] = 0x00                                       # full 16550
    struct.pack_into("<BBBBQ", body, 40, 1, 8, 0, 1, port)  # GAS: I/O space
    body[52] = 0x03                                       # 8259 IRQ and I/O APIC GSI
    body[53] = gsi
    struct.pack_into("<I", body, 54, gsi)
    body[58] = 7                                          # 115200 baud
    body[60] = 1                                          # one stop bit
    struct.pack_into("<HH", body, 64, 0xFFFF, 0xFFFF)     # not a PCI device
    body[9] = (-sum(body)) & 0xFF
    return bytes(body)


def test_spcr_names_the_console_uart(tmp_path):
    """COM1 absent; the console UART sits at 0x2f8 and only ACPI's SPCR says so."""
    spcr = tmp_path / "spcr.bin"
    spcr.write_bytes(_spcr_table(0x2F8, 3))
    row = Row("spcr-uart-0x2f8", launch=["--serial", "port:0x2f8:3"],
              extra=["-acpitable", f"file={spcr}"], quick=True,
              expect=[r"serial console: SPCR UART \(port 0x2f8\)"])
    boot_and_check(row, tmp_path)


@pytest.mark.machines
@pytest.mark.parametrize("machine", ["q35", "pc"])
def test_reset_restarts_the_machine(machine, tmp_path):
    g = Guest(IMAGE, launch=["--machine", machine, "--reboot"], log=tmp_path / "serial.log")
    try:
        g.boot()
        g.send("import kernel; kernel.reset()\r")
        g.expect(r"LociOS loader, boot protocol v\d+", timeout=120)
        g.boot()
        assert g.eval("1 + 1") == "2"
        _record(f"reset-{machine}", ok=True, launch=f"{machine} --reboot")
    finally:
        g.close()


def _signed_loader(tmp: Path) -> Path:
    for tool in ("sbsign", "openssl"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: make test-machines installs it "
                        "(tools/build/setup.sh sign)")
    key = tmp / "snakeoil.key"
    subprocess.run(["openssl", "rsa", "-in", str(SNAKEOIL / "PkKek-1-snakeoil.key"),
                    "-passin", "pass:snakeoil", "-out", str(key)], check=True,
                   capture_output=True)
    signed = tmp / "BOOTX64.signed.efi"
    subprocess.run(["sbsign", "--key", str(key), "--cert",
                    str(SNAKEOIL / "PkKek-1-snakeoil.pem"), "--output", str(signed),
                    str(BUILD / "boot" / "BOOTX64.EFI")], check=True, capture_output=True)
    return signed


@pytest.mark.machines
def test_secure_boot_refuses_the_unsigned_loader(tmp_path):
    launch = ["--secure-boot", "--firmware", str(OVMF / "OVMF_CODE_4M.secboot.fd"),
              "--vars", str(OVMF / "OVMF_VARS_4M.ms.fd")]
    g = Guest(IMAGE, launch=launch, log=tmp_path / "serial.log")
    try:
        idx = g.expect_any([rb"Access Denied|Security Violation", rb">>> "], timeout=180)
        text = clean(g.before + g.after)
    finally:
        g.close()
    assert idx == 0, text
    assert "LociOS loader" not in text, text
    _record("secure-boot-unsigned", ok=True, launch="secboot + ms vars",
            result="refused by the firmware")


@pytest.mark.machines
def test_secure_boot_runs_the_loader_signed_with_the_enrolled_key(tmp_path):
    image = _image(tmp_path, None, loader=_signed_loader(tmp_path), name="signed.img")
    launch = ["--secure-boot", "--firmware", str(OVMF / "OVMF_CODE_4M.secboot.fd"),
              "--vars", str(OVMF / "OVMF_VARS_4M.snakeoil.fd")]
    boot_and_check(Row("secure-boot-signed", launch=launch), tmp_path, image)
