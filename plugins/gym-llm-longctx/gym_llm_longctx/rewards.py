"""The long-context verifier: recall of the required values, with anti-hedging.

Every task has ``answer`` (one value or a list of values: all of them earn
full reward) and ``metadata["candidates"]``: every string in the context that
has the form of an answer (every magic number, every variable name, every
word of the list, every city). Scoring a response:

1. **Answer span.** Only the content of the last ``\\boxed{...}`` is graded
   when the response has one; otherwise the whole response, with
   ``<think>...</think>`` reasoning removed (an unclosed ``<think>`` hides
   everything after it).
2. **Naming.** A value is named when its words appear as whole words in the
   span, case-insensitively (``1234567`` is not named by ``12345678`` nor by
   ``1,234,567``).
3. **Recall** (``string_match_all``): the fraction of required values named.
4. **Anti-hedging.** Each *wrong candidate* named (a candidate that is not
   required) costs ``1 / min(k, w)``, where ``k`` is the number of required
   values and ``w`` the number of wrong candidates in the context::

       reward = max(0, recall - wrong_named / min(k, w))

   So (a) naming every candidate earns exactly 0 (``recall`` is 1 and the
   penalty is ``w / min(k, w) >= 1``); (b) a wrong name costs at least what
   a right one gains (``1/k``), so adding a guess raises the expected reward
   only when the guess is more likely right than wrong; (c) strings that are
   not candidates (numbers the context never had) are neither rewarded nor
   penalised; (d) with no wrong candidate in the context there is nothing to
   hedge between and the reward is the recall.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from gym_llm import RewardResult
from gym_llm.envs.parsing import extract_boxed, message_text

__all__ = [
    "answer_span", "named", "string_match_all", "score_answer", "reward_fn",
    "as_values", "strict_score", "SCORE_FORMULA",
]

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_WORD = re.compile(r"\w+")


def as_values(answer: Any) -> list[str]:
    """A task answer (a value or a list of values) as a list of strings."""
    if isinstance(answer, list | tuple | set | frozenset):
        return [str(a) for a in answer]
    return [str(answer)]


def answer_span(response: Any) -> str:
    """The graded part of a response (a string or a message dict): the last
    ``\\boxed{}`` content, else the text without ``<think>`` blocks."""
    text = message_text(response)
    boxes = extract_boxed(text)
    if boxes:
        return boxes[-1]
    return _THINK.sub(" ", text)


def _normal(value: str) -> str:
    return " ".join(_WORD.findall(value.casefold()))


def named(text: str, values: Iterable[str]) -> set[str]:
    """The ``values`` that ``text`` names as whole words (case-insensitive,
    any whitespace or punctuation between the words of a value). Linear in
    the text for any number of values."""
    wanted: dict[int, dict[str, list[str]]] = {}
    for v in values:
        norm = _normal(v)
        if norm:
            wanted.setdefault(norm.count(" ") + 1, {}).setdefault(norm, []).append(v)
    if not wanted:
        return set()
    words = _WORD.findall(text.casefold())
    found: set[str] = set()
    for length, table in wanted.items():
        for i in range(len(words) - length + 1):
            hit = table.get(" ".join(words[i : i + length]) if length > 1 else words[i])
            if hit:
                found.update(hit)
    return found


def string_match_all(text: str, answers: Sequence[str]) -> float:
    """Recall: the fraction of ``answers`` that ``text`` names (RULER's
    ``string_match_all``, with whole-word matching)."""
    if not answers:
        return 0.0
    return len(named(text, answers)) / len(set(answers))


#: :func:`score_answer`'s score in its components, as ``reward_formula`` states it.
SCORE_FORMULA = "max(0, 1 * recall - 1 * hedging_penalty)"


def score_answer(response: Any, answers: Sequence[str], candidates: Sequence[str] = ()) -> RewardResult:
    """Score a response against the required ``answers`` and the context's
    ``candidates`` with the anti-hedging rule of this module. Never raises on
    any response. Components: ``recall`` and ``hedging_penalty``."""
    required = set(answers)
    wrong_pool = set(candidates) - required
    span = answer_span(response)
    hits = named(span, required | wrong_pool)
    right, wrong = hits & required, hits - required
    recall = len(right) / len(required) if required else 0.0
    penalty = len(wrong) / min(len(required), len(wrong_pool)) if wrong else 0.0
    score = max(0.0, recall - penalty)
    info: dict[str, Any] = {"named_required": len(right), "named_wrong": len(wrong)}
    if score < 1.0:
        if not span.strip():
            info["reason"] = "empty answer"
        else:
            info["reason"] = f"named {len(right)} of {len(required)} required values" + (
                f" and {len(wrong)} wrong candidate(s) (hedging penalty {penalty:.3f})" if wrong else ""
            )
    return RewardResult(score, {"recall": recall, "hedging_penalty": min(penalty, recall)}, info)


def reward_fn(task: Any, response: Any) -> RewardResult:
    """The reward of every long-context environment: :func:`score_answer`
    with ``task.answer`` and ``task.metadata["candidates"]``."""
    return score_answer(response, as_values(task.answer), task.metadata.get("candidates", ()))


def strict_score(response: Any, answers: Sequence[str]) -> RewardResult:
    """The strict grader (exact match, docs/monitoring.md): the last
    ``\\boxed{}`` must hold only required values, comma-separated, each
    matched exactly (case and punctuation aside); the score is the share of
    required values given. Anything else in the box (a wrong candidate, a
    word around the value) or no box at all scores 0, so listing candidates
    earns nothing and an exact answer scores what the training reward gives it."""
    boxes = extract_boxed(message_text(response))
    required = {_normal(a): a for a in answers}
    if not boxes or not required:
        return RewardResult(0.0, {"exact": 0.0}, {"reason": "strict: no \\boxed{} answer"})
    items = [_normal(item) for item in boxes[-1].split(",")]
    extra = [i for i in items if i not in required]
    if extra or not items:
        return RewardResult(0.0, {"exact": 0.0}, {"reason": f"strict: {len(extra)} value(s) that are not "
                                                            f"the answer in the box"})
    score = len(set(items)) / len(required)
    return RewardResult(score, {"exact": score}, {} if score == 1.0 else {"reason": "strict: values missing"})
