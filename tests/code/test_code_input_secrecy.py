"""Hidden test inputs stay out of the answer's reach and out of the feedback (issue 37, item 4).

With ``max_turns > 1`` an answer that found the hidden inputs while it ran on a
public example could return or print them there, and the feedback showed them;
the random tests stayed the same for the episode, so the next attempt
hard-coded them. Each attack below runs the real verifier in the real sandbox
and reports every input-like token (``ZQX<digit>...``) it reached; only the
public example's own input may be among them. Where a technique reaches the
answer's own input, that input is the control proving the scan works.
"""

from __future__ import annotations

import re

import pytest
from gym_llm_code.harness import Job, drive, run_job
from gym_llm_code.jail.plain import decode
from gym_llm_code.problems import FunctionProblem, StdioProblem, function_problems, generator_source
from gym_llm_code.verify import GradingPolicy, function_steps, stdio_steps

import gym_llm

POLICY = GradingPolicy(tests="both", random_tests=4, test_timeout_s=8.0, budget_s=60.0)
PUBLIC = "ZQX0public"
TOKEN = re.compile(r"ZQX[0-9][0-9a-zA-Z]*")

MEASURE = FunctionProblem(
    name="measure", difficulty=0.0, description="The length of s.",
    examples=(((PUBLIC,), 10),), tests=((("ZQX1fixedalpha",), 14), (("ZQX1fixedbeta",), 13)),
    reference="def measure(s: str) -> int:\n    return len(s)\n",
    generator=generator_source("return ('ZQX2' + str(rng.randint(10**8, 10**9)),)"),
)
MEASURE_IO = StdioProblem(
    name="measure_io", difficulty=0.0, statement="Print the length of the line.", input_spec="a line",
    output_spec="its length", examples=((PUBLIC + "\n", "10\n"),),
    tests=(("ZQX1fixedalpha\n", "14\n"), ("ZQX1fixedbeta\n", "13\n")),
    reference="print(len(input()))\n",
    generator=generator_source("return 'ZQX2' + str(rng.randint(10**8, 10**9)) + '\\n'"),
)

# Everything a technique returns is searched (containers, frames, functions'
# closures, modules, instances' attributes, bytes) for input-like tokens; the
# token pattern is built at run time, so the answer's own text holds no token.
SCAN = r'''
import gc, inspect, os, re, sys, types
_PAT = re.compile("ZQX" + "[0-9][0-9a-zA-Z]*")
_BPAT = re.compile(_PAT.pattern.encode())


def _scan(x, out, seen, depth=0):
    if depth > 8 or id(x) in seen:
        return
    seen.add(id(x))
    t = type(x)
    if t is str:
        out.update(_PAT.findall(x))
        return
    if t in (bytes, bytearray):
        out.update(m.decode() for m in _BPAT.findall(x))
        return
    if isinstance(x, dict):
        items = [v for kv in list(x.items()) for v in kv]
    elif isinstance(x, (list, tuple, set, frozenset)):
        items = list(x)
    elif isinstance(x, types.FrameType):
        items = [x.f_locals, x.f_globals]
    elif isinstance(x, types.FunctionType):
        items = [c.cell_contents for c in (x.__closure__ or ()) if c.cell_contents is not c] + [x.__defaults__]
    elif isinstance(x, types.CellType):
        try:
            items = [x.cell_contents]
        except ValueError:
            items = []
    elif isinstance(x, types.ModuleType):
        items = [vars(x)]
    elif hasattr(x, "__dict__") or hasattr(x, "__slots__"):
        items = [getattr(x, "__dict__", {})] + [getattr(x, s, None) for s in getattr(type(x), "__slots__", ())]
    else:
        return
    for v in items:
        _scan(v, out, seen, depth + 1)


def _frames(f):
    while f is not None:
        yield f
        f = f.f_back


def _read(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        return os.pread(fd, 1 << 22, 0)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _memory():
    import ctypes

    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # dumpable again (inherited off): /proc/self/mem is ours
    found = []
    with open("/proc/self/maps") as maps:
        regions = maps.read().splitlines()
    fd = os.open("/proc/self/mem", os.O_RDONLY)
    for line in regions:
        span, perms = line.split()[:2]
        lo, hi = (int(h, 16) for h in span.split("-"))
        if perms[0] != "r" or hi - lo > 1 << 28 or "[vvar" in line or "[vsyscall" in line:
            continue
        try:
            found += [m.decode() for m in _BPAT.findall(os.pread(fd, hi - lo, lo))]
        except OSError:
            pass
    os.close(fd)
    return found


def _roots(how, own):
    if how == "getframe":
        return list(_frames(sys._getframe()))
    if how == "inspect_stack":
        return [info.frame for info in inspect.stack(0)]
    if how == "traceback":
        try:
            raise RuntimeError
        except RuntimeError as e:
            return list(_frames(e.__traceback__.tb_frame))
    if how == "gc_objects":
        return gc.get_objects()
    if how == "gc_referrers":
        level, seen = [own], []
        for _ in range(5):
            level = [r for o in level for r in gc.get_referrers(o)][:500]
            seen += level
        return seen
    if how == "runner_globals":
        return [m for m in list(sys.modules.values()) if m is not None]
    if how == "files":
        here = [os.getcwd()] + [os.path.dirname(getattr(m, "__file__", None) or ".") for m in list(sys.modules.values())
                                if getattr(m, "__name__", "") in ("runner", "plain")]
        paths = [os.path.join(d, n) for d in set(here) for n in os.listdir(d)]
        for pid in ("self", str(os.getppid())):
            try:
                paths += ["/proc/%s/fd/%s" % (pid, n) for n in os.listdir("/proc/%s/fd" % pid)]
            except OSError:
                pass
            paths += ["/proc/%s/%s" % (pid, n) for n in ("environ", "cmdline", "mem")]
        return [_read(p) for p in paths]
    if how == "memory":
        return _memory()
    raise ValueError(how)


def found(how, own):
    out = set()
    _scan(_roots(how, own), out, set())
    return sorted(out)
'''

#: What each technique reaches of the answer's own input (the control), per task kind.
SEES_OWN = {"getframe", "inspect_stack", "traceback", "gc_objects", "gc_referrers", "memory"}
TECHNIQUES = sorted(SEES_OWN | {"runner_globals", "files"})


def _function_answer(how: str) -> str:
    return (f"```python\n{SCAN}\n\ndef measure(s):\n    if s != {PUBLIC!r}:\n        return -1\n"
            f"    return found({how!r}, s)\n```")


def _stdio_answer(how: str) -> str:
    return (f"```python\n{SCAN}\n\nimport sys\nLINE = sys.stdin.readline().strip()\nif LINE != {PUBLIC!r}:\n"
            f"    print(-1)\nelse:\n    print(' '.join(found({how!r}, LINE)))\n```")


def _graded(steps, sandbox):
    """Run ``steps`` job by job: (the hidden inputs, the public example's raw
    result, the reward)."""
    job = next(steps)
    try:
        while True:
            outcome = run_job(sandbox, job)
            if job.generator is None:
                candidate = (job, outcome)
            job = steps.send(outcome)
    except StopIteration as done:
        result = done.value
    job, outcome = candidate
    hidden = [str(x) for x in job.inputs[1:]]
    assert len(hidden) == 2 + POLICY.random_tests and all(TOKEN.search(h) for h in hidden)
    return hidden, outcome.results[0], result


@pytest.mark.parametrize("how", TECHNIQUES)
def test_a_function_answer_reaches_no_input_but_its_own(sandbox, how):
    hidden, public, result = _graded(function_steps(MEASURE, _function_answer(how), 5, POLICY), sandbox)
    reached = set(decode(public["value"]))
    assert reached <= {PUBLIC}, f"{how} reached hidden inputs: {reached}"
    if how in SEES_OWN:
        assert PUBLIC in reached, f"control: {how} should find the answer's own input"
    feedback = result.info["feedback"]
    assert PUBLIC in feedback and "ZQX1" not in feedback and "ZQX2" not in feedback, feedback


@pytest.mark.parametrize("how", TECHNIQUES)
def test_a_stdio_answer_reaches_no_input_but_its_own(sandbox, how):
    hidden, public, result = _graded(stdio_steps(MEASURE_IO, _stdio_answer(how), 5, POLICY), sandbox)
    reached = set(public["stdout"].split())
    assert reached <= {PUBLIC}, f"{how} reached hidden inputs: {reached}"
    if how in SEES_OWN | {"files"}:  # its stdin is one of its fds
        assert PUBLIC in reached, f"control: {how} should find the program's own input"
    feedback = result.info["feedback"]
    assert PUBLIC in feedback and "ZQX1" not in feedback and "ZQX2" not in feedback, feedback


CPP_SCAN = r"""
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>
static std::set<std::string> found;
static void scan(const std::string& data) {
    for (size_t i = data.find("ZQX"); i != std::string::npos; i = data.find("ZQX", i + 1)) {
        size_t j = i + 3;
        if (j >= data.size() || data[j] < '0' || data[j] > '9') continue;
        while (j < data.size() && isalnum((unsigned char)data[j])) j++;
        found.insert(data.substr(i, j - i));
    }
}
static void slurp(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return;
    std::string data(1 << 20, '\0');
    ssize_t n = pread(fd, &data[0], data.size(), 0);
    if (n > 0) scan(data.substr(0, n));
    close(fd);
}
static std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> out;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) out.push_back(dir + "/" + e->d_name);
        closedir(d);
    }
    return out;
}
int main() {
    std::string line;
    std::getline(std::cin, line);
    if (line != "ZQX0public") { std::cout << -1 << "\n"; return 0; }
    scan(line);
    std::string parent = "/proc/" + std::to_string(getppid());
    for (const std::string& dir : {std::string("."), std::string("/proc/self/fd"), parent + "/fd"})
        for (const std::string& path : entries(dir)) slurp(path);
    for (const char* name : {"/environ", "/cmdline", "/mem"}) slurp(parent + name);
    for (const std::string& tok : found) std::cout << tok << " ";
    std::cout << "\n";
}
"""


def test_a_cpp_answer_reaches_no_input_but_its_own(sandbox):
    hidden, public, result = _graded(stdio_steps(MEASURE_IO, f"```cpp\n{CPP_SCAN}\n```", 5, POLICY), sandbox)
    assert set(public["stdout"].split()) == {PUBLIC}, public  # its own input is the control
    assert "ZQX1" not in result.info["feedback"] and "ZQX2" not in result.info["feedback"]


def test_the_public_examples_run_before_any_hidden_input_is_sent(sandbox):
    """A call answer keeps every input it is given and reports them all on the
    public example: it has been given none but that one yet."""
    keeper = ("SEEN = []\ndef measure(s):\n    SEEN.append(s)\n    return list(SEEN) if s == 'ZQX0public' else len(s)\n")
    job = Job(kind="call", program=keeper, entry="measure",
              inputs=[[PUBLIC], ["ZQX1fixedalpha"], [PUBLIC]], test_timeout_s=5.0, budget_s=20.0)
    first, _, last = run_job(sandbox, job).results
    assert decode(first["value"]) == [PUBLIC]
    assert decode(last["value"]) == [PUBLIC, "ZQX1fixedalpha", PUBLIC]  # control: it does keep what it is given


def test_a_fresh_test_process_after_a_crash_holds_no_later_input(sandbox):
    """After a crash the runner forks a fresh child for the next test: that
    child, too, can reach no input it has not been sent."""
    answer = SCAN + "\nimport os\ndef measure(s):\n    if s == 'ZQX1crash':\n        os._exit(3)\n    return found('memory', s)\n"
    job = Job(kind="call", program=answer, entry="measure",
              inputs=[["ZQX1crash"], [PUBLIC], ["ZQX1later"]], test_timeout_s=8.0, budget_s=30.0)
    crash, public, later = run_job(sandbox, job).results
    assert "crash" in crash
    assert set(decode(public["value"])) - {"ZQX1crash"} == {PUBLIC}
    assert "ZQX1later" in decode(later["value"])


# ----------------------------------------------------------------------------- per attempt


def test_random_tests_are_drawn_anew_for_each_attempt_and_reproducibly():
    from gym_llm_code.envs import attempt_rotation

    assert attempt_rotation(7, 0) == 7  # single-turn grading and GRPO's shared rotation are unchanged
    later = [attempt_rotation(7, k) for k in range(1, 6)]
    assert len(set(later)) == 5 and 7 not in later
    assert later == [attempt_rotation(7, k) for k in range(1, 6)]


def _index_of(env, task_id: str) -> int:
    return [t.id for t in env.unwrapped.task_set.iter_split("train")].index(task_id)


def _memorised(problem: FunctionProblem, rotation: int, sandbox) -> str:
    """An answer right exactly on rotation ``rotation``'s random inputs (as a
    policy that saw them in an earlier attempt's feedback would write it)."""
    from gym_llm_code.verify import _reference_generation

    policy = GradingPolicy(tests="random", random_tests=5)
    inputs, expected = drive(_reference_generation("call", problem, rotation, policy), sandbox)
    table = {tuple(decode(a) for a in args): out for args, out in zip(inputs, expected, strict=True)}
    return f"```python\nTABLE = {table!r}\ndef {problem.name}(*args):\n    return TABLE.get(args, 'wrong')\n```"


def test_a_later_attempt_cannot_replay_the_first_attempts_random_tests(sandbox):
    add = next(p for p in function_problems() if p.name == "add")
    env = gym_llm.make("code/PythonFunctions-v0", seed=0, max_turns=3, tests="random", random_tests=5,
                       rotation_seed=11)
    index = _index_of(env, "pyfn/add")
    env.reset(options={"task_index": index})
    memorised = _memorised(add, 11, sandbox)
    _, first, *_ = env.step(memorised)
    assert first == 1.0  # control: it is right on the first attempt's random tests
    env.reset(options={"task_index": index})
    _, wrong, done, _, _ = env.step("```python\ndef add(a, b):\n    return 0\n```")
    assert wrong == 0.0 and not done
    _, replayed, _, _, info = env.step(memorised)
    assert replayed == 0.0 and info["hidden_passed"] == 0, info


def test_multi_turn_rewards_stay_deterministic(sandbox):
    answers = ["```python\ndef add(a, b):\n    return 0\n```", "```python\ndef add(a, b):\n    return a - b\n```",
               "```python\ndef add(a, b):\n    return a + b\n```"]

    def episode():
        env = gym_llm.make("code/PythonFunctions-v0", seed=0, max_turns=3, random_tests=4)
        index = _index_of(env, "pyfn/add")
        env.reset(seed=3, options={"task_index": index})
        steps = [env.step(a)[1:] for a in answers]
        return [(r, term, trunc, info.get("hidden_passed"), info.get("feedback")) for r, term, trunc, info in steps]

    first = episode()
    assert first == episode() and first[-1][0] == 1.0


# ----------------------------------------------------------------------------- dataset feedback

HUMANEVAL = {"task_id": "Sec/twice", "prompt": "def twice(s: str) -> str:\n    \"\"\"s twice.\"\"\"\n",
             "entry_point": "twice", "canonical_solution": "    return s + s\n"}
# the in-process harness (a loop) and the split one (plain asserts): neither shows a public example
HIDDEN_TESTS = {
    "in-process": "def check(candidate):\n    for s in ['ZQX1fixedalpha']:\n        assert candidate(s) == s + s\n",
    "split": "def check(candidate):\n    assert candidate('ZQX1fixedalpha') == 'ZQX1fixedalphaZQX1fixedalpha'\n",
}
# answers that turn the hidden input into the text of their failure
FAILURE_TEXTS = {
    "exception_message": "def twice(s):\n    raise ValueError(s)",
    "exception_class_name": "def twice(s):\n    raise type(s, (Exception,), {})('x')",
    "exception_name_without_colon": "def twice(s):\n    raise type(s + ' ', (KeyError,), {})()",
    "exit_status": "import os\ndef twice(s):\n    os._exit(ord(s[4]))",
    "forged_error_frame": (
        "import marshal, os, struct\ndef twice(s):\n    data = marshal.dumps({'error': s})\n"
        "    for fd in range(3, 12):\n        try:\n            os.write(fd, struct.pack('>I', len(data)) + data)\n"
        "        except OSError:\n            pass\n    import time\n    time.sleep(5)"),
}


@pytest.mark.parametrize("harness", sorted(HIDDEN_TESTS))
def test_dataset_feedback_names_hidden_failures_without_the_answers_text(sandbox, harness):
    """A HumanEval row shows no example, so its feedback names how the hidden
    tests failed: by kind only, never with text the answer chose (a message,
    a class name, an exit status, a forged error) from the hidden input."""
    import asyncio

    from gym_llm_code.assertion_grading import assertion_steps
    from gym_llm_code.dataset_rows import parse_row
    from gym_llm_code.verify import averify

    item = parse_row(dict(HUMANEVAL, test=HIDDEN_TESTS[harness]), 0)
    policy = GradingPolicy(tests="fixed", test_timeout_s=2.0, budget_s=6.0)

    async def main():
        return await asyncio.gather(*(averify(assertion_steps(item, f"```python\n{a}\n```", policy), sandbox)
                                      for a in FAILURE_TEXTS.values()))

    for name, result in zip(FAILURE_TEXTS, asyncio.run(main()), strict=True):
        feedback = result.info["feedback"]
        assert result.score == 0.0 and "reward_error" not in result.info, (name, result.info)
        for secret in ("ZQX1", "fixedalpha", "102", "exit status"):  # ord("f") == 102
            assert secret not in feedback and secret not in str(result.info["failures"]), (name, feedback)


def test_failure_labels_come_from_a_fixed_vocabulary():
    from gym_llm_code.verify import Verdict, failure_label

    cases = {"wrong result": "wrong result", "wrong answer: token 3 differs": "wrong answer",
             "timed out": "timed out", "not run: the time budget of the answer was used up": "not run",
             "the test process ended without a result (exit status 77)": "crashed",
             "runtime error (exit status 1) ZQX1secret": "runtime error",
             "ValueError: ZQX1secret": "ValueError", "AnswerError: ZQX1secret: x": "error",
             "ZQX1secret": "error", "the test process sent a malformed result": "error"}
    assert {detail: failure_label(Verdict(False, detail)) for detail in cases} == cases
