# SPDX-License-Identifier: MIT
"""Fixtures for tests that boot LociOS in QEMU. One guest is shared per test module:
a boot costs ~6 s of firmware under TCG, so modules group tests that can share one."""

from __future__ import annotations

import pytest

from guestconsole import IMAGE, Guest


@pytest.fixture(scope="module")
def guest(request, tmp_path_factory):
    log = tmp_path_factory.mktemp("serial") / f"{request.module.__name__}.log"
    g = Guest(IMAGE, log=log)
    try:
        g.banner = g.boot()
        yield g
    finally:
        g.close()
