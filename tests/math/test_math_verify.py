"""The math verifier: equivalence table, hedging, hostile responses, gold
errors, hard timeouts, determinism, threads and forks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from gym_llm_math import Verifier, extract_gold, verify
from math_equivalence_table import TABLE

ROOT = Path(__file__).resolve().parents[2]


def boxed(answer: str) -> str:
    return f"Let me work it out step by step. The answer is $\\boxed{{{answer}}}$."


def test_the_table_is_big_and_covers_every_category():
    assert len(TABLE) >= 60
    categories = {c for c, *_ in TABLE}
    assert {"fraction", "latex", "units", "set", "interval", "tuple", "equation", "expression",
            "matrix", "percent", "negative", "hedge"} <= categories
    assert sum(not expected for *_, expected in TABLE) >= 20, "too few must-not-match rows"


@pytest.mark.parametrize(("category", "gold", "answer", "expected"), TABLE,
                         ids=[f"{c}:{g}|{a}" for c, g, a, _ in TABLE])
def test_equivalence_table(category, gold, answer, expected, slow_verifier):
    fast = verify(gold, boxed(answer))
    slow = slow_verifier(gold, boxed(answer))
    assert fast.score == float(expected), fast.info
    assert slow.score == fast.score, f"the fast path changed the verdict: {fast.info} vs {slow.info}"
    assert fast.components == {"format": 1.0, "correct": float(expected)}
    assert not fast.error and not slow.error
    if not expected:
        assert fast.info["reason"]


def test_plain_numbers_take_the_fast_path():
    assert verify("1,000", boxed("$1000.00")).info["verifier"] == "fast"
    assert verify("x^2", boxed("x \\cdot x")).info["verifier"] == "math-verify"


# ------------------------------------------------------------------ hedging
@pytest.mark.parametrize(("response", "score", "reason"), [
    ("\\boxed{5} or maybe \\boxed{7}", 0.0, "wrong answer"),  # the last box is the answer
    ("\\boxed{7} ++++++ \\boxed{5}", 0.0, "hedged: boxed answers disagree"),
    ("first \\boxed{7}, final answer \\boxed{5}", 0.0, "hedged: boxed answers disagree"),
    ("\\boxed{5} so the answer is \\boxed{5}", 1.0, None),
    ("\\boxed{5.0} i.e. \\boxed{5}", 1.0, None),
    ("\\boxed{\\frac{10}{2}} = \\boxed{5}", 1.0, None),
    ("\\boxed{x = 5} so \\boxed{5}", 1.0, None),
])
def test_disagreeing_boxes_are_hedging(response, score, reason):
    result = verify("5", response)
    assert result.score == score, result.info
    assert result.info.get("reason") == reason


def test_too_many_different_boxes_are_hedging_without_verifying_each():
    response = " ".join(f"\\boxed{{{i}}}" for i in range(5000)) + " \\boxed{5}"
    start = time.perf_counter()
    result = verify("5", response)
    assert result.score == 0.0 and result.info["reason"].startswith("hedged")
    assert time.perf_counter() - start < 1.0


# ------------------------------------------------------- format and hostility
@pytest.mark.parametrize("response", ["", "The answer is 5.", "\\boxed{5", "\\boxed", "$5$"])
def test_no_boxed_answer_scores_zero_with_a_reason(response):
    result = verify("5", response)
    assert result.score == 0.0 and result.components == {"format": 0.0, "correct": 0.0}
    assert "boxed" in result.info["reason"] and not result.error


def test_the_last_box_is_the_answer_and_text_after_it_is_ignored():
    assert verify("5", "so \\boxed{5}. Done! Let me know if you need more.").score == 1.0


@pytest.mark.parametrize("response", [
    "x" * 200_000 + "\\boxed{5}",
    "\\boxed{" + "1" * 50_000 + "}",
    "\\boxed{" + "{" * 20_000 + "}" * 20_000 + "}",
    b"\x00\xff\xfe binary \x80 \\boxed{5}",
    "\x00" * 1000,
    {"role": "assistant", "content": None},
    12345,
])
def test_hostile_responses_never_raise_and_stay_fast(response):
    start = time.perf_counter()
    result = verify("5", response)
    assert 0.0 <= result.score <= 1.0 and not result.error
    assert time.perf_counter() - start < 3.0


def test_response_may_be_a_message_or_a_conversation():
    assert verify("5", {"role": "assistant", "content": "\\boxed{5}"}).score == 1.0
    convo = [{"role": "user", "content": "2+3? \\boxed{6}"}, {"role": "assistant", "content": "\\boxed{5}"}]
    assert verify("5", convo).score == 1.0


# -------------------------------------------------------------------- gold
@pytest.mark.parametrize("gold", ["", "   ", None, "\\frac{", "}{"])
def test_unparseable_gold_is_a_reward_error_not_a_silent_zero(gold):
    result = verify(gold, "\\boxed{5}")
    assert result.score == 0.0 and result.error, result.info


@pytest.mark.parametrize(("solution", "gold"), [
    ("Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 72", "72"),
    ("#### 1,000", "1,000"),
    ("So $x = \\boxed{\\frac{1}{2}}$. Thus \\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt{3}}{2}"),
    ("  42 ", "42"),
    (42, "42"),
    (0.5, "0.5"),
])
def test_gold_formats(solution, gold):
    assert extract_gold(solution) == gold
    assert verify(solution, f"\\boxed{{{gold}}}").score == 1.0


# ---------------------------------------------------------------- timeouts
def test_a_hanging_comparison_is_killed_off_the_main_thread_and_the_worker_restarts():
    v = Verifier(timeout_s=1.0, workers=1)
    out = {}

    def hang():
        start = time.perf_counter()
        out["result"] = v("1", "\\boxed{9^{9^{9^{9}}}}")
        out["elapsed"] = time.perf_counter() - start

    try:
        # Hard timeouts must work from any thread (math-verify's own are
        # signal-based: main thread only).
        assert v("x^2", "\\boxed{x \\cdot x}").score == 1.0  # the worker is up
        thread = threading.Thread(target=hang)
        thread.start()
        thread.join(timeout=60)
        result = out["result"]
        assert result.score == 0.0 and "timed out" in result.info["reason"] and not result.error
        assert out["elapsed"] < 3.0
        assert v("x^2 - 1", "\\boxed{(x-1)(x+1)}").score == 1.0  # a fresh worker took over
    finally:
        v.close()


# ------------------------------------------------- determinism and sharing
def test_same_verdicts_in_another_process():
    rows = [(g, a) for _, g, a, _ in TABLE[::4]]
    code = (
        "import json, sys\nfrom gym_llm_math import verify\n"
        "rows = json.loads(sys.stdin.read())\n"
        "print(json.dumps([[verify(g, '\\\\boxed{' + a + '}').score, "
        "verify(g, '\\\\boxed{' + a + '}').info.get('reason')] for g, a in rows]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(rows), capture_output=True,
                         text=True, check=True, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "77"})
    here = [[verify(g, "\\boxed{" + a + "}").score, verify(g, "\\boxed{" + a + "}").info.get("reason")]
            for g, a in rows]
    assert json.loads(out.stdout) == here


def test_threads_share_the_worker_pool():
    cases = [(g, a, e) for _, g, a, e in TABLE if "\\" in g or "x" in g][:16]
    results: dict[int, float] = {}

    def run(i, gold, answer):
        results[i] = verify(gold, boxed(answer)).score

    threads = [threading.Thread(target=run, args=(i, g, a)) for i, (g, a, _) in enumerate(cases)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == {i: float(e) for i, (_, _, e) in enumerate(cases)}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_gets_its_own_workers():
    assert verify("x^2", "\\boxed{x \\cdot x}").score == 1.0  # the parent's worker exists
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: must not talk to the parent's worker
        try:
            score = verify("x^2 + 1", "\\boxed{1 + x^2}").score
            os.write(write, str(score).encode())
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 100) == b"1.0" and status == 0
    os.close(read)
    assert verify("x^3", "\\boxed{x \\cdot x^2}").score == 1.0  # the parent's pool still works


# --------------------------------------- several answers, a trailing quantifier
@pytest.mark.parametrize(("response", "score", "reason"), [
    # boxes joined by "and", "or" or a comma are one answer: the set
    ("\\boxed{35} and \\boxed{4}", 1.0, None),
    ("\\boxed{35}, \\boxed{4}", 1.0, None),
    ("\\boxed{35 cm} or \\boxed{4}", 1.0, None),
    # anything else between them makes several answers, each of which must be the set
    ("\\boxed{35 cm} ++++++ \\boxed{4}", 0.0, "hedged: boxed answers disagree"),
    ("\\boxed{4} ++++++ \\boxed{35}", 0.0, "hedged: boxed answers disagree"),
    ("\\boxed{35, 4} ++++++ \\boxed{4}", 0.0, "hedged: boxed answers disagree"),
    ("\\boxed{35, 4} ++++++ \\boxed{4, 35}", 1.0, None),
])
def test_boxes_with_junk_between_are_several_answers_not_one_set(response, score, reason):
    # They were pooled into one set whatever stood between them: two boxes with junk
    # between answered the set {35, 4} (review of issue 37).
    result = verify("35, 4", response)
    assert (result.score, result.info.get("reason")) == (score, reason), result.info


@pytest.mark.parametrize(("answer", "score"), [
    # a universal quantifier after the value is harmless: one value, for every n
    ("5 \\text{ for all } n", 1.0),
    ("5 \\text{ for every integer } n \\geq 1", 1.0),
    ("5 \\quad \\forall n \\in \\mathbb{N}", 1.0),
    ("$5$ \\text{ for all n}", 1.0),
    # a condition, or a second value behind the quantifier, is not
    ("5 \\text{ for } n \\text{ odd}", 0.0),
    ("5 \\text{ for all odd } n", 0.0),
    ("5 \\text{ for all } n \\text{ odd}", 0.0),
    ("5 \\text{ for all } n \\text{ or } 7", 0.0),
    ("5 \\text{ for all } 7", 0.0),
    ("5, 7 \\text{ for all } n", 0.0),
])
def test_a_trailing_universal_quantifier_is_harmless_a_condition_is_not(answer, score):
    # "\\boxed{5 \\text{ for all } n}" scored 0 against 5, and "5 \\text{ for } n
    # \\text{ odd}" (5 for odd n only) scored 1 (review of issue 37).
    result = verify("5", boxed(answer))
    assert result.score == score, result.info
    assert result.score or result.info["reason"].startswith(("hedged", "wrong")), result.info
