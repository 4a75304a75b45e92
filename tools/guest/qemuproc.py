# SPDX-License-Identifier: MIT
"""One QEMU guest as a child process, its serial line on a Unix socket: the piece that
guestconsole.py (tests, benchmarks), console.py's `qemu` command and the upstream test
target share. Starts qemu/launch.py's `test` profile in its own process group (so the
whole group can be ended), waits for the socket and connects."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "qemu" / "launch.py"
# LOCIOS_IMAGE lets an engineer run the guest tests against an image built elsewhere
# (make build BUILD=build/mine) while the default build/ is busy.
IMAGE = Path(os.environ.get("LOCIOS_IMAGE", ROOT / "build" / "lociOS.img"))
# The test image: the same kernel plus the test-only modules `_rwops` and `_fieldbench`
# (`make test-image`); what tests and benchmarks that use those modules boot.
TEST_IMAGE = Path(os.environ.get("LOCIOS_TEST_IMAGE", ROOT / "build" / "test" / "lociOS.img"))


def _load_launcher():
    spec = importlib.util.spec_from_file_location("lociOS_launch", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The launcher forwards SIGTERM to QEMU; die_with_parent makes the launcher get one if
# whoever started it is killed, so no emulator is left behind.
_die_with_parent = _load_launcher().die_with_parent


class QemuError(Exception):
    pass


class QemuProcess:
    def __init__(self, image: Path = IMAGE, mem: str = "512M", extra: list[str] | None = None,
                 icount: bool = False, connect_timeout: float = 30,
                 launch: list[str] | None = None, qmp: bool = False,
                 incoming: Path | None = None):
        """launch: more options of qemu/launch.py (--machine pc, --cpu qemu64, ...).
        qmp: also open QEMU's machine protocol (self.qmp, tools/guest/qmp.py). With
        `--serial none` in launch there is no serial line (self.sock is None).
        incoming: resume the machine state saved there (Guest.save_state) instead of
        booting; the other arguments must be those it was saved with."""
        if not Path(image).is_file():
            raise FileNotFoundError(f"{image} is missing: run `make image` first")
        self._tmp = tempfile.TemporaryDirectory(prefix="lociOS-qemu-")
        self.socket_path = Path(self._tmp.name) / "serial.sock"
        self.log_path = Path(self._tmp.name) / "qemu.log"
        args = [sys.executable, str(LAUNCH), "test", "--image", str(image), "--mem", mem,
                "--serial-socket", str(self.socket_path)]
        if icount:
            args.append("--icount")
        if incoming:
            args += ["--incoming", str(incoming)]
        self.qmp_path = Path(self._tmp.name) / "qmp.sock" if qmp else None
        if self.qmp_path:
            args += ["--qmp", str(self.qmp_path)]
        args += launch or []
        serial = (launch or [])[(launch or []).index("--serial") + 1] \
            if "--serial" in (launch or []) else "com1"
        if extra:
            args += ["--", *extra]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=_die_with_parent)
        self.sock = None
        self.qmp = None
        try:
            if serial != "none":
                self.sock = self._connect(connect_timeout)
            if self.qmp_path:
                from tools.guest.qmp import Qmp
                self.qmp = Qmp(self.qmp_path, timeout=connect_timeout)
        except BaseException:
            self.close()
            raise

    def _connect(self, timeout: float) -> socket.socket:
        # QEMU creates the socket, then waits (server=on,wait=on) for us before it runs.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise QemuError(f"QEMU did not start:\n{self.log_path.read_text()}")
            if self.socket_path.exists():
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(str(self.socket_path))
                    return s
                except OSError:
                    s.close()
            time.sleep(0.05)
        raise QemuError("QEMU's serial socket never appeared")

    def wait(self, timeout: float | None = None) -> int:
        return self.proc.wait(timeout=timeout)

    def close(self) -> int | None:
        """Ends QEMU (the whole process group) if it still runs; returns its status."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        sock = getattr(self, "sock", None)
        if sock is not None:
            sock.close()
        if getattr(self, "qmp", None) is not None:
            try:
                self.qmp.close()
            except OSError:
                pass
        self._tmp.cleanup()
        return self.proc.returncode
