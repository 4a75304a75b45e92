#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`make bench-loci`: the Loci mesh's costs in guest TSC cycles under QEMU -icount
(guest time is instruction counting, so reruns give the same counts): an empty step,
locus-steps per second at 10 to 100,000 Loci, memory per Locus and of the whole mesh, a
capability check, and the deposit-to-reaction latency in ticks. Prints a Markdown table
and writes build/bench/loci.json."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.guestconsole import IMAGE, Guest

GUEST = r"""
import gc, kernel, mesh, _budget, _mesh
from field import grid, keyed
EMPTY = 'def step(ctx):\n    pass\n'
WORKER = 'def step(ctx):\n    if ctx.sense("g") < 5.0:\n        ctx.deposit("g", 1.0)\n'
CAPS = [{'flavours': ['g', 'sig', 'ack'], 'ops': ['sense', 'deposit']}]
SIDE = 128
def man(i, code):
    return {'name': 'b%d' % i, 'code': code, 'caps': CAPS,
            'attend': {'flavour': 'g', 'at': (i % SIDE, (i // SIDE) % SIDE)}}
def new(n):
    return mesh.Mesh([grid('g', SIDE, SIDE, E=0.1, G=0.2), grid('sig', 4, 4, E=1.0),
                      keyed('ack', 64)], seed=1, max_loci=n + 8, audit=4 * n + 1024)
def rounds_cycles(m, rounds):
    gc.collect()
    t = kernel.cycles()
    for _ in range(rounds):
        m.round()
    return kernel.cycles() - t
def scaling(n, code, rounds):
    mesh.LAST[0] = None     # the console's last mesh, which keeps the one before alive
    gc.collect()
    h0 = gc.mem_alloc()
    m = new(n)
    mans = [man(i, code) for i in range(n)]
    gc.collect()
    a0 = gc.mem_alloc()
    t = kernel.cycles()
    for mf in mans:
        m.spawn(mf)
    spawn = kernel.cycles() - t
    del mans
    gc.collect()
    per = (gc.mem_alloc() - a0) // n
    # The whole mesh: its Loci, and its field, capability table and audit log, sized
    # for n Loci when it was made.
    whole = gc.mem_alloc() - h0
    m.round()
    c = rounds_cycles(m, rounds)
    return {'n': n, 'rounds': rounds, 'cycles_per_step': c // (n * rounds),
            'bytes_per_locus': per, 'mesh_bytes': whole, 'spawn_cycles': spawn // n,
            'steps': m.steps}
def empty_step():
    m = new(16)
    for i in range(16):
        m.spawn(man(i, EMPTY))
    r = m.loci[2]
    gc.collect()
    reps = 2000
    t = kernel.cycles()
    for _ in range(reps):
        r.step_fn(r.ctx)
    plain = (kernel.cycles() - t) // reps
    t = kernel.cycles()
    for _ in range(reps):
        _budget.run(r.step_fn, r.ctx, 100, 0, 4096)
    budgeted = (kernel.cycles() - t) // reps
    one = [r]
    t = kernel.cycles()
    for _ in range(reps):
        _mesh.steps(m, one, 0, [])
    stepped = (kernel.cycles() - t) // reps
    return {'call': plain, 'budget_run': budgeted, 'mesh_step': stepped}
def cap_cost():
    m = new(16)
    lid = m.spawn(man(0, EMPTY))
    ctx = m.loci[lid].ctx
    f = m.field
    reps = 2000
    gc.collect()
    t = kernel.cycles()
    for _ in range(reps):
        f.sense('g', (3, 3))
    raw = (kernel.cycles() - t) // reps
    t = kernel.cycles()
    for _ in range(reps):
        ctx.sense('g', (3, 3))
    checked = (kernel.cycles() - t) // reps
    cap = m.loci[lid].caps[0][0]
    t = kernel.cycles()
    for _ in range(reps):
        m.caps.check(cap, lid, 1, 0, 3, 3)
    check = (kernel.cycles() - t) // reps
    return {'field_sense': raw, 'ctx_sense': checked, 'cap_check': check}
EMIT = '''
def step(ctx):
    if ctx.tick % 7 == 3:
        ctx.deposit("sig", 2.0, (1, 1))
        ctx.mem["sent"] = ctx.tick
'''
REACT = '''
def step(ctx):
    if ctx.sense("sig", (1, 1)) > 0.5:
        ctx.mem["seen"] = ctx.tick
'''
def latency(trials=20):
    # sig evaporates by half a tick: a deposit of 2 reads 1.0 in the next tick only.
    m = mesh.Mesh([grid('g', 8, 8), grid('sig', 4, 4, E=0.5)], seed=1)
    caps = [{'flavours': ['sig'], 'ops': ['sense', 'deposit']}]
    e = m.spawn({'name': 'emit', 'code': EMIT, 'caps': caps})
    r = m.spawn({'name': 'react', 'code': REACT, 'caps': caps,
                 'wake': {'flavour': 'sig', 'at': (1, 1), 'above': 0.5}})
    # The first reaction to each signal (the trace may stay above 0.5 a tick longer).
    out = []
    done = None
    while len(out) < trials:
        m.round()
        sent, seen = m.loci[e].mem.get('sent'), m.loci[r].mem.get('seen')
        if sent is not None and sent != done and seen is not None and seen >= sent:
            out.append(seen - sent)
            done = sent
    return out
# The colony's harness runs in a namespace of its own: the console's code (__main__) is a
# candidate for the optimiser, and the harness is not the workload it measures.
COLONY = '''
def colony(opt_on, warm=0, seed=3, settle=300, quiet=20, rounds=200):
    # The task colony's workers (colonies/tasks.py), with the optimiser Loci and their
    # server (opt_mesh) or without; both meshes have the same flavours. 'on' runs until
    # the server has had nothing hot to serve for `quiet` rounds (at most `settle`), 'off'
    # the `warm` rounds 'on' took; then both run `rounds` more, measured: cycles per
    # locus-step of the whole round (Loci, the colony's env, the optimiser's Loci and
    # server), and of the colony's workers alone (their steps' own cycles).
    import opt, opt_mesh, opt_locus
    from colonies import tasks
    # Tasks keep arriving through every round run here (0.6 a round).
    m = mesh.Mesh(tasks.flavours(tasks=1000) + opt_mesh.flavours(), seed=seed, max_loci=64)
    tasks.setup(m, seed=seed, tasks=1000)
    workers = list(m.loci.values())
    s = opt_mesh.start(m, n=2, console=False) if opt_on else None
    still = 0
    done = 0
    while done < (settle if opt_on else warm):
        m.round()
        done += 1
        if s is None:
            continue
        busy = m.rewrites or opt_locus.hot(m, 4) or s.waited
        still = 0 if busy else still + 1
        if still >= quiet:
            break
    gc.collect()
    steps0 = m.steps
    wsteps0 = sum(r.steps for r in workers)
    own = 0
    last = [r.steps for r in workers]
    p0, pc0 = (s.produced, s.produce_cycles) if s is not None else (0, 0)
    # Only the rounds are timed: this loop's own bookkeeping is console code, which the
    # profiler counts and the optimiser may serve while the optimiser Loci are on.
    c = 0
    for _ in range(rounds):
        t = kernel.cycles()
        m.round()
        c += kernel.cycles() - t
        for i, r in enumerate(workers):
            if r.steps != last[i]:
                last[i] = r.steps
                own += r.cycles
    steps = m.steps - steps0
    wsteps = sum(r.steps for r in workers) - wsteps0
    out = {'on': opt_on, 'warm': done, 'rounds': rounds, 'steps': steps,
           'cycles_per_step': c // max(1, steps), 'worker_steps': wsteps,
           'round_cycles_per_worker_step': c // max(1, wsteps),
           'worker_cycles_per_step': own // max(1, wsteps)}
    if s is not None:
        out['served'] = [(e[2], e[4], e[5]) for e in s.log]
        out['swaps'] = [(sw[1], sw[2], sw[3]) for sw in opt.swaps()]
        out['refusals'] = sorted({(e['kind'], e['gate']) for e in opt.journal(500)
                                  if e['verdict'] == 'rejected'})
        out['first_swap'] = s.first_swap
        out['server_passes'] = s.produced - p0
        out['server_cycles'] = s.produce_cycles - pc0
    return out
'''
HARNESS = {'gc': gc, 'kernel': kernel, 'mesh': mesh}
exec(COLONY, HARNESS)
colony = HARNESS['colony']
"""


def ask(g: Guest, expr: str, timeout: float = 1800):
    try:
        return g.ask(expr, timeout=timeout)
    except AssertionError as e:     # not a literal: what it printed ends the run
        raise SystemExit(str(e)) from None


def colony_off(args, warm: int) -> dict:
    g = Guest(args.image, mem=args.mem, icount=not args.no_icount)
    try:
        g.boot()
        g.paste(GUEST, timeout=120)
        return ask(g, f"colony(False, {warm})")
    finally:
        g.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,100,1000,10000,100000")
    ap.add_argument("--steps", type=int, default=20000, help="locus-steps per size")
    ap.add_argument("--no-icount", action="store_true")
    ap.add_argument("--mem", default="512M", help="guest RAM")
    ap.add_argument("--image", type=Path, default=IMAGE)
    ap.add_argument("--colony-only", action="store_true",
                    help="only the task colony with the optimiser Loci on and off")
    args = ap.parse_args()
    g = Guest(args.image, mem=args.mem, icount=not args.no_icount)
    try:
        g.boot()
        out = g.paste(GUEST, timeout=120)
        if "Traceback" in out:
            print(out, file=sys.stderr)
            return 1
        hz = ask(g, "kernel.tsc_hz()")
        res: dict = {"tsc_hz": hz, "icount": not args.no_icount}
        # Each colony run in a boot of its own (what ran before in a boot changes a run's
        # cycles); the optimiser's first, so the 'off' run gets as many warm-up rounds.
        on = ask(g, "colony(True)")
        g.close()
        off = colony_off(args, on["warm"])
        res["colony"] = {"on": on, "off": off}
        print(f"  colony on: {on}\n  colony off: {off}", file=sys.stderr)
        if args.colony_only:
            print(colony_table(res))
            return 0
        g = Guest(args.image, mem=args.mem, icount=not args.no_icount)
        g.boot()
        g.paste(GUEST, timeout=120)
        res["empty"] = ask(g, "empty_step()")
        res["cap"] = ask(g, "cap_cost()")
        res["latency"] = ask(g, "latency()")
        res["scaling"] = []
        for n in (int(x) for x in args.sizes.split(",")):
            rounds = max(2, args.steps // n)
            for code in ("EMPTY", "WORKER"):
                r = ask(g, f"scaling({n}, {code}, {rounds})")
                r["code"] = code.lower()
                print(f"  n={n} {code.lower()}: {r}", file=sys.stderr)
                res["scaling"].append(r)
    finally:
        g.close()
    out_dir = Path("build/bench")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "loci.json").write_text(json.dumps(res, indent=1))
    print(table(res))
    return 0


def table(res: dict) -> str:
    hz = res["tsc_hz"]
    e, c, lat = res["empty"], res["cap"], res["latency"]
    rows = ["| measure | guest cycles | note |", "|---|---:|---|",
            f"| empty step: plain call | {e['call']:,} | `step(ctx)` |",
            f"| empty step: under `_budget.run` | {e['budget_run']:,} | limits armed |",
            f"| empty step: one step of `_mesh.steps` | {e['mesh_step']:,} | + accounting |",
            f"| `field.sense` | {c['field_sense']:,} | no check |",
            f"| `ctx.sense` | {c['ctx_sense']:,} | capability checked |",
            f"| `_cap` check alone | {c['cap_check']:,} | from Python |",
            "", "| Loci | step | cycles per locus-step (whole round) | locus-steps/s |"
            " bytes per Locus | MiB of the whole mesh | spawn cycles |",
            "|---:|---|---:|---:|---:|---:|---:|"]
    for r in res["scaling"]:
        rows.append(f"| {r['n']:,} | {r['code']} | {r['cycles_per_step']:,} | "
                    f"{hz // max(1, r['cycles_per_step']):,} | {r['bytes_per_locus']:,} | "
                    f"{r['mesh_bytes'] / (1 << 20):.1f} | {r['spawn_cycles']:,} |")
    rows.append("")
    rows.append(f"deposit-to-reaction latency over {len(lat)} signals: "
                f"{sorted(set(lat))} ticks (min {min(lat) if lat else '-'}, "
                f"max {max(lat) if lat else '-'})")
    rows.append(f"TSC {hz:,} Hz; -icount: {res['icount']}")
    rows.append("")
    rows.append(colony_table(res))
    return "\n".join(rows)


def colony_table(res: dict) -> str:
    on, off = res["colony"]["on"], res["colony"]["off"]

    def ratio(k: str) -> str:
        return f"{off[k] / max(1, on[k]):.3f}x"

    rows = ["| task colony (20 workers, seed 3) | whole round, per worker step |"
            " whole round, per locus-step | a worker step's own |",
            "|---|---:|---:|---:|"]
    for name, r in (("optimiser Loci off", off),
                    (f"optimiser Loci on, settled after {on['warm']} rounds", on)):
        rows.append(f"| {name} | {r['round_cycles_per_worker_step']:,} | "
                    f"{r['cycles_per_step']:,} | {r['worker_cycles_per_step']:,} |")
    rows += ["",
             f"off/on over {on['rounds']} rounds (guest cycles): whole round per worker step "
             f"{ratio('round_cycles_per_worker_step')}, a worker step's own "
             f"{ratio('worker_cycles_per_step')}; first swap at round {on['first_swap']}; "
             f"server {on['server_passes']} passes, {on['server_cycles']:,} cycles",
             f"swaps in place: {on['swaps']}",
             f"served: {on['served']}",
             f"refusal kinds (kind, gate): {on['refusals']}"]
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
