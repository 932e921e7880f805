"""Sizing a prompt to a token budget by measuring it.

A prompt is a fixed frame (instructions, question, needles) around a body of
filler *items* (haystack sentences, list words) drawn from an endless
stream. :func:`fit` picks how many items to use. Item costs are *estimated*
with the fast :class:`~gym_llm_longctx.tokens.ApproxCounter`; the prompt is
*measured* with the chosen counter. The estimates are rescaled by the
counter's tokens per estimated token, first on a sample of items, then on
each full measurement, and the guess is corrected until the prompt measures
at most ``target`` tokens and less than one item short of it. With the
default counter (the estimator itself, additive over space-separated
pieces) one measurement suffices; a real tokenizer usually takes two.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .tokens import TokenCounter, load_counter

__all__ = ["Filler", "Fitted", "fit", "interleave", "place_inserts", "ContextTooSmall"]

T = TypeVar("T")

#: Measuring rounds before :func:`fit` stops growing and only shrinks.
MAX_FIT_ROUNDS = 8
#: Estimated tokens of filler measured first to rescale the estimates.
CALIBRATION_TOKENS = 32768


class ContextTooSmall(ValueError):
    """The frame alone (instructions, question, needles) exceeds the budget."""


class Filler(Generic[T]):
    """A lazily drawn stream of filler items with their estimated token costs.

    ``text_of(item)`` is the text priced for an item and ``weight_of(item)``
    how many times it appears in the body (1 for a sentence, its frequency for
    a list word). Items are priced in batches with ``estimator.count_each``
    (default: the built-in approximation).
    """

    def __init__(
        self,
        stream: Iterator[T],
        text_of: Callable[[T], str] = str,
        weight_of: Callable[[T], int] = lambda item: 1,
        estimator: TokenCounter | None = None,
        batch: int = 512,
    ):
        self.stream, self.estimator = stream, estimator or load_counter(None)
        self.text_of, self.weight_of, self.batch = text_of, weight_of, batch
        self.items: list[T] = []
        self.cum: list[int] = [0]  # cum[n]: estimated tokens of the first n items
        self.max_cost = 0  # the largest estimated cost of one item drawn so far

    def grow_to_cost(self, tokens: int) -> None:
        """Draw items until their estimated cost exceeds ``tokens``."""
        while self.cum[-1] <= tokens:
            new = [next(self.stream) for _ in range(self.batch)]
            costs = self.estimator.count_each([self.text_of(i) for i in new])
            total = self.cum[-1]
            for item, cost in zip(new, costs, strict=True):
                weighted = cost * self.weight_of(item)
                total += weighted
                self.max_cost = max(self.max_cost, weighted)
                self.cum.append(total)
            self.items.extend(new)

    def calibrate(self, counter: TokenCounter, tokens: float) -> float:
        """``counter``'s tokens per estimated token on the first items worth
        about ``tokens`` estimated tokens (1.0 when ``counter`` is the estimator)."""
        if counter is self.estimator:
            return 1.0
        k = max(1, self.fitting(0, tokens))
        sample = "".join(self.text_of(i) * self.weight_of(i) for i in self.items[:k])
        return max(counter.count(sample), 1) / max(self.cum[k], 1)

    def fitting(self, start: int, tokens: float) -> int:
        """The largest ``n >= start`` whose items ``start..n`` cost at most ``tokens``
        more than the first ``start`` (``start`` itself if none fits)."""
        self.grow_to_cost(self.cum[start] + tokens)
        return max(start, bisect.bisect_right(self.cum, self.cum[start] + tokens) - 1)

    def shedding(self, end: int, tokens: float) -> int:
        """The largest ``n < end`` such that dropping items ``n..end`` saves at
        least ``tokens`` (0 if none does)."""
        return max(0, min(end - 1, bisect.bisect_right(self.cum, self.cum[end] - tokens) - 1))

    def positions(self, n: int, depths: Sequence[float]) -> list[int]:
        """Where inserts at token ``depths`` go among the first ``n`` items: for
        each depth, the item boundary nearest to ``depth`` of their tokens."""
        cum = self.cum
        out = []
        for d in depths:
            goal = min(1.0, max(0.0, d)) * cum[n]
            i = bisect.bisect_left(cum, goal, 0, n + 1)
            if i > 0 and goal - cum[i - 1] <= cum[i] - goal:
                i -= 1
            out.append(i)
        return out

    def depth_of(self, position: int, n: int) -> float:
        """The fraction of the first ``n`` items' tokens before ``position``."""
        return self.cum[position] / self.cum[n] if self.cum[n] else 0.0


@dataclass
class Fitted:
    """What :func:`fit` chose: ``n`` filler items, the prompt ``text`` built
    from them and its measured ``tokens``."""

    n: int
    text: str
    tokens: int


def fit(target: int, filler: Filler, build: Callable[[int], str], counter: TokenCounter) -> Fitted:
    """Build a prompt ``build(n)`` that ``counter`` measures at most ``target``
    tokens and less than one filler item short of it.

    ``build(n)`` must return the prompt with the first ``n`` filler items; its
    size must grow with ``n``. Postcondition: ``tokens <= target`` (always)
    and, unless the fit gave up after :data:`MAX_FIT_ROUNDS` measurements,
    ``target - tokens`` is less than the largest item's (rescaled) estimate.
    Raises :class:`ContextTooSmall` when even ``build(0)`` is too long.
    """
    frame = counter.count(build(0))
    if frame > target:
        raise ContextTooSmall(
            f"context_tokens={target} is too small: the instructions, question and inserted facts "
            f"alone measure {frame} tokens ({counter.name})"
        )
    # Measured filler tokens per estimated token; the sample is the whole guess
    # for short prompts and a quarter of it for 128k ones.
    ratio = filler.calibrate(counter, min(target - frame, CALIBRATION_TOKENS))
    n = filler.fitting(0, (target - frame) / ratio)
    best: Fitted | None = None
    for _ in range(MAX_FIT_ROUNDS):
        text = build(n)
        tokens = counter.count(text)
        if filler.cum[n] > 0 and tokens > frame:
            ratio = (tokens - frame) / filler.cum[n]
        if tokens <= target:
            if best is None or tokens > best.tokens:
                best = Fitted(n, text, tokens)
            if target - tokens < filler.max_cost * ratio:
                return best
        # Re-aim at the middle of the window of acceptable sizes.
        goal = (target - frame - filler.max_cost * ratio / 2) / ratio
        aimed = filler.fitting(0, max(0.0, goal))
        if aimed == n:
            aimed = n - 1 if tokens > target else n + 1
        if best is not None and aimed == best.n:
            return best
        n = max(0, aimed)
    if best is not None:
        return best
    # Every measurement overshot (a tokenizer far from additive): shrink until it fits.
    while True:
        n = filler.shedding(n, (tokens - target) / ratio)
        text = build(n)
        tokens = counter.count(text)
        if tokens <= target or n == 0:
            return Fitted(n, text, tokens)


def interleave(
    units: Sequence[str], inserts: Sequence[str], positions: Sequence[int], sep: str = " "
) -> list[str]:
    """Filler ``units`` with insert ``i`` after ``positions[i]`` units (inserts
    at the same place keep their order), each insert preceded by ``sep``."""
    order = sorted(range(len(inserts)), key=lambda i: (positions[i], i))
    parts: list[str] = []
    done = 0
    for i in order:
        parts.extend(units[done : positions[i]])
        parts.append(sep + inserts[i])
        done = positions[i]
    parts.extend(units[done:])
    return parts


def place_inserts(
    units: Sequence[str], inserts: Sequence[str], positions: Sequence[int], sep: str = " "
) -> str:
    """The text of :func:`interleave`, leading whitespace removed."""
    return "".join(interleave(units, inserts, positions, sep)).lstrip()
