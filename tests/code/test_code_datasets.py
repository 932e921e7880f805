"""code/Dataset-v0: loaders for every format and file type (fixtures written
here), split and in-process assertion harnesses, and their hardening."""

from __future__ import annotations

import gzip
import json

import pytest
from gym_llm_code.dataset_env import DEFAULT_PATH
from gym_llm_code.dataset_rows import AssertionItem, StdioItem, parse_row, sample_rows

import gym_llm
from gym_llm.envs.datasets import read_rows

HUMANEVAL = [
    {   # every assert splits
        "task_id": "Fix/0",
        "prompt": 'from typing import List\n\n\ndef below_zero(ops: List[int]) -> bool:\n    """True if a running balance'
                  ' starting at 0 ever drops below zero.\n    >>> below_zero([1, 2, -4])\n    True\n    """\n',
        "entry_point": "below_zero",
        "canonical_solution": "    balance = 0\n    for op in ops:\n        balance += op\n        if balance < 0:\n"
                              "            return True\n    return False\n",
        "test": "METADATA = {'author': 'fixture'}\n\n\ndef check(candidate):\n    assert candidate([]) == False\n"
                "    assert candidate([1, 2, -3, 1, 2, -3]) == False\n    assert candidate([1, 2, -4, 5, 6]) == True\n"
                "    assert not candidate([5])\n    assert candidate([-1])\n    assert True\n",
    },
    {   # tolerance asserts, split too
        "task_id": "Fix/1",
        "prompt": 'def mean_abs_dev(xs: list) -> float:\n    """Mean absolute deviation around the mean."""\n',
        "entry_point": "mean_abs_dev",
        "canonical_solution": "    m = sum(xs) / len(xs)\n    return sum(abs(x - m) for x in xs) / len(xs)\n",
        "test": "import math\n\ndef check(candidate):\n    assert abs(candidate([1.0, 2.0, 3.0]) - 2.0 / 3.0) < 1e-6\n"
                "    assert abs(candidate([1.0, 2.0, 3.0, 4.0]) - 1.0) <= 1e-6\n"
                "    assert math.isclose(candidate([5.0]), 0.0, abs_tol=1e-9)\n",
    },
    {   # a loop: runs in-process
        "task_id": "Fix/2",
        "prompt": 'def encode_shift(s: str) -> str:\n    return "".join(chr((ord(c) - 97 + 5) % 26 + 97) for c in s)\n\n\n'
                  'def decode_shift(s: str) -> str:\n    """Undo encode_shift."""\n',
        "entry_point": "decode_shift",
        "canonical_solution": '    return "".join(chr((ord(c) - 97 - 5) % 26 + 97) for c in s)\n',
        "test": "def check(candidate):\n    import random\n    rng = random.Random(7)\n    for _ in range(20):\n"
                "        s = ''.join(rng.choice('abcxyz') for _ in range(rng.randint(1, 9)))\n"
                "        assert candidate(encode_shift(s)) == s\n",
    },
]

MBPP = [
    {"task_id": 11, "text": "Write a function to remove the first and last occurrence of a given character.",
     "code": "def remove_Occ(s, ch):\n    s = s.replace(ch, '', 1)\n    i = s.rfind(ch)\n    return s if i < 0 else s[:i] + s[i + 1:]\n",
     "test_list": ['assert remove_Occ("hello","l") == "heo"', 'assert remove_Occ("abcda","a") == "bcd"',
                   'assert remove_Occ("PHP","P") == "H"'],
     "test_setup_code": "", "challenge_test_list": ['assert remove_Occ("hellolloll","l") == "helollol"']},
    {"task_id": 12, "text": "Write a function to sort the rows of a matrix by their sums.",
     "code": "def sort_matrix(M):\n    return sorted(M, key=sum)\n",
     "test_list": ["assert sort_matrix([[1, 2, 3], [2, 4, 5], [1, 1, 1]])==[[1, 1, 1], [1, 2, 3], [2, 4, 5]]",
                   "assert set(map(tuple, sort_matrix([[5], [1]]))) == {(1,), (5,)}"],
     "test_setup_code": "import math", "challenge_test_list": []},
]

STDIO = [
    {"problem_id": 7, "question": "Read n and print n squared.",
     "input_output": json.dumps({"inputs": ["3\n", "10\n", "-4\n"], "outputs": ["9\n", "100\n", "16\n"]}),
     "solutions": json.dumps(["print(int(input()) ** 2)"])},
    {"name": "halves", "description": "Print x / 2 for the real number x.",
     "tests": [{"input": "3\n", "output": "1.5\n"}, {"input": "-1\n", "output": "-0.5\n"}],
     "solution": "print(float(input()) / 2)"},
]

ROWS = HUMANEVAL + MBPP + STDIO


def _write(path, rows, kind):
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif kind == "jsonl.gz":
        with gzip.open(path, "wt") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    elif kind == "json":
        path.write_text(json.dumps({"rows": rows}))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    return str(path)


def _answer(task):
    return f"```python\n{task.answer.rstrip()}\n```"


@pytest.mark.parametrize("kind", ["jsonl", "jsonl.gz", "json"])
def test_each_file_type_loads_every_format_and_references_pass(tmp_path, kind):
    path = _write(tmp_path / f"fixture.{kind}", ROWS, kind)
    env = gym_llm.make("code/Dataset-v0", path=path, split="heldout", seed=0)
    base = env.unwrapped
    assert base.num_tasks == len(ROWS) and base.task_set.size("train") == 0
    for k, row in enumerate(ROWS):  # task_index k is row k
        env.reset(options={"task_index": k})
        ident = row.get("task_id", row.get("problem_id", row.get("name")))
        assert base.task.id == f"fixture/{ident}" and base.task.split == "heldout"
        _, reward, term, _, info = env.step(_answer(base.task))
        assert reward == 1.0 and term, (base.task.id, info)
    assert [t.metadata.get("harness") for t in base.task_set.iter_split("heldout")][:5] == [
        "split", "split", "in-process", "split", "split"]


def test_parquet_rows_load(tmp_path):
    path = _write(tmp_path / "mbpp.parquet", MBPP, "parquet")
    loaded = read_rows(path)
    assert [r["task_id"] for r in loaded] == [11, 12] and loaded[0]["test_list"] == MBPP[0]["test_list"]
    env = gym_llm.make("code/Dataset-v0", path=path, format="mbpp", seed=0)
    env.reset(options={"task_index": 1})
    _, reward, *_ = env.step(_answer(env.unwrapped.task))
    assert reward == 1.0


def test_split_mapping_keeps_splits_apart(tmp_path):
    train = _write(tmp_path / "a.jsonl", HUMANEVAL[:2], "jsonl")
    heldout = _write(tmp_path / "b.jsonl", HUMANEVAL[2:], "jsonl")
    envs = {s: gym_llm.make("code/Dataset-v0", path={"train": train, "heldout": heldout}, split=s).unwrapped
            for s in ("train", "heldout")}
    assert envs["train"].num_tasks == 2 and envs["heldout"].num_tasks == 1
    with pytest.raises(ValueError, match="no dataset file given"):
        gym_llm.make("code/Dataset-v0", path={"train": train}, split="heldout")


def test_wrong_answers_fail_in_both_harnesses(tmp_path):
    path = _write(tmp_path / "he.jsonl", HUMANEVAL + MBPP, "jsonl")
    env = gym_llm.make("code/Dataset-v0", path=path, seed=0)
    wrong = {
        0: "    return sum(ops) < 0\n",
        1: "    return 0.5\n",
        2: "    return s\n",
        3: "def remove_Occ(s, ch):\n    return s.replace(ch, '')",
        4: "def sort_matrix(M):\n    return M",
    }
    for k, code in wrong.items():
        env.reset(options={"task_index": k})
        _, reward, *_, info = env.step(f"```python\n{code}```")
        assert reward == 0.0 and info["reason"] and "reward_error" not in info, (k, info)
        assert info["harness"] == ("in-process" if k == 2 else "split")


def test_humaneval_takes_prompt_plus_raw_completion(tmp_path):
    path = _write(tmp_path / "he.jsonl", HUMANEVAL[:1], "jsonl")
    env = gym_llm.make("code/Dataset-v0", path=path, seed=0)
    env.reset()
    _, reward, *_ = env.step(HUMANEVAL[0]["canonical_solution"])  # unfenced, as HumanEval samples are
    assert reward == 1.0
    env.reset()
    full = "def below_zero(ops):\n    return any(sum(ops[:i + 1]) < 0 for i in range(len(ops)))"
    _, reward, *_ = env.step(f"```python\n{full}\n```")
    assert reward == 1.0


def test_mbpp_challenge_tests_and_feedback(tmp_path):
    path = _write(tmp_path / "m.jsonl", MBPP[:1], "jsonl")
    plain = gym_llm.make("code/Dataset-v0", path=path, max_turns=2).unwrapped
    hard = gym_llm.make("code/Dataset-v0", path=path, challenge_tests=True).unwrapped
    assert len(plain.items["m/11"].checks) == 3 and len(hard.items["m/11"].checks) == 4
    plain.reset()
    obs, reward, term, _, info = plain.step("```python\ndef remove_Occ(s, ch):\n    return s\n```")
    assert not term and 'assert remove_Occ("hello","l") == "heo"' in obs[0]["content"]
    assert "abcda" not in obs[0]["content"]  # hidden tests stay hidden


HACKS = {
    "exit": "import sys\nsys.exit(0)",
    "os_exit": "import os\nos._exit(0)",
    "kill_runner": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
    "always_equal": "class E:\n    def __eq__(self, o): return True\n    def __ne__(self, o): return False\n"
                    "    def __bool__(self): return True\n    def __sub__(self, o): return 0\n    def __rsub__(self, o): return 0\n"
                    "    def __abs__(self): return 0\n    def __float__(self): return 0.0\n"
                    "def {entry}(*a, **k):\n    return E()",
    "fake_output": "print('@@gym-llm-code-result@@{{\"results\": [{{\"value\": true}}]}}')\nprint('ALL TESTS PASSED')\n"
                   "def {entry}(*a, **k):\n    return None",
    "patch_builtins": "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.AssertionError = KeyboardInterrupt\n"
                      "builtins.set = lambda *a: 1\nbuiltins.sorted = lambda *a, **k: 1\n"
                      "def {entry}(*a, **k):\n    return None",
    "read_tests_from_disk": "import glob\nFOUND = [open(p).read() for p in glob.glob('/work/*') + glob.glob('/tmp/*')]\n"
                            "def {entry}(*a, **k):\n    for text in FOUND:\n        if 'check' in text or 'assert' in text:\n"
                            "            return text\n    return None",
}


def _pass_rates(env, template):
    rates = []
    for k in range(env.unwrapped.num_tasks):
        env.reset(options={"task_index": k})
        entry = env.unwrapped.task.metadata["entry_point"]
        _, reward, *_, info = env.step(f"```python\n{template.format(entry=entry)}\n```")
        assert reward == 0.0 and "reward_error" not in info, (k, info)
        rates.append(info["reward_components"]["pass_rate"])
    return rates


@pytest.mark.parametrize("hack", list(HACKS))
def test_hacks_earn_nothing_in_either_harness(tmp_path, hack):
    path = _write(tmp_path / "h.jsonl", HUMANEVAL + MBPP, "jsonl")
    env = gym_llm.make("code/Dataset-v0", path=path, seed=0, time_budget_s=6.0, test_timeout_s=2.0)
    # a function returning None passes `assert not candidate(...)`: no hack may do better
    baseline = _pass_rates(env, "def {entry}(*a, **k):\n    return None")
    hacked = _pass_rates(env, HACKS[hack])
    assert all(h <= b for h, b in zip(hacked, baseline, strict=True)), (hacked, baseline)
    assert max(baseline) < 0.5


def test_dataset_fields_are_never_evaluated_on_the_host(tmp_path):
    marker = tmp_path / "pwned"
    evil = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"
    rows = [
        dict(HUMANEVAL[0], task_id="Evil/0", test=f"X = {evil}\n\ndef check(candidate):\n    assert candidate([{evil}]) == ({evil})\n"),
        {"task_id": 1, "text": "t", "code": f"{evil}\ndef f(x):\n    return x",
         "test_list": [f"assert f({evil}) == {evil}"], "test_setup_code": evil},
    ]
    path = _write(tmp_path / "evil.jsonl", rows, "jsonl")
    env = gym_llm.make("code/Dataset-v0", path=path, seed=0)
    for k in range(2):
        env.reset(options={"task_index": k})
        env.step(f"```python\n{env.unwrapped.task.answer}\n```")
    assert not marker.exists()  # the code ran only inside the jail, which cannot see tmp_path


def test_parse_errors_name_the_row():
    with pytest.raises(ValueError, match="row 3 .*cannot tell the format"):
        parse_row({"foo": 1}, 3)
    with pytest.raises(ValueError, match="fn_name"):
        parse_row({"question": "q", "input_output": {"fn_name": "f", "inputs": [], "outputs": []}}, 0)
    with pytest.raises(ValueError, match="not valid Python"):
        parse_row(dict(HUMANEVAL[0], test="def check(candidate:\n"), 0)
    assert isinstance(parse_row(HUMANEVAL[0], 0), AssertionItem) and isinstance(parse_row(STDIO[1], 0), StdioItem)


def test_default_sample_is_the_export_of_bundled_tasks():
    from importlib import resources

    for split, name in DEFAULT_PATH.items():
        text = (resources.files("gym_llm_code") / "data" / name).read_text()
        assert [json.loads(line) for line in text.splitlines()] == sample_rows(split)
        formats = {parse_row(r, i).__class__.__name__ for i, r in enumerate(sample_rows(split))}
        assert formats == {"AssertionItem", "StdioItem"}
