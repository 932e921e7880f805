"""Tasks and task sets: what an environment asks, with deterministic seeding
and train/held-out splits that are disjoint by construction."""

from __future__ import annotations

import hashlib
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Task", "TaskSet", "TaskList", "ProceduralTasks", "Draft", "Plan", "SPLITS",
    "check_split", "content_hash", "as_task_set",
]

SPLITS = ("train", "heldout")


def check_split(split: str) -> str:
    """Validate a split name; datasets' ``test`` is spelled ``heldout`` here."""
    if split == "test":
        return "heldout"
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: expected one of {SPLITS}")
    return split


def content_hash(obj: Any) -> str:
    """A stable hex digest of a JSON-able object, equal across processes."""
    blob = obj if isinstance(obj, str) else json.dumps(obj, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Task:
    """One problem. ``prompt`` is a user message string or a list of chat
    messages; ``answer`` is whatever the reward compares against (never shown
    to the model); ``difficulty`` is in [0, 1]."""

    id: str
    prompt: str | list[dict[str, Any]]
    answer: Any
    metadata: dict[str, Any] | None = None
    split: str = "train"
    difficulty: float = 0.0

    def __post_init__(self) -> None:
        if self.metadata is None:
            self.metadata = {}
        self.split = check_split(self.split)

    def messages(self, system_prompt: str | None = None) -> list[dict[str, Any]]:
        """The prompt as a fresh list of chat messages, ``system_prompt`` first
        unless the prompt already has a system message."""
        if isinstance(self.prompt, str):
            msgs = [{"role": "user", "content": self.prompt}]
        else:
            msgs = [dict(m) for m in self.prompt]
        if system_prompt and not (msgs and msgs[0].get("role") == "system"):
            msgs.insert(0, {"role": "system", "content": system_prompt})
        return msgs


class TaskSet(ABC):
    """Tasks indexed by (split, index). ``size(split)`` tasks per split;
    ``get`` is deterministic and cheap."""

    @abstractmethod
    def size(self, split: str) -> int: ...

    @abstractmethod
    def get(self, split: str, index: int) -> Task: ...

    def iter_split(self, split: str, limit: int | None = None) -> Iterable[Task]:
        """Tasks of ``split`` in index order (at most ``limit``)."""
        n = self.size(split) if limit is None else min(limit, self.size(split))
        for i in range(n):
            yield self.get(split, i)


class TaskList(TaskSet):
    """A fixed list of tasks, split by each task's ``split`` field.

    Raises ``ValueError`` when an id appears twice (a task in both splits would
    leak held-out answers into training).
    """

    def __init__(self, tasks: Iterable[Task]):
        self.by_split: dict[str, list[Task]] = {s: [] for s in SPLITS}
        seen: dict[str, str] = {}
        for t in tasks:
            if t.id in seen:
                raise ValueError(
                    f"task id {t.id!r} appears twice (splits {seen[t.id]!r} and {t.split!r})"
                )
            seen[t.id] = t.split
            self.by_split[t.split].append(t)

    def size(self, split: str) -> int:
        return len(self.by_split[check_split(split)])

    def get(self, split: str, index: int) -> Task:
        tasks = self.by_split[check_split(split)]
        if not 0 <= index < len(tasks):
            raise IndexError(f"task_index {index} out of range for split {split!r} ({len(tasks)} tasks)")
        return tasks[index]


@dataclass
class Draft:
    """What a procedural generator returns: the task without id and split."""

    prompt: str | list[dict[str, Any]]
    answer: Any
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    """A task before its text exists, for generators whose prompts are costly
    to build (a 128k-token haystack): ``key`` (JSON-able: the question and the
    answer-bearing facts) decides the split, and only an accepted plan is
    built with ``build()``. The split then depends on the question alone, not
    on filler, length or tokenizer."""

    key: Any
    build: Callable[[], Draft]


Generator = Callable[[random.Random, float], "Draft | Plan | tuple"]


class ProceduralTasks(TaskSet):
    """Tasks drawn by a seeded generator ``generate(rng, difficulty)``.

    Splits are disjoint by construction, by *content*: a generated task goes to
    ``heldout`` when the hash of its prompt (or of its :class:`Plan`'s key)
    falls below ``heldout_fraction``, else to ``train``. ``get(split, i)``
    tries the seeds ``(name, split, i, 0)``, ``(name, split, i, 1)``, ... and
    keeps the first draw that lands in ``split``, so the same prompt can never
    be in both splits, and the task id (``name-<hash>``) is the same wherever
    that prompt is generated.
    """

    def __init__(
        self,
        name: str,
        generate: Generator,
        *,
        difficulty: float = 0.0,
        sizes: Mapping[str, int] | None = None,
        heldout_fraction: float = 0.2,
        max_attempts: int = 1000,
    ):
        if not 0.0 <= difficulty <= 1.0:
            raise ValueError(f"difficulty must be in [0, 1], got {difficulty}")
        if not 0.0 < heldout_fraction < 1.0:
            raise ValueError("heldout_fraction must be in (0, 1)")
        self.name, self.generate = name, generate
        self.difficulty = float(difficulty)
        self.sizes = {"train": 1_000_000_000, "heldout": 500, **(sizes or {})}
        self.heldout_fraction = heldout_fraction
        self.max_attempts = max_attempts
        self._threshold = int(heldout_fraction * 2**32)

    def size(self, split: str) -> int:
        return self.sizes[check_split(split)]

    def split_of(self, prompt: Any) -> tuple[str, str]:
        """(split, digest) that a prompt (or a plan's key) belongs to."""
        digest = content_hash(prompt)
        return ("heldout" if int(digest[:8], 16) < self._threshold else "train"), digest

    def get(self, split: str, index: int) -> Task:
        split = check_split(split)
        if not 0 <= index < self.sizes[split]:
            raise IndexError(f"task_index {index} out of range for split {split!r}")
        for attempt in range(self.max_attempts):
            rng = random.Random(f"{self.name}|{self.difficulty:.4f}|{split}|{index}|{attempt}")
            drawn = self.generate(rng, self.difficulty)
            if isinstance(drawn, Plan):
                landed, key_digest = self.split_of(drawn.key)
                if landed != split:
                    continue
                draft = drawn.build()
                # the id names the exact text (prompt and metadata) that was built
                digest = content_hash([draft.prompt, draft.metadata])
                extra: dict[str, Any] = {"split_key": key_digest[:16]}
            else:
                draft = drawn if isinstance(drawn, Draft) else Draft(*drawn)
                landed, digest = self.split_of(draft.prompt)
                if landed != split:
                    continue
                extra = {}
            return Task(
                id=f"{self.name}-{digest[:16]}",
                prompt=draft.prompt,
                answer=draft.answer,
                metadata=dict(draft.metadata, **extra, seed_attempt=attempt, index=index),
                split=split,
                difficulty=self.difficulty,
            )
        raise RuntimeError(
            f"{self.name}: no {split!r} task in {self.max_attempts} draws: the task space at "
            f"difficulty {self.difficulty} is too small for a {self.heldout_fraction:.0%} held-out split"
        )


def as_task_set(tasks: TaskSet | Sequence[Task]) -> TaskSet:
    """Accept a ready task set or a plain list of tasks."""
    return tasks if isinstance(tasks, TaskSet) else TaskList(tasks)
