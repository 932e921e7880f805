"""Two-phase procedural tasks: the split is decided before the long text is built.

:class:`gym_llm.ProceduralTasks` hashes each drawn prompt to decide its split,
so it builds every draw in full. A 128k-token prompt costs a tenth of a
second, and a held-out task takes five draws on average, so here a generator
returns a cheap :class:`Plan` first: its ``key`` (the question and the
answer-bearing facts, without filler) decides the split, and only the
accepted plan is built. Consequences, both stronger than hashing prompts:
a held-out question never appears in training at any context length, filler
or tokenizer; and the same index gives the same question at every
``context_tokens`` (the filler of a shorter context is a prefix of a longer
one's), which makes length sweeps controlled experiments.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gym_llm import Draft, ProceduralTasks, Task
from gym_llm.tasks import check_split, content_hash

__all__ = ["Plan", "PlannedTasks"]


@dataclass
class Plan:
    """A task before its text exists: ``key`` (JSON-able) decides the split;
    ``build()`` makes the :class:`~gym_llm.Draft`."""

    key: Any
    build: Callable[[], Draft]


class PlannedTasks(ProceduralTasks):
    """:class:`~gym_llm.ProceduralTasks` whose generator ``plan(rng, difficulty)``
    returns a :class:`Plan`. Draws follow the same seeds
    (``name|difficulty|split|index|attempt``); the first plan whose key hashes
    into ``split`` is built. The task id hashes the built prompt and metadata,
    so it names the exact text wherever it is generated."""

    def get(self, split: str, index: int) -> Task:
        split = check_split(split)
        if not 0 <= index < self.sizes[split]:
            raise IndexError(f"task_index {index} out of range for split {split!r}")
        for attempt in range(self.max_attempts):
            rng = random.Random(f"{self.name}|{self.difficulty:.4f}|{split}|{index}|{attempt}")
            plan = self.generate(rng, self.difficulty)
            landed, key_digest = self.split_of(plan.key)
            if landed != split:
                continue
            draft = plan.build()
            return Task(
                id=f"{self.name}-{content_hash([draft.prompt, draft.metadata])[:16]}",
                prompt=draft.prompt,
                answer=draft.answer,
                metadata=dict(draft.metadata, split_key=key_digest[:16], seed_attempt=attempt, index=index),
                split=split,
                difficulty=self.difficulty,
            )
        raise RuntimeError(f"{self.name}: no {split!r} plan in {self.max_attempts} draws")
