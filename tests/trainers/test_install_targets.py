"""The Makefile's install targets: a user's ``make install`` gets the library,
its plugins and the trainers, never the test fixtures; ``make test`` (what CI
runs from a fresh clone) installs the test-only plugins it needs itself."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted(p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("tests/plugins/*/setup.cfg"))


def _planned_commands(target: str) -> str:
    """What ``make <target>`` would run on a fresh clone (``-B``: as if nothing were installed)."""
    if shutil.which("make") is None:
        pytest.fail("make is not installed: the Makefile is the documented set-up")
    out = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout


def test_make_install_leaves_the_test_plugins_out():
    assert FIXTURES, "tests/plugins holds the example plugin the registry tests load"
    planned = _planned_commands("install")
    assert '-e "trainers"' in planned and '-e "plugins/gym-llm-math"' in planned
    assert not [f for f in FIXTURES if f in planned], planned


def test_make_test_installs_the_test_plugins_before_pytest():
    planned = _planned_commands("test")
    pytest_at = planned.index("-m pytest")
    for fixture in FIXTURES:
        assert -1 < planned.find(f'-e "{fixture}"') < pytest_at, planned
