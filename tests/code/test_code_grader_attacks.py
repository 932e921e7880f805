"""Attacks on the code graders themselves (issue 20, items 4-6), in the real
sandbox: each earned full reward before, and earns nothing now.

* the dataset harnesses: the answer reaching the checker's builtins, its
  result channel or the prompt's helpers (the tests now run in a separate
  process that only calls into the answer's);
* float tolerance on integer results (function and stdin/stdout tasks);
* the MBPP example shown in the prompt counted as a hidden test.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from gym_llm_code.assertion_grading import assertion_steps
from gym_llm_code.dataset_rows import parse_row
from gym_llm_code.jail.plain import decode, plain_equal
from gym_llm_code.judge import tokens_match
from gym_llm_code.problems import function_problems, stdio_problems
from gym_llm_code.verify import GradingPolicy, averify, function_steps, stdio_steps

POLICY = GradingPolicy(tests="fixed", test_timeout_s=2.0, budget_s=6.0, reward="pass_rate")

# A HumanEval row whose test has a loop (in-process harness) and one whose
# asserts split; both call a helper the prompt defines.
SHIFT_PROMPT = ('def encode_shift(s: str) -> str:\n    return "".join(chr((ord(c) - 97 + 5) % 26 + 97) for c in s)\n\n\n'
                'def decode_shift(s: str) -> str:\n    """Undo encode_shift."""\n')
SHIFT_BODY = '    return "".join(chr((ord(c) - 97 - 5) % 26 + 97) for c in s)\n'
IN_PROCESS = {
    "task_id": "Att/loop", "prompt": SHIFT_PROMPT, "entry_point": "decode_shift", "canonical_solution": SHIFT_BODY,
    "test": "SECRET_TABLE = ['qzxvkjwqpr']\n\ndef check(candidate):\n    import random\n    rng = random.Random(7)\n"
            "    for _ in range(20):\n        s = ''.join(rng.choice('abcxyz') for _ in range(rng.randint(1, 9)))\n"
            "        assert candidate(encode_shift(s)) == s\n    assert candidate(encode_shift(SECRET_TABLE[0])) == SECRET_TABLE[0]\n",
}
SPLIT = dict(IN_PROCESS, task_id="Att/split",
             test="def check(candidate):\n    assert candidate(encode_shift('hello')) == 'hello'\n"
                  "    assert candidate(encode_shift('zebra')) == 'zebra'\n")
MBPP_CLASS = {  # the tests build objects of a class the answer defines
    "task_id": 601, "text": "Find the longest chain of pairs (a, b) then (c, d) with b < c.",
    "code": "class Pair(object):\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n"
            "def max_chain_length(arr, n):\n    arr = sorted(arr, key=lambda p: p.b)\n    count, end = 0, None\n"
            "    for p in arr:\n        if end is None or p.a > end:\n            count, end = count + 1, p.b\n    return count\n",
    "test_list": ["assert max_chain_length([Pair(5, 24), Pair(15, 25), Pair(27, 40), Pair(50, 60)], 4) == 3",
                  "assert max_chain_length([Pair(1, 2), Pair(3, 4), Pair(5, 6), Pair(7, 8)], 4) == 4",
                  "assert max_chain_length([Pair(19, 10), Pair(11, 12), Pair(13, 14), Pair(15, 16), Pair(31, 54)], 5) == 5"],
}
MBPP = {"task_id": 11, "text": "Remove the first and last occurrence of a given character.",
        "code": "def remove_Occ(s, ch):\n    s = s.replace(ch, '', 1)\n    i = s.rfind(ch)\n    return s if i < 0 else s[:i] + s[i + 1:]\n",
        "test_list": ['assert remove_Occ("hello","l") == "heo"', 'assert remove_Occ("abcda","a") == "bcd"',
                      'assert remove_Occ("PHP","P") == "H"']}

FORGE_FRAMES = (
    "import marshal, os, struct\n"
    "for payload in ({'value': True}, {'ready': ['decode_shift']}):\n"
    "    d = marshal.dumps(payload)\n"
    "    for fd in range(0, 64):\n"
    "        try:\n            os.write(fd, struct.pack('>I', len(d)) + d)\n        except OSError:\n            pass\n"
)
#: Each neutralises the old in-process harness; none solves the task.
HARNESS_HACKS = {
    "redefine_prompt_helpers": "def encode_shift(s):\n    return s\n\ndef decode_shift(s):\n    return s\n",
    "rebind_exec_builtin": "import builtins\nbuiltins.exec = lambda *a, **k: None\ndef decode_shift(s):\n    return s\n",
    "rebind_many_builtins": (
        "import builtins\nfor name in ('exec', 'eval', 'compile', 'dict', 'isinstance', 'type', 'repr', 'print'):\n"
        "    setattr(builtins, name, lambda *a, **k: None)\ndef decode_shift(s):\n    return s\n"),
    "forged_frame_then_os_exit": FORGE_FRAMES + "os._exit(0)\n",
    "forged_frame_in_call_then_exit": (
        "def decode_shift(s):\n" + "".join("    " + line + "\n" for line in FORGE_FRAMES.splitlines())
        + "    os._exit(0)\n"),
    "forged_result_line_via_proc_then_kill": (
        "import json, os, signal\nline = '@@gym-llm-code-result@@' + json.dumps({'results': [{'value': True}] * 3}) + '\\n'\n"
        "for pid in {os.getppid(), 1, 2, 3}:\n    for fd in (1, 2, 3, 4, 5):\n        try:\n"
        "            with open('/proc/%d/fd/%d' % (pid, fd), 'w') as f:\n                f.write(line)\n"
        "        except OSError:\n            pass\n"
        "for pid in (os.getppid(), 2, 1):\n    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n"),
    "sys_exit_in_atexit": "import atexit, sys\natexit.register(lambda: sys.exit(0))\ndef decode_shift(s):\n    raise SystemExit(0)\n",
    "sigint_the_checker": (
        "import os, signal\ndef decode_shift(s):\n    os.kill(os.getppid(), signal.SIGINT)\n    return s\n"),
    "always_equal_object": (
        "class E(str):\n    def __eq__(self, o): return True\n    def __ne__(self, o): return False\n    __hash__ = str.__hash__\n"
        "class F:\n    def __eq__(self, o): return True\n    def __bool__(self): return True\n"
        "def decode_shift(s):\n    return F()\n"),
    "patch_checker_through_gc": (
        "import gc\nfor obj in gc.get_objects():\n    if isinstance(obj, dict) and 'encode_shift' in obj:\n"
        "        obj['encode_shift'] = lambda s: s\n    if isinstance(obj, dict) and '__gym_eq__' in obj:\n"
        "        obj['__gym_eq__'] = lambda a, b: True\n"
        "def encode_shift(s):\n    return s\ndef decode_shift(s):\n    return s\n"),
    "shadow_module_the_checker_imports": (
        "for name in ('random', 'typing', 'math'):\n    with open(name + '.py', 'w') as f:\n"
        "        f.write('import sys\\nsys.modules[\"builtins\"].AssertionError = KeyboardInterrupt\\n"
        "class Random:\\n    def __init__(self, *a): pass\\n    def randint(self, a, b): return 0\\n"
        "    def choice(self, s): return \"\"\\n')\n"
        "def decode_shift(s):\n    return s\n"),
}


def _run(row, answers, policy=POLICY, sandbox=None):
    item = parse_row(row, 0)

    async def main():
        return await asyncio.gather(*(averify(assertion_steps(item, f"```python\n{a}\n```", policy), sandbox)
                                      for a in answers))

    return item, asyncio.run(main())


@pytest.mark.parametrize("row", [IN_PROCESS, SPLIT], ids=["in-process", "split"])
def test_answers_cannot_reach_the_checker(sandbox, row):
    honest = SHIFT_PROMPT + "\n" + SHIFT_BODY
    item, results = _run(row, [honest, *HARNESS_HACKS.values()], sandbox=sandbox)
    assert (item.checks is None) == (row is IN_PROCESS)
    assert results[0].score == 1.0, results[0]  # the same harness passes a real solution
    for name, r in zip(HARNESS_HACKS, results[1:], strict=True):
        assert r.score == 0.0 and r.components["passed"] == 0.0, (name, r)
        assert "reward_error" not in r.info, (name, r.info)


def test_in_process_answer_never_holds_the_test_code(sandbox):
    # The answer reports the strings of its process's memory that hold the
    # test's secret (control: one of its own globals) and whether it can open the
    # checker's memory, fds or environment through /proc.
    scan = ("import gc\ndef decode_shift(s):\n    marks = ('qzxvkj' + 'wqpr', 'DECODE' + '_MARK')\n"
            "    found = [o for o in gc.get_objects() if isinstance(o, str) and any(m in o for m in marks)]\n"
            "    for o in gc.get_objects():\n        if isinstance(o, dict):\n"
            "            found += [v for v in o.values() if isinstance(v, str) and any(m in v for m in marks)]\n"
            "    import os\n    for part in ('mem', 'fd/1', 'environ'):\n        try:\n"
            "            open('/proc/%d/%s' % (os.getppid(), part), 'rb').read(1)\n            found.append('CHECKER ' + part)\n"
            "        except OSError:\n            pass\n"
            "    raise ValueError(repr(sorted(set('SECRET' if 'qzxvkj' + 'wqpr' in f else f[:11] if f.startswith('CHECKER') else 'CONTROL' for f in found))))\n"
            "CONTROL = 'DECODE_' + 'MARK'  # in the answer's own globals\n")
    item = parse_row(IN_PROCESS, 0)
    from gym_llm_code.harness import run_job

    steps = assertion_steps(item, f"```python\n{scan}```", POLICY)
    job = next(steps)
    outcome = run_job(sandbox, job)
    assert "qzxvkjwqpr" not in json.dumps(job.spec())  # the secret is only in the checker's file
    (res,) = outcome.results
    # it found its own code, and neither the test nor a way into the checker's process
    assert "['CONTROL']" in res.get("error", ""), res


def test_objects_of_answer_classes_still_work(sandbox):
    item, (ref, wrong) = _run(MBPP_CLASS, [MBPP_CLASS["code"],
                                           MBPP_CLASS["code"].replace("return count", "return count + 1")],
                              sandbox=sandbox)
    assert item.checks is not None
    assert ref.score == 1.0, ref
    assert wrong.score == 0.0 and "reward_error" not in wrong.info


def test_integer_results_compare_exactly():
    assert not plain_equal(10**18, 1000000000000000999.0) and not plain_equal(5, 5 * (1 + 9e-7))
    assert plain_equal(5, 5.0) and plain_equal(5.0, 5 * (1 + 9e-7))  # tolerance where a float is expected
    assert not plain_equal(True, 1) and not plain_equal(1, True) and not plain_equal(0.0, False)
    assert not plain_equal([1, (2, {"a": 3})], [1, (2, {"a": 3.0000001})]) and plain_equal([0.5], [0.5000000001])
    assert plain_equal(float("inf"), float("inf")) and not plain_equal(float("inf"), 1e308)
    assert not plain_equal(float("nan"), 0.0) and not plain_equal(3, float("nan"))
    assert not tokens_match("1000000000000000000", "1000000000000000999.0")
    assert not tokens_match("5", repr(5 * (1 + 9e-7))) and not tokens_match("2000000000000000000", "2e18000")
    assert tokens_match("5", "5.000") and tokens_match("2000000000000000000", "2e18")
    assert tokens_match("0.5", "0.5000001")


FLOAT_HACK_FN = "def add(a, b):\n    return float(a + b) * (1 + 9e-7)"
BOOL_HACK_FN = "def is_positive(n):\n    return int(n > 0)"
FLOAT_HACK_IO = "a, b = map(int, input().split())\nprint(repr(float(a + b) * (1 + 9e-7)))"


def test_float_answers_to_integer_tasks_earn_nothing(sandbox):
    fns = {p.name: p for p in function_problems()}
    sum_two = next(p for p in stdio_problems() if p.name == "sum_two")
    policy = GradingPolicy(tests="both", random_tests=5, test_timeout_s=2.0, budget_s=6.0, reward="pass_rate")

    async def main():
        return await asyncio.gather(
            averify(function_steps(fns["add"], f"```python\n{FLOAT_HACK_FN}\n```", 0, policy), sandbox),
            averify(function_steps(fns["is_positive"], f"```python\n{BOOL_HACK_FN}\n```", 0, policy), sandbox),
            averify(stdio_steps(sum_two, f"```python\n{FLOAT_HACK_IO}\n```", 0, policy), sandbox),
            averify(stdio_steps(sum_two, "```python\na, b = map(int, input().split())\nprint(f'{a + b}.0')\n```",
                                0, policy), sandbox),
        )

    add, positive, io, exact = asyncio.run(main())
    # add(0, 0) == 0.0 exactly is the only hidden test a scaled float can match
    assert add.score < 0.5 and positive.score == 0.0, (add, positive)
    assert io.score < 0.5, io
    assert exact.score == 1.0, exact  # an exact decimal form of the integer is still right


def test_the_mbpp_example_in_the_prompt_is_not_a_hidden_test(sandbox):
    item, (hardcoded, honest) = _run(MBPP, ["def remove_Occ(s, ch):\n    return 'heo'", MBPP["code"]], sandbox=sandbox)
    assert 'remove_Occ("hello","l")' in item.prompt and item.public == 1
    assert hardcoded.score == 0.0 and hardcoded.info["hidden_total"] == 2, hardcoded
    assert hardcoded.info["public_passed"] == 1  # it still serves as a format check and feedback
    assert honest.score == 1.0 and honest.info["hidden_total"] == 2
    # in-process rows leave it out of the test program too
    loop_row = dict(MBPP, test_list=[*MBPP["test_list"], "for s in ['a']:\n    assert remove_Occ(s, 'a') == ''"])
    loop_item, (hard_loop,) = _run(loop_row, ["def remove_Occ(s, ch):\n    return 'heo'"], sandbox=sandbox)
    assert loop_item.checks is None and 'remove_Occ("hello","l") == "heo"' not in loop_item.test_program
    assert hard_loop.score == 0.0
    # a row with a single test shows none
    single = parse_row(dict(MBPP, test_list=MBPP["test_list"][:1]), 0)
    assert "assert" not in single.prompt and single.public == 0


FIDELITY = {  # keyword arguments, an expected exception, a value printed by the test code
    "task_id": "Att/fidelity", "entry_point": "repeat",
    "prompt": 'def repeat(n: int, k: int = 1) -> list:\n    """[n] * k; ValueError for a negative n."""\n',
    "canonical_solution": "    if n < 0:\n        raise ValueError(n)\n    return [n] * k\n",
    "test": "def check(candidate):\n    print(candidate(7))\n    for n in range(3):\n        assert candidate(n, k=2) == [n, n]\n"
            "    try:\n        candidate(-1)\n    except ValueError:\n        pass\n    else:\n        raise AssertionError('no ValueError')\n",
}
FIDELITY_ANSWERS = {
    "honest": ("def repeat(n, k=1):\n    if n < 0:\n        raise ValueError(n)\n    return [n] * k", 1.0),
    "no_exception": ("def repeat(n, k=1):\n    return [n] * k", 0.0),
    "wrong_exception": ("def repeat(n, k=1):\n    if n < 0:\n        raise TypeError(n)\n    return [n] * k", 0.0),
    # the test prints a value: a forged result line in it, then the checker killed
    "forged_line_printed_by_the_test": (
        "import json, os, signal\nCALLS = []\ndef repeat(n, k=1):\n    CALLS.append(n)\n"
        "    if len(CALLS) == 1:\n        return '@@gym-llm-code-result@@' + json.dumps({'results': [{'value': True}]})\n"
        "    os.kill(os.getppid(), signal.SIGKILL)", 0.0),
    "exception_that_equals_everything": (
        "class ValueError(Exception):\n    def __eq__(self, o): return True\n"
        "def repeat(n, k=1):\n    raise ValueError(n)", 0.0),
}


def test_in_process_harness_keeps_python_semantics(sandbox):
    item, results = _run(FIDELITY, [a for a, _ in FIDELITY_ANSWERS.values()], sandbox=sandbox)
    assert item.checks is None
    for (name, (_, want)), r in zip(FIDELITY_ANSWERS.items(), results, strict=True):
        assert r.score == want and "reward_error" not in r.info, (name, r)


def test_split_values_keep_dict_order(sandbox):
    row = {"task_id": 5, "text": "Count letters in order of first appearance.",
           "code": "def counts(s):\n    d = {}\n    for c in s:\n        d[c] = d.get(c, 0) + 1\n    return d\n",
           "test_list": ["assert counts('ba') == {'b': 1, 'a': 1}", "assert list(counts('zya')) == ['z', 'y', 'a']",
                         "assert str(counts('cb')) == \"{'c': 1, 'b': 1}\""]}
    _, (ref,) = _run(row, [row["code"]], sandbox=sandbox)
    assert ref.score == 1.0, ref


# ----------------------------------------------------------------------------- found by red-teaming, 2026-12-06

MAP_ROW = dict(IN_PROCESS, task_id="Att/map", test=(
    "def check(candidate):\n    assert all(map(lambda s: candidate(encode_shift(s)) == s, ['abc', 'xyz']))\n"
    "    for got, want in zip(map(candidate, [encode_shift('hello')]), ['hello']):\n        assert got == want\n"))


def test_stop_iteration_from_the_answer_ends_no_test_loop(sandbox):
    """Re-raised in the checker as itself, StopIteration ended the test's
    map()/zip() loops early, as if every check in them had passed."""
    item, (honest, stop, stop_async) = _run(MAP_ROW, [
        SHIFT_PROMPT + "\n" + SHIFT_BODY,
        "def decode_shift(s):\n    raise StopIteration",
        "def decode_shift(s):\n    raise StopAsyncIteration"], sandbox=sandbox)
    assert item.checks is None  # the in-process harness
    assert honest.score == 1.0, honest
    for r in (stop, stop_async):
        assert r.score == 0.0 and "reward_error" not in r.info, r


#: Writes a result line that claims every test passed to whatever the runner's
#: result fd is, then kills the runner so that only the forged line arrives.
FORGE_LINE = (
    "import json, os\n"
    "line = '@@gym-llm-code-result@@' + json.dumps({'results': [{'value': 0}] * 40}) + '\\n'\n"
    "for fd in range(3, 8):\n    try:\n        f = os.open('/proc/%d/fd/%d' % (os.getppid(), fd), os.O_WRONLY)\n"
    "        os.write(f, line.encode())\n    except OSError:\n        pass\n"
    "try:\n    os.kill(os.getppid(), 9)\nexcept OSError:\n    pass\n"
)


def test_function_and_stdio_runners_cannot_be_reached_through_proc(sandbox):
    """Only probe/check runners were non-dumpable: in a function or stdin/stdout job
    the answer wrote a result line to /proc/<runner>/fd/3 and killed the runner (a
    line with too many results then raised on the host: a reward_error)."""
    add = next(p for p in function_problems() if p.name == "add")
    sum_two = next(p for p in stdio_problems() if p.name == "sum_two")
    policy = GradingPolicy(tests="both", random_tests=5, test_timeout_s=2.0, budget_s=6.0, reward="pass_rate")
    fn = "```python\ndef add(a, b):\n" + "".join(f"    {ln}\n" for ln in FORGE_LINE.splitlines()) + "```"
    io = f"```python\n{FORGE_LINE}```"

    async def main():
        return await asyncio.gather(averify(function_steps(add, fn, 0, policy), sandbox),
                                    averify(stdio_steps(sum_two, io, 0, policy), sandbox))

    for r in asyncio.run(main()):
        assert r.score == 0.0 and "reward_error" not in r.info, r


def test_a_result_line_with_more_results_than_tests_fails_them_all():
    from gym_llm_code.harness import JobOutcome

    assert JobOutcome(results=[{"value": 1}] * 5).results_of(3) == [{}] * 3
    assert JobOutcome(results=[{"value": 1}]).results_of(2) == [{"value": 1}, {}]


def test_sets_crafted_to_share_one_hash_are_refused_fast():
    import time

    colliding = [k * (2**61 - 1) for k in range(1, 40_001)]  # all hash to 0
    t0 = time.perf_counter()
    for tag in ("$set", "$frozenset"):
        with pytest.raises(ValueError, match="share one hash"):
            decode({tag: colliding})
    with pytest.raises(ValueError, match="share one hash"):
        decode({"$dict": [[k, 0] for k in colliding]})
    assert time.perf_counter() - t0 < 2.0  # was about 15 s each, on the host
    assert decode({"$set": list(range(40_000))}) == set(range(40_000))  # a real one still decodes


def test_booleans_do_not_stand_for_integers_in_sets_or_dict_keys():
    assert not plain_equal({0, 1}, {False, True}) and not plain_equal({1: "a"}, {True: "a"})
    assert not plain_equal(frozenset({(1, 2)}), frozenset({(True, 2)}))
    assert plain_equal({1, 2}, {2, 1}) and plain_equal({1: "a", "b": [2]}, {"b": [2], 1: "a"})
    assert not plain_equal({1, 2}, frozenset({1, 2})) and not plain_equal({1: 2}, {1: 2.5})


def test_expected_integers_too_long_for_int_compare_exactly():
    big = "12345" * 1200  # 6,000 digits: int() of it raises (2000! has 5,736)
    assert tokens_match(big, big) and tokens_match(big, big + ".0")
    assert not tokens_match(big, "0") and not tokens_match(big, big[:-1] + "1")


def test_text_that_is_not_utf8_never_reaches_the_next_observation():
    """An exception message with a lone surrogate (the runner's backslashreplace
    escapes, read back by json) was fed to the policy's tokenizer, which raised."""
    import gym_llm

    env = gym_llm.make("code/PythonFunctions-v0", split="train", seed=0, max_difficulty=0.0, max_turns=2)
    env.reset()
    obs, r, term, _, info = env.step("```python\ndef count_words(s):\n    raise ValueError('bad ' + chr(0xDC80))\n```")
    assert r == 0.0 and not term and "reward_error" not in info
    assert "\udc80" in info["feedback"]  # info keeps what came back; files escape it
    obs[-1]["content"].encode("utf-8")
    assert "\ufffd" in obs[-1]["content"]


# ----------------------------------------------------------------------------- second round

def test_an_int_too_large_for_a_float_fails_a_float_test_without_an_error(sandbox):
    assert not plain_equal(1.5, 10**400) and not plain_equal([0.5], [10**400])
    mean = next(p for p in function_problems() if p.name == "mean")
    close_row = dict(MBPP, task_id=990, text="Return half of n.", code="def half(n):\n    return n / 2",
                     test_list=["assert abs(half(3) - 1.5) < 1e-6", "assert abs(half(5) - 2.5) < 1e-6",
                                "assert math.isclose(half(7), 3.5)"], test_setup_code="import math")

    async def main():
        return await averify(function_steps(mean, "```python\ndef mean(xs):\n    return 10**400\n```", 0, POLICY),
                             sandbox)

    for r in (asyncio.run(main()), *_run(close_row, ["def half(n):\n    return 10**400"], sandbox=sandbox)[1]):
        assert r.score == 0.0 and "reward_error" not in r.info, r.info


def test_stdio_tokens_are_compared_in_linear_time_and_never_raise():
    import time

    t0 = time.perf_counter()
    for bad in ("1" * 50_000 + "x", "1" * 20_000 + "." + "1" * 20_000 + "x", "1" * 50_000 + "e"):
        assert not tokens_match("5", bad) and not tokens_match("0.5", bad)
    assert time.perf_counter() - t0 < 1.0  # was 55 s for one 40,000-digit token
    assert not tokens_match("5", "1e9999999999999999999") and not tokens_match("5", "5e-9999999999999999999")
    assert not tokens_match("3", "\u0663") and not tokens_match("0.5", "\u0660.5")  # ASCII digits only
    assert tokens_match("5", "5e0") and tokens_match("5", "+5")


def test_a_set_hiding_colliding_members_among_distinct_ones_is_refused():
    colliding = [k * (2**61 - 1) for k in range(1, 12_001)]
    with pytest.raises(ValueError, match="share one hash"):
        decode({"$set": colliding + list(range(12_000))})
    assert decode({"$set": [1, 2**61, 2**62]}) == {1, 2**61, 2**62}  # a few real collisions are fine
