# SPDX-License-Identifier: MIT
# The ant Locus of the foraging colony (and of the healing and hostile colonies): NetLogo's
# Ants rules, one ant per Locus. SOURCE is what the mesh compiles and verifies.

SOURCE = """
# One NetLogo ant. Position and heading in NetLogo's frame (origin at the nest, y up,
# heading 0 = north, clockwise); attention follows the patch it stands on.
import math

x = 0.0
y = 0.0
heading = 0
carrying = False
R = 35


def init(ctx):
    global heading, R
    heading = ctx.rand() % 360          # create-turtles: a random integer heading
    R = ctx.args['r']                   # max-pxcor


def patch(px, py):
    # The field cell of the patch containing NetLogo point (px, py), or None off the world.
    r = R
    cx = int(math.floor(px + 0.5))
    cy = int(math.floor(py + 0.5))
    if cx < -r or cx > r or cy < -r or cy > r:
        return None
    return (cx + r, r - cy)


def ahead(angle):
    h = (heading + angle) * math.pi / 180.0
    return patch(x + math.sin(h), y + math.cos(h))


def scent(ctx, flavour, angle):
    p = ahead(angle)
    if p is None:
        return 0.0
    return ctx.sense(flavour, p)


def uphill(ctx, flavour):
    global heading
    a = scent(ctx, flavour, 0)
    right = scent(ctx, flavour, 45)
    left = scent(ctx, flavour, -45)
    if right > a or left > a:
        if right > left:
            heading = (heading + 45) % 360
        else:
            heading = (heading - 45) % 360


def look_for_food(ctx, a):
    global carrying, heading
    if ctx.sense('food') - ctx.sense('taken') > 0.5:
        carrying = True
        ctx.deposit('taken', 1.0)
        heading = (heading + 180) % 360
        return
    c = ctx.sense('trail')
    if a['follow'] and c >= a['lo'] and c < a['hi']:
        uphill(ctx, 'trail')


def return_to_nest(ctx, a):
    global carrying, heading
    if ctx.sense('nest') > a['nest']:
        carrying = False
        ctx.deposit('deliv', 1.0, 'food')
        heading = (heading + 180) % 360
    else:
        if a['drop'] > 0:
            ctx.deposit('trail', a['drop'])
        uphill(ctx, 'nest')


def step(ctx):
    global heading, x, y
    a = ctx.args
    if a.get('census'):                 # healing colony: "I am alive" for the queen
        ctx.deposit('census', 1.0, 'ant')
    if a['i'] >= ctx.tick:              # if who >= ticks [stop]: staggered departure
        return
    if carrying:
        return_to_nest(ctx, a)
    else:
        look_for_food(ctx, a)
    heading = (heading + ctx.rand() % 40 - ctx.rand() % 40) % 360     # wiggle
    if ahead(0) is None:
        heading = (heading + 180) % 360
    h = heading * math.pi / 180.0
    nx = x + math.sin(h)
    ny = y + math.cos(h)
    p = patch(nx, ny)
    if p is not None:                   # fd 1 (a move off the world is not made)
        x = nx
        y = ny
        ctx.goto(p[0], p[1])
"""
