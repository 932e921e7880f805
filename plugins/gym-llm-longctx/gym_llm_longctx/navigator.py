"""DocNavigator: long-horizon retrieval with tools, the document never in the prompt."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

from gym_llm import Draft, ProceduralTasks, RewardResult, Tool, ToolEnv
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.parsing import parse_tool_calls
from gym_llm.envs.tasks import Plan
from gym_llm.envs.tools import render_tools_prompt

from .context import Filler, fit, interleave
from .envs import ANSWER_RULES, _distinct, _scaled
from .prose import key_phrase, paragraph_units
from .rewards import SCORE_FORMULA, as_values, score_answer, strict_score
from .signals import SIGNALS
from .tokens import load_counter

__all__ = ["DocNavigator", "default_document_tokens", "paginate"]

_WORD = re.compile(r"\w+")


def default_document_tokens(difficulty: float) -> int:
    """Document size when ``context_tokens`` is not given: ``2048 * 64 ** difficulty``
    (2048 at difficulty 0, 131072 at 1)."""
    return round(2048 * 64**difficulty)


def paginate(parts: list[str], pages: int) -> list[str]:
    """Cut a document (a list of sentences, each with its leading separator)
    into ``pages`` pages of about equal length, at sentence boundaries."""
    total = sum(map(len, parts))
    out: list[str] = []
    current: list[str] = []
    size = 0
    for part in parts:
        current.append(part)
        size += len(part)
        if size * pages >= total * (len(out) + 1) and len(out) < pages - 1:
            out.append("".join(current).strip())
            current = []
    out.append("".join(current).strip())
    return [p for p in out if p]


class DocNavigator(ToolEnv):
    """Answer a question about a long document that is NOT in the prompt, by
    calling ``search(query)`` (the pages that contain every word of a query)
    and ``read(page)`` within the turn budget ``max_turns`` (default 8; a turn
    may hold several calls; a turn without a call is the final answer).

    The question asks for the special magic number of a key. With ``hops`` > 0
    (default ``0..2`` with difficulty) the key's fact only says that its
    number is the same as another key's, ``hops`` times over, so finding the
    number takes several rounds of search and read. ``num_distractors``
    other keys with their own numbers (default ``3..12``) are the wrong
    candidates of the anti-hedging rule.

    ``context_tokens``: the document's size in tokens of ``tokenizer``
    (default :func:`default_document_tokens`); ``page_tokens``: about how
    many tokens a page holds (default 256); ``results_per_search``: most pages
    a search lists (default 5); ``tools_in_prompt``: also describe the tools in
    the system prompt, for chat templates that do not render tools (default
    True). A truncated episode (budget spent on tool calls) earns 0.
    """

    hack_signals = SIGNALS

    def __init__(
        self,
        *,
        context_tokens: int | None = None,
        page_tokens: int = 256,
        hops: int | None = None,
        num_distractors: int | None = None,
        results_per_search: int = 5,
        tools_in_prompt: bool = True,
        tokenizer: Any = None,
        difficulty: float = 0.0,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 8,
        system_prompt: str | None = None,
        heldout_size: int = 500,
        render_mode: str | None = None,
    ):
        if not 0.0 <= difficulty <= 1.0:
            raise ValueError(f"difficulty must be in [0, 1], got {difficulty}")
        self.difficulty = float(difficulty)
        self.context_tokens = int(context_tokens or default_document_tokens(self.difficulty))
        self.page_tokens = int(page_tokens)
        if self.page_tokens < 16 or self.context_tokens < self.page_tokens:
            raise ValueError("need page_tokens >= 16 and context_tokens >= page_tokens")
        self.hops = _scaled(0, 2, self.difficulty) if hops is None else hops
        self.num_distractors = _scaled(3, 12, self.difficulty) if num_distractors is None else num_distractors
        if self.hops < 0 or self.num_distractors < 0 or results_per_search < 1:
            raise ValueError("hops and num_distractors must be >= 0, results_per_search >= 1")
        self.results_per_search = results_per_search
        self.counter = load_counter(tokenizer)
        self._tool_list = [Tool.from_function(self.search), Tool.from_function(self.read)]
        rules = (
            f"You have at most {max_turns} turns. A turn may call several tools; a turn without a "
            "tool call is your final answer."
        )
        if tools_in_prompt:
            rules = render_tools_prompt([t.schema for t in self._tool_list]) + "\n\n" + rules
        name = f"longctx-docnav-h{self.hops}-d{self.num_distractors}"
        tasks = ProceduralTasks(name, self._generate, difficulty=self.difficulty,
                             sizes={"heldout": heldout_size})
        super().__init__(
            tasks, split=split, seed=seed, max_turns=max_turns,
            system_prompt="\n\n".join(p for p in (system_prompt, rules) if p),
            render_mode=render_mode,
        )
        self.pages: list[str] = []
        self._index: list[Counter[str]] | None = None
        self.pages_read: list[int] = []
        self.searches = 0

    # ------------------------------------------------------------------ tasks
    def plan(self, rng: random.Random) -> Plan:
        """Draw the chain of keys, the distractors and the document seed."""
        keys = _distinct(lambda: key_phrase(rng), self.hops + 1 + self.num_distractors, set())
        values = _distinct(lambda: str(rng.randrange(1_000_000, 10_000_000)),
                           1 + self.num_distractors, set())
        chain = keys[: self.hops + 1]
        facts = [
            f"The special magic number for {a} is the same as the special magic number for {b}."
            for a, b in zip(chain, chain[1:], strict=False)
        ]
        facts.append(f"The special magic number for {chain[-1]} is {values[0]}.")
        facts += [f"The special magic number for {k} is {v}."
                  for k, v in zip(keys[self.hops + 1 :], values[1:], strict=True)]
        order = list(range(len(facts)))
        rng.shuffle(order)
        facts = [facts[i] for i in order]
        depths = [rng.random() for _ in facts]
        seed = rng.getrandbits(64)
        question = f"What is the special magic number for {chain[0]}?"

        def build() -> Draft:
            filler = Filler(paragraph_units(random.Random(seed)))

            def document(n: int) -> list[str]:
                return interleave(filler.items[:n], facts, filler.positions(n, depths))

            fitted = fit(self.context_tokens, filler, lambda n: "".join(document(n)).lstrip(), self.counter)
            pages = paginate(document(fitted.n), max(1, round(fitted.tokens / self.page_tokens)))
            where = {f: i + 1 for i, page in enumerate(pages) for f in facts if f in page}
            prompt = (
                f"A document of {len(pages)} pages is stored where you cannot see it. Use the "
                "search and read tools to find what you need in it.\n\n"
                f"Question: {question} {ANSWER_RULES}"
            )
            meta = {
                "context_tokens": self.context_tokens, "document_tokens": fitted.tokens,
                "tokenizer": self.counter.name, "question": question, "hops": self.hops,
                "facts": [{"text": f, "page": where.get(f)} for f in facts],
                "candidates": sorted(values), "pages": pages,
            }
            return Draft(prompt, values[0], meta)

        return Plan({"task": "docnav", "question": question, "answer": values[0], "chain": chain}, build)

    def _generate(self, rng: random.Random, difficulty: float) -> Plan:
        # The task-set generator signature; difficulty is already self.difficulty.
        return self.plan(rng)

    # ------------------------------------------------------------------ tools
    def search(self, query: str) -> str:
        """List the pages of the document that contain every word of a query, most matches first.

        Args:
            query: Words to look for, case-insensitive (for example a key such as "cobalt-falcon").
        """
        self.searches += 1
        words = _WORD.findall(query.casefold())[:32]
        if not words:
            raise ValueError("the query has no words")
        if self._index is None:
            self._index = [Counter(_WORD.findall(p.casefold())) for p in self.pages]
        hits = [
            (sum(counts[w] for w in words), number)
            for number, counts in enumerate(self._index, start=1)
            if all(counts[w] for w in words)
        ]
        if not hits:
            return f"No page contains all of: {' '.join(words)}."
        hits.sort(key=lambda h: (-h[0], h[1]))
        shown = [str(number) for _, number in hits[: self.results_per_search]]
        return (f"Pages containing all of '{' '.join(words)}': {', '.join(shown)} "
                f"({len(shown)} of {len(hits)} shown).")

    def read(self, page: int) -> str:
        """Read one page of the document.

        Args:
            page: The page number, from 1 to the number of pages.
        """
        if not 1 <= page <= len(self.pages):
            raise ValueError(f"page must be between 1 and {len(self.pages)}, got {page}")
        self.pages_read.append(page)
        return f"Page {page} of {len(self.pages)}:\n{self.pages[page - 1]}"

    # ---------------------------------------------------------------- episode
    def episode_tools(self, task: Any) -> list[Tool]:
        self.pages = list(task.metadata["pages"])
        self._index = None
        self.pages_read = []
        self.searches = 0
        return self._tool_list

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """Exact match of the final answer's box
        (:func:`~gym_llm_longctx.rewards.strict_score`); an episode that ran
        out of turns while calling tools has no answer and scores 0."""
        turns = assistant_messages(messages)
        parsed = parse_tool_calls(turns[-1]) if turns else None
        if parsed is None or parsed.calls or parsed.errors:
            return RewardResult(0.0, {"exact": 0.0}, {"reason": "strict: no final answer"})
        return strict_score(turns[-1], as_values(self.task.answer))

    def reward_formula(self) -> str:
        """:func:`~gym_llm_longctx.rewards.score_answer` of the final answer (0 when the turn budget runs out)."""
        return SCORE_FORMULA

    def score_episode(self, final_message: dict[str, Any] | None) -> RewardResult:
        if final_message is None:
            result = RewardResult(0.0, {"recall": 0.0, "hedging_penalty": 0.0},
                                  {"reason": f"the turn budget (max_turns={self.max_turns}) ran out "
                                             "before a final answer"})
        else:
            task = self.task
            result = score_answer(final_message, as_values(task.answer), task.metadata["candidates"])
        result.info.update(pages_read=list(self.pages_read), searches=self.searches)
        return result
