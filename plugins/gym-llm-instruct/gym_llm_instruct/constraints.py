"""The constraint library: every IFEval instruction type and IFBench's offline-checkable ones.

A constraint is ``{"id": ..., "kwargs": {...}}`` with IFEval's / IFBench's
instruction id and keyword-argument names (``"keywords:existence"``,
``{"keywords": ["bee"]}``). :data:`CONSTRAINTS` maps each id to its
:class:`ConstraintType`: the rule (:attr:`ConstraintType.check`, the same
verdict as the reference checkers, ``benchmarks/instruct_agreement.py``
measures it), the instruction text shown to the model, and how generated
tasks draw its arguments. :func:`verdict` applies one constraint to a response,
strict or loose (IFEval's loose transforms: :func:`loose_variants`).

docs/instruct.md lists every id with its arguments and exact rule; the
``rule`` strings here are that list's source.
"""

from __future__ import annotations

import collections
import json
import random
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from .text import (
    PUNCTUATION,
    count_words,
    detect_language,
    sentences,
    split_into_sentences,
    strip_punctuation,
    word_tokens,
)

__all__ = [
    "ConstraintType", "CONSTRAINTS", "LANGUAGES", "RELATIONS", "validate", "verdict", "loose_variants",
    "describe", "component_keys", "strip_thinking", "SampleContext",
]

#: IFEval's comparison relations.
RELATIONS = ("less than", "at least")

#: IFEval's language codes (``language:response_language``).
LANGUAGES: dict[str, str] = {
    "en": "English", "es": "Spanish", "pt": "Portuguese", "ar": "Arabic", "hi": "Hindi", "fr": "French",
    "ru": "Russian", "de": "German", "ja": "Japanese", "it": "Italian", "bn": "Bengali", "uk": "Ukrainian",
    "th": "Thai", "ur": "Urdu", "ta": "Tamil", "te": "Telugu", "bg": "Bulgarian", "ko": "Korean",
    "pl": "Polish", "he": "Hebrew", "fa": "Persian", "vi": "Vietnamese", "ne": "Nepali", "sw": "Swahili",
    "kn": "Kannada", "mr": "Marathi", "gu": "Gujarati", "pa": "Punjabi", "ml": "Malayalam", "fi": "Finnish",
}

#: IFEval's ``detectable_format:constrained_response`` options.
CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


@dataclass(frozen=True)
class SampleContext:
    """What a generated task's constraint arguments may draw on: the base
    request (``combination:repeat_prompt`` repeats it) and the topic's words
    (keyword constraints name related words, never forbid the topic)."""

    request: str
    topic_words: Sequence[str]
    related_words: Sequence[str]


@dataclass(frozen=True)
class ConstraintType:
    """One instruction type.

    ``source``: ``"ifeval"`` or ``"ifbench"`` (by the id's family);
    ``check(response, **kwargs)``: the rule (a bool; may raise on malformed
    arguments, :func:`verdict` turns that into a failed verdict); ``text(kwargs)``:
    the instruction shown to the model; ``rule``: the exact rule, for the docs;
    ``sample(rng, ctx)``: arguments for a generated task (``None``: never
    generated, e.g. it only fits one benchmark prompt); ``kind``: the family
    (difficulty picks among them); ``hardness`` in [0, 1]: a generated task of
    difficulty d draws types with ``hardness <= 0.35 + 0.65 d``; ``prose``:
    ``False`` when ordinary prose cannot meet it (the request check then asks
    for no function words); ``slot``: space-separated labels; types sharing one never
    meet in one generated task (they would contradict); ``solo``: combined only with
    keyword constraints.
    """

    id: str
    source: str
    kwargs: tuple[str, ...]
    check: Callable[..., bool]
    text: Callable[[Mapping[str, Any]], str]
    rule: str
    kind: str
    hardness: float = 0.3
    sample: Callable[[random.Random, SampleContext], dict[str, Any]] | None = None
    prose: bool = True
    slot: str = ""
    solo: bool = False
    types: Mapping[str, type | tuple[type, ...]] = field(default_factory=dict)


CONSTRAINTS: dict[str, ConstraintType] = {}


def _register(cid: str, *, kwargs: tuple[str, ...] = (), text: str | Callable[[Mapping[str, Any]], str],
              rule: str, kind: str, hardness: float = 0.3,
              sample: Callable[[random.Random, SampleContext], dict[str, Any]] | None = None,
              prose: bool = True, slot: str = "", solo: bool = False,
              types: Mapping[str, type | tuple[type, ...]] | None = None) -> Callable:
    def add(check: Callable[..., bool]) -> Callable[..., bool]:
        render = text if callable(text) else (lambda kw, t=text: t.format(**kw))
        CONSTRAINTS[cid] = ConstraintType(
            cid, "ifeval" if ":" in cid and cid.split(":")[0] in _IFEVAL_FAMILIES else "ifbench", kwargs,
            check, render, rule, kind, hardness, sample, prose, slot, solo, types or {})
        return check
    return add


_IFEVAL_FAMILIES = {"keywords", "language", "length_constraints", "detectable_content", "detectable_format",
                    "combination", "startend", "change_case", "punctuation"}
_STRIP = PUNCTUATION + " "


def _compare(count: int, relation: str, threshold: int) -> bool:
    if relation == "less than":
        return count < threshold
    if relation == "at least":
        return count >= threshold
    raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")


def _search(pattern: str, text: str, flags: int = 0) -> re.Match | None:
    """IFEval puts keywords into regexes as they are; one that is no valid
    regex is matched literally instead of failing."""
    try:
        return re.search(pattern, text, flags)
    except re.error:
        return re.search(re.escape(pattern), text, flags)


def _findall(pattern: str, text: str, flags: int = 0) -> list:
    try:
        return re.findall(pattern, text, flags)
    except re.error:
        return re.findall(re.escape(pattern), text, flags)


def _quoted(words: Sequence[str]) -> str:
    return ", ".join(f'"{w}"' for w in words)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# ----------------------------------------------------------------- keywords
@_register("keywords:existence", kwargs=("keywords",), kind="keywords", hardness=0.1,
           text=lambda kw: f"Include the keywords {_quoted(kw['keywords'])} in the response.",
           rule="every keyword is found by `re.search(keyword, response, re.IGNORECASE)` (a substring "
                "match; an invalid regex is matched literally)",
           sample=lambda rng, ctx: {"keywords": rng.sample(list(ctx.related_words), 2)},
           types={"keywords": list})
def _keywords_existence(response: str, keywords: Sequence[str]) -> bool:
    return all(_search(k, response, re.IGNORECASE) for k in keywords)


@_register("keywords:frequency", kwargs=("keyword", "frequency", "relation"), kind="keywords", hardness=0.3,
           text="In your response, the word {keyword} should appear {relation} {frequency} times.",
           rule="`len(re.findall(keyword.strip(), response, re.IGNORECASE))` is `< frequency` (less than) or "
                "`>= frequency` (at least)",
           sample=lambda rng, ctx: {"keyword": rng.choice(list(ctx.related_words)), "relation": "at least",
                                    "frequency": rng.randint(2, 4)},
           types={"keyword": str, "frequency": int, "relation": str})
def _keywords_frequency(response: str, keyword: str, frequency: int, relation: str) -> bool:
    return _compare(len(_findall(keyword.strip(), response, re.IGNORECASE)), relation, frequency)


_FORBIDDEN_POOL = ("very", "really", "thing", "things", "good", "nice", "important", "basically", "actually",
                   "just", "great", "many", "also", "however", "because", "always", "never", "people")


@_register("keywords:forbidden_words", kwargs=("forbidden_words",), kind="keywords", hardness=0.25,
           text=lambda kw: f"Do not include keywords {_quoted(kw['forbidden_words'])} in the response.",
           rule="no word matches `re.search(r'\\b' + word + r'\\b', response, re.IGNORECASE)`",
           sample=lambda rng, ctx: {"forbidden_words": rng.sample(_FORBIDDEN_POOL, rng.randint(1, 3))},
           types={"forbidden_words": list})
def _forbidden_words(response: str, forbidden_words: Sequence[str]) -> bool:
    return not any(_search(r"\b" + w + r"\b", response, re.IGNORECASE) for w in forbidden_words)


def _letter_sample(rng: random.Random, ctx: SampleContext) -> dict[str, Any]:
    if rng.random() < 0.5:
        return {"letter": rng.choice("aeinorst"), "let_relation": "at least", "let_frequency": rng.randint(5, 15)}
    return {"letter": rng.choice("qzxj"), "let_relation": "less than", "let_frequency": rng.randint(2, 5)}


@_register("keywords:letter_frequency", kwargs=("letter", "let_frequency", "let_relation"), kind="keywords",
           hardness=0.35,
           text="In your response, the letter {letter} should appear {let_relation} {let_frequency} times.",
           rule="the count of `letter.strip().lower()` among the characters of `response.lower()` is "
                "`< let_frequency` (less than) or `>= let_frequency` (at least)",
           sample=_letter_sample, types={"letter": str, "let_frequency": int, "let_relation": str})
def _letter_frequency(response: str, letter: str, let_frequency: int, let_relation: str) -> bool:
    count = collections.Counter(response.lower())[letter.strip().lower()]
    return _compare(count, let_relation, let_frequency)


# ----------------------------------------------------------------- language
def _language_sample(rng: random.Random, ctx: SampleContext) -> dict[str, Any]:
    return {"language": rng.choice(["de", "fr", "es", "it", "pt"])}


@_register("language:response_language", kwargs=("language",), kind="language", hardness=0.6, solo=True,
           text=lambda kw: (f"Your ENTIRE response should be in {LANGUAGES.get(kw['language'], kw['language'])} "
                            "language, no other language is allowed."),
           rule="`langdetect` (seeded) detects `language`; a text it cannot classify (no letters) passes, "
                "as in IFEval",
           sample=_language_sample, types={"language": str})
def _response_language(response: str, language: str) -> bool:
    detected = detect_language(response)
    return detected is None or detected == language


# ------------------------------------------------------------------- length
def _sentences_sample(rng: random.Random, ctx: SampleContext) -> dict[str, Any]:
    if rng.random() < 0.5:
        return {"relation": "less than", "num_sentences": rng.randint(3, 8)}
    return {"relation": "at least", "num_sentences": rng.randint(2, 6)}


@_register("length_constraints:number_sentences", kwargs=("num_sentences", "relation"), kind="length",
           hardness=0.3, slot="sentences",
           text="Your response should contain {relation} {num_sentences} sentences.",
           rule="the number of sentences by NLTK's English Punkt model is `< num_sentences` (less than) or "
                "`>= num_sentences` (at least)",
           sample=_sentences_sample, types={"num_sentences": int, "relation": str})
def _number_sentences(response: str, num_sentences: int, relation: str) -> bool:
    return _compare(len(sentences(response)), relation, num_sentences)


@_register("length_constraints:number_paragraphs", kwargs=("num_paragraphs",), kind="length", hardness=0.4,
           slot="paragraphs",
           text=("There should be {num_paragraphs} paragraphs. Paragraphs are separated with the markdown "
                 "divider: ***"),
           rule="`re.split(r'\\s?\\*\\*\\*\\s?', response)` gives exactly `num_paragraphs` parts, an empty first "
                "or last part not counting and an empty part between two dividers failing",
           sample=lambda rng, ctx: {"num_paragraphs": rng.randint(2, 4)}, types={"num_paragraphs": int})
def _number_paragraphs(response: str, num_paragraphs: int) -> bool:
    parts = re.split(r"\s?\*\*\*\s?", response)
    count = len(parts)
    for i, part in enumerate(parts):
        if not part.strip():
            if i in (0, len(parts) - 1):
                count -= 1
            else:
                return False
    return count == num_paragraphs


def _words_sample(rng: random.Random, ctx: SampleContext) -> dict[str, Any]:
    if rng.random() < 0.5:
        return {"relation": "less than", "num_words": rng.choice([40, 60, 80, 100, 150, 200])}
    return {"relation": "at least", "num_words": rng.choice([20, 30, 50, 80, 120])}


@_register("length_constraints:number_words", kwargs=("num_words", "relation"), kind="length", hardness=0.2,
           slot="words",
           text="Answer with {relation} {num_words} words.",
           rule="the number of `\\w+` runs is `< num_words` (less than) or `>= num_words` (at least)",
           sample=_words_sample, types={"num_words": int, "relation": str})
def _number_words(response: str, num_words: int, relation: str) -> bool:
    return _compare(count_words(response), relation, num_words)


def _nth_sample(rng: random.Random, ctx: SampleContext) -> dict[str, Any]:
    n = rng.randint(2, 4)
    return {"num_paragraphs": n, "nth_paragraph": rng.randint(1, n), "first_word": rng.choice(list(ctx.topic_words))}


@_register("length_constraints:nth_paragraph_first_word", kwargs=("num_paragraphs", "nth_paragraph", "first_word"),
           kind="length", hardness=0.55, slot="paragraphs",
           text=("There should be {num_paragraphs} paragraphs. Paragraphs and only paragraphs are separated with "
                 "each other by two new lines as if it was '\\n\\n' in python. Paragraph {nth_paragraph} must "
                 "start with word {first_word}."),
           rule="split on `\\n\\n`: the non-empty parts number exactly `num_paragraphs`, and part "
                "`nth_paragraph` (1-based, counting empty parts) is non-empty and its first word, quotes "
                "stripped from its start, lowercased and cut at the first of `.,?!'\"`, is `first_word.lower()`",
           sample=_nth_sample, types={"num_paragraphs": int, "nth_paragraph": int, "first_word": str})
def _nth_paragraph_first_word(response: str, num_paragraphs: int, nth_paragraph: int, first_word: str) -> bool:
    parts = re.split(r"\n\n", response)
    count = sum(1 for p in parts if p.strip())
    if nth_paragraph > count:
        return False
    paragraph = parts[nth_paragraph - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    first = ""
    for letter in word:
        if letter in {".", ",", "?", "!", "'", '"'}:
            break
        first += letter.lower()
    return count == num_paragraphs and first == first_word.lower()


# ---------------------------------------------------------------- content
@_register("detectable_content:number_placeholders", kwargs=("num_placeholders",), kind="content", hardness=0.3,
           text=("The response must contain at least {num_placeholders} placeholders represented by square "
                 "brackets, such as [address]."),
           rule="`len(re.findall(r'\\[.*?\\]', response)) >= num_placeholders`",
           sample=lambda rng, ctx: {"num_placeholders": rng.randint(1, 3)}, types={"num_placeholders": int})
def _placeholders(response: str, num_placeholders: int) -> bool:
    return len(re.findall(r"\[.*?\]", response)) >= num_placeholders


@_register("detectable_content:postscript", kwargs=("postscript_marker",), kind="content", hardness=0.2,
           text=("At the end of your response, please explicitly add a postscript starting with "
                 "{postscript_marker}"),
           rule="a line of `response.lower()` matches `\\s*p\\.\\s?s\\..*$` for `P.S.`, `\\s*p\\.\\s?p\\.\\s?s.*$` "
                "for `P.P.S`, else `\\s*` + the marker (stripped, lowercased, as a regex) + `.*$`",
           sample=lambda rng, ctx: {"postscript_marker": rng.choice(["P.S.", "P.P.S"])},
           types={"postscript_marker": str})
def _postscript(response: str, postscript_marker: str) -> bool:
    marker = postscript_marker.strip()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + marker.lower() + r".*$"
    return bool(_findall(pattern, response.lower(), re.MULTILINE))


# ----------------------------------------------------------------- format
@_register("detectable_format:number_bullet_lists", kwargs=("num_bullets",), kind="format", hardness=0.35, slot="bullets",
           text=("Your answer must contain exactly {num_bullets} bullet points. Use the markdown bullet points "
                 "such as:\n* This is point 1.\n* This is point 2"),
           rule="lines matching `^\\s*\\*[^\\*].*$` plus lines matching `^\\s*-.*$` number exactly `num_bullets`",
           sample=lambda rng, ctx: {"num_bullets": rng.randint(2, 5)}, types={"num_bullets": int})
def _bullets(response: str, num_bullets: int) -> bool:
    stars = re.findall(r"^\s*\*[^\*].*$", response, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", response, flags=re.MULTILINE)
    return len(stars) + len(dashes) == num_bullets


@_register("detectable_format:constrained_response", kind="format", hardness=0.2, solo=True,
           text=lambda kw: f"Answer with one of the following options: {CONSTRAINED_RESPONSES}",
           rule="`response.strip()` contains one of `My answer is yes.`, `My answer is no.`, `My answer is maybe.`")
def _constrained_response(response: str) -> bool:
    value = response.strip()
    return any(option in value for option in CONSTRAINED_RESPONSES)


@_register("detectable_format:number_highlighted_sections", kwargs=("num_highlights",), kind="format",
           hardness=0.25, slot="highlight",
           text=("Highlight at least {num_highlights} sections in your answer with markdown, i.e. "
                 "*highlighted section*."),
           rule="spans `\\*[^\\n\\*]*\\*` with non-blank text plus spans `\\*\\*[^\\n\\*]*\\*\\*` with non-blank "
                "text number at least `num_highlights`",
           sample=lambda rng, ctx: {"num_highlights": rng.randint(1, 3)}, types={"num_highlights": int})
def _highlights(response: str, num_highlights: int) -> bool:
    count = sum(1 for h in re.findall(r"\*[^\n\*]*\*", response) if h.strip("*").strip())
    count += sum(1 for h in re.findall(r"\*\*[^\n\*]*\*\*", response)
                 if h.removeprefix("**").removesuffix("**").strip())
    return count >= num_highlights


@_register("detectable_format:multiple_sections", kwargs=("section_spliter", "num_sections"), kind="format",
           hardness=0.4, slot="case digits",
           text=("Your response must have {num_sections} sections. Mark the beginning of each section with "
                 "{section_spliter} X, such as: {section_spliter} 1"),
           rule="`re.split(r'\\s?' + section_spliter.strip() + r'\\s?\\d+\\s?', response)` has at least "
                "`num_sections + 1` parts",
           sample=lambda rng, ctx: {"section_spliter": rng.choice(["Section", "SECTION"]),
                                    "num_sections": rng.randint(2, 4)},
           types={"section_spliter": str, "num_sections": int})
def _sections(response: str, section_spliter: str, num_sections: int) -> bool:
    pattern = r"\s?" + section_spliter.strip() + r"\s?\d+\s?"
    try:
        parts = re.split(pattern, response)
    except re.error:
        parts = re.split(r"\s?" + re.escape(section_spliter.strip()) + r"\s?\d+\s?", response)
    return len(parts) - 1 >= num_sections


@_register("detectable_format:json_format", kind="format", hardness=0.35, solo=True,
           text=("Entire output should be wrapped in JSON format. You can use markdown ticks such as ```."),
           rule="`response.strip()` without a leading ```` ```json ````/```` ```Json ````/```` ```JSON ````/```` ``` ```` "
                "and a trailing ```` ``` ````, stripped again, is valid JSON (`json.loads`)")
def _json_format(response: str) -> bool:
    value = (response.strip().removeprefix("```json").removeprefix("```Json").removeprefix("```JSON")
             .removeprefix("```").removesuffix("```").strip())
    try:
        json.loads(value)
    except (ValueError, RecursionError):
        return False
    return True


@_register("detectable_format:title", kind="format", hardness=0.15,
           text="Your answer must contain a title, wrapped in double angular brackets, such as <<poem of joy>>.",
           rule="some `<<[^\\n]+>>` has non-blank text inside its brackets")
def _title(response: str) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", response))


# ------------------------------------------------------------ combination
@_register("combination:two_responses", kind="combination", hardness=0.5, solo=True,
           text=("Give two different responses. Responses and only responses should be separated by 6 asterisk "
                 "symbols: ******."),
           rule="`response.split('******')` has exactly two non-blank parts, which differ after `strip()`; a "
                "blank part other than the first or last fails")
def _two_responses(response: str) -> bool:
    parts = response.split("******")
    kept = []
    for i, part in enumerate(parts):
        if not part.strip():
            if i not in (0, len(parts) - 1):
                return False
        else:
            kept.append(part)
    return len(kept) == 2 and kept[0].strip() != kept[1].strip()


@_register("combination:repeat_prompt", kwargs=("prompt_to_repeat",), kind="combination", hardness=0.45,
           solo=True,
           text=("First repeat the request word for word without change, then give your answer (1. do not say any "
                 "words or characters before repeating the request; 2. the request you need to repeat is the first "
                 "part of this message, without these instructions)"),
           rule="`response.strip().lower()` starts with `prompt_to_repeat.strip().lower()`",
           sample=lambda rng, ctx: {"prompt_to_repeat": ctx.request}, types={"prompt_to_repeat": str})
def _repeat_prompt(response: str, prompt_to_repeat: str) -> bool:
    return response.strip().lower().startswith(prompt_to_repeat.strip().lower())


# --------------------------------------------------------------- start/end
_END_PHRASES = ("Any other questions?", "Is there anything else I can help with?", "Let me know if you have "
                "additional questions.", "That is all.")


@_register("startend:end_checker", kwargs=("end_phrase",), kind="startend", hardness=0.2, slot="end",
           text=("Finish your response with this exact phrase {end_phrase}. No other words should follow this "
                 "phrase."),
           rule="`response.strip().strip('\"').lower()` ends with `end_phrase.strip().lower()`",
           sample=lambda rng, ctx: {"end_phrase": rng.choice(_END_PHRASES)}, types={"end_phrase": str})
def _end_checker(response: str, end_phrase: str) -> bool:
    return response.strip().strip('"').lower().endswith(end_phrase.strip().lower())


@_register("startend:quotation", kind="startend", hardness=0.15, slot="end",
           text="Wrap your entire response with double quotation marks.",
           rule="`response.strip()` is longer than one character and starts and ends with `\"`")
def _quotation(response: str) -> bool:
    value = response.strip()
    return len(value) > 1 and value[0] == '"' and value[-1] == '"'


# ------------------------------------------------------------------- case
def _capital_words_sample(rng: random.Random, ctx: SampleContext) -> dict[str, Any]:
    if rng.random() < 0.6:
        return {"capital_relation": "at least", "capital_frequency": rng.randint(2, 5)}
    return {"capital_relation": "less than", "capital_frequency": rng.randint(3, 8)}


@_register("change_case:capital_word_frequency", kwargs=("capital_frequency", "capital_relation"), kind="case",
           hardness=0.35, slot="case",
           text=("In your response, words with all capital letters should appear {capital_relation} "
                 "{capital_frequency} times."),
           rule="NLTK `word_tokenize` tokens with `str.isupper()` number `< capital_frequency` (less than) or "
                "`>= capital_frequency` (at least)",
           sample=_capital_words_sample, types={"capital_frequency": int, "capital_relation": str})
def _capital_word_frequency(response: str, capital_frequency: int, capital_relation: str) -> bool:
    count = sum(1 for w in word_tokens(response) if w.isupper())
    return _compare(count, capital_relation, capital_frequency)


@_register("change_case:english_capital", kind="case", hardness=0.3, slot="case",
           text="Your entire response should be in English, and in all capital letters.",
           rule="`response.isupper()` and `langdetect` (seeded) detects `en` (a text it cannot classify passes)")
def _english_capital(response: str) -> bool:
    return response.isupper() and detect_language(response) in (None, "en")


@_register("change_case:english_lowercase", kind="case", hardness=0.25, slot="case",
           text=("Your entire response should be in English, and in all lowercase letters. No capital letters "
                 "are allowed."),
           rule="`response.islower()` and `langdetect` (seeded) detects `en` (a text it cannot classify passes)")
def _english_lowercase(response: str) -> bool:
    return response.islower() and detect_language(response) in (None, "en")


@_register("punctuation:no_comma", kind="punctuation", hardness=0.2, slot="comma",
           text="In your entire response, refrain from the use of any commas.",
           rule="`response` has no `,`")
def _no_comma(response: str) -> bool:
    return "," not in response


# ============================================================== IFBench types
@_register("count:word_count_range", kwargs=("min_words", "max_words"), kind="count", hardness=0.3, slot="words",
           text="The response must contain between {min_words} and {max_words} words.",
           rule="`min_words <= n <= max_words` for n the number of `\\w+` runs",
           sample=lambda rng, ctx: (lambda lo: {"min_words": lo, "max_words": lo + rng.choice([30, 50, 100])})(
               rng.choice([20, 40, 60])),
           types={"min_words": int, "max_words": int})
def _word_count_range(response: str, min_words: int, max_words: int) -> bool:
    return min_words <= count_words(response) <= max_words


@_register("count:unique_word_count", kwargs=("N",), kind="count", hardness=0.3,
           text="Use at least {N} unique words in the response.",
           rule="the whitespace-split words of `response.lower()`, ASCII punctuation and spaces stripped from "
                "their ends, form at least `N` distinct strings (the empty string counts)",
           sample=lambda rng, ctx: {"N": rng.choice([20, 30, 40, 60])}, types={"N": int})
def _unique_word_count(response: str, N: int) -> bool:  # noqa: N803 (IFBench's argument name)
    return len({w.strip(_STRIP) for w in response.lower().split()}) >= N


@_register("ratio:sentence_type", kind="ratio", hardness=0.75, slot="sentences",
           text="Maintain a 2:1 ratio of declarative to interrogative sentences.",
           rule="by IFBench's regex sentence splitter, sentences ending in `.` are exactly twice those ending "
                "in `?`",
           sample=lambda rng, ctx: {})
def _sentence_type(response: str) -> bool:
    found = split_into_sentences(response)
    return sum(s.endswith(".") for s in found) == 2 * sum(s.endswith("?") for s in found)


@_register("ratio:sentence_balance", kind="ratio", hardness=0.8, slot="sentences",
           text="Ensure that the ratio of sentence types (declarative, interrogative, exclamatory) is balanced.",
           rule="by IFBench's regex sentence splitter, sentences ending in `.`, `?` and `!` are equally many",
           sample=lambda rng, ctx: {})
def _sentence_balance(response: str) -> bool:
    found = split_into_sentences(response)
    return (sum(s.endswith(".") for s in found) == sum(s.endswith("?") for s in found)
            == sum(s.endswith("!") for s in found))


_CONJUNCTIONS = ("and", "but", "for", "nor", "or", "so", "yet")


@_register("count:conjunctions", kwargs=("small_n",), kind="count", hardness=0.45,
           text="Use at least {small_n} different coordinating conjunctions in the response.",
           rule="the whitespace-split words whose punctuation-stripped lowercase form is one of and, but, for, "
                "nor, or, so, yet number at least `small_n` distinct strings as written",
           sample=lambda rng, ctx: {"small_n": rng.randint(2, 4)}, types={"small_n": int})
def _conjunctions(response: str, small_n: int) -> bool:
    found = {w for w in response.split() if w.strip(_STRIP).lower() in _CONJUNCTIONS}
    return len(found) >= small_n


_PERSON_NAMES = (
    "Emma", "Liam", "Sophia", "Jackson", "Olivia", "Noah", "Ava", "Lucas", "Isabella", "Mason", "Mia", "Ethan",
    "Charlotte", "Alexander", "Amelia", "Benjamin", "Harper", "Leo", "Zoe", "Daniel", "Chloe", "Samuel", "Lily",
    "Matthew", "Grace", "Owen", "Abigail", "Gabriel", "Ella", "Jacob", "Scarlett", "Nathan", "Victoria", "Elijah",
    "Layla", "Nicholas", "Audrey", "David", "Hannah", "Christopher", "Penelope", "Thomas", "Nora", "Andrew",
    "Aria", "Joseph", "Claire", "Ryan", "Stella", "Jonathan",
)


@_register("count:person_names", kwargs=("N",), kind="count", hardness=0.6,
           text="Mention at least {N} different person names in the response.",
           rule="at least `N` of IFBench's 50 first names (Emma, Liam, ...) occur in `response` as substrings",
           sample=lambda rng, ctx: {"N": rng.randint(1, 3)}, types={"N": int})
def _person_names(response: str, N: int) -> bool:  # noqa: N803
    return sum(1 for name in _PERSON_NAMES if name in response) >= N


@_register("count:numbers", kwargs=("N",), kind="count", hardness=0.5, slot="digits",
           text="Include exactly {N} numbers in the response.",
           rule="`re.findall(r'\\d+', ...)` on `response` with ASCII punctuation removed finds exactly `N`",
           sample=lambda rng, ctx: {"N": rng.randint(1, 4)}, types={"N": int})
def _numbers(response: str, N: int) -> bool:  # noqa: N803
    return len(re.findall(r"\d+", strip_punctuation(response))) == N


@_register("words:alphabet", kind="words", hardness=0.95, prose=False, solo=True,
           text="Each word must start with the next letter of the alphabet, looping back to 'A' after 'Z'.",
           rule="with ASCII punctuation removed, the first word starts with a letter a-z and each next word "
                "starts with the letter after the previous one (z wraps to a)",
           sample=lambda rng, ctx: {})
def _alphabet(response: str) -> bool:
    words = strip_punctuation(response).strip(_STRIP).split()
    if not words:
        return False
    alphabet = string.ascii_lowercase
    letter = words[0][0].lower()
    if letter not in alphabet:
        return False
    for word in words[1:]:
        word = word.strip(_STRIP).lower()
        if not word:
            continue
        letter = alphabet[(alphabet.index(letter) + 1) % 26]
        if word[0] != letter:
            return False
    return True


@_register("words:vowel", kind="words", hardness=0.9, prose=False, solo=True,
           text="Write a paragraph using words that contain only three types of vowels.",
           rule="`response.strip()` is one line and uses at most three distinct vowels of a, e, i, o, u",
           sample=lambda rng, ctx: {})
def _vowel(response: str) -> bool:
    lines = response.strip().split("\n")
    return len(lines) == 1 and len({c for c in lines[0].lower() if c in "aeiou"}) <= 3


@_register("words:consonants", kind="words", hardness=0.9, prose=False, solo=True,
           text="Ensure each word in your answer has at least one consonant cluster (two consonants together).",
           rule="every whitespace-split word of `response.lower().strip()` has two adjacent consonants",
           sample=lambda rng, ctx: {})
def _consonants(response: str) -> bool:
    consonants = set("bcdfghjklmnpqrstvwxyz")
    return all(any(a in consonants and b in consonants for a, b in pairwise(w))
               for w in response.lower().strip().split())


@_register("sentence:alliteration_increment", kind="sentence", hardness=0.95, slot="sentences",
           text="Each sentence must have more alliterative words than the previous one.",
           rule="by IFBench's regex sentence splitter, each sentence's alliteration score (2 for a pair of "
                "adjacent words with the same first letter, 1 more for each further word of the run) is above "
                "the previous sentence's",
           sample=lambda rng, ctx: {})
def _alliteration_increment(response: str) -> bool:
    previous = -1
    for sentence in split_into_sentences(response):
        words = [w.lstrip(_STRIP) for w in sentence.lower().split()]
        words = [w for w in words if w]
        score, run = 0, False
        for a, b in pairwise(words):
            if a[0] == b[0]:
                score += 1 if run else 2
                run = True
            else:
                run = False
        if score <= previous:
            return False
        previous = score
    return True


@_register("words:palindrome", kind="words", hardness=0.95, prose=False, solo=True,
           text="Include at least 10 single-word palindromes, each at least 5 characters long.",
           rule="with ASCII punctuation removed, at least 10 lowercase words of 5+ characters read the same "
                "backwards",
           sample=lambda rng, ctx: {})
def _palindrome(response: str) -> bool:
    words = strip_punctuation(response).lower().split()
    return sum(1 for w in words if w == w[::-1] and len(w) >= 5) >= 10


@_register("count:punctuation", kind="count", hardness=0.7, slot="comma",
           text="Use every standard punctuation mark at least once, including semicolons, colons, and the "
                "interrobang (?!).",
           rule="`response` holds `!?`, `?!` or `‽`, and, after removing one `?!` (else one `!?`), each of "
                "`. , ! ? ; :`",
           sample=lambda rng, ctx: {})
def _punctuation_cover(response: str) -> bool:
    if not ("!?" in response or "?!" in response or "‽" in response):
        return False
    rest = response.replace("?!", "", 1)
    if len(rest) == len(response):
        rest = response.replace("!?", "", 1)
    return {".", ",", "!", "?", ";", ":"} <= set(rest)


@_register("format:parentheses", kind="format", hardness=0.7,
           text="Nest parentheses (and [brackets] and {{braces}}) at least 5 levels deep.",
           rule="scanning `([{`/`)]}` with a stack (a mismatched closer empties it), a matching closer is met "
                "after the stack was 5 deep",
           sample=lambda rng, ctx: {})
def _parentheses(response: str) -> bool:
    levels: list[str] = []
    depth = 0
    pairs = {")": "(", "]": "[", "}": "{"}
    for char in response:
        if char in "([{":
            levels.append(char)
            depth = max(depth, len(levels))
        elif char in pairs:
            if levels and levels[-1] == pairs[char]:
                levels.pop()
                if depth >= 5 and len(levels) < depth:
                    return True
            else:
                levels, depth = [], 0
    return False


@_register("format:quotes", kind="format", hardness=0.65,
           text="Include quotes within quotes within quotes, at least 3 levels deep, alternating between double "
                "quotes and single quotes.",
           rule="scanning `\"` and `'` with a stack (a quote equal to the top closes it), some closing leaves "
                "the depth at least 3 below the deepest reached",
           sample=lambda rng, ctx: {})
def _quotes(response: str) -> bool:
    levels: list[str] = []
    reached = current = 0
    for char in response:
        if levels and char == levels[-1]:
            levels.pop()
            current -= 1
            if reached - current >= 3:
                return True
        elif char in "\"'":
            levels.append(char)
            current += 1
            reached = max(reached, current)
    return False


_PRIMES = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97}


@_register("words:prime_lengths", kind="words", hardness=0.9, prose=False, solo=True,
           text="Use only words with lengths that are prime numbers.",
           rule="with ASCII punctuation removed, every whitespace-split word's length is a prime below 100",
           sample=lambda rng, ctx: {})
def _prime_lengths(response: str) -> bool:
    return all(len(w) in _PRIMES for w in strip_punctuation(response).split())


def _options_parts(options: str) -> tuple[bool, list[str]]:
    strict = re.match(r"\W*[aA]\W*[bB]\W*[cC]\W*", options) is not None
    separator = "/" if "/" in options else "or" if "or" in options else ","
    return strict, [o.strip() for o in options.split(separator)]


@_register("format:options", kwargs=("options",), kind="format", hardness=0.3, solo=True,
           text="Answer with one of the following options: {options}. Do not give any explanation.",
           rule="options split on `/`, else `or`, else `,` and stripped; letter options (`a), b), c)`) need "
                "`response` equal to one; others compare punctuation-stripped lowercase forms",
           types={"options": str})
def _options(response: str, options: str) -> bool:
    strict, parts = _options_parts(options)
    if strict:
        return response in parts
    value = response.strip(_STRIP).lower()
    return any(o.strip(_STRIP).lower() == value for o in parts)


@_register("format:newline", kind="format", hardness=0.6, solo=True,
           text="Write each word on a new line.",
           rule="with ASCII punctuation removed, the non-empty lines number as many as the whitespace-split words",
           sample=lambda rng, ctx: {})
def _newline(response: str) -> bool:
    value = strip_punctuation(response)
    lines = [line for line in value.strip().split("\n") if line != ""]
    return len(lines) == len(value.strip().split())


@_register("ratio:sentence_words", kind="ratio", hardness=0.95, slot="sentences",
           text="Respond with three sentences, all containing the same number of characters.",
           rule="IFBench's regex sentence splitter finds exactly 3 sentences of equal stripped length",
           sample=lambda rng, ctx: {})
def _sentence_words(response: str) -> bool:
    found = split_into_sentences(response)
    return len(found) == 3 and len({len(s.strip()) for s in found}) == 1


@_register("count:words_japanese", kwargs=("N",), kind="count", hardness=0.95, solo=True,
           text="Every {N}th word of your response must be in Japanese.",
           rule="every `N`th whitespace-split word, punctuation-stripped, non-empty and not all digits, holds a "
                "Hiragana, Katakana or Kanji character",
           types={"N": int})
def _words_japanese(response: str, N: int) -> bool:  # noqa: N803
    for i, word in enumerate(response.split()):
        word = word.strip(_STRIP)
        if (i + 1) % N == 0 and word and not word.isdigit() and not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", word):
            return False
    return True


@_register("words:repeats", kwargs=("small_n",), kind="words", hardness=0.6,
           text="The response should not repeat any word more than {small_n} times.",
           rule="no word of `response.lower()` with ASCII punctuation removed (split on whitespace) occurs more "
                "than `small_n` times",
           sample=lambda rng, ctx: {"small_n": rng.randint(2, 4)}, types={"small_n": int})
def _repeats(response: str, small_n: int) -> bool:
    counts = collections.Counter(strip_punctuation(response.lower()).split())
    return all(c <= small_n for c in counts.values())


@_register("sentence:keyword", kwargs=("word", "N"), kind="sentence", hardness=0.45,
           text=lambda kw: f"The response must include the word \"{kw['word']}\" in the {_ordinal(kw['N'])} sentence.",
           rule="IFBench's regex sentence splitter finds at least `N` sentences and sentence `N` (1-based) "
                "contains `word` (case-insensitive substring)",
           sample=lambda rng, ctx: {"word": rng.choice(list(ctx.related_words)), "N": rng.randint(1, 3)},
           types={"word": str, "N": int})
def _sentence_keyword(response: str, word: str, N: int) -> bool:  # noqa: N803
    found = split_into_sentences(response)
    return len(found) >= N and word.lower() in found[int(N - 1)].lower()


_PRONOUNS = {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "you", "your", "yours",
             "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its",
             "itself", "they", "them", "their", "theirs", "themselves"}


@_register("count:pronouns", kwargs=("N",), kind="count", hardness=0.4,
           text="The response should include at least {N} pronouns.",
           rule="with `/` read as a space, lowercased and ASCII punctuation removed, at least `N` whitespace-split "
                "words are personal pronouns (i, me, my, ..., themselves)",
           sample=lambda rng, ctx: {"N": rng.randint(3, 8)}, types={"N": int})
def _pronouns(response: str, N: int) -> bool:  # noqa: N803
    words = strip_punctuation(response.replace("/", " ").lower()).split()
    return sum(1 for w in words if w in _PRONOUNS) >= N


@_register("words:last_first", kind="words", hardness=0.85, slot="sentences",
           text="In your response, the last word of each sentence must become the first word of the next sentence.",
           rule="by IFBench's regex sentence splitter, each sentence's last word (trailing punctuation stripped) "
                "equals the next one's first word (leading punctuation stripped), case-insensitively",
           sample=lambda rng, ctx: {})
def _last_first(response: str) -> bool:
    found = split_into_sentences(response)
    for a, b in pairwise(found):
        last, first = a.rstrip(_STRIP).split(), b.lstrip(_STRIP).split()
        if not last or not first or last[-1].lower() != first[0].lower():
            return False
    return True


@_register("words:paragraph_last_first", kind="words", hardness=0.8, slot="paragraphs",
           text="Each paragraph must end with the same word it started with, separate paragraphs with a newline.",
           rule="each non-blank line, lowercased and punctuation-stripped at its ends, starts and ends with the "
                "same word",
           sample=lambda rng, ctx: {})
def _paragraph_last_first(response: str) -> bool:
    for line in response.split("\n"):
        words = line.strip().lower().strip(_STRIP).split()
        if words and words[0] != words[-1]:
            return False
    return True


@_register("sentence:increment", kwargs=("small_n",), kind="sentence", hardness=0.85, slot="sentences",
           text="Each sentence must contain exactly {small_n} more words than the previous one.",
           rule="by IFBench's regex sentence splitter, each sentence has exactly `small_n` more whitespace-split "
                "words (ASCII punctuation removed) than the one before",
           sample=lambda rng, ctx: {"small_n": rng.randint(1, 3)}, types={"small_n": int})
def _increment(response: str, small_n: int) -> bool:
    found = split_into_sentences(response)
    if not found:
        return False  # the reference raises on a response with no sentence
    counts = [len(strip_punctuation(s).strip().split()) for s in found]
    return all(b == a + small_n for a, b in pairwise(counts))


@_register("words:no_consecutive", kind="words", hardness=0.8, prose=False, solo=True,
           text="No two consecutive words may share the same first letter.",
           rule="no two adjacent words of `response.lower()` with ASCII punctuation removed start with the same "
                "character",
           sample=lambda rng, ctx: {})
def _no_consecutive(response: str) -> bool:
    words = strip_punctuation(response.lower()).split()
    return all(a[0] != b[0] for a, b in pairwise(words))


@_register("format:line_indent", kind="format", hardness=0.7, slot="bullets",
           text="Create stairs by incrementally indenting each new line.",
           rule="each line (blank lines dropped as IFBench's loop drops them) is indented by more spaces than the "
                "line before",
           sample=lambda rng, ctx: {})
def _line_indent(response: str) -> bool:
    lines = response.split("\n")
    for line in lines:  # removing while iterating, as IFBench does: of two adjacent blank lines one stays
        if not line.strip():
            lines.remove(line)
    indents = [len(line) - len(line.lstrip(" ")) for line in lines]
    return all(b > a for a, b in pairwise(indents))


@_register("format:quote_unquote", kind="format", hardness=0.6,
           text="Every quoted phrase must be followed by an unquoted explanation.",
           rule="with curly quotes made straight, `'\"'` references and all whitespace removed, there is no `\"\"` "
                "and the text, digits and non-`\"` punctuation stripped from its ends, does not end in `\"`",
           sample=lambda rng, ctx: {})
def _quote_unquote(response: str) -> bool:
    value = response.replace("“", '"').replace("”", '"').replace("'\"'", "")
    value = "".join(value.split())
    if '""' in value:
        return False
    stripped = value.strip(string.digits + PUNCTUATION.replace('"', ""))
    return bool(stripped) and stripped[-1] != '"'


@_register("format:list", kwargs=("sep",), kind="format", hardness=0.3,
           text="Answer with a list of items, instead of bullet points use {sep}.",
           rule="`sep` occurs at least twice in `response`",
           sample=lambda rng, ctx: {"sep": rng.choice(["...", "SEPARATOR", "!?!?", "-"])}, types={"sep": str})
def _special_bullets(response: str, sep: str) -> bool:
    return response.count(sep) >= 2


@_register("format:thesis", kind="format", hardness=0.4,
           text="Each section must begin with a thesis statement in italics, use HTML to indicate the italics.",
           rule="from the first `<i>` (else `<em>`) there is a closing `</i>` (else `</em>`) with non-blank text "
                "between (counted from 3 characters after the opening tag) and non-blank text after "
                "(from 4 characters after the closing tag)",
           sample=lambda rng, ctx: {})
def _thesis(response: str) -> bool:
    index = response.find("<i>")
    if index == -1:
        index = response.find("<em>")
        if index == -1:
            return False
    value = response[index:]
    end = value.find("</i>")
    if end == -1:
        end = value.find("</em>")
        if end == -1:
            return False
    return value[3:end].strip() != "" and value[end + 4:].strip() != ""


@_register("format:sub-bullets", kind="format", hardness=0.5, slot="bullets highlight",
           text="Your response must include bullet points denoted by * and at least one sub-bullet point denoted "
                "by - for each bullet point.",
           rule="every part of `response.split('*')` after the first contains a `-`",
           sample=lambda rng, ctx: {})
def _sub_bullets(response: str) -> bool:
    return all("-" in part for part in response.split("*")[1:])


@_register("format:no_bullets_bullets", kind="format", hardness=0.5, slot="bullets",
           text="Your answer must contain at least two sentences ending in a period followed by at least two "
                "bullet points denoted by *.",
           rule="lines before the first `*`-line hold at least 2 sentences (IFBench's regex splitter); then only "
                "`*`-lines follow, at least 2",
           sample=lambda rng, ctx: {})
def _no_bullets_bullets(response: str) -> bool:
    in_sentences, count_sentences, count_bullets = True, 0, 0
    for line in response.split("\n"):
        if line.strip().startswith("*"):
            in_sentences = False
            if count_sentences < 2:
                return False
            count_bullets += 1
        elif in_sentences:
            found = split_into_sentences(line.strip())
            in_sentences = bool(found)
            count_sentences += len(found)
        else:
            return False
    return count_bullets >= 2


_MULTIPLE_COUNTS = (1, 2, 3, 5, 7)


@_register("count:keywords_multiple", kwargs=("keyword1", "keyword2", "keyword3", "keyword4", "keyword5"),
           kind="count", hardness=0.85,
           text=("Include keyword {keyword1} once in your response, keyword {keyword2} twice in your response, "
                 "keyword {keyword3} three times in your response, keyword {keyword4} five times in your response, "
                 "and keyword {keyword5} seven times in your response."),
           rule="`response.lower().count(keywordK.lower())` is exactly 1, 2, 3, 5 and 7 for K = 1..5",
           sample=lambda rng, ctx: dict(zip(("keyword1", "keyword2", "keyword3", "keyword4", "keyword5"),
                                            rng.sample(list(ctx.related_words), 5), strict=True)),
           types={k: str for k in ("keyword1", "keyword2", "keyword3", "keyword4", "keyword5")})
def _keywords_multiple(response: str, keyword1: str, keyword2: str, keyword3: str, keyword4: str,
                       keyword5: str) -> bool:
    value = response.lower()
    return all(value.count(k.lower()) == n for k, n in zip((keyword1, keyword2, keyword3, keyword4, keyword5),
                                                            _MULTIPLE_COUNTS, strict=True))


@_register("words:keywords_specific_position", kwargs=("keyword", "n", "m"), kind="words", hardness=0.7, slot="case",
           text=lambda kw: (f"Include keyword {kw['keyword']} in the {_ordinal(kw['n'])} sentence, as the "
                            f"{_ordinal(kw['m'])} word of that sentence."),
           rule="IFBench's regex sentence splitter finds at least `n` sentences and NLTK `word_tokenize` token `m` "
                "of sentence `n` (1-based) is exactly `keyword`",
           sample=lambda rng, ctx: {"keyword": rng.choice(list(ctx.related_words)), "n": rng.randint(1, 3),
                                    "m": rng.randint(1, 6)},
           types={"keyword": str, "n": int, "m": int})
def _keyword_position(response: str, keyword: str, n: int, m: int) -> bool:
    found = split_into_sentences(response)
    if len(found) < n:
        return False
    words = word_tokens(found[n - 1])
    return len(words) >= m and words[m - 1] == keyword.strip()


@_register("words:words_position", kwargs=("keyword",), kind="words", hardness=0.75, slot="case",
           text="The second word in your response and the second to last word in your response should be the word "
                "{keyword}.",
           rule="NLTK `word_tokenize` gives at least 2 tokens and tokens 2 and -2 both equal `keyword`",
           sample=lambda rng, ctx: {"keyword": rng.choice(list(ctx.related_words))}, types={"keyword": str})
def _words_position(response: str, keyword: str) -> bool:
    words = word_tokens(response)
    return len(words) >= 2 and words[1] == words[-2] == keyword.strip()


@_register("format:title_case", kind="format", hardness=0.55, slot="case",
           text="Write the entire response in title case (capitalize the first letter of every major word).",
           rule="no NLTK `word_tokenize` token starts lowercase and continues either all uppercase or all lowercase "
                "(`w[0].islower() and (w[1:].isupper() or w[1:].islower())`)",
           sample=lambda rng, ctx: {})
def _title_case(response: str) -> bool:
    for word in word_tokens(response):
        if word[0].isupper() and word[1:].islower():
            continue
        if word[0].islower() and (word[1:].isupper() or word[1:].islower()):
            return False
    return True


@_register("format:output_template", kind="format", hardness=0.3,
           text=("Use this exact template for your response: My Answer: [answer] My Conclusion: [conclusion] "
                 "Future Outlook: [outlook]"),
           rule="`response` contains `My Answer:`, `My Conclusion:` and `Future Outlook:`",
           sample=lambda rng, ctx: {})
def _output_template(response: str) -> bool:
    return all(part in response for part in ("My Answer:", "My Conclusion:", "Future Outlook:"))


@_register("format:no_whitespace", kind="format", hardness=0.7, prose=False, solo=True,
           text="The output should not contain any whitespace.",
           rule="no character of `response` is whitespace (`str.isspace`)",
           sample=lambda rng, ctx: {})
def _no_whitespace(response: str) -> bool:
    return not any(c.isspace() for c in response)


# ================================================================ applying them
def validate(constraint: Any) -> dict[str, Any]:
    """A constraint in canonical form ``{"id", "kwargs"}`` (``None`` values
    dropped, as IFEval's evaluation drops them). Raises ``ValueError`` for an
    unknown id, a missing or unexpected argument, or one of the wrong type."""
    if not isinstance(constraint, Mapping) or not isinstance(constraint.get("id"), str):
        raise ValueError(f"a constraint is {{'id': str, 'kwargs': dict}}, got {constraint!r}")
    cid = constraint["id"]
    ctype = CONSTRAINTS.get(cid)
    if ctype is None:
        raise ValueError(f"unknown constraint id {cid!r} (docs/instruct.md lists the {len(CONSTRAINTS)} supported)")
    raw = constraint.get("kwargs") or {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"{cid}: kwargs must be a dict, got {type(raw).__name__}")
    kwargs = {k: v for k, v in raw.items() if v is not None}
    unexpected = sorted(set(kwargs) - set(ctype.kwargs))
    missing = [k for k in ctype.kwargs if k not in kwargs]
    if unexpected or missing:
        raise ValueError(f"{cid}: takes {list(ctype.kwargs)}; missing {missing}, unexpected {unexpected}")
    for name, value in kwargs.items():
        want = ctype.types.get(name)
        if want is int and isinstance(value, float) and value.is_integer():
            kwargs[name] = value = int(value)  # JSON readers may give 3.0
        if want is not None and (not isinstance(value, want) or isinstance(value, bool)):
            raise ValueError(f"{cid}: {name} must be {getattr(want, '__name__', want)}, got {value!r}")
        if name.endswith("relation") and value not in RELATIONS:
            raise ValueError(f"{cid}: {name} must be one of {RELATIONS}, got {value!r}")
    return {"id": cid, "kwargs": kwargs}


def describe(constraint: Mapping[str, Any]) -> str:
    """The instruction text of a (validated) constraint."""
    return CONSTRAINTS[constraint["id"]].text(constraint["kwargs"])


def loose_variants(response: str) -> list[str]:
    """IFEval's loose transforms: the response, without ``*``, without its
    first line, last line or both, and those without ``*``."""
    lines = response.split("\n")
    cut = ["\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return [response, response.replace("*", ""), *cut, *(c.replace("*", "") for c in cut)]


def strip_thinking(response: str) -> str:
    """The answer after a reasoning model's ``<think>`` block (as the
    reference evaluation reads it): what follows ``</think>``; an unclosed
    ``<think>`` leaves nothing."""
    value = response.strip()
    if "</think>" in value:
        return value.split("</think>", 1)[-1].strip()
    return "" if value.startswith("<think>") else value


def _holds(ctype: ConstraintType, response: str, kwargs: Mapping[str, Any]) -> bool:
    if not response.strip():
        return False
    try:
        return bool(ctype.check(response, **kwargs))
    except (ValueError, IndexError, TypeError, RecursionError, re.error):
        return False  # the reference raises here; a failed verdict is the safe reading


def verdict(constraint: Mapping[str, Any], response: str, *, loose: bool = False) -> bool:
    """Whether ``response`` follows the (validated) ``constraint``: strict
    (the response as written) or ``loose`` (any of :func:`loose_variants`).
    An empty response follows nothing. Never raises on any response."""
    ctype = CONSTRAINTS[constraint["id"]]
    kwargs = constraint["kwargs"]
    if not loose:
        return _holds(ctype, response, kwargs)
    return any(_holds(ctype, variant, kwargs) for variant in loose_variants(response))


def component_keys(constraints: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ``reward_components`` key of each constraint: its id, or
    ``"<id>#<n>"`` (n = 1, 2, ...) for every occurrence of an id that repeats."""
    totals = collections.Counter(c["id"] for c in constraints)
    seen: collections.Counter = collections.Counter()
    keys = []
    for c in constraints:
        seen[c["id"]] += 1
        keys.append(c["id"] if totals[c["id"]] == 1 else f"{c['id']}#{seen[c['id']]}")
    return keys
