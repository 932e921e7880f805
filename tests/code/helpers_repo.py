"""A procedural Repo-v0 project written out as a pytest project (bring-your-own tests)."""

from __future__ import annotations

import os
import random
import tempfile
from dataclasses import replace

from gym_llm_code.jail import plain
from gym_llm_code.repo.projects import (
    call_expressions,
    draw_spec,
    evaluate_in_process,
    render_project,
)


def pytest_project(root: str, seed: int) -> str:
    """Write a correct procedural project and a pytest file of its behaviour under ``root``."""
    spec = draw_spec(random.Random(seed), 0.8, "bug")
    files = render_project(spec)
    pkg = next(iter(files)).split("/")[0]
    exprs = call_expressions(replace(spec, kind="bug"), random.Random(seed), 3)
    modules = sorted({p.split("/")[1][:-3] for p in files if not p.endswith("__init__.py")})
    lines = [f"from {pkg} import {', '.join(modules)}", ""]
    for i, (e, r) in enumerate(zip(exprs, evaluate_in_process(files, pkg, exprs), strict=True)):
        if r["ok"]:
            lines += [f"def test_{i}():", f"    assert {e} == {plain.decode(r['v'])!r}", ""]
    files[f"tests/test_{pkg}.py"] = "\n".join(lines)
    for path, content in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(content)
    return pkg


_PROJECTS: dict[int, str] = {}


def shared_project(seed: int) -> str:
    """One pytest project per seed and process (with its task cache in ``<root>/.c``),
    shared by the test modules that build tasks from it."""
    if seed not in _PROJECTS:
        root = tempfile.mkdtemp(prefix="repo-byo-")
        pytest_project(root, seed)
        _PROJECTS[seed] = root
    return _PROJECTS[seed]
