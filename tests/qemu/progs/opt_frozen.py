# SPDX-License-Identifier: MIT
# Set-up of test_opt_frozen.py: the image's frozen code as the optimiser's candidate.
# Helpers to hash /rom, to give every frozen function a heap copy of its code, and the
# hot loops the optimiser settles on (frozen helpers of the colonies and the manifest
# checker; a .mpy module read in place from a ROMFS image made on the host).
import hashlib, os, sys, vfs
import opt, _rw
from colonies import common
import locus_manifest as lm
def rom_hashes(top="/rom", out=None):
    out = {} if out is None else out
    for name, kind, *_ in os.ilistdir(top):
        path = top + "/" + name
        if kind == 0x4000:
            rom_hashes(path, out)
        else:
            with open(path, "rb") as f:
                out[path[5:]] = hashlib.sha256(f.read()).digest().hex()
    return out
def frozen_functions():
    # Every function object of the image's modules, at module level and in their
    # classes, whose code is frozen (each once).
    seen = {}
    def take(v):
        if type(v) in opt.PLAIN and id(v) not in seen and _rw.frozen(v):
            seen[id(v)] = v
    for mod in list(sys.modules.values()):
        for v in list(mod.__dict__.values()):
            take(v)
            if isinstance(v, type) and getattr(v, "__module__", None) == mod.__name__:
                for w in list(v.__dict__.values()):
                    take(getattr(w, "__func__", w))
    return list(seen.values())
IMAGE_MODULES = ("lo", "lo_help", "lo_mesh", "lo_page", "lo_store", "lo_view", "locus_text",
                 "locus_sandbox", "opt_mesh", "opt_locus", "audit_store", "asyncio", "gpt",
                 "sysinfo", "prof")
def own_all():
    for name in IMAGE_MODULES:
        __import__(name)
    fns = frozen_functions()
    copied = [fn for fn in fns if opt._source.own(fn) and not _rw.frozen(fn)]
    return len(fns), len(copied)
XS = [1.0, 2.0, 3.0, 4.5] * 5
R = common.Rng(5)
ARGS = {"a": [1, 2, (3, "x")], "b": 2.5}
def plain_loop():
    for _ in range(300):
        lm._plain("args", ARGS)
def helpers_loop():
    for _ in range(300):
        common.jain(XS)
        lm._ident("abc_def")
        lm._module("colonies.tasks:setup")
        R.next()
def decide(fn, loop, passes=8):
    # opt.attempt(fn) until its verdict: its calls are recorded while loop() runs.
    opt.stop_recording()
    for _ in range(passes):
        e = opt.attempt(fn)
        if e is not None:
            return e
        loop()
    return None
def verdicts(name):
    return [(e["kind"], e["verdict"], e["gate"]) for e in opt.journal()
            if e["function"] == name]
def entry(name, kind, verdict):
    for e in opt.journal():
        if (e["function"], e["kind"], e["verdict"]) == (name, kind, verdict):
            return e
    return None
