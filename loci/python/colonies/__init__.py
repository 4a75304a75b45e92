# SPDX-License-Identifier: MIT
# Example colonies for the Loci mesh: each module gives flavours(**opts), setup(m, **opts),
# report(m) and run(seed=1, **opts). See README.md in this folder.
NAMES = ("foraging", "bridge", "tasks", "healing", "hostile")


def get(name):
    """The colony module called `name` (run('foraging', seed=1) at the console)."""
    if name not in NAMES:
        raise ValueError("no colony %r (known: %s)" % (name, ", ".join(NAMES)))
    return __import__("colonies." + name, None, None, [name])
