"""Fixtures shared by the math tests."""

from __future__ import annotations

import pytest
from gym_llm_math import Verifier


@pytest.fixture(scope="session")
def slow_verifier():
    """A verifier with the fast path off: math-verify judges everything (one
    worker process, shared by the test modules: each costs a second or two)."""
    v = Verifier(fast_path=False, workers=1)
    yield v
    v.close()
