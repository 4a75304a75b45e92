# SPDX-License-Identifier: MIT
# Set-up of test_opt_frozen.py's env tests: a colony's env callback (a closure over the
# colony's state, called with the live Mesh) gated by opt with the Mesh's stand-in.
import hashlib, mesh, opt, opt_env, vm, _rw
from opt import _values
from colonies import tasks
def env_colony(rounds=40, seed=5):
    m = mesh.Mesh(tasks.flavours(tasks=200), seed=seed)
    st = tasks.setup(m, seed=seed, tasks=200)
    for _ in range(rounds):
        m.round()
    return m, st
def gate_env(m, fn, rounds=3):
    # One optimiser move on fn (recording, `rounds` rounds, the gates): the journal
    # entries it made, and whether the gates left the colony's state and the field as
    # they were.
    j0 = opt.journal(1)
    last = j0[-1]["id"] if j0 else 0
    first = opt.attempt(fn)
    for _ in range(rounds):
        m.round()
    before = (repr(tasks_state(m)), m.field.digest())
    opt.attempt(fn)
    after = (repr(tasks_state(m)), m.field.digest())
    mine = [(j["kind"], j["verdict"], j["gate"], j["detail"][-120:])
            for j in opt.journal(50) if j["id"] > last]
    return first, mine, before == after
def env_twin_run(promote, seed=4, rounds=120, at=30):
    # The task colony for `rounds` rounds: the field digest chain, its report, and, with
    # `promote`, the verdicts on its env callback (recorded from round `at`, gated three
    # rounds later; the swap is rolled back after the run).
    m = mesh.Mesh(tasks.flavours(tasks=200), seed=seed)
    tasks.setup(m, seed=seed, tasks=200)
    fn = _rw.fun_of(m.envs[0])
    chain = hashlib.sha256()
    e = None
    for i in range(rounds):
        if promote and i == at:
            opt.attempt(fn)
        if promote and i == at + 3:
            e = opt.attempt(fn)
        m.round()
        chain.update(m.field.digest())
    if e is not None and e["verdict"] == "swapped":
        opt.rollback(e["id"], "test")
    return chain.digest().hex(), repr(tasks.report(m)), e and (e["kind"], e["verdict"])
def tasks_state(m):
    from colonies import common
    return common.state(m)
def env_verdicts():
    m, st = env_colony()
    return gate_env(m, _rw.fun_of(m.envs[0]))
def asking_env_verdicts():
    # An env callback that asks the mesh for something its stand-in does not answer.
    m, st = env_colony(rounds=2, seed=6)
    seen = []
    def env2(m):
        seen.append(len(m.ps()))
        for _ in range(300):
            seen.append(m.tick)
    m.env(env2)
    for _ in range(3):
        m.round()
    return gate_env(m, _rw.fun_of(env2))
def cell_copies():
    c = _rw.cell([1, {"a": 2.5}])
    k = _values.clone((c, 7))[0]
    inner = _rw.cell_get(k[0])
    inner[1]["a"] = 3.5
    changed = _values.clone((c,))[0]
    return (k[0] is not c, _rw.cell_get(c), inner, _values.same((c,), changed),
            _values.same((c,), k))
def closures_functions():
    # A closure's bytecode function, given without its closure, is verified with its
    # free variables as cells: vm.names reads the same names from it as from the closure.
    # A comprehension closing over a variable has one more unnamed argument, its iterator.
    def outer(a, b):
        def inner(x):
            return [a * y for y in range(x)] + [b]
        return inner
    cl = outer(2, 3)
    f = _rw.fun_of(cl)
    return vm.names(f) == vm.names(cl), vm.check(f, "trusted"), cl(3)
