# SPDX-License-Identifier: MIT
"""Fixtures for tests that boot LociOS in QEMU. One guest is shared per test module:
a boot costs ~6 s of firmware under TCG, so modules group tests that can share one.

A module sets ICOUNT = True for a guest under -icount (guest cycles follow instruction
counts, so A/B measurements repeat exactly), and SETUP (a program, usually
guestprog.prog("NAME") of tests/qemu/progs/NAME.py) for the `g` fixture to paste.

Under -icount the firmware's boot takes over a minute (OVMF's delay loops poll the ACPI
timer, and each poll is an I/O exit), so the session boots one -icount guest per image,
saves it at its prompt and resumes that state for each such module: every one starts
from the same machine, just after boot, in about a second."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.guest.guestconsole import IMAGE, TEST_IMAGE, Guest


def pytest_addoption(parser):
    parser.addoption("--machines", action="store_true",
                     help="also run the long machine matrix (make test-machines)")


def pytest_collection_modifyitems(config, items):
    """Tests marked `machines` run only with --machines; without it they are deselected,
    not skipped, so `make test` lists nothing it did not mean to run."""
    if config.getoption("--machines"):
        return
    keep = [i for i in items if i.get_closest_marker("machines") is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


@pytest.fixture(scope="session")
def icount_states(tmp_path_factory):
    """image -> (saved state, boot text) of an -icount guest at its first prompt, made
    the first time a module asks for that image."""
    states: dict[Path, tuple[Path, str]] = {}

    def state_of(image: Path) -> tuple[Path, str]:
        if image not in states:
            where = tmp_path_factory.mktemp("icount-state")
            with Guest(image, log=where / "boot.log", icount=True, qmp=True) as g:
                banner = g.boot()
                g.save_state(where / "state")
            states[image] = (where / "state", banner)
        return states[image]

    return state_of


@pytest.fixture(scope="module")
def guest(request, tmp_path_factory, icount_states):
    """The module's guest, booted, its serial output logged; .banner is the boot text."""
    log = tmp_path_factory.mktemp("serial") / f"{request.module.__name__}.log"
    # TEST_MODULES = True: the module needs `_rwops` or `_fieldbench` (the test image).
    image = TEST_IMAGE if getattr(request.module, "TEST_MODULES", False) else IMAGE
    if getattr(request.module, "ICOUNT", False):
        state, banner = icount_states(image)
        g = Guest(image, log=log, icount=True, restore=state)
    else:
        g = Guest(image, log=log)
    try:
        booted = g.boot()
        g.banner = banner if g.restored else booted
        yield g
    finally:
        g.close()


@pytest.fixture(scope="module")
def g(guest, request):
    """The module's guest with the module's SETUP pasted (which must not raise)."""
    out = guest.paste(request.module.SETUP)
    assert "Traceback" not in out, out
    return guest
