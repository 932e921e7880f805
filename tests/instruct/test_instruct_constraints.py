"""Every constraint type: a response that follows it and one that does not,
read as IFEval's / IFBench's reference checkers read them (the reference's own
verdicts on 2,400 generated responses: benchmarks/bench_instruct_agreement.py)."""

from __future__ import annotations

import pytest
from gym_llm_instruct.constraints import (
    CONSTRAINTS,
    component_keys,
    describe,
    loose_variants,
    strip_thinking,
    validate,
    verdict,
)

P = "Bees make honey. They live in hives. A queen lays the eggs."

#: id -> (kwargs, a response that follows it, one that does not)
CASES: dict[str, tuple[dict, str, str]] = {
    "keywords:existence": ({"keywords": ["hive", "queen"]}, P.replace("hives", "a Hive"), "Bees make honey."),
    "keywords:frequency": ({"keyword": "bee", "frequency": 2, "relation": "at least"}, "Bee bees.", "A bee."),
    "keywords:forbidden_words": ({"forbidden_words": ["honey"]}, "Bees make honeycomb.", P),
    "keywords:letter_frequency": ({"letter": "z", "let_frequency": 2, "let_relation": "less than"}, P, "Zz buzz"),
    "language:response_language": ({"language": "de"}, "Die Bienen machen Honig und leben im Stock.", P),
    "length_constraints:number_sentences": ({"num_sentences": 3, "relation": "at least"},
                                            "Dr. Lee came. He sat. We ate.", "Dr. Lee came. He sat."),
    "length_constraints:number_paragraphs": ({"num_paragraphs": 2}, "One.\n***\nTwo.", "One.\n***\n***\nTwo."),
    "length_constraints:number_words": ({"num_words": 5, "relation": "less than"}, "Bees make honey.", P),
    "length_constraints:nth_paragraph_first_word": (
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "they"},
        "Bees make honey.\n\n\"They, live in hives.", "Bees make honey.\n\nThe bees live in hives."),
    "detectable_content:number_placeholders": ({"num_placeholders": 2}, "Dear [name] at [place].", "Dear [name]."),
    "detectable_content:postscript": ({"postscript_marker": "P.P.S"}, P + "\np. p.s. more", P + "\nP.S. more"),
    "detectable_format:number_bullet_lists": ({"num_bullets": 2}, "* one\n- two", "* one\n- two\n* three"),
    "detectable_format:constrained_response": ({}, "  My answer is maybe. ", "My answer is: yes."),
    "detectable_format:number_highlighted_sections": ({"num_highlights": 2}, "*one* and **two**", "*one* and * *"),
    "detectable_format:multiple_sections": ({"section_spliter": "Section", "num_sections": 2},
                                            "Section 1 a Section 2 b", "Section 1 a SECTION 2 b"),
    "detectable_format:json_format": ({}, '```json\n{"a": 1}\n```', '{"a": 1} and more'),
    "detectable_format:title": ({}, "<<Bees>>\n" + P, "<< >>\n" + P),
    "combination:two_responses": ({}, "A bee.\n******\nA hive.", "A bee.\n******\nA bee."),
    "combination:repeat_prompt": ({"prompt_to_repeat": "Write about bees."}, "write about BEES. " + P,
                                  "Sure. Write about bees. " + P),
    "startend:end_checker": ({"end_phrase": "Any other questions?"}, '"' + P + ' any other questions?"',
                             P + " Any other questions? Bye."),
    "startend:quotation": ({}, '  "' + P + '"  ', '"' + P),
    "change_case:capital_word_frequency": ({"capital_frequency": 2, "capital_relation": "at least"},
                                           "BEES make HONEY.", "BEES make honey."),
    "change_case:english_capital": ({}, P.upper(), P),
    "change_case:english_lowercase": ({}, P.lower(), P),
    "punctuation:no_comma": ({}, P, "Bees, hives."),
    "count:word_count_range": ({"min_words": 3, "max_words": 5}, "Bees make honey.", P),
    "count:unique_word_count": ({"N": 5}, P, "bee bee bee bee"),
    "ratio:sentence_type": ({}, "A is. B is. Is C?", "A is. Is B?"),
    "ratio:sentence_balance": ({}, "A is. Is B? C!", "A is. B is. C!"),
    "count:conjunctions": ({"small_n": 2}, "Bees and wasps, but not ants.", "Bees and wasps and ants."),
    "count:person_names": ({"N": 2}, "Emma met Liam.", "Emma met a bee."),
    "count:numbers": ({"N": 2}, "3 bees and 4 hives.", "3 bees, 4 hives and 5 queens."),
    "words:alphabet": ({}, "Any bee can do everything.", "Any bee does everything."),
    "words:vowel": ({}, "a bee sees tea", "a bee sees tea you"),
    "words:consonants": ({}, "strong blunt crisp", "strong bee"),
    "sentence:alliteration_increment": ({}, "A cat. Big brown bear. Sam saw seven snakes.", "Big brown bear. A cat."),
    "words:palindrome": ({}, " ".join(["level", "radar", "civic", "kayak", "refer", "madam", "rotor", "stats",
                                       "tenet", "racecar"]), "level radar civic"),
    "count:punctuation": ({}, "Why?! Yes; no: ok, fine. Really? Wow!", "Why?! Yes, fine."),
    "format:parentheses": ({}, "(a [b {c (d [e] f) g} h] i)", "(a [b] c)"),
    "format:quotes": ({}, "\"a 'b \"c\" d' e\"", "\"a 'b' c\""),
    "words:prime_lengths": ({}, "an ant is there", "a bee"),
    "format:options": ({"options": "yes/no/maybe"}, "Maybe.", "Perhaps."),
    "format:newline": ({}, "Bees\nmake\nhoney.", "Bees make\nhoney."),
    "ratio:sentence_words": ({}, "Abc de. Fgh ij. Klm no.", "Abc de. Fgh ij."),
    "count:words_japanese": ({"N": 2}, "the 蜂 makes 蜜", "the bee makes honey"),
    "words:repeats": ({"small_n": 1}, "Bees make honey.", "Bees make bees."),
    "sentence:keyword": ({"word": "hive", "N": 2}, P, "Hive first. Then bees."),
    "count:pronouns": ({"N": 2}, "They say it is so.", "Bees say so."),
    "words:last_first": ({}, "I like bees. Bees like me.", "I like bees. They like me."),
    "words:paragraph_last_first": ({}, "bee and bee\nhoney is honey", "bee and honey"),
    "sentence:increment": ({"small_n": 1}, "Bees buzz. Bees buzz loudly.", "Bees buzz. Bees buzz very loudly."),
    "words:no_consecutive": ({}, "Bees make honey", "Bees buzz here"),
    "format:line_indent": ({}, "a\n b\n  c", "a\n b\n c"),
    "format:quote_unquote": ({}, '"Bees" means insects.', 'He said "Bees"'),
    "format:list": ({"sep": "SEPARATOR"}, "a SEPARATOR b SEPARATOR c", "a SEPARATOR b"),
    "format:thesis": ({}, "<i>Bees matter.</i> They pollinate.", "<i>Bees matter.</i>"),
    "format:sub-bullets": ({}, "* bees\n  - honey\n* hives\n  - wax", "* bees\n* hives\n  - wax"),
    "format:no_bullets_bullets": ({}, "Bees buzz. Bees work.\n* honey\n* wax", "Bees buzz.\n* honey\n* wax"),
    "count:keywords_multiple": ({"keyword1": "ant", "keyword2": "bee", "keyword3": "cow", "keyword4": "dog",
                                 "keyword5": "elk"},
                                "ant " + "bee " * 2 + "cow " * 3 + "dog " * 5 + "elk " * 7, "ant bee cow dog elk"),
    "words:keywords_specific_position": ({"keyword": "honey", "n": 2, "m": 3}, "Hi. Bees make honey.",
                                         "Hi. Bees honey make."),
    "words:words_position": ({"keyword": "bees"}, "The bees make bees .", "The bees make honey ."),
    "format:title_case": ({}, "Bees Make Honey", "Bees make Honey"),
    "format:output_template": ({}, "My Answer: a My Conclusion: b Future Outlook: c", "My Answer: a"),
    "format:no_whitespace": ({}, "Beesmakehoney.", "Bees make honey."),
}


def test_every_constraint_type_has_a_case():
    assert set(CASES) == set(CONSTRAINTS)
    assert sum(t.source == "ifeval" for t in CONSTRAINTS.values()) == 25


@pytest.mark.parametrize("cid", sorted(CASES))
def test_follows_and_breaks(cid):
    kwargs, good, bad = CASES[cid]
    constraint = validate({"id": cid, "kwargs": kwargs})
    assert verdict(constraint, good), f"{cid} should hold on {good!r}"
    assert not verdict(constraint, bad), f"{cid} should fail on {bad!r}"
    assert not verdict(constraint, "   "), "an empty response follows nothing"
    assert describe(constraint).strip()


def test_loose_reading_forgives_a_preamble_and_markdown():
    constraint = validate({"id": "startend:quotation", "kwargs": {}})
    response = "Sure, here it is:\n\"Bees make honey.\""
    assert not verdict(constraint, response) and verdict(constraint, response, loose=True)
    lower = validate({"id": "change_case:english_lowercase", "kwargs": {}})
    response = "**Note**\nbees make honey in the hive and the queen lays the eggs."
    assert not verdict(lower, response) and verdict(lower, response, loose=True)
    assert len(loose_variants("a\nb\nc")) == 8


def test_sentences_use_nltk_punkt_english():
    # abbreviations, initials and decimals do not end a sentence (Punkt's English model)
    constraint = validate({"id": "length_constraints:number_sentences", "kwargs": {"num_sentences": 3,
                                                                                     "relation": "less than"}})
    assert verdict(constraint, "Dr. Smith paid 3.5 dollars at 10 a.m. on Monday. Mr. Jones came too.")


@pytest.mark.parametrize("bad", [
    {"id": "no:such_id", "kwargs": {}},
    {"id": "keywords:existence", "kwargs": {}},
    {"id": "keywords:existence", "kwargs": {"keywords": ["a"], "extra": 1}},
    {"id": "length_constraints:number_words", "kwargs": {"num_words": "ten", "relation": "at least"}},
    {"id": "length_constraints:number_words", "kwargs": {"num_words": 10, "relation": "about"}},
    {"id": "keywords:frequency", "kwargs": {"keyword": "a", "frequency": True, "relation": "at least"}},
    "keywords:existence",
])
def test_validate_refuses_malformed_constraints(bad):
    with pytest.raises(ValueError):
        validate(bad)


def test_validate_drops_none_and_reads_integral_floats():
    c = validate({"id": "length_constraints:number_words",
                  "kwargs": {"num_words": 10.0, "relation": "at least", "keywords": None}})
    assert c == {"id": "length_constraints:number_words", "kwargs": {"num_words": 10, "relation": "at least"}}


def test_component_keys_number_repeated_ids():
    cs = [{"id": "a"}, {"id": "b"}, {"id": "a"}]
    assert component_keys(cs) == ["a#1", "b", "a#2"]


def test_thinking_is_stripped_like_the_reference():
    assert strip_thinking("<think>plan</think>\nAnswer") == "Answer"
    assert strip_thinking("<think>never closed") == ""


def test_malformed_regex_keywords_never_raise():
    c = validate({"id": "keywords:existence", "kwargs": {"keywords": ["(unclosed"]}})
    assert verdict(c, "an (unclosed bracket") and not verdict(c, "nothing here")


def test_the_doc_lists_every_constraint_with_its_arguments_and_rule():
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "instruct.md").read_text()
    rows = {line.split(" | ")[0].strip("| `"): line for line in doc.splitlines() if line.startswith("| `")}
    for cid, ctype in CONSTRAINTS.items():
        row = rows.get(cid)
        assert row is not None, f"{cid} has no row in docs/instruct.md"
        assert ctype.rule.replace("|", "\\|") in row, f"{cid}: the doc's rule is not the code's"
        assert all(f"`{name}`" in row for name in ctype.kwargs), cid
