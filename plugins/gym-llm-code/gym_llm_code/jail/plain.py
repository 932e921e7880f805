"""Plain values: the only form in which results leave the sandbox.

A program's return value is reduced to JSON made of builtin types only
(``encode``) inside the sandbox; the host rebuilds builtin Python values from
that JSON (``decode``) and compares them with :func:`plain_equal`. So an
object with a rigged ``__eq__`` never reaches a comparison: what is compared
is whatever data it was reduced to, by code that runs on the host.

This module is shared: the host imports it, and its source is copied into the
sandbox next to the runner. Stdlib only, no imports of the package.
"""

import collections
import math

__all__ = ["encode", "decode", "plain_equal", "Unsupported", "MAX_DEPTH"]

#: Deeper nesting is reduced to an unsupported marker (and never decoded).
MAX_DEPTH = 64

_TAGS = ("$tuple", "$set", "$frozenset", "$dict", "$float", "$bytes", "$unsupported", "$ref")


class Unsupported:
    """A value that had no plain form (an object of some class); it equals nothing."""

    __slots__ = ("type_name",)

    def __init__(self, type_name):
        self.type_name = str(type_name)[:80]

    def __eq__(self, other):
        return False

    def __hash__(self):
        return hash(("Unsupported", self.type_name))

    def __repr__(self):
        return f"<{self.type_name} object>"


def _float(x):
    if math.isnan(x):
        return {"$float": "nan"}
    if math.isinf(x):
        return {"$float": "inf" if x > 0 else "-inf"}
    return x


def _key(j):
    # A total order on encoded values, so sets encode canonically.
    return repr(j)


def encode(x, depth=0, other=None):
    """Reduce ``x`` to JSON-able builtin data.

    Exact builtin types (and subclasses of them, read through the builtin
    type's own methods so overrides do not run) become JSON; tuples, sets,
    dicts, non-finite floats and bytes get a ``$tag`` wrapper; anything else
    becomes ``other(x)`` when ``other`` is given and returns data (the
    checker's handles, ``{"$ref": id}``), else ``{"$unsupported": type name}``.
    """
    if depth > MAX_DEPTH:
        return {"$unsupported": "nesting too deep"}
    t = type(x)
    if x is None or t is bool or t is str:
        return x
    if t is int:
        return x
    if t is float:
        return _float(x)
    if isinstance(x, int):
        return int.__int__(x)
    if isinstance(x, float):
        return _float(float.__float__(x))
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, list):
        return [encode(v, depth + 1, other) for v in list.__iter__(x)]
    if isinstance(x, tuple):
        return {"$tuple": [encode(v, depth + 1, other) for v in tuple.__iter__(x)]}
    if isinstance(x, frozenset):
        return {"$frozenset": sorted((encode(v, depth + 1, other) for v in frozenset.__iter__(x)), key=_key)}
    if isinstance(x, set):
        return {"$set": sorted((encode(v, depth + 1, other) for v in set.__iter__(x)), key=_key)}
    if isinstance(x, dict):
        # in insertion order, which Python code may observe (sets have none)
        return {"$dict": [[encode(k, depth + 1, other), encode(v, depth + 1, other)] for k, v in dict.items(x)]}
    if isinstance(x, bytes | bytearray):
        return {"$bytes": bytes(x).hex()}
    replaced = other(x) if other is not None else None
    return replaced if replaced is not None else {"$unsupported": t.__name__}


#: Members of a set (or keys of a dict) that may share one hash.
_MAX_SHARED_HASH = 32


def _distinct_hashes(members):
    """``members``, unless more than :data:`_MAX_SHARED_HASH` share a hash: values
    crafted to collide (``k * (2**61 - 1)`` all hash to 0) make building a set
    quadratic in the largest such group (15 s for 40,000, and again for 12,000 hidden
    among 12,000 distinct ones), and the host builds what a jailed program sent after
    its jail has ended. Real values collide by chance, a few at a time; ``encode``
    never repeats a member."""
    counts = collections.Counter(hash(m) for m in members)
    if counts and max(counts.values()) > _MAX_SHARED_HASH:
        raise TypeError("members crafted to share one hash")
    return members


def decode(j, depth=0, ref=None):
    """Rebuild builtin Python values from :func:`encode`'s JSON.

    Never runs code from the data; raises ``ValueError`` on malformed input
    (an unhashable set member or dict key, an unknown tag, too deep nesting).
    ``{"$ref": r}`` becomes ``ref(r)`` where ``ref`` is given (and is
    malformed elsewhere).
    """
    if depth > MAX_DEPTH + 1:  # encode puts its marker one level below the cap
        raise ValueError("nesting too deep")
    if j is None or isinstance(j, bool | int | str):
        return j
    if isinstance(j, float):
        return j
    if isinstance(j, list):
        return [decode(v, depth + 1, ref) for v in j]
    if isinstance(j, dict) and len(j) == 1:
        (tag, body), = j.items()
        try:
            if tag == "$tuple" and isinstance(body, list):
                return tuple(decode(v, depth + 1, ref) for v in body)
            if tag == "$set" and isinstance(body, list):
                return set(_distinct_hashes([decode(v, depth + 1, ref) for v in body]))
            if tag == "$frozenset" and isinstance(body, list):
                return frozenset(_distinct_hashes([decode(v, depth + 1, ref) for v in body]))
            if tag == "$dict" and isinstance(body, list):
                pairs = [(decode(k, depth + 1, ref), decode(v, depth + 1, ref)) for k, v in body]
                _distinct_hashes([k for k, _ in pairs])
                return dict(pairs)
        except TypeError as e:  # unhashable member or key, wrong pair shape
            raise ValueError(f"malformed {tag}: {e}") from None
        if tag == "$float" and body in ("nan", "inf", "-inf"):
            return float(body)
        if tag == "$bytes" and isinstance(body, str):
            return bytes.fromhex(body)
        if tag == "$unsupported":
            return Unsupported(body)
        if tag == "$ref" and ref is not None and type(body) in (int, str):
            return ref(body)
    raise ValueError(f"not a plain value: {str(j)[:80]}")


def plain_equal(expected, got, rel_tol=1e-6, abs_tol=1e-9):
    """Python ``==`` on plain values, stricter where ``==`` would let a wrong
    answer through: a float tolerance applies only where ``expected`` is a
    float (an integer must be matched exactly: ``10**18`` never equals
    ``1e18 + 999``; an int-valued float equal to it still does, as ``1 ==
    1.0``); ``bool`` matches only ``bool``; NaN equals NaN and infinities
    only themselves; containers compare element by element under the same
    rules. Both sides must come from :func:`decode` (or be builtin literals):
    no user-defined ``__eq__`` runs."""
    te, tg = type(expected), type(got)
    if te is bool or tg is bool:
        return te is tg and expected == got
    if te is float:
        if tg not in (int, float):
            return False
        if math.isnan(expected) or (tg is float and math.isnan(got)):
            return tg is float and math.isnan(expected) and math.isnan(got)
        if math.isinf(expected) or (tg is float and math.isinf(got)):
            return expected == got
        try:
            return math.isclose(expected, got, rel_tol=rel_tol, abs_tol=abs_tol)
        except OverflowError:  # an int too large for a float is near no float
            return False
    if tg is float:  # an exact expected value: Python's exact int/float comparison
        return te is int and expected == got
    if te in (list, tuple) or tg in (list, tuple):
        return te is tg and len(expected) == len(got) and all(
            plain_equal(a, b, rel_tol, abs_tol) for a, b in zip(expected, got, strict=True)
        )
    if te is dict or tg is dict:
        if te is not tg or len(expected) != len(got):
            return False
        keys = {k: k for k in got}  # got's own key for each of expected's
        return all(k in keys and plain_equal(k, keys[k], rel_tol, abs_tol)
                   and plain_equal(v, got[k], rel_tol, abs_tol) for k, v in expected.items())
    if te in (set, frozenset) or tg in (set, frozenset):
        # ``==`` finds members by hash and ``==``: {0, 1} == {False, True}. Each
        # expected member must meet its equal in ``got`` under these rules too.
        if te is not tg or len(expected) != len(got):
            return False
        members = {m: m for m in got}
        return all(m in members and plain_equal(m, members[m], rel_tol, abs_tol) for m in expected)
    if te is Unsupported or tg is Unsupported:
        return False
    return expected == got
