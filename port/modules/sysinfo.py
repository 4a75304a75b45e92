# SPDX-License-Identifier: MIT
# A one-screen summary of the machine from the REPL: `import sysinfo; sysinfo.show()`.
import gc
import kernel
import sys

_MIB = 1024 * 1024


def _mib(n):
    return "{:.1f} MiB".format(n / _MIB)


def _ms(cycles, hz):
    return "{:.3f} ms".format(cycles * 1000 / hz)


def show():
    """Print RAM, heap, executable arena, time and boot figures."""
    m = kernel.mem()
    h = kernel.heap()
    hz = kernel.tsc_hz()
    print("LociOS on", sys.implementation._machine, "-", sys.version)
    print("RAM       ", _mib(m["ram"]), "reported by firmware, kernel image", _mib(m["kernel"]))
    print(
        "frames    ",
        m["frames_free"],
        "free of",
        m["frames_total"],
        "({})".format(_mib(m["frames_free"] * 4096)),
    )
    print("GC heap   ", _mib(h["used"]), "used of", _mib(h["total"]),
          "- largest free run", _mib(h["max_free"]))
    print("exec arena", m["exec_used"], "of", m["exec_total"], "bytes used")
    print("TSC       ", "{:.3f} GHz".format(hz / 1e9), "- timer", kernel.tick_hz(), "Hz,",
          kernel.ticks(), "ticks")
    up = kernel.uptime_ms()
    print("uptime    ", "{}.{:03d} s".format(up // 1000, up % 1000))
    print("boot      ", _ms(kernel.boot_cycles(), hz), "kernel entry to prompt,",
          _ms(kernel.loader_cycles(), hz), "in the loader")
    print("kernel    ", "sha256", kernel.digest())
    k = kernel.machine()
    print("placed    ", "{:#x} (phys), linked at {:#x}, {}".format(
        k["kernel_phys"], k["kernel_virt"], _mib(k["kernel_bytes"])))
    print("cpu       ", k["cpu"] or "(no brand string)", "- QEMU" if k["qemu"] else "",
          "" if k["nx"] else "- no NX")
    print("devices   ", "lapic", k["lapic"], "- TSC by", k["tsc_reference"],
          "({})".format(k["tsc_checks"]) if k["tsc_checks"] else "", "- serial", k["serial"])


def memmap():
    """Print the memory map the loader handed over, with totals per kind."""
    totals = {}
    for base, pages, kind in kernel.memmap():
        print("{:#014x}-{:#014x} {:>10} KiB  {}".format(
            base, base + pages * 4096 - 1, pages * 4, kind))
        totals[kind] = totals.get(kind, 0) + pages
    for kind in sorted(totals):
        print("{:>14}: {}".format(kind, _mib(totals[kind] * 4096)))


def collect():
    """Run the garbage collector and report what it freed."""
    before = gc.mem_free()
    gc.collect()
    print("gc freed", gc.mem_free() - before, "bytes;", gc.mem_free(), "free")
