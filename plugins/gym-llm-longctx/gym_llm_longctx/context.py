"""Sizing a prompt to a token budget by measuring it.

A prompt is a fixed frame (instructions, question, needles) around a body of
filler *units* (haystack sentences, list entries) drawn from an endless
stream. :func:`fit` picks how many units to use: it sums per-unit counts to
a first guess, then measures the whole prompt with the counter and corrects,
until the prompt measures at most ``target`` tokens and the next unit would
not fit. With the default counter (additive over space-separated pieces) one
measurement suffices; with a real tokenizer the corrections converge in a
few rounds.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .tokens import TokenCounter

__all__ = ["Filler", "Fitted", "fit", "interleave", "place_inserts", "ContextTooSmall"]

T = TypeVar("T")

#: Measuring rounds before :func:`fit` stops growing and only shrinks.
MAX_FIT_ROUNDS = 8


class ContextTooSmall(ValueError):
    """The frame alone (instructions, question, needles) exceeds the budget."""


class Filler(Generic[T]):
    """A lazily drawn stream of filler items with their estimated token costs.

    ``text_of(item)`` is the text counted for an item and ``weight_of(item)``
    how many times it appears in the body (1 for a sentence, its frequency for
    a list word). Items are counted in batches with ``counter.count_each``.
    """

    def __init__(
        self,
        stream: Iterator[T],
        counter: TokenCounter,
        text_of: Callable[[T], str] = str,
        weight_of: Callable[[T], int] = lambda item: 1,
        batch: int = 512,
    ):
        self.stream, self.counter = stream, counter
        self.text_of, self.weight_of, self.batch = text_of, weight_of, batch
        self.items: list[T] = []
        self.cum: list[int] = [0]  # cum[n]: estimated tokens of the first n items

    def grow_to_cost(self, tokens: int) -> None:
        """Draw items until their estimated cost exceeds ``tokens``."""
        while self.cum[-1] <= tokens:
            new = [next(self.stream) for _ in range(self.batch)]
            costs = self.counter.count_each([self.text_of(i) for i in new])
            total = self.cum[-1]
            for item, cost in zip(new, costs, strict=True):
                total += cost * self.weight_of(item)
                self.cum.append(total)
            self.items.extend(new)

    def fitting(self, start: int, tokens: int) -> int:
        """The largest ``n >= start`` whose items ``start..n`` cost at most ``tokens``
        more than the first ``start`` (``start`` itself if none fits)."""
        self.grow_to_cost(self.cum[start] + tokens)
        return max(start, bisect.bisect_right(self.cum, self.cum[start] + tokens) - 1)

    def shedding(self, end: int, tokens: int) -> int:
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


def fit(target: int, filler: Filler, build: Callable[[int], str]) -> Fitted:
    """Build the longest prompt ``build(n)`` that measures at most ``target``.

    ``build(n)`` must return the prompt with the first ``n`` filler items; its
    size must grow with ``n``. Postcondition: ``tokens <= target``, and adding
    the next item would exceed ``target`` by the items' estimated costs.
    Raises :class:`ContextTooSmall` when even ``build(0)`` is too long.
    """
    counter = filler.counter
    frame = counter.count(build(0))
    if frame > target:
        raise ContextTooSmall(
            f"context_tokens={target} is too small: the instructions, question and inserted facts "
            f"alone measure {frame} tokens ({counter.name})"
        )
    n = filler.fitting(0, target - frame)
    for _ in range(MAX_FIT_ROUNDS):
        text = build(n)
        tokens = counter.count(text)
        if tokens > target:
            n = filler.shedding(n, tokens - target)
            continue
        grown = filler.fitting(n, target - tokens)
        if grown == n:
            return Fitted(n, text, tokens)
        n = grown
    # The estimate keeps overshooting (a tokenizer far from additive): shrink only.
    text = build(n)
    tokens = counter.count(text)
    while tokens > target and n > 0:
        n = filler.shedding(n, tokens - target)
        text = build(n)
        tokens = counter.count(text)
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
