"""The reasoning domain's scoring: reasoning-gym's verifiers, hardened.

A response earns 1.0 or 0.0. It must hold exactly one closed
``<answer>...</answer>`` block (read by the core's one parser,
:func:`gym_llm.envs.parsing.extract_tagged`); the block's content is the
answer. It is then checked, in order:

1. **Size**: at most :func:`answer_limit` characters (some verifiers parse
   with sympy or simulate every character).
2. **Format** (:data:`ANSWER_FORMATS`): for families whose verifier picks what
   it wants out of any text (the first number, every ``A``-``C`` letter, every
   ``0``/``1``), the whole answer must be in the asked form.
   **Expressions** (:data:`EXPRESSIONS`): for families whose verifier hands the
   answer to sympy's ``parse_expr`` (which runs Python's ``eval``), the answer
   must be arithmetic: numbers of at most 12 digits, the family's operators,
   parentheses and its names (:func:`is_expression`). Any other text would run
   as code in the trainer's process, and a power tower (``9**9**9**9``) would
   never finish, so an exponent is a name or a number of at most 3 digits.
   What is left, sympy's time, is bounded: these families are scored in a
   worker process with a deadline (:mod:`.verifier`).
3. **Candidate lists** (:func:`lists_candidates`): an answer that holds the
   reference as one item of a longer list (``qqqq, 5, zzzz``, ``5 or 6``) is a
   hedge.
4. **Correctness**: our own check where reasoning-gym's is wrong
   (:data:`OWN_VERIFIERS`), else reasoning-gym's ``score_answer``, and only
   its full score counts: its partial credit (``len(gold) / len(answer)`` for
   any answer that contains the gold, 0.01 for a number, 0.3 + for some of
   the people right) is 0 here.

A verifier that raises on an answer (reasoning-gym's ``int()`` of any text)
scores that answer 0 with the reason; it is no environment failure.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from collections.abc import Callable
from typing import Any

from gym_llm import RewardResult
from gym_llm.envs.parsing import extract_tagged

from .verifier import VerifierTimeout

__all__ = [
    "ANSWER_FORMATS", "EXPRESSIONS", "OWN_VERIFIERS", "REFERENCES", "reference_answer", "score_entry",
    "lists_candidates", "is_expression", "answer_limit", "MAX_ANSWER_CHARS",
]

#: The longest answer read when the family has no reference to size it by.
MAX_ANSWER_CHARS = 20_000

_NUMBER = r"-?\d+(?:\.\d+)?"
_BIT_ROW = r"[ \t]*[01](?:[ \t]+[01])*[ \t]*"

#: family -> the form its whole answer must take (``re.fullmatch``), where
#: reasoning-gym's verifier reads only the parts it wants out of any text.
ANSWER_FORMATS: dict[str, re.Pattern[str]] = {
    # first number anywhere in the answer ("5 or 7" scored as 5)
    "gsm_symbolic": re.compile(_NUMBER),
    # every 0/1 character of each line, anything else dropped
    "kakurasu": re.compile(rf"{_BIT_ROW}(?:\n{_BIT_ROW})*"),
    # every A, B, C letter anywhere (any English sentence holds a sequence)
    "quantum_lock": re.compile(r"[ABC](?:\s*(?:→|->|,)?\s*[ABC])*"),
    # numbers picked out of any text
    "polynomial_equations": re.compile(rf"{_NUMBER}(?:\s*,\s*{_NUMBER})*"),
    # Python's truthiness: see OWN_VERIFIERS
    "game_of_life_halting": re.compile(r"(?i)true|false"),
}

_ARITHMETIC = frozenset("+-*/()")
_CALCULUS_NAMES = frozenset({"C", "E", "pi", "sin", "cos", "tan", "exp", "log", "sqrt", "asin", "acos", "atan",
                             "sinh", "cosh", "tanh"})

#: family -> (operators, names) an answer may use, where reasoning-gym's verifier
#: evaluates it with sympy's ``parse_expr`` (:func:`is_expression`); the integration
#: families add the task's variable (``metadata["variable"]``).
EXPRESSIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "puzzle24": (_ARITHMETIC, frozenset()),
    "countdown": (_ARITHMETIC, frozenset()),
    "simple_integration": (_ARITHMETIC | {"**"}, _CALCULUS_NAMES),
    "intermediate_integration": (_ARITHMETIC | {"**"}, _CALCULUS_NAMES),
}

_MAX_DIGITS, _MAX_EXPONENT_DIGITS = 12, 3
_LAYOUT = {tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT}


def is_expression(text: str, operators: frozenset[str], names: frozenset[str]) -> bool:
    """Whether ``text`` is only numbers (at most 12 digits), ``operators``,
    parentheses and ``names``, with every ``**`` raising to a name or to a
    number of at most 3 digits (``x**-2``, ``x**(3/2)`` too): Python tokens, so
    no string, attribute, call of an unlisted name or keyword gets through."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in _LAYOUT]
    except (tokenize.TokenError, SyntaxError):
        return False
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.NUMBER:
            if sum(c.isdigit() for c in tok.string) > _MAX_DIGITS or not tok.string.replace(".", "").isdigit():
                return False
        elif tok.type == tokenize.NAME:
            if tok.string not in names:
                return False
        elif tok.type != tokenize.OP or tok.string not in operators or (
                tok.string == "**" and not _small_exponent(tokens[i + 1:i + 8])):
            return False
    return bool(tokens)


#: What may follow ``**``, over the token shapes of :func:`_small_exponent`
#: (``n`` a number of at most 3 digits, ``a`` a name or such a number).
_EXPONENT = re.compile(r"-?[an]|\(-?n/n\)|\(-?n\)")


def _small_exponent(after: list[tokenize.TokenInfo]) -> bool:
    """What follows ``**`` is ``[-]atom``, ``([-]number/number)`` or ``([-]number)``
    (an atom is a name or a number, numbers of at most 3 digits), and no
    further ``**`` raises it (``9**9**9`` is ``9**(9**9)``)."""
    shape = "".join("n" if t.type == tokenize.NUMBER and len(t.string) <= _MAX_EXPONENT_DIGITS
                    and t.string.isdigit() else "a" if t.type == tokenize.NAME else t.string for t in after)
    m = _EXPONENT.match(shape)
    return m is not None and not shape[m.end():].startswith("**")


_KK_FILLER = {"is", "a", "an", "and"}


def _knights_knaves(answer: str, entry: dict[str, Any]) -> float:
    """reasoning-gym skips every word that is no role and pairs the last
    word before a role with it, so junk and contradicting claims pass. Here:
    only names of the puzzle, roles and ``is a/an``/``and``; every name once;
    the same assignment as the reference."""
    from reasoning_gym.logic.knights_knaves import VALID_ROLES, KnightsKnavesDataset

    def words(text: str) -> list[str]:
        return re.sub(r"[.,()]", " ", text.lower()).split()

    oracle = KnightsKnavesDataset._normalize_answer(entry["answer"])
    names = {name for name, _ in oracle}
    said = [w for w in words(answer) if w not in _KK_FILLER]
    if any(w not in names and w not in VALID_ROLES for w in said):
        return 0.0
    claimed = [w for w in said if w in names]
    if len(claimed) != len(set(claimed)):
        return 0.0
    return float(KnightsKnavesDataset._normalize_answer(answer) == oracle)


def _game_of_life_halting(answer: str, entry: dict[str, Any]) -> float:
    """reasoning-gym compares ``bool(answer) == bool(entry["answer"])``: both
    are non-empty strings, so every answer, ``"False"`` or not, was right."""
    return float(answer.strip().lower() == str(entry["answer"]).strip().lower())


def _exact(answer: str, entry: dict[str, Any]) -> float:
    return float(answer.strip() == str(entry["answer"]).strip())


def _n_queens(answer: str, entry: dict[str, Any]) -> float:
    return float(answer in entry["metadata"]["valid_answers"])


#: family -> our verifier ``(answer, entry) -> 0.0 | 1.0`` where reasoning-gym's
#: accepts wrong answers, or where it ``eval``s the answer as Python (string_insertion,
#: spiral_matrix, binary_matrix, n_queens: a path that pays only partial credit,
#: which is no reward here, so ours is reasoning-gym's exact comparison alone)
#: (docs/reasoning.md, "Fixes").
OWN_VERIFIERS: dict[str, Callable[[str, dict[str, Any]], float]] = {
    "knights_knaves": _knights_knaves,
    "game_of_life_halting": _game_of_life_halting,
    "string_insertion": _exact,
    "spiral_matrix": _exact,
    "binary_matrix": _exact,
    "n_queens": _n_queens,
}

#: family -> the reference answer built from the entry's metadata, for families
#: whose ``answer`` is ``None`` (several valid answers) but which carry one.
REFERENCES: dict[str, Callable[[dict[str, Any]], str]] = {
    "graph_color": lambda e: json.dumps({str(k): v for k, v in e["metadata"]["possible_answer"].items()}),
    "propositional_logic": lambda e: e["metadata"]["example_answer"],
    "rubiks_cube": lambda e: e["metadata"]["example_correct_answer"].strip(),
}

_SEPARATORS = re.compile(r"\s*(?:[,;|\n]|\bor\b)\s*")


def reference_answer(family: str, entry: dict[str, Any]) -> str | None:
    """The answer a task of ``family`` shows as ``task.answer``: reasoning-gym's,
    else one from :data:`REFERENCES`, else ``None`` (checked, not compared)."""
    if entry.get("answer") is not None:
        return str(entry["answer"])
    make = REFERENCES.get(family)
    return make(entry) if make else None


def _items(text: str) -> list[str]:
    return [p for p in (" ".join(s.split()) for s in _SEPARATORS.split(text.strip().lower())) if p]


def lists_candidates(answer: str, reference: str | None) -> bool:
    """Whether ``answer`` holds the reference's items as a run inside a longer
    list (items split at ``,`` ``;`` ``|`` newlines and ``or``): the reference
    plus other candidates."""
    if not reference:
        return False
    ref, got = _items(reference), _items(answer)
    if not ref or len(got) <= len(ref):
        return False
    return any(got[i:i + len(ref)] == ref for i in range(len(got) - len(ref) + 1))


def answer_limit(reference: str | None) -> int:
    """The longest answer read: four times the reference plus 1,024 characters,
    or :data:`MAX_ANSWER_CHARS` without a reference."""
    return MAX_ANSWER_CHARS if reference is None else 4 * len(reference) + 1024


def _zero(reason: str, fmt: float, **info: Any) -> RewardResult:
    return RewardResult(0.0, {"format": fmt, "correct": 0.0}, {"reason": reason, **info})


def score_entry(family: str, entry: dict[str, Any], verifier: Callable[[str, dict[str, Any]], float],
                response: str) -> RewardResult:
    """Score ``response`` to reasoning-gym's ``entry`` of ``family``;
    ``verifier`` is the dataset's ``score_answer``. See the module doc.
    ``info["hedge"]`` names a hedge (several answer blocks, a candidate list)."""
    blocks = extract_tagged(response, "answer")
    if not blocks:
        return _zero("no <answer>...</answer> block", 0.0)
    if len(blocks) > 1:
        return _zero(f"{len(blocks)} answer blocks where one is asked", 1.0, hedge="several answer blocks")
    answer = blocks[0]
    reference = reference_answer(family, entry)
    if not answer:
        return _zero("empty answer", 1.0)
    if len(answer) > answer_limit(reference):
        return _zero(f"answer of {len(answer)} characters, over the {answer_limit(reference)} read", 1.0)
    form = ANSWER_FORMATS.get(family)
    if form is not None and form.fullmatch(answer.strip()) is None:
        return _zero(f"answer not in the asked form ({form.pattern})", 1.0)
    if family in EXPRESSIONS:
        operators, names = EXPRESSIONS[family]
        variable = entry.get("metadata", {}).get("variable")
        if not is_expression(answer, operators, names | {variable} if isinstance(variable, str) else names):
            return _zero("answer is not an arithmetic expression of the asked form (numbers, "
                         f"{' '.join(sorted(operators))}, names of the task)", 1.0)
    if lists_candidates(answer, reference):
        return _zero("the answer lists candidates", 1.0, hedge="candidate list")
    check = OWN_VERIFIERS.get(family, verifier)
    try:
        raw = float(check(answer, entry))
    except VerifierTimeout as e:
        return _zero(f"no verdict: {e}", 1.0)
    except Exception as e:  # reasoning-gym's verifiers raise on some text (int("x"))
        return _zero(f"wrong answer (the verifier raised {type(e).__name__} on it)", 1.0)
    if raw >= 1.0:
        return RewardResult(1.0, {"format": 1.0, "correct": 1.0}, {})
    return _zero("wrong answer" if raw <= 0 else f"wrong answer (reasoning-gym's partial credit {raw:.3g} not paid)",
                 1.0, verifier_score=raw)
