#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Soak test: boots LociOS and runs rounds of allocation, garbage collection, float math
and sleeping (timer interrupts) for a given time, then checks that the guest never
crashed, that the heap and frame counts after a collection do not creep (no leak), and
that the kernel's tick count agrees with the TSC clock; also reports how many timer
interrupts were actually delivered (QEMU under TCG delivers fewer than timer periods).
Prints one line per minute and a verdict; writes build/soak.json. Exit status 1 on any failed check.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.guestconsole import IMAGE, ROOT, Guest

# One round in the guest. Every value it prints is checked on the host side.
GUEST_CODE = """
import gc, math, time, kernel
def soak_round(seed):
    d = {}
    for i in range(300):
        d[i] = [i * seed, str(i), bytes(i % 64), (i, float(i) / 7)]
    s = 0.0
    for i in range(1, 400):
        x = i * 0.01 + seed * 1e-6
        s += math.sin(x) ** 2 + math.cos(x) ** 2
    ok = abs(s - 399.0) < 1e-9
    big = [bytearray(4096) for _ in range(64)]
    del d, big
    time.sleep_ms(20)
    gc.collect()
    m = kernel.mem()
    irq = kernel.interrupts()
    print('R', seed, int(ok), gc.mem_free(), m['frames_free'], kernel.ticks(),
          kernel.tick_hz(), kernel.uptime_ms(), m['exec_used'], irq['timer'],
          irq['spurious'])
"""
ROUND = re.compile(rb"R (\d+) (\d) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)\r?\n")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", type=Path, default=IMAGE)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--json", type=Path, default=ROOT / "build" / "soak.json")
    ap.add_argument("--log", type=Path, default=ROOT / "build" / "soak-serial.log")
    args = ap.parse_args(argv)

    args.log.unlink(missing_ok=True)
    g = Guest(args.image, log=args.log)
    rounds: list[tuple[int, ...]] = []
    problems: list[str] = []
    try:
        g.boot()
        g.paste(GUEST_CODE)
        end = time.monotonic() + args.minutes * 60
        next_report = time.monotonic() + 60
        seed = 0
        while time.monotonic() < end:
            seed += 1
            g.send(f"soak_round({seed})\r")
            g.expect(ROUND.pattern, timeout=120)
            rounds.append(tuple(int(x) for x in g.match.groups()))
            g.expect(re.escape(">>> "), timeout=30)
            if time.monotonic() >= next_report:
                r = rounds[-1]
                print(f"soak: {len(rounds)} rounds, heap free {r[2]}, frames free {r[3]}, "
                      f"ticks {r[4]}", flush=True)
                next_report += 60
        alive = g.eval("1+1") == "2"
    except Exception as e:  # a crash or a hang is the finding, not a tool error
        problems.append(f"guest stopped answering: {type(e).__name__}: {e}")
        alive = False
    finally:
        g.close()

    result: dict = {"minutes": args.minutes, "rounds": len(rounds), "alive": alive}
    if len(rounds) >= 3:
        # Skip the first round: it compiles and allocates the round's own code.
        first, last = rounds[1], rounds[-1]
        result["heap_free_first"] = first[2]
        result["heap_free_last"] = last[2]
        result["heap_free_min"] = min(r[2] for r in rounds[1:])
        result["frames_free_first"], result["frames_free_last"] = first[3], last[3]
        ticks = last[4] - first[4]
        ms_tsc = last[6] - first[6]
        ms_ticks = ticks * 1000 / last[5]
        result["ms_by_ticks"] = round(ms_ticks, 1)
        result["ms_by_tsc"] = ms_tsc
        result["tick_vs_tsc_error"] = round(abs(ms_ticks - ms_tsc) / max(ms_tsc, 1), 5)
        # Informational: interrupts delivered per timer period (1.0 on real hardware;
        # less under TCG, which is why ticks are counted from the TSC).
        result["timer_irqs"] = last[8] - first[8]
        result["timer_irqs_per_tick"] = round(result["timer_irqs"] / max(ticks, 1), 4)
        result["spurious"] = last[9]
        if any(r[1] != 1 for r in rounds):
            problems.append("float math gave a wrong sum in some round")
        # A leak shows as free heap falling round after round; allow 1% of the heap
        # for fragmentation noise.
        if first[2] - last[2] > first[2] // 100:
            problems.append(f"heap free fell from {first[2]} to {last[2]}")
        if first[3] != last[3]:
            problems.append(f"free frames changed from {first[3]} to {last[3]}")
        if result["tick_vs_tsc_error"] > 0.01:
            problems.append(f"kernel ticks say {ms_ticks:.0f} ms, TSC says {ms_tsc} ms")
    else:
        problems.append(f"only {len(rounds)} rounds completed")
    if not alive:
        problems.append("REPL did not answer 1+1 at the end")
    result["problems"] = problems
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    print("soak:", "FAILED" if problems else "passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
