"""Generated instruct tasks: a base request (:func:`~gym_llm_instruct.requests.make_request`)
with constraints drawn for the difficulty.

Difficulty ``d`` in [0, 1] decides which kinds: a constraint type is drawn
only when its ``hardness <= 0.35 + 0.65 d`` (at 0: lengths, keywords, simple
format and case; at 1: IFBench's word games too); an env decides how many.
Types that would contradict (a shared ``slot``; a ``solo`` type with anything
but keyword constraints; the same id twice) never meet in one task.

Splits are disjoint by topic (:class:`GeneratedTasks`): a topic is held out
when the hash of its name falls below ``heldout_fraction``, and each split's
tasks are about its own topics only, so no held-out topic is ever trained on.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from gym_llm.envs.tasks import Draft, ProceduralTasks, Task, TaskSet, check_split, content_hash

from .constraints import CONSTRAINTS, ConstraintType, SampleContext, describe, validate
from .requests import TOPICS, Topic, make_request

__all__ = ["hardness_cap", "draw_constraints", "generator", "GeneratedTasks", "topics_of"]


def hardness_cap(difficulty: float) -> float:
    """The hardest constraint type a task of ``difficulty`` draws."""
    return 0.35 + 0.65 * difficulty


def _conflict(new: ConstraintType, chosen: list[ConstraintType]) -> bool:
    slots = set(new.slot.split())
    for old in chosen:
        if old.id == new.id or slots & set(old.slot.split()):
            return True
        if "language" in (old.kind, new.kind):
            return True
        if (new.solo and old.kind != "keywords") or (old.solo and new.kind != "keywords"):
            return True
    return False


def draw_constraints(rng: random.Random, difficulty: float, count: int, ctx: SampleContext) -> list[dict[str, Any]]:
    """Up to ``count`` compatible constraints (validated) for a task of ``difficulty``."""
    pool = [t for t in CONSTRAINTS.values() if t.sample is not None and t.hardness <= hardness_cap(difficulty)]
    chosen: list[ConstraintType] = []
    for _ in range(20 * count):
        if len(chosen) == count:
            break
        candidate = rng.choice(pool)
        if not _conflict(candidate, chosen):
            chosen.append(candidate)
    return [validate({"id": t.id, "kwargs": t.sample(rng, ctx)}) for t in chosen]


def generator(count: Callable[[float], int], topics: Sequence[Topic]) -> Callable[[random.Random, float], Draft]:
    """A :class:`~gym_llm.ProceduralTasks` generator of requests about
    ``topics`` with ``count(difficulty)`` constraints."""

    def generate(rng: random.Random, difficulty: float) -> Draft:
        request, meta, topic = make_request(rng, topics)
        ctx = SampleContext(request, topic.words, topic.related)
        constraints = draw_constraints(rng, difficulty, count(difficulty), ctx)
        prompt = request + "\n\n" + " ".join(describe(c) for c in constraints)
        return Draft(prompt, constraints, {"constraints": constraints, "request": meta})

    return generate


def topics_of(split: str, heldout_fraction: float = 0.2) -> tuple[Topic, ...]:
    """The topics of ``split``: held out when the hash of the name falls below ``heldout_fraction``."""
    threshold = int(heldout_fraction * 2**32)
    held = [t for t in TOPICS if int(content_hash(t.name)[:8], 16) < threshold]
    return tuple(held) if check_split(split) == "heldout" else tuple(t for t in TOPICS if t not in held)


class GeneratedTasks(TaskSet):
    """Generated tasks, their splits disjoint by topic (:func:`topics_of`) and,
    within, by content (each split is a :class:`~gym_llm.ProceduralTasks` of
    its own topics, keeping only the draws that land in it)."""

    def __init__(self, name: str, count: Callable[[float], int], *, difficulty: float = 0.0,
                 heldout_size: int = 500, heldout_fraction: float = 0.2):
        self.by_split = {split: ProceduralTasks(name, generator(count, topics_of(split, heldout_fraction)),
                                                difficulty=difficulty, sizes={"heldout": heldout_size},
                                                heldout_fraction=heldout_fraction)
                         for split in ("train", "heldout")}

    def size(self, split: str) -> int:
        return self.by_split[check_split(split)].size(split)

    def describe_size(self, split: str) -> str:
        return self.by_split[check_split(split)].describe_size(split)

    def get(self, split: str, index: int) -> Task:
        return self.by_split[check_split(split)].get(split, index)
