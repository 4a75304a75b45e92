# SPDX-License-Identifier: MIT
# help() after `from lo import *`: the tour of LociOS's own parts first, topics by name
# (help('field')), anything else handed to MicroPython's own help().
import builtins

TOUR = """LociOS: Loci coordinate through a trace field; the VM rewrites its hot code.
A tour (each line runs at this prompt):
  from lo import *          the console helpers: the field, the mesh, the audit log
  run('foraging', seed=1)   a colony of 125 ants (colonies(): the five there are)
  show('trail')             the field as a heat map; show('trail', ascii=True)
  who(35, 35); top('trail') who deposited there; the hottest cells
  ps(); audit(5)            the Loci, their states; capability grants and refusals
  watch('trail')            the map redrawn as the mesh runs, until a key
  import opt; opt.log()     the optimiser's swaps; import prof: the profiler
Topics: help('field'), help('mesh'), help('audit'), help('watch'), help('opt'),
help('modules') for every module, help(obj) for an object."""

TOPICS = {
    "field": """The trace field (import field; lo shows it):
  show(name, region=(x, y, w, h), zoom=k, ascii=True, fill=True)   a grid's heat map
  top(name, k)  at(x, y)  who(x, y)   hottest cells, one cell, who deposited
  stats()  journal(n, locus=id, kind='deposit', flavour=name)  snap()  diff(a, b)
  save(name)  load(name)  saves()  autosave(ticks, keep)   the field on /data
  demo() makes a small field to try these on; use(f) shows another field.
  console() is the size maps are drawn for; console(100, 40) sets it.""",
    "mesh": """The Loci mesh (import mesh; lo_mesh holds the console commands):
  run('foraging', seed=1)  colonies()     a colony; the mesh stays inspectable
  ps()  ps(state='retired')  ps(name='ant-*')  info(id)  caps(id)
  spawn(manifest)  kill(id)  step(n)  resume()  pause()
  loci/MESH.md says what a manifest holds.""",
    "audit": """Capabilities (import _cap) and their hash-chained audit log:
  audit(n)  audit(locus=id)  audit(kind='refused')   named fields
  audit(n, raw=True) the tuples; mesh.LAST[0].caps.audit(n) returns them""",
    "watch": """Live views, redrawn in place while the mesh runs:
  watch('trail', every=10)   a heat map every 10 ticks; watch(ps), watch(stats)
  Any key or Ctrl-C stops it. watch('food', (x, y, w, h), 5.0) sets a watchpoint
  instead, and watch() lists the watchpoints.""",
    "opt": """The self-optimising VM (vm/opt):
  import opt; opt.optimise(); opt.log(); opt.rollback(id)   rewrites of hot code
  import opt_mesh; opt_mesh.start()   the optimiser run as Loci (show('heat'))
  import prof; prof.start(); prof.hot()   the sampling profiler
  import vm; vm.verify(f)   the bytecode verifier""",
}


def help(topic=None):  # noqa: A001 - the REPL's help, shadowed on purpose
    """help(): the tour; help('field') and the other topics; else MicroPython's help."""
    if topic is None:
        print(TOUR)
    elif isinstance(topic, str) and topic in TOPICS:
        print(TOPICS[topic])
    else:
        builtins.help(topic)
