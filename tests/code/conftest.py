"""Shared fixtures of the code-domain tests."""

from __future__ import annotations

import pytest
from gym_llm_sandbox import SandboxError


@pytest.fixture(scope="session")
def sandbox():
    """The code domain's real nsjail sandbox (skipped only where nsjail cannot
    isolate on this machine, which the sandbox explains)."""
    from gym_llm_code.harness import default_sandbox

    try:
        return default_sandbox()
    except SandboxError as e:
        pytest.skip(f"nsjail sandbox unavailable here: {e}")


def _fenced(code: str, lang: str = "python") -> str:
    return f"Here is my solution.\n\n```{lang}\n{code.strip()}\n```\n"


@pytest.fixture
def fenced():
    """``fenced(code, lang="python")``: an assistant answer holding ``code`` in a fenced block."""
    return _fenced
