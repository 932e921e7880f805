"""The single-turn long-context environments.

Each environment draws a :class:`~gym_llm.envs.tasks.Plan` (the question
and its facts), then builds the prompt to ``context_tokens`` tokens of the
chosen tokenizer by measuring it (:func:`gym_llm_longctx.context.fit`).
Every environment is scored by :func:`gym_llm_longctx.rewards.reward_fn`.

Common keyword arguments (every environment):

* ``context_tokens``: the size of the whole user prompt (instructions,
  text and question), in tokens of ``tokenizer``; the prompt measures at most
  this and falls short by less than one filler sentence (or list entry).
  ``None``: :func:`default_context_tokens` of ``difficulty`` (1024 at 0).
* ``tokenizer``: ``None`` for the built-in approximation, or a local path /
  locally cached Hugging Face name (see :func:`gym_llm_longctx.tokens.load_counter`).
* ``difficulty`` in [0, 1]: scales the knobs each environment documents
  (distractors, hops, ...) and the default context length.
* ``split``, ``seed``, ``max_turns`` (attempts, with feedback between them),
  ``system_prompt``: as for :class:`gym_llm.SingleTurnEnv`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gym_llm import Draft, ProceduralTasks, RewardResult, SingleTurnEnv
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.tasks import Plan

from .context import Filler, fit, place_inserts
from .prose import invented_word, key_phrase, paragraph_units, proper_name, variable_name
from .rewards import SCORE_FORMULA, as_values, reward_fn, strict_score
from .signals import SIGNALS
from .tokens import TokenCounter, load_counter

__all__ = [
    "LongContextEnv", "Needle", "VariableTracking", "WordFrequency", "MultiHopQA",
    "default_context_tokens", "haystack", "Haystack", "ANSWER_RULES",
]

#: How every single-turn prompt asks for the answer (and warns about hedging).
ANSWER_RULES = (
    "Give your final answer in \\boxed{...}, with several values separated by commas. "
    "Only the last \\boxed{} is graded, and each wrong value you name cancels a right one, "
    "so do not guess."
)


def default_context_tokens(difficulty: float) -> int:
    """``context_tokens`` when none is given: ``1024 * 128 ** difficulty``
    (1024 at difficulty 0, about 11.6k at 0.5, 131072 at 1)."""
    return round(1024 * 128**difficulty)


def _scaled(low: int, high: int, difficulty: float) -> int:
    """A knob that grows linearly from ``low`` at difficulty 0 to ``high`` at 1."""
    return low + round((high - low) * difficulty)


@dataclass
class Haystack:
    """A prompt built around haystack prose: ``text`` measures ``tokens``;
    insert ``i`` follows ``positions[i]`` sentences, with ``token_depths[i]``
    of the haystack's tokens before it."""

    text: str
    tokens: int
    positions: list[int]
    token_depths: list[float]
    sentences: int


def haystack(
    counter: TokenCounter,
    target: int,
    seed: int,
    inserts: Sequence[str],
    depths: Sequence[float],
    frame: Callable[[str], str],
) -> Haystack:
    """Fit ``frame(body)`` to ``target`` tokens, where ``body`` is prose drawn
    from ``seed`` with each insert at its token depth (0 = start, 1 = end)."""
    filler = Filler(paragraph_units(random.Random(seed)))

    def build(n: int) -> str:
        return frame(place_inserts(filler.items[:n], inserts, filler.positions(n, depths)))

    fitted = fit(target, filler, build, counter)
    positions = filler.positions(fitted.n, depths)
    return Haystack(
        fitted.text, fitted.tokens, positions,
        [round(filler.depth_of(p, fitted.n), 6) for p in positions], fitted.n,
    )


def _check_depth(depth: float | Sequence[float] | None) -> None:
    values = [depth] if isinstance(depth, int | float) else list(depth or [])
    for d in values:
        if not 0.0 <= float(d) <= 1.0:
            raise ValueError(f"depth must be in [0, 1], got {d}")


class LongContextEnv(SingleTurnEnv):
    """Base of the single-turn long-context environments: a
    :class:`~gym_llm.ProceduralTasks` over :meth:`plan`, scored by
    :func:`~gym_llm_longctx.rewards.reward_fn`. Subclasses set ``task_name``
    (seeds the draws) and implement :meth:`plan`."""

    task_name = "longctx"
    hack_signals = SIGNALS

    def __init__(
        self,
        *,
        context_tokens: int | None = None,
        tokenizer: Any = None,
        difficulty: float = 0.0,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 1,
        attempt_discount: float = 0.5,
        system_prompt: str | None = None,
        heldout_size: int = 500,
        **kwargs: Any,
    ):
        """``attempt_discount``: with ``max_turns > 1``, attempt k (0-based) earns
        ``score * attempt_discount**k``, as in the math envs. Undiscounted, boxing one
        candidate per attempt found every answer (MultiHopQA, Needle: mean 1.0)."""
        if not 0.0 <= difficulty <= 1.0:
            raise ValueError(f"difficulty must be in [0, 1], got {difficulty}")
        self.difficulty = float(difficulty)
        self.context_tokens = int(context_tokens or default_context_tokens(self.difficulty))
        if self.context_tokens < 1:
            raise ValueError(f"context_tokens must be positive, got {context_tokens}")
        self.counter = load_counter(tokenizer)
        tasks = ProceduralTasks(
            self.task_name, self._generate,
            difficulty=self.difficulty, sizes={"heldout": heldout_size},
        )
        super().__init__(
            tasks, reward_fn, split=split, seed=seed, max_turns=max_turns,
            attempt_discount=attempt_discount, system_prompt=system_prompt, **kwargs,
        )

    def score_formula(self) -> str:
        """:func:`~gym_llm_longctx.rewards.reward_fn`'s score."""
        return SCORE_FORMULA

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """Exact match of the last assistant turn's box
        (:func:`~gym_llm_longctx.rewards.strict_score`)."""
        turns = assistant_messages(messages)
        result = strict_score(turns[-1] if turns else "", as_values(self.task.answer))
        result.score *= self.attempt_discount ** max(0, len(turns) - 1)
        return result

    def plan(self, rng: random.Random) -> Plan:
        """Draw one task's question and facts; the text is built later."""
        raise NotImplementedError

    def _generate(self, rng: random.Random, difficulty: float) -> Plan:
        # The task-set generator signature; difficulty is already self.difficulty.
        return self.plan(rng)

    def _meta(self, prompt_tokens: int, **extra: Any) -> dict[str, Any]:
        """Task metadata: the sizes asked and measured, the counter, ``extra``."""
        return {
            "context_tokens": self.context_tokens,
            "prompt_tokens": prompt_tokens,
            "tokenizer": self.counter.name,
            **extra,
        }


def _distinct(draw: Callable[[], str], count: int, taken: set[str]) -> list[str]:
    """``count`` fresh draws not in ``taken`` (which grows)."""
    out = []
    while len(out) < count:
        value = draw()
        if value not in taken:
            taken.add(value)
            out.append(value)
    return out


class Needle(LongContextEnv):
    """Needle in a haystack: recall the special magic number(s) of a key.

    ``variant``: ``"single"`` (one needle), ``"multikey"`` (distractor keys
    with their own numbers), ``"multivalue"`` (every number of one key) or
    ``"multiquery"`` (the numbers of several keys at once).
    ``num_distractors``: distractor keys (default 0 for single,
    ``3..16`` for multikey, ``0..3`` for multivalue, ``0..4`` for multiquery,
    growing with difficulty); each carries as many numbers as a queried key.
    ``num_values``: numbers per key for multivalue (default 4).
    ``num_queries``: keys asked for multiquery (default ``2..4``).
    ``depth``: token depth in [0, 1] of the queried needles (one float for all,
    or one per queried needle); ``None`` draws every depth uniformly. The
    depths asked and obtained are in ``task.metadata["needles"]``.
    """

    VARIANTS = ("single", "multikey", "multivalue", "multiquery")

    def __init__(
        self,
        variant: str = "single",
        *,
        num_distractors: int | None = None,
        num_values: int | None = None,
        num_queries: int | None = None,
        depth: float | Sequence[float] | None = None,
        **kwargs: Any,
    ):
        if variant not in self.VARIANTS:
            raise ValueError(f"unknown variant {variant!r}: expected one of {self.VARIANTS}")
        _check_depth(depth)
        d = float(kwargs.get("difficulty", 0.0))
        self.variant = variant
        self.num_queries = num_queries or (_scaled(2, 4, d) if variant == "multiquery" else 1)
        self.num_values = num_values or (4 if variant == "multivalue" else 1)
        default_distractors = {"single": 0, "multikey": _scaled(3, 16, d),
                               "multivalue": _scaled(0, 3, d), "multiquery": _scaled(0, 4, d)}
        self.num_distractors = default_distractors[variant] if num_distractors is None else num_distractors
        if self.num_queries < 1 or self.num_values < 1 or self.num_distractors < 0:
            raise ValueError("num_queries and num_values must be >= 1, num_distractors >= 0")
        self.depth = depth
        self.task_name = (
            f"longctx-needle-{variant}-q{self.num_queries}-v{self.num_values}-d{self.num_distractors}"
        )
        super().__init__(**kwargs)

    def _query_depths(self, rng: random.Random) -> list[float]:
        per_key = self.num_queries * self.num_values
        if self.depth is None:
            return [rng.random() for _ in range(per_key)]
        if isinstance(self.depth, int | float):
            return [float(self.depth)] * per_key
        depths = [float(x) for x in self.depth]
        return [depths[i % len(depths)] for i in range(per_key)]

    def plan(self, rng: random.Random) -> Plan:
        keys = _distinct(lambda: key_phrase(rng), self.num_queries + self.num_distractors, set())
        values = _distinct(lambda: str(rng.randrange(1_000_000, 10_000_000)),
                           len(keys) * self.num_values, set())
        needles = [
            {"key": key, "value": values[i * self.num_values + j], "query": i < self.num_queries}
            for i, key in enumerate(keys) for j in range(self.num_values)
        ]
        for needle, depth in zip(needles, self._query_depths(rng), strict=False):
            needle["depth"] = depth
        for needle in needles:
            needle.setdefault("depth", rng.random())
        rng.shuffle(needles)  # the order of needles with equal depth
        seed = rng.getrandbits(64)
        asked = keys[: self.num_queries]
        answer = [n["value"] for n in needles if n["query"]]
        if self.variant == "multiquery":
            names = ", ".join(asked[:-1]) + f" and {asked[-1]}"
            question = f"What are all the special magic numbers for {names} mentioned in the text?"
        elif self.variant == "multivalue":
            question = f"What are all the special magic numbers for {asked[0]} mentioned in the text?"
        else:
            question = f"What is the special magic number for {asked[0]} mentioned in the text?"
        intro = (
            "Some special magic numbers are hidden in the following text. Remember them: I will "
            "ask about them afterwards." if len(needles) > 1 else
            "A special magic number is hidden in the following text. Remember it: I will ask "
            "about it afterwards."
        )

        def frame(body: str) -> str:
            return f"{intro}\n\n<text>\n{body}\n</text>\n\n{question} {ANSWER_RULES}"

        def build() -> Draft:
            inserts = [f"One of the special magic numbers for {n['key']} is: {n['value']}." for n in needles]
            sized = haystack(self.counter, self.context_tokens, seed, inserts,
                             [n["depth"] for n in needles], frame)
            placed = [
                dict(n, position=p, token_depth=t)
                for n, p, t in zip(needles, sized.positions, sized.token_depths, strict=True)
            ]
            meta = self._meta(sized.tokens, variant=self.variant, question=question, needles=placed,
                              candidates=sorted(values), haystack_sentences=sized.sentences)
            return Draft(sized.text, answer[0] if len(answer) == 1 else sorted(answer), meta)

        return Plan({"task": "needle", "question": question, "answer": sorted(answer)}, build)


class VariableTracking(LongContextEnv):
    """Variable tracking: chains of assignments (``VAR QXBRT = 48213.``,
    ``VAR ZKLMN = VAR QXBRT.``) hidden in prose; name every variable that
    holds the value asked. ``num_hops``: assignments after the first in the
    asked chain (default ``1..4`` with difficulty); ``num_chains``: distractor
    chains of the same length with other values (default ``1..4``). The
    statements of a chain appear in order at random depths."""

    task_name = "longctx-vartrack"

    def __init__(self, *, num_hops: int | None = None, num_chains: int | None = None, **kwargs: Any):
        d = float(kwargs.get("difficulty", 0.0))
        self.num_hops = _scaled(1, 4, d) if num_hops is None else num_hops
        self.num_chains = _scaled(1, 4, d) if num_chains is None else num_chains
        if self.num_hops < 0 or self.num_chains < 0:
            raise ValueError("num_hops and num_chains must be >= 0")
        self.task_name = f"longctx-vartrack-h{self.num_hops}-c{self.num_chains}"
        super().__init__(**kwargs)

    def plan(self, rng: random.Random) -> Plan:
        length = self.num_hops + 1
        chains = 1 + self.num_chains
        names = _distinct(lambda: variable_name(rng), chains * length, set())
        values = _distinct(lambda: str(rng.randrange(10_000, 100_000)), chains, set())
        inserts: list[str] = []
        depths: list[float] = []
        for c in range(chains):
            chain = names[c * length : (c + 1) * length]
            inserts.append(f"VAR {chain[0]} = {values[c]}.")
            inserts += [f"VAR {b} = VAR {a}." for a, b in zip(chain, chain[1:], strict=False)]
            depths += sorted(rng.random() for _ in chain)
        answer = sorted(names[:length])
        seed = rng.getrandbits(64)
        question = (
            f"Find all variables that are assigned the value {values[0]} in the text above, "
            "directly or through other variables."
        )

        def frame(body: str) -> str:
            return (
                "Remember the variable assignments hidden in the following text and follow their "
                f"chains.\n\n<text>\n{body}\n</text>\n\nQuestion: {question} {ANSWER_RULES}"
            )

        def build() -> Draft:
            sized = haystack(self.counter, self.context_tokens, seed, inserts, depths, frame)
            meta = self._meta(
                sized.tokens, question=question, statements=inserts, token_depths=sized.token_depths,
                candidates=sorted(names), haystack_sentences=sized.sentences,
            )
            return Draft(sized.text, answer, meta)

        return Plan({"task": "vartrack", "question": question, "answer": answer}, build)


class WordFrequency(LongContextEnv):
    """Word frequency: name the most frequent words of a long list of
    invented words, one per line, in random order. The distribution is
    controlled: each of the ``num_words`` answer words (default ``3..10`` with
    difficulty) appears exactly ``top_frequency`` times (default 20); every
    other word appears between 1 and ``other_frequency`` times (default
    ``3..17``, always below ``top_frequency``). ``context_tokens`` sets how
    many other words there are."""

    task_name = "longctx-wordfreq"

    def __init__(
        self,
        *,
        num_words: int | None = None,
        top_frequency: int = 20,
        other_frequency: int | None = None,
        **kwargs: Any,
    ):
        d = float(kwargs.get("difficulty", 0.0))
        self.num_words = _scaled(3, 10, d) if num_words is None else num_words
        self.top_frequency = top_frequency
        self.other_frequency = _scaled(3, 17, d) if other_frequency is None else other_frequency
        if self.num_words < 1 or not 1 <= self.other_frequency < self.top_frequency:
            raise ValueError("need num_words >= 1 and 1 <= other_frequency < top_frequency")
        self.task_name = (
            f"longctx-wordfreq-k{self.num_words}-t{self.top_frequency}-o{self.other_frequency}"
        )
        super().__init__(**kwargs)

    def plan(self, rng: random.Random) -> Plan:
        top = _distinct(lambda: invented_word(rng, 2), self.num_words, set())
        seed = rng.getrandbits(64)
        k = self.num_words
        question = f"What are the {k} most frequent words in the list above?" if k > 1 else (
            "What is the most frequent word in the list above?"
        )

        def others():
            draw = random.Random(seed)
            taken = set(top)
            while True:
                word = invented_word(draw, draw.choice((2, 3)))
                if word not in taken:
                    taken.add(word)
                    yield word, draw.randint(1, self.other_frequency)

        def frame(body: str) -> str:
            return (
                "Below is a list of words, one per line. Some words appear more often than "
                f"others.\n\n<list>\n{body}\n</list>\n\nQuestion: {question} {ANSWER_RULES}"
            )

        def build() -> Draft:
            filler = Filler(others(), text_of=lambda item: "\n" + item[0], weight_of=lambda item: item[1])

            def body(n: int) -> str:
                entries = [w for w in top for _ in range(self.top_frequency)]
                entries += [w for w, times in filler.items[:n] for _ in range(times)]
                random.Random(f"{seed}|{n}").shuffle(entries)
                return frame("\n".join(entries))

            fitted = fit(self.context_tokens, filler, body, self.counter)
            words = top + [w for w, _ in filler.items[: fitted.n]]
            meta = self._meta(
                fitted.tokens, question=question, top_frequency=self.top_frequency,
                other_frequency=self.other_frequency, distinct_words=len(words),
                list_length=k * self.top_frequency + sum(t for _, t in filler.items[: fitted.n]),
                candidates=sorted(words),
            )
            return Draft(fitted.text, sorted(top), meta)

        return Plan({"task": "wordfreq", "question": question, "answer": sorted(top),
                     "frequencies": [self.top_frequency, self.other_frequency]}, build)


_ORG_KINDS = ("Institute", "Guild", "Company", "Society", "Foundry", "Observatory", "Library", "Workshop")
_FACTS = {
    "works": ("{a} works for {b}.", "{a} has worked for {b} for many years.", "{a} took a position at {b}."),
    "based": ("{A} is based in the city of {b}.", "The offices of {b_org} are in {c}.",
              "{A} has its home in the city of {b}."),
    "mentor": ("The mentor of {a} was {b}.", "{a} was trained by {b}."),
    "lives": ("{a} lives in the city of {b}.", "{a} has a house in {b}."),
}


def _fact(rng: random.Random, relation: str, a: str, b: str) -> str:
    template = rng.choice(_FACTS[relation])
    if "{b_org}" in template:  # the organisation is the subject of this phrasing
        return template.format(b_org=a, c=b)
    return template.format(a=a, A=a[0].upper() + a[1:], b=b)


class MultiHopQA(LongContextEnv):
    """Multi-hop QA over invented entities: facts about people, the
    organisations they work for, their mentors and the cities where the
    organisations are based are scattered through the prose; the question
    needs ``hops`` facts (2: person, organisation, city; 3: person, mentor,
    organisation, city; default 2 below difficulty 0.5, else 3).
    ``num_distractors``: other people with their own chains and cities
    (default ``3..12`` with difficulty). The asked person also lives in a
    city of their own, and with 3 hops works for an organisation of their
    own: answering one hop short names a wrong city."""

    task_name = "longctx-multihop"

    def __init__(self, *, hops: int | None = None, num_distractors: int | None = None, **kwargs: Any):
        d = float(kwargs.get("difficulty", 0.0))
        self.hops = (2 if d < 0.5 else 3) if hops is None else hops
        if self.hops not in (2, 3):
            raise ValueError(f"hops must be 2 or 3, got {hops}")
        self.num_distractors = _scaled(3, 12, d) if num_distractors is None else num_distractors
        if self.num_distractors < 0:
            raise ValueError("num_distractors must be >= 0")
        self.task_name = f"longctx-multihop-h{self.hops}-d{self.num_distractors}"
        super().__init__(**kwargs)

    def plan(self, rng: random.Random) -> Plan:
        taken: set[str] = set()

        def person() -> str:
            return " ".join(_distinct(lambda: proper_name(rng, 2), 2, taken))

        def org() -> str:
            return f"the {_distinct(lambda: proper_name(rng, 2), 1, taken)[0]} {rng.choice(_ORG_KINDS)}"

        def city() -> str:
            return _distinct(lambda: proper_name(rng, rng.choice((2, 3))), 1, taken)[0]

        facts: list[str] = []
        cities: list[str] = []

        def chain(who: str) -> str:
            o, c = org(), city()
            cities.append(c)
            facts.extend([_fact(rng, "works", who, o), _fact(rng, "based", o, c)])
            return c

        asked = person()
        if self.hops == 3:
            mentor = person()
            facts.append(_fact(rng, "mentor", asked, mentor))
            answer = chain(mentor)
            chain(asked)  # one hop short lands here
            question = (f"In which city is the organization that the mentor of {asked} works for "
                        "based?")
        else:
            answer = chain(asked)
            question = f"In which city is the organization that {asked} works for based?"
        home = city()
        cities.append(home)
        facts.append(_fact(rng, "lives", asked, home))
        for _ in range(self.num_distractors):
            other = person()
            chain(other)
            if rng.random() < 0.5:
                home = city()
                cities.append(home)
                facts.append(_fact(rng, "lives", other, home))
        rng.shuffle(facts)
        depths = [rng.random() for _ in facts]
        seed = rng.getrandbits(64)

        def frame(body: str) -> str:
            return (
                "Read the following text, which contains facts about people, organizations and "
                f"cities.\n\n<text>\n{body}\n</text>\n\nQuestion: {question} {ANSWER_RULES}"
            )

        def build() -> Draft:
            sized = haystack(self.counter, self.context_tokens, seed, facts, depths, frame)
            meta = self._meta(sized.tokens, question=question, hops=self.hops, facts=facts,
                              token_depths=sized.token_depths, candidates=sorted(cities),
                              haystack_sentences=sized.sentences)
            return Draft(sized.text, answer, meta)

        return Plan({"task": "multihop", "question": question, "answer": answer}, build)
