"""The haystack grammar: deterministic, natural sentences, never a needle by accident."""

from __future__ import annotations

import random
import re
import subprocess
import sys

from gym_llm_longctx import prose


def _text(seed: int, n: int) -> str:
    units = prose.paragraph_units(random.Random(seed))
    return "".join(next(units) for _ in range(n)).lstrip()


def test_same_seed_same_text_in_another_process_and_other_seeds_differ():
    here = _text(3, 300)
    code = (
        "import random; from gym_llm_longctx import prose\n"
        "u = prose.paragraph_units(random.Random(3))\n"
        "print(''.join(next(u) for _ in range(300)).lstrip(), end='')"
    )
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "99", "PATH": "/usr/bin:/bin"}).stdout
    assert here == there
    assert _text(4, 300) != here


def test_haystack_is_sentences_of_known_words_without_digits_or_key_words():
    text = _text(0, 20_000)
    assert not re.search(r"\d", text)
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    assert words <= prose.PROSE_WORDS
    assert not words & prose.KEY_WORDS
    assert not re.search(r"\b[A-Z]{2,}\b", text)  # no all-capital word: variable names cannot occur
    paragraphs = text.split("\n\n")
    assert len(paragraphs) > 20_000 / 7
    for sentence in re.split(r"(?<=\.) ", paragraphs[0]) + re.split(r"(?<=\.) ", paragraphs[-1]):
        assert re.fullmatch(r"[A-Z][a-z' ,]+\.", sentence), sentence
        assert 4 <= len(sentence.split()) <= 30


def test_the_grammar_has_variety():
    sentences = re.split(r"(?<=\.)\s+", _text(1, 5000))
    assert len(set(sentences)) > 0.9 * len(sentences)


def test_invented_words_names_and_variables_never_collide_with_the_prose():
    rng = random.Random(5)
    words = [prose.invented_word(rng, rng.choice((2, 3))) for _ in range(5000)]
    assert all(w.isalpha() and w.islower() for w in words)
    assert not set(words) & (prose.PROSE_WORDS | prose.KEY_WORDS)
    names = [prose.proper_name(rng) for _ in range(500)]
    assert all(n[0].isupper() and n.lower() not in prose.PROSE_WORDS for n in names)
    variables = [prose.variable_name(rng) for _ in range(500)]
    assert all(re.fullmatch(r"[BCDFGHJKLMNPQRSTVXZ]{5}", v) for v in variables)
    keys = [prose.key_phrase(rng) for _ in range(500)]
    assert all(set(k.split("-")) <= prose.KEY_WORDS for k in keys)
    assert not prose.KEY_WORDS & prose.PROSE_WORDS
