# SPDX-License-Identifier: MIT
"""tools/build/mkromfs.py: the frozen modules' sources as a ROMFS image. The image is
read back here by a reader written from the format (MicroPython's extmod/vfs_rom.c): a
tree of files under their frozen names comes back exactly, for any names and contents;
and the manifest's listing names every module port/manifest.py freezes."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.build.mkromfs import c_text, frozen_sources, romfs_image

ROOT = Path(__file__).resolve().parents[2]
MPY_DIR = ROOT / "build" / "micropython-1.25.0-lociOS"

HEADER = b"\xd2\xcd\x31"
KIND_PADDING, KIND_VERBATIM, KIND_DIRECTORY, KIND_FILE = 1, 2, 4, 5


def _uint(b: bytes, i: int) -> tuple[int, int]:
    v = 0
    while True:
        c = b[i]
        i += 1
        v = (v << 7) | (c & 0x7F)
        if not c & 0x80:
            return v, i


def _records(b: bytes, i: int, end: int, prefix: str, out: dict[str, bytes]) -> None:
    while i < end:
        kind, i = _uint(b, i)
        n, i = _uint(b, i)
        body, i = i, i + n
        assert i <= end
        if kind == KIND_PADDING:
            continue
        assert kind in (KIND_DIRECTORY, KIND_FILE), kind
        name_len, j = _uint(b, body)
        name = b[j:j + name_len].decode("ascii")
        j += name_len
        if kind == KIND_DIRECTORY:
            _records(b, j, i, prefix + name + "/", out)
            continue
        dkind, j = _uint(b, j)
        dlen, j = _uint(b, j)
        assert dkind == KIND_VERBATIM and j + dlen == i
        out[prefix + name] = b[j:i]


def read_romfs(image: bytes) -> dict[str, bytes]:
    assert image[:3] == HEADER
    n, i = _uint(image, 3)
    assert i + n == len(image)
    out: dict[str, bytes] = {}
    _records(image, i, len(image), "", out)
    return out


NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=12)
PATH = st.lists(NAME, min_size=1, max_size=4).map("/".join)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(PATH, st.binary(max_size=300), max_size=12))
def test_any_tree_of_files_reads_back_exactly(files):
    # A name that is also a directory of another cannot be in one tree.
    names = sorted(files)
    for a in names:
        if any(b.startswith(a + "/") for b in names):
            files.pop(a)
    assert read_romfs(romfs_image(files)) == files


def test_the_c_array_holds_the_image():
    image = romfs_image({"a.py": b"x = 1\n", "p/b.py": b"y = 2\n"})
    text = c_text(image, 2)
    body = text.split("{", 1)[1].split("}", 1)[0]
    assert bytes(int(x, 16) for x in body.replace("\n", "").split(",") if x.strip()) == image
    assert f"locios_romfs_len = {len(image)};" in text


def test_every_frozen_module_is_listed_under_its_frozen_name():
    files = frozen_sources(MPY_DIR, ROOT / "port", ROOT / "port" / "manifest.py")
    for name, path in (("mesh.py", "loci/python/mesh.py"),
                       ("colonies/tasks.py", "loci/python/colonies/tasks.py"),
                       ("opt/_policy.py", "vm/opt/_policy.py"),
                       ("prof.py", "vm/profile/prof.py"),
                       ("_boot.py", "port/modules/_boot.py")):
        assert files[name] == (ROOT / path).read_bytes(), name
    assert any(n.startswith("asyncio/") for n in files)
    assert all(n.endswith(".py") for n in files)
