"""Token counters: how prompts are sized to ``context_tokens`` by measuring.

A counter has ``name``, ``count(text)`` and ``count_each(texts)``. Two kinds:

* :class:`ApproxCounter` (the default, ``tokenizer=None`` or ``"approx"``):
  deterministic, dependency-free and fast. It splits text into letter runs,
  digits, newline runs and other characters and prices each piece (see
  :meth:`ApproxCounter.cost`). Its error against real tokenizers is measured
  by ``tests/longctx/test_tokens.py`` and documented in ``docs/longctx.md``:
  on every environment's prompts, from 1k to 128k tokens, it is within
  :data:`APPROX_MAX_ERROR` (relative) of two real tokenizer families that
  ship with ``mistral-common`` (SentencePiece 32k and Tekken 131k).
* :class:`HFCounter`: exact counts from a Hugging Face tokenizer, loaded by
  :func:`load_counter` with ``AutoTokenizer.from_pretrained(name_or_path,
  local_files_only=True)`` (a local directory, or a name already in the local
  Hugging Face cache; never a download).

Counts are of the text alone, without special tokens or a chat template.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from .prose import PROSE_WORDS

__all__ = [
    "TokenCounter", "ApproxCounter", "HFCounter", "load_counter", "APPROX_MAX_ERROR",
    "COMMON_WORDS",
]

#: Documented bound on the relative error of :class:`ApproxCounter` against
#: the reference tokenizers on the environments' prompts (tested).
APPROX_MAX_ERROR = 0.10


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens of text (no special tokens)."""

    name: str

    def count(self, text: str) -> int: ...

    def count_each(self, texts: Sequence[str]) -> list[int]: ...


_COMMON = """a about above after again all also among an and answer answers any are as ask asked at
    be been before below between both but by can comma commas contains context could did do
    document does each every exactly few final find first following for found from give given
    has have he her him his how i if in is it its just key keys last less list listed may me
    more most much must name named names need no not number numbers of on once one only or
    other others our out page pages part people question read remember same say says search
    see separated she should so some special magic text than that the their them then there
    these they this those three through to tool tools two use used using value values
    variable variables was we were what when where which while who why will with within word
    words works would you your located lives city person times occur occurs common
    frequent appear appears call calls result results turn turns budget note var hidden
    afterwards mentioned several separated graded cancels right wrong guess follow chains
    assignments directly line often below stored cannot organization organizations cities facts
    institute guild company society foundry observatory library workshop mentor trained position
    offices based home house worked years many took"""
#: Frequent English words that a modern tokenizer (32k+ vocabulary) keeps
#: whole; the instructions of every environment are written with them.
COMMON_WORDS: frozenset[str] = frozenset(_COMMON.split())


class ApproxCounter:
    """The default counter: a deterministic estimate of a BPE tokenizer.

    Pricing (fit on the generated text of this plugin against SentencePiece
    32k and Tekken 131k tokenizers):

    * a word of :data:`COMMON_WORDS` or of the haystack vocabulary: 1 token,
      2 when it has 8 letters or more;
    * any other letter run of ``L`` letters: ``round(0.38 * L + 0.35)``
      (at least 1), or ``round(0.6 * L)`` when it is all capitals;
    * each digit: 1 token, plus 1 for a space before a number;
    * a run of newlines: 1 token per newline; any other character that is not
      a space: 1 token. Spaces are free (tokenizers merge them into the next
      token).

    Counting is additive over pieces cut at spaces: ``count(a + " " + b) ==
    count(a) + count(" " + b)``, which makes sizing by sums of sentence
    counts exact for this counter.
    """

    name = "approx"
    _PIECES = re.compile(r"[A-Za-z]+|\s(?=[0-9])|[0-9]|\n+|[^\sA-Za-z0-9]")

    #: Pieces priced so far are remembered, up to this many.
    CACHE_SIZE = 200_000
    #: Characters counted at a time.
    CHUNK = 1 << 16

    def __init__(self, lexicon: Iterable[str] | None = None):
        self.lexicon = frozenset(lexicon) if lexicon is not None else (
            COMMON_WORDS | PROSE_WORDS
        )
        self._cache: dict[str, int] = {}

    def cost(self, piece: str) -> int:
        """Tokens of one piece (a letter run, a digit, a newline run, a symbol)."""
        first = piece[0]
        if first.isascii() and first.isalpha():
            n = len(piece)
            if piece.lower() in self.lexicon:
                return 1 if n < 8 else 2
            if n > 1 and piece.isupper():
                return max(1, round(0.6 * n))
            return max(1, round(0.38 * n + 0.35))
        if first == "\n":
            return len(piece)
        return 1

    def count(self, text: str) -> int:
        """Estimated tokens of ``text``."""
        cache = self._cache
        total = 0
        # Chunks cut at a space (where counting is additive) keep the list of
        # pieces small: memory stays flat however long the text.
        start, n = 0, len(text)
        while start < n:
            end = n if n - start <= self.CHUNK else text.rfind(" ", start + 1, start + self.CHUNK)
            if end <= start:
                end = min(n, start + self.CHUNK)
            for piece in self._PIECES.findall(text, start, end):
                c = cache.get(piece)
                if c is None:
                    if len(cache) >= self.CACHE_SIZE:
                        cache.clear()
                    c = cache[piece] = self.cost(piece)
                total += c
            start = end
        return total

    def count_each(self, texts: Sequence[str]) -> list[int]:
        """:meth:`count` of each text."""
        return [self.count(t) for t in texts]


class HFCounter:
    """Exact counts from a Hugging Face tokenizer (``add_special_tokens=False``).

    A fast tokenizer is driven through its Rust backend and only the lengths
    come back to Python (no list of ids is built); any other tokenizer is
    called as ``tokenizer(text, add_special_tokens=False)``.
    """

    def __init__(self, tokenizer: Any, name: str | None = None):
        self.tokenizer = tokenizer
        self.name = name or getattr(tokenizer, "name_or_path", None) or type(tokenizer).__name__
        self._backend = getattr(tokenizer, "backend_tokenizer", None)

    def count(self, text: str) -> int:
        """Tokens of ``text``."""
        if self._backend is not None:
            return len(self._backend.encode(text, add_special_tokens=False))
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def count_each(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text, encoded as one batch (in parallel by fast tokenizers)."""
        if not texts:
            return []
        if self._backend is not None:
            return [len(e) for e in self._backend.encode_batch(list(texts), add_special_tokens=False)]
        return [len(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


@functools.lru_cache(maxsize=8)
def _load_hf(name_or_path: str) -> HFCounter:
    try:
        from transformers import AutoTokenizer
    except ImportError as e:  # the plugin itself does not need transformers
        raise ImportError(
            f"tokenizer={name_or_path!r} needs the 'transformers' package "
            "(pip install 'gym-llm-longctx[tokenizers]'); tokenizer=None uses the built-in approximation"
        ) from e
    try:
        tok = AutoTokenizer.from_pretrained(name_or_path, local_files_only=True)
    except (OSError, ValueError) as e:
        raise ValueError(
            f"cannot load tokenizer {name_or_path!r} from a local directory or the local Hugging Face "
            f"cache (nothing is downloaded): {e}"
        ) from e
    return HFCounter(tok, name_or_path)


_APPROX = ApproxCounter()


def load_counter(tokenizer: str | TokenCounter | Any | None = None) -> TokenCounter:
    """The counter for a ``tokenizer=`` kwarg.

    ``None`` or ``"approx"``: :class:`ApproxCounter`. A string: a local path or
    a locally cached Hugging Face name (loaded once per process). A
    :class:`TokenCounter`: itself. Any other object is taken for a Hugging
    Face tokenizer and wrapped in :class:`HFCounter`.
    """
    if tokenizer is None or tokenizer == "approx":
        return _APPROX
    if isinstance(tokenizer, str):
        return _load_hf(tokenizer)
    if isinstance(tokenizer, TokenCounter):
        return tokenizer
    return HFCounter(tokenizer)
