"""Registration, gymnasium integration and plugin discovery (in spawned
workers, and with a broken plugin beside working ones)."""

import json
import multiprocessing
import subprocess
import sys
import textwrap

import gymnasium
import pytest

import gym_llm
from gym_llm import SingleTurnEnv, Task

TASKS = [Task("a", "p", "x"), Task("b", "q", "y", split="heldout")]


def _echo(**kwargs):
    """Echo test env."""
    return SingleTurnEnv(TASKS, reward_fn=lambda t, r: 1.0, **kwargs)


def test_register_make_spec_and_gymnasium_make():
    spec = gym_llm.register("testreg/Echo-v0", _echo, max_turns=2)
    assert spec.domain == "testreg" and spec.description == "Echo test env." and spec.plugin is None
    assert "testreg/Echo-v0" in gym_llm.list_envs() and gym_llm.list_envs() == sorted(gym_llm.list_envs())
    env = gym_llm.make("testreg/Echo-v0", split="heldout", seed=1)
    assert env.max_turns == 2 and env.split == "heldout"
    _, info = env.reset()
    assert info["env_id"] == "testreg/Echo-v0" and info["domain"] == "testreg" and info["task_id"] == "b"
    genv = gymnasium.make("testreg/Echo-v0", max_turns=3)
    assert genv.unwrapped.max_turns == 3 and isinstance(genv.unwrapped, SingleTurnEnv)


def test_bad_ids_and_unknown_ids():
    with pytest.raises(ValueError, match="not of the form"):
        gym_llm.register("NoDomain-v0", _echo)
    gym_llm.register("testreg/Echo-v0", _echo)
    with pytest.raises(gym_llm.UnknownEnvError, match="did you mean 'testreg/Echo-v0'"):
        gym_llm.make("testreg/Ecko-v0")


def test_third_party_plugin_is_discovered():
    # tests/plugins/gym-llm-example is installed as its own distribution (see Makefile)
    spec = gym_llm.spec("example/Reverse-v0")
    assert spec.plugin == "gym-llm-example" and spec.kwargs == {"length": 4}
    env = gymnasium.make("example/Reverse-v0")
    env.reset(seed=0)
    assert env.step(env.unwrapped.task.answer)[1] == 1.0
    out = subprocess.run([sys.executable, "-m", "gym_llm.apps.cli", "list", "--json"], capture_output=True, text=True, check=True)
    rows = {r["id"]: r for r in json.loads(out.stdout)}
    assert rows["example/Reverse-v0"] == {"id": "example/Reverse-v0", "domain": "example", "plugin": "gym-llm-example",
                                          "description": "Reverse a short word (third-party plugin example)"}


def _worker_make(env_id):
    # runs in a fresh spawned interpreter: only the pickled reference to this
    # function brings gym_llm in, and with it every plugin
    env = gymnasium.make(env_id)
    _, info = env.reset(seed=5)
    return info["task_id"], sorted(gym_llm.list_envs())


def test_discovery_in_spawned_workers():
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        task_id, ids = pool.apply(_worker_make, ("example/Reverse-v0",))
    assert "example/Reverse-v0" in ids
    assert task_id == _worker_make("example/Reverse-v0")[0]


def test_gymnasium_module_prefix_needs_no_prior_import():
    code = "import gymnasium; e = gymnasium.make('gym_llm:example/Reverse-v0'); print(e.reset(seed=0)[1]['env_id'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "example/Reverse-v0"


def _fake_distribution(root, name, module_source, register_body):
    """An installed distribution (dist-info + module) in a site dir of its own."""
    mod = name.replace("-", "_")
    (root / f"{mod}.py").write_text(textwrap.dedent(module_source).format(body=register_body))
    info = root / f"{mod}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[gym_llm]\n{mod} = {mod}\n")


PLUGIN_SOURCE = """
import gym_llm

@gym_llm.hookimpl
def gym_llm_register(registry):
{body}
"""


def test_broken_plugins_are_reported_by_name_and_isolated(tmp_path):
    _fake_distribution(tmp_path, "gym-llm-boom-import", "raise ImportError('missing dependency xyz')\n{body}", "")
    _fake_distribution(tmp_path, "gym-llm-boom-register", PLUGIN_SOURCE, "    registry.register('boom/Half-v0', 'nowhere:x')\n    raise RuntimeError('register exploded')")
    _fake_distribution(tmp_path, "gym-llm-fine", PLUGIN_SOURCE,
                       "    registry.register('fine/Echo-v0', 'gym_llm_example.envs:ReverseEnv')")
    code = textwrap.dedent("""
        import json, warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            import gym_llm
        from gym_llm.apps.cli import plugin_checks
        rows = [r for r in plugin_checks() if r["name"].startswith("plugin ")]
        print(json.dumps({"ids": gym_llm.list_envs(), "errors": gym_llm.registry.plugin_errors,
                          "warnings": [str(x.message) for x in w], "doctor": rows}))
    """)
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    result = json.loads(out.stdout)
    assert "fine/Echo-v0" in result["ids"] and "example/Reverse-v0" in result["ids"]
    assert "boom/Half-v0" not in result["ids"]  # a failed plugin registers nothing
    assert "missing dependency xyz" in result["errors"]["gym-llm-boom-import"]
    assert "register exploded" in result["errors"]["gym-llm-boom-register"]
    assert any("gym-llm-boom-import" in w for w in result["warnings"])
    assert {r["name"] for r in result["doctor"]} == {"plugin gym-llm-boom-import", "plugin gym-llm-boom-register"}
    assert all(not r["ok"] and r["fix"] for r in result["doctor"])
    bad = subprocess.run([sys.executable, "-m", "gym_llm.apps.cli", "list"], capture_output=True, text=True, env=env)
    assert bad.returncode == 0 and "gym-llm-boom-register" in bad.stdout


def test_with_sandbox_gives_a_runs_sandbox_config_to_the_envs_that_run_code():
    from gym_llm.envs.registry import with_sandbox

    config = {"memory_mb": 256, "cpu_time_s": None, "isolation": "nsjail"}
    assert with_sandbox("code/PythonFunctions-v0", {"max_turns": 1}, config) == \
        {"max_turns": 1, "sandbox": {"memory_mb": 256, "isolation": "nsjail"}}  # null keeps the domain's
    assert with_sandbox("math/Arithmetic-v0", {"difficulty": 0.1}, config) == {"difficulty": 0.1}
    own = {"sandbox": {"memory_mb": 512}}
    assert with_sandbox("tool/Shell-v0", own, config) == own  # the entry's own wins
    with pytest.raises(gym_llm.UnknownEnvError):
        with_sandbox("code/Nope-v0", {}, {})


def test_register_all_registers_a_plugins_table():
    from gym_llm.envs.registry import Registry

    reg = Registry()
    reg.register_all({"tabletest/A-v0": ("gym_llm_example.envs:ReverseEnv", "first", {"n": 1}),
                      "tabletest/B-v0": ("gym_llm_example.envs:ReverseEnv", "second", {})})
    assert sorted(reg.specs) == ["tabletest/A-v0", "tabletest/B-v0"]
    assert (reg.specs["tabletest/A-v0"].description, reg.specs["tabletest/A-v0"].kwargs) == ("first", {"n": 1})


DOCTOR_SOURCE = """
import gym_llm

@gym_llm.hookimpl
def gym_llm_doctor():
{body}
"""


def test_a_plugin_whose_doctor_hook_raises_is_one_failing_row(tmp_path):
    _fake_distribution(tmp_path, "gym-llm-boom-doctor", DOCTOR_SOURCE, "    raise RuntimeError('doctor exploded')")
    _fake_distribution(tmp_path, "gym-llm-fine-doctor", DOCTOR_SOURCE,
                       "    return [{'name': 'fine check', 'ok': True, 'detail': 'fine', 'fix': ''}]")
    plain = {"PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    doctor = [sys.executable, "-m", "gym_llm.apps.cli", "doctor"]
    healthy = json.loads(subprocess.run([*doctor, "--json"], capture_output=True, text=True, env=plain).stdout)
    out = subprocess.run([*doctor, "--json"], capture_output=True, text=True, env={**plain, "PYTHONPATH": str(tmp_path)})
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert out.returncode == 1
    broken = rows.pop("plugin gym-llm-boom-doctor doctor")
    assert not broken["ok"] and "RuntimeError: doctor exploded" in broken["detail"] and "gym-llm-boom-doctor" in broken["fix"]
    assert rows.pop("fine check")["ok"]
    # every other row is there: the core's, the sandbox's (through the same hook) and the plugins'
    assert set(rows) == {r["name"] for r in healthy} and any("nsjail" in name for name in rows)
    table = subprocess.run(doctor, capture_output=True, text=True, env={**plain, "PYTHONPATH": str(tmp_path)})
    assert table.returncode == 1 and "Traceback" not in table.stderr
    assert "gym-llm-boom-doctor" in table.stdout and "doctor exploded" in table.stdout and "fine check" in table.stdout


class DoctorPlugin:
    def __init__(self, answer):
        self.answer = answer

    @gym_llm.hookimpl
    def gym_llm_doctor(self):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class ListenerPlugin:
    """Hears every registration; raises on the id ``fail_on``."""

    def __init__(self, fail_on=None):
        self.fail_on = fail_on
        self.heard = []

    @gym_llm.hookimpl
    def gym_llm_env_registered(self, spec):
        self.heard.append(spec.id)
        if spec.id == self.fail_on:
            raise RuntimeError(f"cannot mirror {spec.id}")


@pytest.fixture
def add_plugins():
    """Register plugin objects with the real plugin manager (by name), unregistered after the test."""
    from gym_llm.envs.registry import plugin_manager

    added = []

    def add(**plugins):
        for name, plugin in plugins.items():
            plugin_manager().register(plugin, name=name)
            added.append(plugin)

    yield add
    for plugin in added:
        plugin_manager().unregister(plugin)


def test_call_each_answers_plugin_by_plugin_and_names_the_one_that_raises(add_plugins):
    from gym_llm.envs.registry import call_each

    add_plugins(fine=DoctorPlugin([{"name": "fine"}]), boom=DoctorPlugin(RuntimeError("no")))
    calls = call_each("gym_llm_doctor")
    assert calls.errors == {"boom": "RuntimeError: no"}
    # pluggy's call order (last registered first); the installed plugins' doctors answer too
    names = [name for name, _ in calls.results]
    assert ("fine", [{"name": "fine"}]) in calls.results and {"gym-llm", "gym-llm-math"} <= set(names)
    assert names.index("fine") < names.index("gym-llm")
    assert call_each("gym_llm_doctor", plugin="fine") == type(calls)([("fine", [{"name": "fine"}])], {})


def test_env_registered_reaches_each_plugin_once_those_registered_later_too(add_plugins):
    first, boom = ListenerPlugin(), ListenerPlugin(fail_on="hooktest/Echo-v0")
    add_plugins(first=first, boom=boom)  # boom is called first: one pluggy call would stop there
    assert first.heard == boom.heard and set(gym_llm.list_envs()) <= set(first.heard)  # the past, replayed
    before = len(first.heard)
    with pytest.warns(RuntimeWarning, match=r"'boom' failed on the registration of 'hooktest/Echo-v0'"):
        gym_llm.register("hooktest/Echo-v0", _echo)
    assert first.heard[before:] == boom.heard[before:] == ["hooktest/Echo-v0"]
    assert gym_llm.spec("hooktest/Echo-v0").entry_point is _echo
    later = ListenerPlugin()
    add_plugins(later=later)  # pluggy replays every past registration to it, each once
    assert later.heard.count("hooktest/Echo-v0") == 1 and set(gym_llm.list_envs()) <= set(later.heard)
    gym_llm.register("hooktest/Other-v0", _echo)
    assert first.heard[-1] == boom.heard[-1] == later.heard[-1] == "hooktest/Other-v0"


class AliasingPlugin:
    """Registers ``alias`` when it hears ``source``: a registration made inside
    another registration's hook (a plugin mirroring envs under other ids)."""

    def __init__(self, source, alias):
        self.source, self.alias = source, alias

    @gym_llm.hookimpl
    def gym_llm_env_registered(self, spec):
        if spec.id == self.source:
            gym_llm.register(self.alias, _echo)


def test_a_registration_made_inside_a_hook_reaches_plugins_registered_later(add_plugins):
    # call_each used to call a historic hook plugin by plugin through pluggy's
    # call_historic and then cut pluggy's private history back to its own record,
    # which also cut the record of the registration made inside the hook: a plugin
    # registered later never heard of the alias.
    first = ListenerPlugin()
    add_plugins(aliasing=AliasingPlugin("hooktest/Source-v0", "hooktest/Alias-v0"), first=first)
    gym_llm.register("hooktest/Source-v0", _echo)
    assert first.heard.count("hooktest/Alias-v0") == 1 and gym_llm.spec("hooktest/Alias-v0")
    later = ListenerPlugin()
    add_plugins(later=later)
    assert later.heard.count("hooktest/Source-v0") == later.heard.count("hooktest/Alias-v0") == 1
