"""The single-turn environments: needle placement, variants, solvable and
correctly answered tasks (checked by independent solvers), splits."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from gym_llm_longctx.envs import Needle

import gym_llm

NEEDLE = re.compile(r"One of the special magic numbers for ([a-z]+-[a-z]+) is: (\d{7})\.")


def _body(prompt: str) -> str:
    return prompt[prompt.index("<text>\n") + 7 : prompt.index("\n</text>")]


@pytest.mark.parametrize("depth", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_needle_goes_at_the_requested_depth(depth):
    env = gym_llm.make("longctx/Needle-v0", depth=depth, context_tokens=8192).unwrapped
    for index in range(2):
        task = env.task_set.get("train", index)
        (needle,) = task.metadata["needles"]
        assert needle["depth"] == depth and abs(needle["token_depth"] - depth) < 0.005
        body = _body(task.prompt)
        found = NEEDLE.search(body)
        assert found and found.groups() == (needle["key"], needle["value"])
        assert abs(found.start() / len(body) - depth) < 0.01  # characters track tokens in prose


def test_random_depths_are_recorded_and_spread():
    env = gym_llm.make("longctx/Needle-v0", variant="multikey", context_tokens=4096).unwrapped
    depths = [n["token_depth"] for i in range(6) for n in env.task_set.get("train", i).metadata["needles"]]
    assert min(depths) < 0.15 and max(depths) > 0.85


@pytest.mark.parametrize(("variant", "kwargs", "needles", "answers"), [
    ("single", {}, 1, 1),
    ("multikey", {"num_distractors": 5}, 6, 1),
    ("multivalue", {"num_values": 4, "num_distractors": 2}, 12, 4),
    ("multiquery", {"num_queries": 3, "num_distractors": 3}, 6, 3),
])
def test_needle_variants(variant, kwargs, needles, answers):
    env = gym_llm.make("longctx/Needle-v0", variant=variant, context_tokens=2048, **kwargs).unwrapped
    task = env.task_set.get("train", 0)
    found = NEEDLE.findall(_body(task.prompt))
    assert len(found) == needles == len(task.metadata["needles"])
    values = [v for _, v in found]
    assert len(set(values)) == needles and sorted(values) == task.metadata["candidates"]
    answer = task.answer if isinstance(task.answer, list) else [task.answer]
    assert len(answer) == answers
    asked = {n["key"] for n in task.metadata["needles"] if n["query"]}
    assert sorted(v for k, v in found if k in asked) == sorted(answer)
    question = task.prompt.split("</text>")[1]
    assert all(k in question for k in asked)
    assert not any(k in question for k, _ in found if k not in asked)
    # The prompt's only digits are the needles' numbers.
    assert not re.search(r"\d", NEEDLE.sub("", _body(task.prompt)))
    # An oracle that reads the prompt earns full reward; the env agrees.
    env.reset(options={"task_index": 0})
    _, reward, terminated, _, _ = env.step("\\boxed{" + ", ".join(answer) + "}")
    assert reward == 1.0 and terminated


def test_difficulty_zero_is_a_short_single_needle():
    env = gym_llm.make("longctx/Needle-v0").unwrapped
    task = env.task_set.get("train", 0)
    assert len(task.metadata["needles"]) == 1 and task.metadata["context_tokens"] == 1024
    assert isinstance(task.answer, str)


def test_bad_kwargs_are_refused():
    with pytest.raises(ValueError, match="unknown variant"):
        Needle("many")
    with pytest.raises(ValueError, match="depth"):
        Needle(depth=1.5)
    with pytest.raises(ValueError, match="difficulty"):
        Needle(difficulty=2.0)
    with pytest.raises(ValueError, match="other_frequency"):
        gym_llm.make("longctx/WordFrequency-v0", other_frequency=30)
    with pytest.raises(ValueError, match="hops"):
        gym_llm.make("longctx/MultiHopQA-v0", hops=4)


def _solve_variables(prompt: str) -> list[str]:
    value = re.search(r"assigned the value (\d+)", prompt).group(1)
    holds: dict[str, str] = {}
    for name, rhs in re.findall(r"VAR ([A-Z]{5}) = (VAR [A-Z]{5}|\d+)\.", prompt):
        holds[name] = holds[rhs[4:]] if rhs.startswith("VAR") else rhs
    return sorted(n for n, v in holds.items() if v == value)


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_variable_tracking_answers_every_variable_of_the_chain(difficulty):
    env = gym_llm.make("longctx/VariableTracking-v0", difficulty=difficulty, context_tokens=4096).unwrapped
    for index in range(3):
        task = env.task_set.get("train", index)
        assert _solve_variables(task.prompt) == task.answer
        assert len(task.answer) == env.num_hops + 1
        assert len(task.metadata["candidates"]) == (env.num_hops + 1) * (env.num_chains + 1)
        assert env.reward_fn(task, "\\boxed{" + ", ".join(task.answer) + "}").score == 1.0
        assert env.reward_fn(task, "\\boxed{" + ", ".join(task.metadata["candidates"]) + "}").score == 0.0


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_word_frequency_has_the_controlled_distribution(difficulty):
    env = gym_llm.make("longctx/WordFrequency-v0", difficulty=difficulty, context_tokens=8192).unwrapped
    task = env.task_set.get("train", 0)
    listed = task.prompt[task.prompt.index("<list>\n") + 7 : task.prompt.index("\n</list>")].split("\n")
    counts = Counter(listed)
    assert len(listed) == task.metadata["list_length"] and len(counts) == task.metadata["distinct_words"]
    top = sorted(w for w, c in counts.items() if c == env.top_frequency)
    assert top == task.answer and len(top) == env.num_words
    others = [c for w, c in counts.items() if w not in top]
    assert max(others) <= env.other_frequency and min(others) >= 1
    assert sorted(counts) == task.metadata["candidates"]
    assert sorted(w for w, _ in counts.most_common(env.num_words)) == task.answer


_WORKS = re.compile(r"([A-Z][a-z]+ [A-Z][a-z]+) (?:works for|has worked for|took a position at) "
                    r"(the [A-Z][a-z]+ [A-Z][a-z]+)")
_BASED = re.compile(r"(the [A-Z][a-z]+ [A-Z][a-z]+) (?:is based in the city of|has its home in the city of) "
                    r"([A-Z][a-z]+)|The offices of (the [A-Z][a-z]+ [A-Z][a-z]+) are in ([A-Z][a-z]+)",
                    re.IGNORECASE)
_MENTOR = re.compile(r"The mentor of ([A-Z][a-z]+ [A-Z][a-z]+) was ([A-Z][a-z]+ [A-Z][a-z]+)|"
                     r"([A-Z][a-z]+ [A-Z][a-z]+) was trained by ([A-Z][a-z]+ [A-Z][a-z]+)")


def _solve_multihop(prompt: str) -> str:
    works = dict(_WORKS.findall(prompt))
    based = {(a or c).lower(): b or d for a, b, c, d in _BASED.findall(prompt)}
    mentors = {a or c: b or d for a, b, c, d in _MENTOR.findall(prompt)}
    q = re.search(r"Question: In which city is the organization that (the mentor of )?"
                  r"([A-Z][a-z]+ [A-Z][a-z]+) works for based\?", prompt)
    person = mentors[q.group(2)] if q.group(1) else q.group(2)
    return based[works[person].lower()]


@pytest.mark.parametrize("hops", [2, 3])
def test_multihop_questions_are_answered_by_following_the_facts(hops):
    env = gym_llm.make("longctx/MultiHopQA-v0", hops=hops, num_distractors=6, context_tokens=4096).unwrapped
    for index in range(4):
        task = env.task_set.get("train", index)
        assert _solve_multihop(task.prompt) == task.answer
        assert task.answer in task.metadata["candidates"] and len(task.metadata["candidates"]) >= 8
        for fact in task.metadata["facts"]:
            assert task.prompt.count(fact) == 1


@pytest.mark.parametrize("env_id", ["longctx/Needle-v0", "longctx/VariableTracking-v0",
                                    "longctx/WordFrequency-v0", "longctx/MultiHopQA-v0"])
def test_heldout_questions_never_reach_training_at_any_length(env_id):
    keys = {}
    for split in ("train", "heldout"):
        env = gym_llm.make(env_id, split=split).unwrapped
        keys[split] = {env.task_set.get(split, i).metadata["split_key"] for i in range(30)}
    assert len(keys["train"]) == len(keys["heldout"]) == 30
    assert not keys["train"] & keys["heldout"]
    # The split of a question does not depend on the length of its context.
    long = gym_llm.make(env_id, split="heldout", context_tokens=3000).unwrapped
    assert {long.task_set.get("heldout", i).metadata["split_key"] for i in range(5)} <= keys["heldout"]


def test_same_seed_same_task_and_rewards():
    a = gym_llm.make("longctx/MultiHopQA-v0", seed=11)
    b = gym_llm.make("longctx/MultiHopQA-v0", seed=11)
    assert a.reset()[0] == b.reset()[0]
    assert a.step("\\boxed{Nowhere}")[1:] == b.step("\\boxed{Nowhere}")[1:]


@pytest.mark.parametrize("env_id", ["longctx/Needle-v0", "longctx/DocNavigator-v0"])
def test_envs_pickle_mid_episode(env_id):
    """Worker pools ship environments by pickle: a copy continues identically."""
    import pickle

    env = gym_llm.make(env_id, seed=5)
    env.reset()
    copy = pickle.loads(pickle.dumps(env))
    assert copy.unwrapped.task.id == env.unwrapped.task.id
    assert copy.step("\\boxed{1234567}")[1:] == env.step("\\boxed{1234567}")[1:]


def test_guessing_one_candidate_per_attempt_is_discounted():
    """Undiscounted, boxing one candidate per attempt found every MultiHopQA answer
    within max_turns (mean reward 1.0 without reading the question)."""
    env = gym_llm.make("longctx/MultiHopQA-v0", hops=2, num_distractors=6, context_tokens=4096, max_turns=4)
    env.reset(seed=0)
    task = env.unwrapped.task
    wrong = next(c for c in task.metadata["candidates"] if c != task.answer)
    _, r, term, _, _ = env.step(f"\\boxed{{{wrong}}}")
    assert r == 0.0 and not term
    _, r, term, _, info = env.step(f"\\boxed{{{task.answer}}}")
    assert term and r == 0.5, info
    assert env.unwrapped.strict_score(env.unwrapped.messages, r).score == 0.5
    first = gym_llm.make("longctx/MultiHopQA-v0", hops=2, num_distractors=6, context_tokens=4096, max_turns=4)
    first.reset(seed=0)
    assert first.step(f"\\boxed{{{first.unwrapped.task.answer}}}")[1] == 1.0
