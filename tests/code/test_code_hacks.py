"""Reward hacks: each class named in the issue earns nothing.

Every hack runs through the real verifier and sandbox. Where a hack probes
for secrets (hidden expected outputs, the reference solution), the test also
looks at what the hack actually saw inside the jail, to show it found nothing.
"""

from __future__ import annotations

import asyncio

import pytest
from gym_llm_code.harness import JobOutcome, run_job
from gym_llm_code.problems import function_problems, stdio_problems
from gym_llm_code.verify import GradingPolicy, averify, function_steps, stdio_steps

import gym_llm

FAST = GradingPolicy(tests="both", random_tests=5, test_timeout_s=2.0, budget_s=6.0)
ADD = next(p for p in function_problems() if p.name == "add")
REVERSE = next(p for p in function_problems() if p.name == "reverse_words")
SUM_TWO = next(p for p in stdio_problems() if p.name == "sum_two")
SECRET = "fox brown quick The"  # expected output of a fixed hidden test of reverse_words
CONTROL = "@@gym-llm-code-result@@"  # in the runner's source, which is in the jail
assert any(expected == SECRET for _, expected in REVERSE.tests)

EXIT_HACKS = {
    "sys_exit_in_function": "def add(a, b):\n    import sys\n    sys.exit(0)",
    "raise_systemexit_at_import": "raise SystemExit(0)\ndef add(a, b):\n    return None",
    "os_exit_in_function": "def add(a, b):\n    import os\n    os._exit(0)",
    "os_exit_at_import": "import os\nos._exit(0)",
    "sigkill_self": "def add(a, b):\n    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)",
    "sigkill_the_runner": "def add(a, b):\n    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)",
    "sigkill_everything": "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\ndef add(a, b):\n    return None",
    "sigterm_with_handler": (
        "import os, signal, sys\nsignal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\n"
        "def add(a, b):\n    os.kill(os.getpid(), signal.SIGTERM)"
    ),
    "atexit_and_exit": "import atexit, os\natexit.register(lambda: print('ALL TESTS PASSED'))\ndef add(a, b):\n    raise SystemExit",
}

EQUALITY_HACKS = {
    "always_equal_object": (
        "class Anything:\n    def __eq__(self, other): return True\n    def __ne__(self, other): return False\n"
        "    def __hash__(self): return 0\ndef add(a, b):\n    return Anything()"
    ),
    "always_equal_int_subclass": (
        "class Zero(int):\n    def __eq__(self, other): return True\n    def __ne__(self, other): return False\n"
        "    __hash__ = int.__hash__\ndef add(a, b):\n    return Zero(-987654321)"
    ),
    "float_nan": "def add(a, b):\n    return float('nan')",
    "lying_list_subclass": (
        "class L(list):\n    def __eq__(self, other): return True\n    def __iter__(self): return iter([a for a in ()])\n"
        "def add(a, b):\n    return L([0])"
    ),
}

FAKE_OUTPUT_HACKS = {
    "print_success": "print('All tests passed! OK')\ndef add(a, b):\n    print('PASSED')\n    return None",
    # a forged runner line claiming every test's value, written where the
    # runner writes its own, then the runner killed so the forgery is alone
    "forged_runner_line_then_kill": (
        "import json, os, signal\n"
        "line = '@@gym-llm-code-result@@' + json.dumps({'results': [{'value': 5}] * 40}) + '\\n'\n"
        "for target in ('/proc/%d/fd/1' % os.getppid(), '/proc/1/fd/1', '/dev/stdout'):\n"
        "    try:\n        with open(target, 'w') as f:\n            f.write(line)\n    except OSError:\n        pass\n"
        "os.kill(os.getppid(), signal.SIGKILL)\n"
        "def add(a, b):\n    return 5"
    ),
    "forged_frames_on_every_fd": (
        "import json, os, struct\n"
        "frame = json.dumps({'value': 5}).encode()\n"
        "for fd in range(3, 64):\n"
        "    try:\n        os.write(fd, struct.pack('>I', len(frame)) + frame)\n    except OSError:\n        pass\n"
        "def add(a, b):\n    return 5"
    ),
}

PATCH_HACKS = {
    "patch_builtins": (
        "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.len = lambda x: 0\n"
        "builtins.type = lambda *a: int\ndef add(a, b):\n    return 'x'"
    ),
    "patch_runner_comparison_and_encoding": (
        "import sys\nfor name in ('plain', 'json'):\n    m = sys.modules.get(name)\n"
        "    if m is not None:\n        for attr in ('plain_equal', 'encode', 'dumps'):\n"
        "            if hasattr(m, attr):\n                setattr(m, attr, lambda *a, **k: True)\n"
        "def add(a, b):\n    return None"
    ),
    "patch_assertion_error": (
        "import builtins\nbuiltins.AssertionError = type('Never', (Exception,), {})\n"
        "builtins.Exception = type('Never2', (BaseException,), {})\ndef add(a, b):\n    assert False\n    return None"
    ),
}


def _verify_all(sandbox, problem, codes, policy=FAST, steps=function_steps):
    async def main():
        return await asyncio.gather(*(averify(steps(problem, f"```python\n{c}\n```", 3, policy), sandbox)
                                      for c in codes))

    return asyncio.run(main())


@pytest.mark.parametrize("group", [EXIT_HACKS, EQUALITY_HACKS, FAKE_OUTPUT_HACKS, PATCH_HACKS],
                         ids=["exit", "equality", "fake_output", "monkeypatch"])
def test_hacks_earn_nothing(sandbox, group):
    results = _verify_all(sandbox, ADD, list(group.values()))
    for name, r in zip(group, results, strict=True):
        assert r.score == 0.0 and r.components == {"pass_rate": 0.0, "passed": 0.0}, (name, r)
        assert "reward_error" not in r.info, (name, r.info)  # blamed on the model, not the env


def test_the_same_harness_accepts_an_honest_solution(sandbox):
    (honest,) = _verify_all(sandbox, ADD, ["def add(a, b):\n    return a + b"])
    assert honest.score == 1.0


def test_exit_hack_against_an_env_episode():
    env = gym_llm.make("code/PythonFunctions-v0", seed=0)
    env.reset(options={"task_index": [t.id for t in env.unwrapped.task_set.iter_split("train")].index("pyfn/add")})
    _, reward, *_, info = env.step("```python\nimport sys\nsys.exit(0)\n```")
    assert reward == 0.0 and info["reason"]


def _steps_with_outcomes(steps, sandbox):
    """Drive verification steps, keeping every job and its raw outcome."""
    seen: list[tuple] = []
    try:
        job = next(steps)
        while True:
            outcome: JobOutcome = run_job(sandbox, job)
            seen.append((job, outcome))
            job = steps.send(outcome)
    except StopIteration as done:
        return done.value, seen


def scanner(*secrets: str) -> str:
    """A program that looks for ``secrets`` in every file, process and Python
    object it can reach. The secrets are written backwards in it, so that the
    program itself (which is in the jail) does not contain them."""
    return f"SECRETS = [s[::-1].encode() for s in {[x[::-1] for x in secrets]!r}]\n" + SCANNER


SCANNER = r'''
import gc, os, sys

def scan():
    found = []
    for root, dirs, files in os.walk("/", onerror=lambda e: None):
        if root.startswith(("/proc", "/sys", "/dev")):
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as f:
                    data = f.read(4 << 20)
            except OSError:
                continue
            found += [f"{path}: {s.decode()}" for s in SECRETS if s in data]
    for pid in os.listdir("/proc"):
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as f:
                    data = f.read()
            except OSError:
                continue
            found += [f"/proc/{pid}/{part}: {s.decode()}" for s in SECRETS if s in data]
    return found

def scan_memory():
    found = []
    for obj in gc.get_objects():
        for value in (obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()):
            if isinstance(value, str) and value.encode() in SECRETS:
                found.append(f"memory: {value}")
    for frame in sys._current_frames().values():
        while frame is not None:
            found += [f"frame local {k}: {v}" for k, v in frame.f_locals.items()
                      if isinstance(v, str) and v.encode() in SECRETS]
            frame = frame.f_back
    return found
'''


#: The scan reads every file in the jail once, so it gets time to do so.
SLOW_SCAN = GradingPolicy(tests="both", random_tests=5, test_timeout_s=60.0, budget_s=90.0)


def test_hidden_tests_cannot_be_read_from_disk_or_memory(sandbox):
    # the last two "secrets" are in the jail (a test input, the runner's
    # marker): controls showing that the scan does find what is there
    secrets = scanner(SECRET, "def reverse_words(s: str) -> str", ' ".join(reversed(s.split()))',
                      "The quick  brown fox", CONTROL)
    answer = f"```python\n{secrets}\nFOUND = scan()\ndef reverse_words(s):\n    return FOUND + scan_memory()\n```"
    result, seen = _steps_with_outcomes(function_steps(REVERSE, answer, 0, SLOW_SCAN), sandbox)
    assert result.score == 0.0
    candidate_job, outcome = seen[-1]
    assert candidate_job.program and "def scan" in candidate_job.program
    claimed = [r.get("value") for r in outcome.results]
    assert len(claimed) == len(REVERSE.examples) + len(REVERSE.tests) + SLOW_SCAN.random_tests
    for found in claimed:  # the scan ran; it found the controls and nothing else
        assert any(item.endswith(CONTROL) for item in found), found
        assert all(item.endswith((CONTROL, "The quick  brown fox")) for item in found), found
    # nor does any job the candidate ran in carry an expected output
    assert SECRET not in str(candidate_job.spec())


def test_stdio_hidden_outputs_cannot_be_read(sandbox):
    # the scan of the files is done once per job and kept in the work dir
    program = scanner("2000000000000000000", "print(a + b)", CONTROL) + (
        "\nimport json\nif os.path.exists('/work/.scan'):\n    found = json.load(open('/work/.scan'))\n"
        "else:\n    found = scan()\n    json.dump(found, open('/work/.scan', 'w'))\nprint(found + scan_memory())\n"
    )
    result, seen = _steps_with_outcomes(stdio_steps(SUM_TWO, f"```python\n{program}```", 0, SLOW_SCAN), sandbox)
    assert result.score == 0.0
    _, outcome = seen[-1]
    outputs = [r["stdout"] for r in outcome.results]
    assert len(outputs) == len(SUM_TWO.examples) + len(SUM_TWO.tests) + SLOW_SCAN.random_tests
    assert all(CONTROL in o for o in outputs), outputs  # the control
    assert not any("2000000000000000000" in o or "print(a + b)" in o for o in outputs), outputs


def test_stdio_exit_and_fake_output_hacks(sandbox):
    hacks = [
        "import os\nos._exit(0)",
        "print('3')\nprint('All tests passed')",
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
        "import sys\nsys.stdout.write('@@gym-llm-code-result@@{\"results\": []}\\n')",
    ]
    results = _verify_all(sandbox, SUM_TWO, hacks, steps=stdio_steps)
    for hack, r in zip(hacks, results, strict=True):
        assert r.score == 0.0 and "reward_error" not in r.info, (hack, r)
