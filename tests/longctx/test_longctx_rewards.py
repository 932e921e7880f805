"""The verifier: recall, exact presence, and the anti-hedging rule."""

from __future__ import annotations

import re
import time

import pytest
from gym_llm_longctx import (
    answer_span,
    named,
    reward_fn,
    score_answer,
    string_match_all,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import gym_llm

VALUES = ["1234567", "2345678", "3456789", "4567890"]


def test_recall_is_exact_and_partial():
    assert score_answer("\\boxed{1234567, 2345678, 3456789, 4567890}", VALUES).score == 1.0
    result = score_answer("\\boxed{4567890, 1234567}", VALUES)
    assert result.score == 0.5 and result.components == {"recall": 0.5, "hedging_penalty": 0.0}
    assert "named 2 of 4" in result.info["reason"]
    assert score_answer("\\boxed{}", VALUES).info["reason"] == "empty answer"
    assert string_match_all("1234567 and 3456789", VALUES) == 0.5


def test_names_are_whole_words_case_insensitive():
    assert named("12345678 1,234,567 x1234567", ["1234567"]) == set()
    assert named("(1234567).", ["1234567"]) == {"1234567"}
    assert named("The answer: FERAIND", ["feraind"]) == {"feraind"}
    assert named("QXBRT, zklmn", ["QXBRT", "ZKLMN", "QXBR"]) == {"QXBRT", "ZKLMN"}
    assert named("the Noupro  Troshe", ["Noupro Troshe", "Troshe Noupro"]) == {"Noupro Troshe"}


def test_only_the_last_box_or_the_text_outside_think_is_graded():
    assert answer_span("I think 7654321, but \\boxed{1} then \\boxed{1234567}") == "1234567"
    assert answer_span("<think>is it 7654321?</think> It is 1234567.").strip() == "It is 1234567."
    assert answer_span("<think>never closed 1234567") .strip() == ""
    assert answer_span({"role": "assistant", "content": "\\boxed{42}"}) == "42"
    cands = ["1234567", "7654321"]
    assert score_answer("<think>7654321 or 1234567?</think>\\boxed{1234567}", ["1234567"], cands).score == 1.0
    assert score_answer("I doubt 7654321. \\boxed{1234567}", ["1234567"], cands).score == 1.0


def test_listing_every_number_in_the_context_earns_nothing():
    for variant in ("multikey", "multivalue", "multiquery"):
        env = gym_llm.make("longctx/Needle-v0", variant=variant, difficulty=1.0, context_tokens=2048)
        for index in range(3):
            task = env.unwrapped.task_set.get("train", index)
            every_number = sorted(set(re.findall(r"\d+", task.prompt.split("<text>")[1])))
            assert set(every_number) == set(task.metadata["candidates"])
            result = reward_fn(task, "\\boxed{" + ", ".join(every_number) + "}")
            assert result.score == 0.0 and result.components["recall"] == 1.0
            assert "hedging penalty" in result.info["reason"]


def test_a_wrong_candidate_cancels_a_right_one():
    cands = VALUES + ["5678901", "6789012", "7890123", "8901234", "9012345"]
    # k = 4 required, 5 wrong in the context: each wrong name costs 1/4.
    assert score_answer("\\boxed{1234567, 2345678, 3456789, 4567890, 5678901}", VALUES, cands).score == 0.75
    assert score_answer("\\boxed{1234567, 5678901}", VALUES, cands).score == 0.0
    # k = 1 between two candidates: hedging earns nothing, committing earns all or nothing.
    assert score_answer("\\boxed{1234567 or 2345678}", ["1234567"], VALUES[:2]).score == 0.0
    # fewer wrong candidates than required values: each costs 1/w, so naming them all is 0.
    assert score_answer("\\boxed{1234567, 2345678, 3456789, 4567890, 9}", VALUES, VALUES + ["9"]).score == 0.0


def test_numbers_that_are_not_candidates_are_neither_rewarded_nor_penalised():
    assert score_answer("\\boxed{1234567, 9999999}", ["1234567"], ["1234567", "2345678"]).score == 1.0
    assert score_answer("\\boxed{9999999}", ["1234567"], ["1234567", "2345678"]).score == 0.0


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(0, 8), st.data())
def test_hedging_never_pays_more_than_the_right_answers_it_contains(k, w, data):
    required = [str(1_000_000 + i) for i in range(k)]
    wrong = [str(2_000_000 + i) for i in range(w)]
    cands = required + wrong
    named_values = data.draw(st.lists(st.sampled_from(cands), unique=True)) if cands else []
    score = score_answer("\\boxed{" + ", ".join(named_values) + "}", required, cands).score
    right = len(set(named_values) & set(required))
    assert 0.0 <= score <= right / k
    if w and set(named_values) == set(cands):
        assert score == 0.0
    for extra in sorted(set(wrong) - set(named_values))[:1]:
        more = score_answer("\\boxed{" + ", ".join([*named_values, extra]) + "}", required, cands).score
        assert more <= score - min(score, 1 / k) + 1e-12  # a wrong name costs at least 1/k


def test_the_verifier_is_linear_in_the_response():
    cands = [str(1_000_000 + i) for i in range(20_000)]
    response = " ".join(cands[::2]) * 8
    start = time.perf_counter()
    result = score_answer(response[:1_000_000], cands[:5], cands)
    assert time.perf_counter() - start < 2.0
    assert result.score == 0.0


@pytest.mark.parametrize("response", ["", "x" * 200_000, "\x00\xff", "\\boxed{", "<think>", None, 12345,
                                      {"unexpected": "fields"}])
def test_any_response_scores_without_raising(response):
    result = score_answer(response, VALUES, VALUES)
    assert result.score == 0.0 and result.info["reason"]


def test_qa_is_exact_presence_and_one_hop_short_is_wrong():
    env = gym_llm.make("longctx/MultiHopQA-v0", hops=3).unwrapped
    task = env.task_set.get("train", 0)
    wrong = [c for c in task.metadata["candidates"] if c != task.answer]
    assert reward_fn(task, f"The city is {task.answer}.").score == 1.0
    assert reward_fn(task, f"\\boxed{{{task.answer.lower()}}}").score == 1.0
    assert reward_fn(task, f"\\boxed{{{wrong[0]}}}").score == 0.0
    assert reward_fn(task, f"\\boxed{{{task.answer} or {wrong[0]}}}").score == 0.0
