# SPDX-License-Identifier: MIT
# The worker Locus of the task-allocation colony: response threshold P = s^2/(s^2 + θ^2)
# to a task's stimulus s; asks for a task on 'claim', works once 'owner' names it.

SOURCE = """
# States: idle; asked (a claim on `asked` is out, waiting for the board's answer on
# 'owner'); working (`left` steps to go on `task`).
task = None
left = 0
asked = None
waited = 0


def step(ctx):
    global task, left, asked, waited
    a = ctx.args
    if task is not None:
        left -= 1
        if left <= 0:
            ctx.deposit('done', 1.0, task)
            task = None
        return
    if asked is not None:
        o = ctx.sense('owner', asked)
        if o == ctx.id:
            task = asked
            left = a['work']
            asked = None
        elif o > 0 or waited >= a['patience']:
            asked = None
        else:
            waited += 1
        return
    free = []
    for key, s in ctx.top('task', a['look']):
        if ctx.sense('owner', key) == 0 and ctx.sense('claim', key) == 0:
            free.append((key, s))
    if not free:
        return
    key, s = free[ctx.rand() % len(free)]
    th = a['theta']
    if ctx.random() * (s * s + th * th) < s * s:
        ctx.deposit('claim', 1.0, key)
        asked = key
        waited = 0
"""
