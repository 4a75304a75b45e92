# SPDX-License-Identifier: MIT
# vwalk() checks every function reachable from an object's names (through classes too)
# under the 'trusted' profile and appends (name, function, verdict) to out, a verdict of
# None being a pass. Pasted by test_verifier.py and by vm/verifier/host/bench_guest.py.
import vm
def vwalk(obj, seen, out):
    for name in dir(obj):
        try:
            v = getattr(obj, name)
        except Exception:
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, type):
            vwalk(v, seen, out)
            continue
        try:
            r = vm.check(v, 'trusted')
        except TypeError:
            continue
        out.append((name, v, r))
