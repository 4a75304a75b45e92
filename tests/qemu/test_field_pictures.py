# SPDX-License-Identifier: MIT
"""Snapshots pulled from the guest over the serial line (raw REPL, binary) and rendered on
the host: the bytes are the guest's own snapshot, and the pictures' pixels follow the
field (hottest cell brightest, zero cells the scale's minimum colour, order kept)."""

from __future__ import annotations

import pytest
from guestprog import prog
from PIL import Image

from tools.field import fieldpics, fieldsnap

SETUP = prog("field_pictures")
HOT = {(13, 7): 9.0, (2, 1): 4.0, (5, 5): 2.0, (19, 0): 1.0}


def lum(rgb):
    r, g, b = rgb
    return 0.299 * r + 0.587 * g + 0.114 * b


@pytest.fixture(scope="module")
def con(guest):
    guest.raw_enter()
    guest.exec(SETUP)
    yield guest
    guest.raw_exit()


@pytest.fixture(scope="module")
def snap(con):
    data = fieldsnap.pull(con, "P")
    digest = con.exec("print(P.digest().hex())").decode().strip()
    s = fieldsnap.parse(data)
    assert s.digest.hex() == digest and s.tick == 1
    return s


def test_pulled_snapshot_holds_the_guest_field(con, snap):
    heat = snap.flavours["heat"]
    assert {(i % 20, i // 20): v for i, v in enumerate(heat.values) if v} == HOT
    assert set(heat.last.values()) == {5}
    assert snap.flavours["jobs"].entries == {b"build": 3.0, b"lint": 1.0}
    assert fieldsnap.pull(con, "P", mode="base64") == fieldsnap.pull(con, "P")


def test_heat_map_pixels_follow_the_field(snap, tmp_path):
    heat = snap.flavours["heat"]
    path = fieldpics.write_pngs(snap, tmp_path, "p")[0]
    img = Image.open(path).convert("RGB")
    lay = fieldpics.grid_layout(heat)
    assert img.size == (lay.width, lay.height) == (500, 10 * 25 + fieldpics.LEGEND_H)
    cells = {(x, y): img.getpixel(lay.centre(x, y)) for x in range(20) for y in range(10)}
    brightest = max(lum(img.getpixel((px, py))) for px in range(20 * lay.scale)
                    for py in range(10 * lay.scale))
    assert lum(cells[13, 7]) == brightest and cells[13, 7] == (255, 255, 255)
    assert all(cells[c] == fieldpics.ramp(0.0) == (0, 0, 0) for c in cells if c not in HOT)
    # Brightness ranks the cells as their values do, and each colour is on the scale.
    order = sorted(HOT, key=HOT.get)
    assert [lum(cells[c]) for c in order] == sorted(lum(cells[c]) for c in order)
    assert len({cells[c] for c in order}) == 4
    assert all(cells[c] == fieldpics.colour(HOT[c], 9.0) for c in HOT)
    # Every pixel of a cell's square has the cell's colour.
    x0, y0 = 13 * lay.scale, 7 * lay.scale
    assert {img.getpixel((x0 + i, y0 + j)) for i in range(lay.scale)
            for j in range(lay.scale)} == {(255, 255, 255)}


def test_keyed_bars_follow_the_values(snap, tmp_path):
    img = fieldpics.render(snap.flavours["jobs"], snap.tick).convert("RGB")
    row = [img.getpixel((x, 10)) for x in range(img.width)]
    row2 = [img.getpixel((x, 24)) for x in range(img.width)]
    bar = sum(1 for p in row if p == (255, 255, 255))
    bar2 = sum(1 for p in row2 if p == fieldpics.colour(1.0, 3.0))
    assert bar > 0 and bar2 > 0 and abs(bar / bar2 - 3.0) < 0.05


def test_animation_frames_share_one_scale(con, tmp_path):
    snaps = []
    for _ in range(3):
        snaps.append(fieldsnap.parse(fieldsnap.pull(con, "P")))
        con.exec("P.tick()")
    path = fieldpics.write_animation(snaps, "heat", tmp_path / "heat.gif")
    gif = Image.open(path)
    assert gif.n_frames == 3
    lay = fieldpics.grid_layout(snaps[0].flavours["heat"])
    hot = []
    for i, s in enumerate(snaps):
        gif.seek(i)
        frame = gif.convert("RGB")
        assert frame.size == (lay.width, lay.height)
        hot.append(frame.getpixel(lay.centre(13, 7)))
        # E = 0.5: the hottest cell halves each tick, on the first frame's scale.
        assert hot[-1] == fieldpics.colour(s.flavours["heat"].at(13, 7), 9.0)
    assert hot[0] == (255, 255, 255) and lum(hot[0]) > lum(hot[1]) > lum(hot[2])
