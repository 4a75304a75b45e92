# SPDX-License-Identifier: MIT
"""Fixtures for tests that boot LociOS in QEMU. One guest is shared per test module:
a boot costs ~6 s of firmware under TCG, so modules group tests that can share one."""

from __future__ import annotations

import pytest

from tools.guest.guestconsole import IMAGE, Guest


@pytest.fixture(scope="module")
def guest(request, tmp_path_factory):
    log = tmp_path_factory.mktemp("serial") / f"{request.module.__name__}.log"
    g = Guest(IMAGE, log=log)
    try:
        g.banner = g.boot()
        yield g
    finally:
        g.close()


@pytest.fixture(scope="module")
def icount_guest(request, tmp_path_factory):
    """One guest per module under -icount (guest cycles follow instruction counts, so
    A/B measurements repeat exactly), with the module's CODE pasted."""
    log = tmp_path_factory.mktemp("serial") / f"{request.module.__name__}.log"
    g = Guest(IMAGE, log=log, icount=True)
    try:
        g.boot()
        out = g.paste(request.module.CODE)
        assert "Traceback" not in out, out
        yield g
    finally:
        g.close()
