"""Tasks and task sets: what an environment asks, with deterministic seeding
and train/held-out splits that are disjoint by construction."""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
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

    def describe_size(self, split: str) -> str:
        """``size(split)`` as a person reads it: how many distinct tasks, and
        whether that count is exact or estimated."""
        return f"{self.size(split):,}"

    def distinct_count(self, split: str, limit: int) -> int:
        """How many of the indices ``0 .. limit-1`` are distinct tasks (an
        evaluation of ``limit`` tasks evaluates this many)."""
        return min(limit, self.size(split))

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


#: Every index of a split declared with at most this many tasks (held-out
#: splits) is a distinct task; a larger split (train) guarantees it for its
#: first :data:`PROBE` indices, whose enumeration's repeats estimate its size.
EXACT_LIMIT = 10_000
PROBE = 1024
#: :meth:`ProceduralTasks.size` enumerates this many distinct tasks (cheap for
#: any generator): a split that runs out before has exactly that many tasks.
SIZE_PROBE = 32
#: An enumeration ends, the split then holding exactly the tasks found, after
#: this many positions in a row draw a task already found, and at least
#: :data:`MISS_FACTOR` times as many as it found: with ``c`` tasks found, a task
#: still missing that the generator draws as often as an average one stays
#: unseen over ``16 c`` draws with probability ``e^-16`` (a fixed 64 stopped
#: math/Arithmetic-v0's 0.1 rung at 305 of its 322 train tasks).
MISS_LIMIT = 64
MISS_FACTOR = 16


class _Distinct:
    """The distinct tasks of one split of one generator, in index order: the
    stream positions that drew a task not drawn at an earlier position."""

    def __init__(self) -> None:
        self.positions: list[int] = []  # index -> stream position
        self.seen: set[str] = set()     # content digests drawn so far
        self.drawn = 0                  # stream positions drawn
        self.misses = 0                 # positions in a row that repeated a task
        self.exhausted = False          # a long run of no new task (MISS_LIMIT): the split is all found
        self.lock = threading.Lock()


#: Enumerations shared by every instance of one generator in this process
#: (vector env slots make one task set each), keyed by what decides content.
_ENUMERATIONS: dict[tuple, _Distinct] = {}
_ENUMERATIONS_LOCK = threading.Lock()


class ProceduralTasks(TaskSet):
    """Tasks drawn by a seeded generator ``generate(rng, difficulty)``.

    Splits are disjoint by construction, by *content*: a generated task goes to
    ``heldout`` when the hash of its prompt (or of its :class:`Plan`'s key)
    falls below ``heldout_fraction``, else to ``train``. Stream position ``j``
    of a split tries the seeds ``(name, split, j, 0)``, ``(name, split, j,
    1)``, ... and keeps the first draw that lands in ``split``, so the same
    prompt can never be in both splits, and the task id (``name-<hash>``) is
    the same wherever that prompt is generated.

    Distinct indices are distinct tasks: task ``i`` is the ``i``-th stream
    position that drew a prompt (plan key) no earlier position drew,
    enumerated as far as asked, once per process. The generator *runs out*
    when a long run of positions (:data:`MISS_LIMIT`) draws nothing new: the split
    then holds exactly the ``c`` tasks found, and a higher index names task
    ``i mod c`` (so an index drawn at random still plays). This holds for
    every index of a split declared (``sizes``) with at most
    :data:`EXACT_LIMIT` tasks (held-out: 500) and for the first
    :data:`PROBE` of a larger one (train); above that, task ``i`` is stream
    position ``i``, which repeats a task about as often as the generator does.

    Sizes. :meth:`distinct_count` is exact (an evaluation asks it how many
    tasks it has). :meth:`size`, the index space a random reset draws from,
    must not depend on what was enumerated before, so it enumerates a fixed
    :data:`SIZE_PROBE` distinct tasks: a split that runs out within them has
    exactly that size, any other its declared one. :meth:`describe_size`
    enumerates the whole guaranteed range and says what it found: the exact
    count, or an estimate from the repeats it met. A generator needs no
    dedupe of its own, only enough entropy for the sizes it declares.
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
        self._enumerations: dict[str, _Distinct] = {}

    def __getstate__(self) -> dict[str, Any]:
        # the enumerations hold locks and belong to this process: an unpickled
        # copy finds (or makes) its process's shared ones on first use
        return {**self.__dict__, "_enumerations": {}}

    def _window(self, split: str) -> int:
        """Indices below this are distinct tasks (see the class doc)."""
        return self.sizes[split] if self.sizes[split] <= EXACT_LIMIT else PROBE

    def size(self, split: str) -> int:
        split = check_split(split)
        probe = min(SIZE_PROBE, self.sizes[split])
        found = self._enumerated(split, probe)
        if found.exhausted and len(found.positions) < probe:
            return len(found.positions)
        return self.sizes[split]

    def distinct_count(self, split: str, limit: int) -> int:
        split = check_split(split)
        if limit > self._window(split):
            return min(limit, self.size(split))
        return min(limit, len(self._enumerated(split, limit).positions))

    def describe_size(self, split: str) -> str:
        split = check_split(split)
        window, size = self._window(split), self.size(split)
        found = self._enumerated(split, window)
        count = len(found.positions)
        space = "" if count == size else f"; indices up to {size:,} name them again"
        if found.exhausted or count == size:
            return f"{count:,} distinct (exact{space})"
        estimate = self._estimate(found)
        if estimate is None:
            return (f"{size:,} (estimate: no repeat in the first {found.drawn:,} draws, so at least "
                    f"about {found.drawn ** 2 // 6:,} distinct)")
        return (f"{size:,} indices, about {estimate:,} distinct (estimate from {found.drawn - count:,} "
                f"repeats in {found.drawn:,} draws)")

    @staticmethod
    def _estimate(found: _Distinct) -> int | None:
        """The split's distinct tasks estimated from the repeats its probe met
        (a draw hits one of ``N`` tasks: ``n^2 / 2r`` from ``r`` repeats in ``n``
        draws); ``None`` without a repeat."""
        repeats = found.drawn - len(found.positions)
        return math.ceil(found.drawn ** 2 / (2 * repeats)) if repeats else None

    # ------------------------------------------------------------ enumeration
    def _draw(self, split: str, position: int) -> tuple[int, Draft | Plan, str]:
        """``(attempt, draft or plan, content digest)`` of stream position
        ``position``: the first of its seeds whose draw lands in ``split``."""
        for attempt in range(self.max_attempts):
            rng = random.Random(f"{self.name}|{self.difficulty:.4f}|{split}|{position}|{attempt}")
            drawn = self.generate(rng, self.difficulty)
            if not isinstance(drawn, Plan):
                drawn = drawn if isinstance(drawn, Draft) else Draft(*drawn)
            landed, digest = self.split_of(drawn.key if isinstance(drawn, Plan) else drawn.prompt)
            if landed == split:
                return attempt, drawn, digest
        raise RuntimeError(
            f"{self.name}: no {split!r} task in {self.max_attempts} draws: the task space at "
            f"difficulty {self.difficulty} is too small for a {self.heldout_fraction:.0%} held-out split"
        )

    def _enumerated(self, split: str, upto: int) -> _Distinct:
        """The split's distinct tasks, enumerated until ``upto`` are found or
        the generator runs out (shared by this process's instances of one
        generator and difficulty)."""
        found = self._enumerations.get(split)
        if found is None:
            # what decides content: the settings, and the generator's first draws (a name
            # shared by two generators, or a kwarg the name does not spell, still tells them apart)
            first = [self._draw(split, j)[2] for j in range(3)]
            key = (type(self).__name__, self.name, self.difficulty, self.heldout_fraction, self.max_attempts,
                   split, *first)
            with _ENUMERATIONS_LOCK:
                found = _ENUMERATIONS.setdefault(key, _Distinct())
            self._enumerations[split] = found
        with found.lock:
            while len(found.positions) < upto and not found.exhausted:
                digest = self._draw(split, found.drawn)[2]
                if digest in found.seen:
                    found.misses += 1
                    found.exhausted = found.misses >= max(MISS_LIMIT, MISS_FACTOR * len(found.positions))
                else:
                    found.seen.add(digest)
                    found.positions.append(found.drawn)
                    found.misses = 0
                found.drawn += 1
        return found

    def split_of(self, prompt: Any) -> tuple[str, str]:
        """(split, digest) that a prompt (or a plan's key) belongs to."""
        digest = content_hash(prompt)
        return ("heldout" if int(digest[:8], 16) < self._threshold else "train"), digest

    def get(self, split: str, index: int) -> Task:
        split = check_split(split)
        size = self.size(split)
        if not 0 <= index < size:
            raise IndexError(f"task_index {index} out of range for split {split!r} ({size:,} "
                             f"tasks at difficulty {self.difficulty:g})")
        if index < self._window(split):
            found = self._enumerated(split, index + 1)
            position = found.positions[index % len(found.positions)]
        else:
            position = index
        attempt, drawn, digest = self._draw(split, position)
        extra: dict[str, Any] = {}
        if isinstance(drawn, Plan):
            draft = drawn.build()
            # the id names the exact text (prompt and metadata) that was built
            extra["split_key"] = digest[:16]
            digest = content_hash([draft.prompt, draft.metadata])
        else:
            draft = drawn
        return Task(
            id=f"{self.name}-{digest[:16]}",
            prompt=draft.prompt,
            answer=draft.answer,
            metadata=dict(draft.metadata, **extra, seed_attempt=attempt, index=index),
            split=split,
            difficulty=self.difficulty,
        )


def as_task_set(tasks: TaskSet | Sequence[Task]) -> TaskSet:
    """Accept a ready task set or a plain list of tasks."""
    return tasks if isinstance(tasks, TaskSet) else TaskList(tasks)
