"""Helpers for the bundled tasks' random input generators.

Runs inside the sandbox next to the generators (``from genlib import *``);
stdlib only. Every helper draws from the ``random.Random`` it is given, so a
generator's inputs are a pure function of its seed.
"""

import random
import string

__all__ = ["LOWER", "UPPER", "DIGITS", "word", "words", "sentence", "ints", "floats", "random"]

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits


def word(rng, lo=1, hi=8, alphabet=LOWER):
    """A string of ``lo``..``hi`` characters drawn from ``alphabet``."""
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def words(rng, n, lo=1, hi=8, alphabet=LOWER):
    """``n`` words."""
    return [word(rng, lo, hi, alphabet) for _ in range(n)]


def sentence(rng, lo=0, hi=8):
    """``lo``..``hi`` lower-case words joined by single spaces."""
    return " ".join(words(rng, rng.randint(lo, hi)))


def ints(rng, n, lo=-100, hi=100):
    """``n`` integers in ``[lo, hi]``."""
    return [rng.randint(lo, hi) for _ in range(n)]


def floats(rng, n, lo=-100.0, hi=100.0, digits=2):
    """``n`` floats in ``[lo, hi]`` rounded to ``digits`` decimals."""
    return [round(rng.uniform(lo, hi), digits) for _ in range(n)]
