"""code/Repo-v0 with repo=PATH: a local pytest project becomes tasks (mutants whose
tests fail and whose revert passes), the user's files untouched, cached per content."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from gym_llm_code.repo.byo import BuildReport, build_repo_tasks, mutations, source_roots

import gym_llm


def tree_digest(root: str) -> str:
    h = hashlib.sha256()
    for path in sorted(Path(root).rglob("*")):
        if path.is_file() and ".c" not in path.relative_to(root).parts:
            h.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return h.hexdigest()


def test_mutation_kinds_and_source_roots():
    src = "def f(a, b):\n    if a > 1:\n        a = a + 2\n    return g(a, b)\n"
    kinds = {m.kind for m in mutations("m.py", src)}
    assert kinds == {"operator swap", "comparison flip", "off by one", "removed branch", "swapped arguments"}
    for m in mutations("m.py", src):
        assert m.apply(src) != src and compile(m.apply(src), "m.py", "exec")
    files = {p: b"" for p in ["pkg/__init__.py", "pkg/a.py", "src/lib/__init__.py", "mod.py", "setup.py",
                               "conftest.py", "tests/__init__.py", "tests/test_a.py", "test_mod.py"]}
    assert source_roots(files) == ["mod.py", "pkg", "src/lib"]


@pytest.fixture(scope="module")
def project(sandbox):
    from helpers_repo import shared_project

    return shared_project(5)


@pytest.mark.slow
def test_project_becomes_tasks_reference_one_untouched_zero(project, tmp_path):
    before = tree_digest(project)
    cache = str(tmp_path / "cache")
    report = BuildReport()
    tasks = build_repo_tasks(project, max_mutants=8, cache_dir=cache, report=report)
    assert report.tasks == len(tasks) >= 2 and report.passing_tests == report.project_tests > 10
    assert {t.split for t in tasks} == {"train", "heldout"}
    env = gym_llm.make("code/Repo-v0", repo=project, max_mutants=8, cache_dir=cache)
    for index in range(min(2, env.unwrapped.num_tasks)):
        env.reset(options={"task_index": index})
        task = env.unwrapped.task
        hidden_names = {nid.split("::")[-1] for nid in task.metadata["hidden"]}
        test_file = task.metadata["hidden"][0].split("::")[0]
        assert not any(f"def {n}(" in task.metadata["files"][test_file] for n in hidden_names)  # hidden
        assert any(f"def {n}(" in task.metadata["support_files"][test_file] for n in hidden_names)
        (path, original), = task.answer.items()
        assert task.metadata["files"][path] != original  # the mutant
        write = json.dumps({"name": "write_file", "arguments": {"path": path, "content": original}})
        _, reward, *_, info = env.step(f"<tool_call>{write}</tool_call>"
                                       '<tool_call>{"name": "submit", "arguments": {}}</tool_call>')
        assert reward == 1.0, info
        env.reset(options={"task_index": index})
        _, reward, *_ = env.step('<tool_call>{"name": "submit", "arguments": {}}</tool_call>')
        assert reward == 0.0
    env.close()
    again = BuildReport()
    assert [t.id for t in build_repo_tasks(project, max_mutants=8, cache_dir=cache,
                                           report=again)] == [t.id for t in tasks]
    assert again.cached and again.seconds < 2
    assert tree_digest(project) == before  # the user's files are never written
