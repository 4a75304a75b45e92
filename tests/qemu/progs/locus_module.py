# SPDX-License-Identifier: MIT
# test_verifier.py: a Locus's module as compile() gets it, naming globals, builtins and a
# deleted global.
SEEN = 0
def step(ctx):
    global SEEN
    SEEN += 1
    return [c for c in range(3) if c > LIMIT], len(ctx.mem)
def init(ctx):
    global OLD
    del OLD
