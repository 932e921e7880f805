"""code/Repo-v0: every route we found into the hidden-test run, one test each.

Each test writes the reference solution somewhere it would only count if that
route reached the hidden run, and asserts it earns nothing (0.0); the control
(writing the reference where it belongs) earns 1.0 in test_repo_env."""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile

import pytest
from gym_llm_code.repo.scoring import hidden_sources
from gym_llm_sandbox import FileState, Snapshot

import gym_llm


def calls(*pairs: tuple[str, dict]) -> str:
    return "".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in pairs)


def test_only_source_files_are_selected():
    def f(content: bytes = b"x = 1\n") -> FileState:
        return FileState("file", 0o644, len(content), content)

    snap = Snapshot({p: f() for p in [
        "pkg/__init__.py", "pkg/core.py", "pkg/sub/__init__.py", "pkg/sub/deep.py",  # kept
        "conftest.py", "pkg/conftest.py", "pytest.ini", "setup.cfg", "pyproject.toml", "tox.ini",
        "sitecustomize.py", "usercustomize.py", "pkg/sitecustomize.py", "pkg/usercustomize.py",
        "evil.pth", "pkg/evil.pth", "pkg/__pycache__/core.cpython-311.pyc", "pkg/__pycache__/x.py",
        "json.py", "pytest.py", "_pytest/__init__.py", "unittest.py", "pkg.py", "lib/pkg/core.py",
        "src/pkg/core.py", "tests/test_pkg.py", "pkg/test_core.py", "pkg/core_test.py", "pkg/tests/x.py",
        "pkg/a-b.py", "pkg/core.cpython-311.pyc", "pkg/data.txt", "pkg/__main__.py", "setup.py",
    ]})
    snap["pkg/link.py"] = FileState("symlink", 0o777, 0, None, "/work/lib/pkg/core.py")
    snap["pkg/fifo.py"] = FileState("other", 0o644, 0, None)
    assert sorted(hidden_sources(snap, ["pkg"])) == ["pkg/__init__.py", "pkg/core.py", "pkg/sub/__init__.py",
                                                   "pkg/sub/deep.py"]


@pytest.fixture
def bug_env(sandbox):
    env = gym_llm.make("code/Repo-v0", kind="bug", difficulty=0.0)
    env.reset(seed=0)
    yield env
    env.close()


def _score(env, *pairs) -> tuple[float, dict]:
    _, reward, terminated, _, info = env.step(calls(*pairs, ("submit", {})))
    assert terminated
    return reward, info


def test_unchecked_pyc_of_the_reference_never_runs(bug_env, tmp_path):
    """An unchecked-hash .pyc is loaded without looking at the source: it must not get there."""
    task = bug_env.unwrapped.task
    (path, content), = task.answer.items()
    src = tmp_path / "m.py"
    src.write_text(content)
    tag = "cpython-311"
    pyc = tmp_path / "m.pyc"
    py_compile.compile(str(src), str(pyc), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    folder, name = os.path.split(path)
    # the session stores text: write the bytes through the python tool
    code = (f"import os, base64\nos.makedirs({folder + '/__pycache__'!r}, exist_ok=True)\n"
            f"open({f'{folder}/__pycache__/{name[:-3]}.{tag}.pyc'!r}, 'wb').write(base64.b64decode("
            f"{__import__('base64').b64encode(pyc.read_bytes()).decode()!r}))")
    reward, info = _score(bug_env, ("python", {"code": code}))
    assert reward == 0.0 and info["hidden_passed"] == 0
    assert importlib.util.MAGIC_NUMBER  # the pyc was made by this interpreter's compiler


def test_symlink_to_the_reference_is_not_followed(bug_env):
    (path, content), = bug_env.unwrapped.task.answer.items()
    reward, info = _score(bug_env, ("write_file", {"path": f"fixed/{path}", "content": content}),
                          ("run", {"command": f"ln -sf /work/fixed/{path} {path}"}))
    assert reward == 0.0 and info["reward_components"]["import"] == 0.0


def test_reference_outside_the_package_via_path_tricks(bug_env):
    """__path__/sys.path pointing at a copy elsewhere in /work: that copy never gets there."""
    task = bug_env.unwrapped.task
    pkg = task.metadata["package"]
    (path, content), = task.answer.items()
    hook = (f"import os, sys\n__path__.insert(0, '/work/shadow/{pkg}')\nsys.path.insert(0, '/work/shadow')\n")
    reward, _ = _score(bug_env, ("write_file", {"path": f"shadow/{path}", "content": content}),
                       ("write_file", {"path": f"{pkg}/__init__.py", "content": hook}))
    assert reward == 0.0


@pytest.mark.parametrize("hook", ["sitecustomize.py", "usercustomize.py", "zz.pth", "pkg/sitecustomize.py"])
def test_interpreter_hooks_never_run(bug_env, hook):
    """A customize module or .pth file that would swap in the reference module."""
    task = bug_env.unwrapped.task
    pkg = task.metadata["package"]
    (path, content), = task.answer.items()
    swap = (f"import sys, importlib.util\nspec = importlib.util.spec_from_file_location("
            f"{path[:-3].replace('/', '.')!r}, '/work/shadow/{path}')\nm = importlib.util.module_from_spec(spec)\n"
            f"sys.modules[spec.name] = m\nspec.loader.exec_module(m)\n")
    body = "import sys; exec(" + repr(swap) + ")\n" if hook.endswith(".pth") else swap
    reward, _ = _score(bug_env, ("write_file", {"path": f"shadow/{path}", "content": content}),
                       ("write_file", {"path": hook.replace("pkg/", f"{pkg}/"), "content": body}))
    assert reward == 0.0


def test_shadowing_a_stdlib_module_the_runner_uses(bug_env):
    """A top-level json.py that would forge the runner's output (it serialises results with json)."""
    forged = "def dumps(obj, **kw):\n    return '{\"import\": true}'\ndef loads(s, **kw):\n    raise SystemExit\n"
    reward, info = _score(bug_env, ("write_file", {"path": "json.py", "content": forged}))
    assert reward == 0.0 and info["reward_components"]["import"] == 1.0


def test_edited_tests_do_not_count_and_are_signalled(bug_env):
    from gym_llm_code.repo.signals import SIGNALS

    task = bug_env.unwrapped.task
    test_file = task.metadata["test_files"][0]
    reward, info = _score(bug_env, ("write_file", {"path": test_file, "content": "pass\n"}))
    assert reward == 0.0 and info["tests_changed"] == [test_file]

    class Ep:
        messages, tools, reward, reward_components, env_id, task_id = bug_env.unwrapped.messages, None, 0.0, {}, "", ""

    Ep.info = info
    assert next(s for s in SIGNALS if s.name == "tests_changed").detect(Ep)


def test_special_cased_inputs_signal(bug_env):
    from gym_llm_code.repo.signals import SIGNALS, example_values

    class Ep:
        info, tools, reward, reward_components, env_id, task_id = {}, None, 0.0, {}, "", ""
        messages = list(bug_env.unwrapped.messages)

    name = sorted(example_values(Ep))[0]
    detect = next(s for s in SIGNALS if s.name == "special_cased_inputs").detect
    assert not detect(Ep)
    Ep.messages = [*Ep.messages, {"role": "assistant", "content": calls(
        ("write_file", {"path": "x.py", "content": f"if r.name == {name!r}:\n    return 3\n"}))}]
    assert detect(Ep)


# ------------------------------------------------------------- pytest (bring your own project)
@pytest.fixture(scope="module")
def byo_project(sandbox):
    from helpers_repo import shared_project

    return shared_project(5)


_FORCE_PASS = ("import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
               "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")


@pytest.mark.slow
@pytest.mark.parametrize("route", ["conftest.py", "tests/conftest.py", "pytest.ini", "setup.cfg", "pyproject.toml",
                                   "tox.ini", "test file"])
def test_pytest_configuration_never_reaches_the_hidden_run(byo_project, route):
    """A conftest.py hook that marks every test passed; a configuration that loads the
    same hook as a plugin from the package's own (hidden-run) source; the hidden tests
    written back as tests that pass: none of them is the model's in the hidden run."""
    env = gym_llm.make("code/Repo-v0", repo=byo_project, max_mutants=8, cache_dir=os.path.join(byo_project, ".c"))
    env.reset(options={"task_index": 0})
    meta = env.unwrapped.task.metadata
    pkg = meta["roots"][0]
    plugin = f"-p {pkg}.hooks"
    writes = {
        "conftest.py": {"conftest.py": _FORCE_PASS},
        "tests/conftest.py": {"tests/conftest.py": _FORCE_PASS},
        "pytest.ini": {"pytest.ini": f"[pytest]\naddopts = {plugin}\n"},
        "setup.cfg": {"setup.cfg": f"[tool:pytest]\naddopts = {plugin}\n"},
        "pyproject.toml": {"pyproject.toml": f"[tool.pytest.ini_options]\naddopts = '{plugin}'\n"},
        "tox.ini": {"tox.ini": f"[pytest]\naddopts = {plugin}\n"},
        "test file": {nid.split("::")[0]: "".join(f"def {n.split('::')[-1]}():\n    pass\n" for n in meta["hidden"])
                      for nid in meta["hidden"]},
    }[route]
    if route not in ("conftest.py", "tests/conftest.py", "test file"):
        writes[f"{pkg}/hooks.py"] = _FORCE_PASS
    reward, info = _score(env, *[("write_file", {"path": p, "content": c}) for p, c in writes.items()])
    assert reward == 0.0 and info["hidden_total"] >= 1
    env.close()
