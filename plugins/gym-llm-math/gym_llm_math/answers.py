"""Answer strings: gold extraction, plain numbers, and multi-valued answers.

Pure Python and fast (no sympy): this is the verifier's fast path and the
normalisation every answer goes through before math-verify sees it, so both
paths judge the same strings.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from gym_llm.envs.parsing import boxed_spans

__all__ = [
    "PlainNumber", "extract_gold", "plain_number", "compare_numbers", "is_multi_valued", "is_single_value",
    "split_values", "format_number", "unmarked_solution", "decimal_matches", "normalise", "unwrap",
    "split_relation", "relation_pieces", "is_relation", "has_relation_sign", "hedges",
]

#: Longer digit strings are left to math-verify (bounded by its timeout):
#: converting them exactly here could take quadratic time.
MAX_DIGITS = 1000

# A plain number: optional currency and sign, an integer (thousands separators
# ``1,000`` / ``1{,}000`` / ``1\,000``), a decimal (also in scientific notation:
# ``1.2e1`` is 12, as models write it, not the product 1.2 * e * 1), or a simple fraction, then
# an optional percent sign and unit (degrees, ``\text{...}``, or words after a
# space: "12 apples", "3.5 km/h").
_NUMBER_RE = re.compile(
    r"""^
    (?:\\\$|\$|€|£|¥)?\s*
    (?P<sign>[-+\u2212])?\s*
    (?:\\\$|\$|€|£|¥)?\s*
    (?:
        (?P<int>\d{1,3}(?:(?:,|\{,\}|\\,)\d{3})+|\d+)(?P<dec>\.\d*)?(?:[eE](?P<exp>[-+]?\d{1,3}))?
      | (?P<dec_only>\.\d+)
      | \\[dt]?frac\s*\{\s*(?P<fn>\d+)\s*\}\s*\{\s*(?P<fd>\d+)\s*\}
      | \\[dt]?frac\s*(?P<fn1>\d)(?P<fd1>\d)
      | (?P<sn>\d+)\s*/\s*(?P<sd>\d+)
    )
    \s*(?P<pct>\\?%|\\text\{\s*\\?%\s*\}|(?<=\s)percent\b)?
    \s*(?:
        \^\s*\{?\s*\\circ\s*\}?(?:\s*[CF])?
      | °\s*[CF]?
      | \\(?:text|textrm|mathrm|mbox)\s*\{[^{}\d]*\}
      | (?<=\s)[A-Za-z]{2,}(?:[\s/.]+[A-Za-z]+)*\.?
    )?
    \s*$""",
    re.VERBOSE,
)

_WRAPPERS = (
    re.compile(r"^\$(?P<x>[^$]*)\$$"),
    re.compile(r"^\\\((?P<x>.*)\\\)$", re.DOTALL),
    re.compile(r"^\\\[(?P<x>.*)\\\]$", re.DOTALL),
    re.compile(r"^\\(?:text|textrm|textbf|mathrm|mathbf|mbox)\s*\{(?P<x>.*)\}$", re.DOTALL),
)
# Both first match ``\\`` (a line break, kept as it is): in ``1 \\ 2`` the second
# backslash and the space are not a control space (a column vector became one sum).
_SPACING_RE = re.compile(r"\\\\|\\[!;: ]|~|\\displaystyle")
# ``11,\! 111,\! 100``: ``\!`` is a negative space that pulls the digit
# group back to the separator, so the comma is a thousands separator.
_JOINED_SEPARATOR_RE = re.compile(r"(,|\{,\})\s*\\!\s*")
# ``28\,\%``: a thin space that does not separate digit groups is only space.
_THIN_SPACE_RE = re.compile(r"\\\\|\\,(?!\s*\d)")
# How an answer looks, never what it says: a colour (``\color{red}``, and the
# colour of ``\textcolor{red}{12}``, whose ``{12}`` stays) and invisible space
# (``\phantom{0}``).
_LOOKS_RE = re.compile(r"\\(?:color\s*(?:\[[^\]]*\])?|textcolor\s*(?:\[[^\]]*\])?)\s*\{[^{}]*\}"
                       r"|\\[hv]?phantom\s*\{(?:[^{}]|\{[^{}]*\})*\}")
# A macro definition: ``\newcommand{\x}{``, ``\renewcommand\x[1]{``, ``\def\x{``.
_DEFINITION_RE = re.compile(r"\\(?:(?:re|provide)?newcommand\*?\s*(?:\{\s*(?P<a>\\[A-Za-z]+)\s*\}|(?P<b>\\[A-Za-z]+))"
                            r"|def\s*(?P<c>\\[A-Za-z]+))\s*(?P<args>\[\d\])?\s*\{")
# A universal quantifier after the value (``5 \text{ for all } n``, ``5 \quad \forall n
# \in \mathbb{N}``, ``n^2 \text{ for every integer } n \geq 1``): it says the value
# holds everywhere, one value, not a case split. Only variables and one bound may
# follow it, and no digit or hedge word may sit in its text, so ``\text{ for all } n
# \text{ or } 7`` keeps its second value.
_UNIVERSAL_TAIL_RE = re.compile(
    r"\s*,?\s*(?:\\(?:text|textrm|mbox)\s*\{\s*for\s+(?:all|every|each|any)"
    r"(?:\s+(?:real|complex|positive|negative|nonnegative|natural|integer|integers|numbers|values))*"
    r"(?:\s+[A-Za-z])?\s*\}|\\forall(?![A-Za-z]))"
    r"\s*(?:[A-Za-z](?:\s*,\s*[A-Za-z])*)?"
    r"(?:\s*(?:\\in\s*\\mathbb\s*\{?\s*[NZQRC]\s*\}?|(?:\\geq?|\\leq?|\\gt|\\lt|[<>]=?)\s*-?\d+))?\s*$")
#: Most characters that expanding an answer's macros may produce.
MAX_EXPANDED_CHARS = 20_000


@dataclass(frozen=True)
class PlainNumber:
    """A number read from an answer string. ``value`` is exact; ``canonical``
    is how it is shown to math-verify (``"1000"``, ``"12.5"``, ``"\\frac{1}{3}"``);
    ``percent`` says it was written with a percent sign."""

    value: Fraction
    canonical: str
    percent: bool = False

    @property
    def places(self) -> int | None:
        """Decimal places of a decimal (trailing zeros dropped), ``None`` for
        an integer or a fraction: the precision a decimal claims."""
        whole, dot, frac = self.canonical.partition(".")
        return len(frac) if dot else None

    def candidates(self) -> list[PlainNumber]:
        """The values this answer may mean: ``25%`` is 25 or 0.25."""
        if not self.percent:
            return [self]
        hundredth = self.value / 100
        return [PlainNumber(self.value, self.canonical), PlainNumber(hundredth, format_number(hundredth))]


def format_number(value: Fraction, max_decimal_denominator: int | None = None) -> str:
    """An exact number as an answer string: ``12``, ``-3.75``, ``\\frac{7}{12}``.

    A terminating decimal (denominator ``2^a 5^b``) is written as a decimal,
    digit for digit, when its denominator is at most ``max_decimal_denominator``
    (``None``: any); every other fraction as ``\\frac``. How a parsed answer
    is shown to math-verify (as written) and, with a bound, how generated
    tasks write their answers (no long decimals)."""
    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    for p in (2, 5):
        while den % p == 0:
            den //= p
    sign = "-" if value < 0 else ""
    if den == 1 and (max_decimal_denominator is None or value.denominator <= max_decimal_denominator):
        whole, rest = divmod(abs(value.numerator), value.denominator)
        digits = 0
        while rest * 10**digits % value.denominator:
            digits += 1
        frac = str(rest * 10**digits // value.denominator).rjust(digits, "0")
        return f"{sign}{whole}.{frac}"
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def normalise(text: str) -> str:
    """An answer as every path sees it (the fast path, the hedge checks,
    math-verify, the form check): macro definitions are expanded
    (:func:`_expand_definitions`), colours and ``\\phantom{}`` dropped, LaTeX
    spacing commands become spaces (a thin space between digit groups,
    ``1\\,000``, stays; a line break ``\\\\`` stays), and math delimiters
    (``$``, ``\\(``, ``\\[``), brace groups and a final full stop around it
    are stripped, and so is a trailing universal quantifier (``5 \\text{ for all }
    n``: one value that holds for every ``n``; see ``_UNIVERSAL_TAIL_RE``).
    ``\\text{}`` is kept: math-verify compares text as text."""
    return _strip(text, _WRAPPERS[:3])


def unwrap(text: str) -> str:
    """:func:`normalise`, and ``\\text{}``-like wrappers stripped too: how a
    plain number is read (``\\text{12}`` is 12)."""
    return _strip(text, _WRAPPERS)


def _expand_definitions(text: str) -> str:
    """``text`` with its macro definitions removed and each argument-less macro
    replaced by its body after its definition (``\\newcommand{\\x}{3} \\x`` is
    `` 3``; bodies are not expanded again). A definition with arguments, an
    unclosed one, or one whose expansion would pass :data:`MAX_EXPANDED_CHARS`
    ends the expansion there: the rest stays as written, unreadable."""
    while "\\" in text and (m := _DEFINITION_RE.search(text)):
        end = _closing_brace(text, m.end())
        if end is None or m.group("args"):
            break
        name, body, rest = m.group("a") or m.group("b") or m.group("c"), text[m.end():end], text[end + 1:]
        use = re.compile(re.escape(name) + r"(?![A-Za-z])")
        if len(text) + len(use.findall(rest)) * len(body) > MAX_EXPANDED_CHARS:
            break
        text = text[:m.start()] + use.sub(lambda _, body=body: body, rest)  # the body as is: no \1 escapes
    return text


def _closing_brace(text: str, start: int) -> int | None:
    """The index of the ``}`` closing the group that starts at ``start``
    (just after its ``{``), or ``None``."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] in "{}" and text[i - 1] == "\\":
            continue
        depth += (text[i] == "{") - (text[i] == "}")
        if depth == 0:
            return i
    return None


def _space(m: re.Match[str]) -> str:
    return m.group() if m.group() == "\\\\" else " "


def _strip(text: str, wrappers: tuple[re.Pattern[str], ...]) -> str:
    if "\\" in text:  # most answers have no command: skip the passes that need one
        text = _LOOKS_RE.sub(" ", _expand_definitions(text))
    text = _JOINED_SEPARATOR_RE.sub(r"\1", text)
    text = _SPACING_RE.sub(_space, _THIN_SPACE_RE.sub(_space, text)).strip()
    changed = True
    while changed:
        text = _ungroup(text.strip().rstrip(".").strip())
        changed = False
        if "for" in text and (value := _UNIVERSAL_TAIL_RE.sub("", text, count=1)) and value != text:
            text, changed = value, True
            continue
        for pattern in wrappers:
            m = pattern.match(text)
            if m and _balanced(m.group("x")):
                text, changed = m.group("x"), True
                break
    return text


def _ungroup(text: str) -> str:
    """``text`` without the brace groups around all of it (``{1, 2, 3}`` is
    ``1, 2, 3``, ``{{12}}`` is ``12``), in one pass however deep."""
    if not text.startswith("{"):
        return text
    opened: list[int] = []
    closes: dict[int, int] = {}  # the "{" at k closes at closes[k]
    for i, c in enumerate(text):
        if c in "{}" and i and text[i - 1] == "\\":
            continue
        if c == "{":
            opened.append(i)
        elif c == "}" and opened:
            closes[opened.pop()] = i
    layers = 0
    while text[layers] == "{" and closes.get(layers) == len(text) - 1 - layers:
        layers += 1
    return text[layers:len(text) - layers].strip() if layers else text


def _balanced(text: str) -> bool:
    depth = 0
    for i, c in enumerate(text):
        if c in "{}" and i and text[i - 1] == "\\":
            continue
        depth += (c == "{") - (c == "}")
        if depth < 0:
            return False
    return depth == 0


def plain_number(text: str) -> PlainNumber | None:
    """Read ``text`` as one plain number, or ``None`` when it is anything else.

    Accepts thousands separators, trailing zeros, leading zeros, currency
    (``\\$``, ``$``, ``€``, ``£``, ``¥``), a sign (also U+2212), a percent sign,
    simple fractions (``3/4``, ``\\frac{3}{4}``) and a trailing unit.
    """
    if not isinstance(text, str) or len(text) > 4 * MAX_DIGITS:
        return None
    if len(text) > 100:  # too long to be worth keeping
        return _plain_number.__wrapped__(text)
    return _plain_number(text)


@functools.lru_cache(maxsize=8192)  # golds repeat (GRPO groups), so do short answers
def _plain_number(text: str) -> PlainNumber | None:
    m = _NUMBER_RE.match(unwrap(text))
    if m is None or _HEDGE_WORD_RE.search(text):  # "5 \\text{ or more}" is no unit
        return None
    g = m.groupdict()
    if g["fn"] or g["fn1"] or g["sn"]:
        num, den = (g["fn"], g["fd"]) if g["fn"] else (g["fn1"], g["fd1"]) if g["fn1"] else (g["sn"], g["sd"])
        if len(num) + len(den) > MAX_DIGITS or int(den) == 0:
            return None
        value = Fraction(int(num), int(den))
    else:
        digits = re.sub(r"\{,\}|\\,|,", "", g["int"] or "0") + (g["dec"] or g["dec_only"] or "")
        if len(digits) > MAX_DIGITS:
            return None
        try:
            value = Fraction(Decimal((digits.rstrip(".") or "0") + (f"e{g['exp']}" if g["exp"] else "")))
        except (InvalidOperation, ValueError):
            return None
    if g["sign"] in ("-", "\u2212"):
        value = -value
    return PlainNumber(value, format_number(value), percent=bool(g["pct"]))


def decimal_matches(decimal: Fraction, places: int, other: Fraction) -> bool:
    """Lenient decimal matching: ``decimal``, written with ``places`` decimal
    places, matches ``other`` when ``other`` rounded to that many places is
    ``decimal`` (within half a unit of its last place, ties included)."""
    return abs(other - decimal) * 2 * 10**places <= 1


def compare_numbers(gold: PlainNumber, pred: PlainNumber, lenient_decimals: bool = False) -> bool:
    """Whether two plain numbers are equal: exactly (``0.5 == 1/2``, but
    ``0.333333 != 1/3``); with ``lenient_decimals`` a decimal on either side
    also matches a value that rounds to it (:func:`decimal_matches`; the
    shorter decimal decides when both are decimals). The math-verify worker
    applies the same rule, so both paths give the same verdict."""
    if gold.value == pred.value:
        return True
    if not lenient_decimals:
        return False
    decimals = [n for n in (gold, pred) if n.places is not None]
    if not decimals:
        return False
    rounded = min(decimals, key=lambda n: n.places or 0)
    other = pred if rounded is gold else gold
    return decimal_matches(rounded.value, rounded.places or 0, other.value)


# "The answer is 5.", "Final answer: $\\frac{3}{4}$": the marked answer of a
# solution with neither ``####`` nor ``\\boxed{}``.
_ANSWER_MARK_RE = re.compile(r"\b(?:final\s+)?answer\s*(?:is|:)\s*:?\s*", re.IGNORECASE)
_MATH_SPAN_RE = re.compile(r"\$\$?(?P<x>[^$]+)\$\$?|\\\((?P<y>.+?)\\\)", re.DOTALL)
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)|\n|,\s+(?:since|because|as|so|which)\b")
_WORD_RE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")


def _marked_answer(solution: str) -> str | None:
    """The answer after the last "answer is" / "answer:" of a solution."""
    marks = list(_ANSWER_MARK_RE.finditer(solution))
    if not marks:
        return None
    rest = solution[marks[-1].end():]
    math = _MATH_SPAN_RE.match(rest)
    if math:
        return (math.group("x") or math.group("y")).strip()
    end = _SENTENCE_END_RE.search(rest)
    answer = (rest[: end.start()] if end else rest).strip()
    return answer or None


def unmarked_solution(gold: str) -> bool:
    """Whether an extracted gold is prose (a whole solution, several
    sentences or many words) rather than an answer: its final answer is not
    marked, and guessing it (math-verify would take the last number) can
    reward a wrong answer."""
    text = _MATH_SPAN_RE.sub(" ", _TEXT_RE.sub(r" \1 ", gold))
    sentences = re.search(r"[.!?:]\s+\S", text) is not None or "\n" in gold.strip()
    return (sentences and len(_WORD_RE.findall(text)) >= 4) or len(_WORD_RE.findall(text)) >= 12


# Between two boxes listed as one answer: braces, ``$``, ``\\boxed``, spacing.
_BETWEEN_BOXES_RE = re.compile(r"\\[A-Za-z]+|\\.|[{}$\s]")


def _listed_together(between: str) -> bool:
    """Whether the text between two boxes lists them as one answer: nothing, or a comma, a semicolon, "and" or "or" with at
    most three words (``\\boxed{1} papers and \\boxed{2} bins``); a
    derivation between them (``\\boxed{10/2} = \\boxed{5}``, several words)
    keeps only the last box."""
    rest = _BETWEEN_BOXES_RE.sub(" ", between)
    words = re.findall(r"[A-Za-z]+", rest)
    if len(words) > 3 or re.sub(r"[A-Za-z,;.\s]", "", rest):
        return False
    return not words or bool(re.search(r"[,;]", rest)) or any(w.lower() in ("and", "or") for w in words)


_JOINING_RE = re.compile(r"[,;]|(?<![A-Za-z])(?:and|or)(?![A-Za-z])", re.IGNORECASE)


def boxed_answers(text: str, *, joined_by_prose: bool = False) -> list[str]:
    """The answers ``text`` gives in ``\\boxed{}``, in order: each box its own
    answer, except that boxes listed together (:func:`_listed_together`:
    ``\\boxed{2} and \\boxed{3}``, ``\\boxed{1}, \\boxed{2}``) are one answer,
    a list of their different contents (``2, 3``). With ``joined_by_prose`` (a
    response, not a reference solution) so are boxes with "and", "or", a comma
    or a semicolon anywhere between them (``x = 2 gives \\boxed{2} and x = 3
    gives \\boxed{3}``): a solution's derivation between two boxes is no part
    of its answer, a response's joining words are. Boxes with anything else
    between them (``\\boxed{35 cm} ++++++ \\boxed{4}``, a derivation) are
    several answers. The one reading of boxes as answers."""
    runs: list[dict[str, str]] = []
    end = 0
    for box, start, stop in boxed_spans(text):
        between = text[end:start]
        if not runs or not (_listed_together(between) or (
                joined_by_prose and _JOINING_RE.search(_BETWEEN_BOXES_RE.sub(" ", between)))):
            runs.append({})
        runs[-1].setdefault(" ".join(box.split()), box)  # one per different content
        end = stop
    return [", ".join(run.values()) for run in runs]


def extract_gold(solution: object) -> str:
    """The gold answer of a reference solution: the text after the last
    ``####`` (GSM8K), else its last ``\\boxed{}`` (MATH) with the boxes listed
    together with it (``\\boxed{2} and \\boxed{3}``, ``\\boxed{1}\\boxed{2}``:
    one list, ``2, 3``, matched as a set; see :func:`_listed_together`), else the answer after the last "answer is" / "answer:" (a
    solution in prose), else the whole (stripped) text. Numbers are returned as strings."""
    if isinstance(solution, bool) or solution is None:
        return ""
    if isinstance(solution, int | float | Fraction | Decimal):
        return str(solution)
    if not isinstance(solution, str):
        return ""
    if "####" in solution:
        return solution.rsplit("####", 1)[1].strip().split("\n", 1)[0].strip()
    answers = boxed_answers(solution)
    if answers:
        return answers[-1]
    marked = _marked_answer(solution)
    if marked is not None:
        return marked
    return solution.strip()


_TEXT_RE = re.compile(r"\\(?:text|textrm|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_SEPARATOR_RE = re.compile(
    r",|;|\\\\|\\q?quad(?![A-Za-z])|\\(?:lor|vee|land|wedge|pm|mp)(?![A-Za-z])"
    r"|(?<![A-Za-z\\])(?:or|and)(?![A-Za-z])|(?<=[\d)\]}])(?:or|and)(?=[A-Za-z])",  # also "W(x)=1orW(x)=-1"
    re.IGNORECASE,
)
_OPEN, _CLOSE_BRACKETS = "({[", ")}]"


#: Separators that join values into one (``1 \\pm \\sqrt{2}``, ``x = 1 \\land
#: y = 2``): the text lists several values, but not as separable pieces.
_JOINING = re.compile(r"\\(?:pm|mp|land|wedge)(?![A-Za-z])")


def _scan(text: str, pattern: re.Pattern[str], anywhere: bool = False) -> list[re.Match[str]]:
    """The matches of ``pattern`` in ``text`` outside any bracket, brace or
    environment (``anywhere``: inside them too). A match starts only where a
    token does, never inside a command or a control symbol: ``\\,`` and
    ``\\;`` are spaces, not a comma and a semicolon."""
    found = []
    depth = 0
    i, n = 0, len(text)
    while i < n:
        if text.startswith("\\begin{", i) or text.startswith("\\end{", i):
            depth += 1 if text[i + 1] == "b" else -1
            close = text.find("}", i)  # skip the environment's name
            i = close + 1 if close >= 0 else n
            continue
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in "{}":
            depth += 1 if text[i + 1] == "{" else -1
            i += 2
            continue
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE_BRACKETS:
            depth -= 1
        elif depth <= 0 or anywhere:
            m = pattern.match(text, i)
            if m:
                found.append(m)
                i = m.end()
                continue
        if c == "\\":  # a command or a control symbol that is no match: skip it whole
            j = i + 1
            while j < n and text[j].isalpha():
                j += 1
            i = max(j, i + 2)
            continue
        i += 1
    return found


def _pieces(text: str, cuts: list[re.Match[str]]) -> list[str]:
    """``text`` cut at the matches ``cuts``, each piece stripped (empty ones kept)."""
    bounds = [0, *(b for m in cuts for b in m.span()), len(text)]
    return [text[bounds[k]:bounds[k + 1]].strip() for k in range(0, len(bounds), 2)]


# Words that make one answer several, or a conditional one: "5 (or 7)",
# "either", "possibly 7", "5 if n is odd", "otherwise 7". Searched at any depth
# (``5 \\text{ (or } 7\\text{)}`` hides its "or" in parentheses), in text or not,
# as whole words (not "for", nor a command such as ``\\ifx``).
_HEDGE_WORD_RE = re.compile(
    r"(?<![A-Za-z\\])(?:or|either|possibly|maybe|perhaps|probably|alternatively|otherwise|else|if|unless"
    r"|when|whenever)(?![A-Za-z])",
    re.IGNORECASE,
)
# A case split, ``\\begin{cases} 5 & n \\text{ odd} \\\\ 7 & ... \\end{cases}``.
_CASES_RE = re.compile(r"\\begin\s*\{\s*[dr]?cases\*?\s*\}")
# Prose holding a number (``5 \\text{ (7)}``): math-verify drops text after a
# value as its unit, so the number in it would not count.
_NUMBER_IN_TEXT_RE = re.compile(r"\\(?:text|textrm|textbf|textit|textsf|mbox)\s*\{[^{}]*\d[^{}]*\}")
# A condition in prose beside the answer, ``5 \\text{ for } n \\text{ odd}``, ``5
# \\text{ for all odd } n``: the value holds in some cases only. A universal
# quantifier alone (``5 \\text{ for all } n``) is gone by then: :func:`normalise`
# drops it.
_CONDITION_IN_TEXT_RE = re.compile(r"\\(?:text|textrm|textbf|textit|textsf|mbox)\s*\{[^{}]*(?<![A-Za-z])for"
                                   r"(?![A-Za-z])[^{}]*\}", re.IGNORECASE)


def hedges(text: str) -> bool:
    """True when ``text`` hedges inside what may parse as one value: a hedge
    word anywhere (``5 \\text{ (or } 7\\text{)}``, ``5 \\text{ possibly } 7``,
    ``5 \\text{ if } n \\text{ odd}``), a case split (``\\begin{cases}``), a
    number in prose beside the answer (``5 \\text{ (7)}``) or a condition there
    (``5 \\text{ for } n \\text{ odd}``; a text answer that is all prose,
    ``\\text{Option 2}``, ``\\text{Vote for B}``, is neither)."""
    if _HEDGE_WORD_RE.search(text) or _CASES_RE.search(text):
        return True
    return any(prose.search(text) is not None and bool(prose.sub("", text).strip())
               for prose in (_NUMBER_IN_TEXT_RE, _CONDITION_IN_TEXT_RE))


def is_multi_valued(text: str) -> bool:
    """True when ``text`` lists several values at its top level: ``5, 7``,
    ``5 \\text{ or } 7``, ``\\pm 5``, ``2; 3``, ``2 \\quad 3``, ``x=1 \\lor x=2``,
    or :func:`hedges`. A plain number with thousands separators is one value,
    and so is a value with a separator but nothing on its other side (``5,``,
    ``2\\sqrt{3}\\quad``); spacing commands (``\\,``, ``\\;``) separate nothing."""
    if plain_number(text) is not None:
        return False
    if hedges(text):
        return True
    body = _TEXT_RE.sub(r" \1 ", text)
    separators = _scan(body, _SEPARATOR_RE)
    if any(_JOINING.fullmatch(m.group()) for m in separators):
        return True
    return sum(1 for piece in _pieces(body, separators) if piece) > 1


_SET_RE = re.compile(r"^(?:\\left)?\\\{(?P<x>.*?)(?:\\right)?\\\}$", re.DOTALL)


def _one_set(inner: str) -> bool:
    """Whether the ``\\{ \\}`` around ``inner`` enclose one set: its escaped
    braces never close the outer one early (``\\{2\\} \\cup \\{3\\}`` is two)."""
    depth = 0
    for m in re.finditer(r"\\[{}]", inner):
        depth += 1 if m.group() == "\\{" else -1
        if depth < 0:
            return False
    return depth == 0


def split_values(text: str) -> list[str]:
    """The values ``text`` lists, as separate strings: ``2, 3``, ``x = 2
    \\text{ or } x = 3`` and the set ``\\{2, 3\\}`` give two; one value (a
    number, a tuple, an interval, ``1 \\pm \\sqrt{2}``) gives ``[text]``."""
    if plain_number(text) is not None:
        return [text]
    body = text.strip()
    inner = _SET_RE.match(body)
    if inner and _balanced(inner.group("x")) and _one_set(inner.group("x")):
        body = inner.group("x")
    body = _TEXT_RE.sub(r" \1 ", body)
    separators = _scan(body, _SEPARATOR_RE)
    if any(_JOINING.fullmatch(m.group()) for m in separators):
        return [text]
    values = [piece for piece in _pieces(body, separators) if piece]
    return values if len(values) > 1 else [text]


def is_single_value(text: str) -> bool:
    """True when a gold answer is one value: no separator anywhere in it (so
    tuples, sets, intervals, matrices and lists are not)."""
    if plain_number(text) is not None:
        return True
    return not _scan(_TEXT_RE.sub(r" \1 ", text), _SEPARATOR_RE, anywhere=True) and "&" not in text


# Relations between values: equality-like signs and implications. ``<=``,
# ``>=``, ``!=`` and ``\neq`` are not: an inequality is one value (an
# interval), and a side of ``\neq`` is not the answer.
_RELATION_RE = re.compile(
    r"(?<![<>!:])=+|:=|\\(?:approx|equiv|simeq|cong|doteq|coloneqq|Rightarrow|Longrightarrow|implies"
    r"|rightarrow|longrightarrow|to|iff|Leftrightarrow|Longleftrightarrow)(?![A-Za-z])"
)
# Commands that are values (``\\cos(0)``, ``\\log 6``, ``\\Gamma(6)``), never a name.
_NOT_A_NAME = (r"(?:frac|dfrac|tfrac|cfrac|sqrt|pi|infty|binom|sin|cos|tan|cot|sec|csc|arcsin|arccos"
               r"|arctan|sinh|cosh|tanh|log|ln|lg|exp|Gamma|zeta|det|max|min|gcd|lcm|mathrm\s*\{[ei]\})"
               r"(?![A-Za-z])")
#: Constants that look like names: e and i are numbers to math-verify.
_CONSTANT_RE = re.compile(r"(?:e|i|\\mathrm\s*\{[ei]\}|\\text\s*\{\s*[A-Za-z]*\d[^{}]*\})")
# What names a value on the left of ``=``: a variable (``x``, ``x_1``,
# ``\theta``), a quantity (``AB``, ``\angle ABC``, ``\overline{AB}``,
# ``\text{Area}``), a function's value (``f(2)``, ``f^{-1}(3)``, ``P(A)``) or a
# tuple of variables (``(x, y)``, ``(a_1, b_1)``).
_NAME_RE = re.compile(
    r"(?:m\s*)?(?:\\angle\s*)?"
    r"(?:\(\s*(?:[A-Za-z]|\\[A-Za-z]+)(?:_\w)?(?:\s*,\s*(?:[A-Za-z]|\\[A-Za-z]+)(?:_\w)?)+\s*\)"
    r"|\\(?:text|textrm|mathrm|mathit|operatorname|mbox)\s*\{[A-Za-z ]+\}"
    r"|\\(?:overline|overrightarrow|vec|hat|bar)\s*\{[A-Za-z]+\}"
    r"|(?:[A-Za-z]|\\(?!" + _NOT_A_NAME + r")[A-Za-z]+\s*)+)"
    r"(?:_(?:\{[^{}]*\}|\w))?'*(?:\^\{-1\})?(?:\s*\([^()]*\))?"
)


def relation_pieces(text: str) -> list[tuple[str, str]]:
    """``text`` cut at its top-level value separators, as ``(piece,
    separator after it)`` pairs (the last separator is ``""``):
    ``x = 1, y = 2`` gives ``[("x = 1", ","), ("y = 2", "")]``."""
    separators = _scan(text, _SEPARATOR_RE)
    return list(zip(_pieces(text, separators), [m.group() for m in separators] + [""], strict=True))


def split_relation(text: str) -> tuple[list[str], list[str]]:
    """``(names, values)``: the sides of the top-level relation chain of
    ``text`` (``=``, ``\\approx``, ``\\Rightarrow``, ...), its leading names
    (``x`` in ``x = 5``, see ``_NAME_RE``) apart from the values. Every side
    after the first value is a value (``7`` and ``5`` in ``x = 7
    \\Rightarrow x = 5``, ``x`` included); when every side is a name the
    last one is the value. No relation: ``([], [text])``."""
    sides = [side for side in _pieces(text, _scan(text, _RELATION_RE)) if side]
    if len(sides) < 2:
        return [], [text]
    k = 0
    while k < len(sides) - 1 and _NAME_RE.fullmatch(sides[k]) and not _CONSTANT_RE.fullmatch(sides[k]):
        k += 1
    return sides[:k], sides[k:]


def has_relation_sign(text: str) -> bool:
    """Whether ``text`` has a relation sign anywhere (a cheap test before
    :func:`relation_pieces`)."""
    return _RELATION_RE.search(text) is not None


def is_relation(text: str) -> bool:
    """Whether ``text`` is a relation at its top level (``y = 2x + 3``)."""
    return bool(_scan(text, _RELATION_RE))
