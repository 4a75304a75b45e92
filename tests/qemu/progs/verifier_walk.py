# SPDX-License-Identifier: MIT
# test_verifier.py: vwalk() verifies every function reachable from a module's names.
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
        out.append((name, r))
