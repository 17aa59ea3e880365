"""What a regular expression's every match must hold: a pre-filter that skips a pattern on a text that
cannot match it, for the qualifier patterns of ``rules/qualifiers.yaml``.

:func:`required_literals` reads the pattern's syntax tree (the standard library's own parser,
``re._parser``) and returns sets of lower-case ASCII strings such that any text the pattern matches holds,
lower-cased, a string of each set; :func:`may_match` is that test. It holds for ASCII texts only: under
``IGNORECASE`` some non-ASCII letters match ASCII ones (the Kelvin sign matches "k", the long s "s"), so
a text with other characters is always tried.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

Anchors = tuple[frozenset[str], ...]
"""Sets of lower-case ASCII strings: a text that may match holds a string of each."""

_CLASS_MAX = 10
"""A character class of at most this many ASCII characters (a digit, ``[:=]``) is a set of one-character
strings; a larger one (a letter) says too little to be worth the test."""


def required_literals(pattern: re.Pattern[str]) -> Anchors | None:
    """Sets of lower-case ASCII strings, a string of each of which every text ``pattern`` matches holds
    (compared with the text lower-cased); the most selective first (longest shortest string, then
    fewest strings). None when no such set can be named (a pattern that may match without a fixed
    character, or syntax this reader does not follow)."""
    try:
        parser = importlib.import_module("re._parser")
        constants = importlib.import_module("re._constants")
        tree = parser.parse(pattern.pattern, pattern.flags)
        sets = _sequence(list(tree), constants)
    except Exception:  # a pre-filter that cannot read a pattern (the parser is private) is none: try it
        return None
    if not sets:
        return None
    return tuple(sorted(set(sets), key=lambda s: (-min(len(w) for w in s), len(s), sorted(s))))


def may_match(anchors: Anchors | None, lower_ascii: str | None) -> bool:
    """Whether a pattern with these :func:`required_literals` can match the text ``lower_ascii`` (the text
    lower-cased, or None for a text that is not ASCII, which may always match)."""
    if anchors is None or lower_ascii is None:
        return True
    for strings in anchors:
        for s in strings:
            if s in lower_ascii:
                break
        else:
            return False
    return True


def _best(sets: list[frozenset[str]]) -> frozenset[str] | None:
    if not sets:
        return None
    return max(sets, key=lambda s: (min(len(w) for w in s), -len(s)))


def _sequence(items: list[tuple[Any, Any]], c: Any) -> list[frozenset[str]]:
    """The sets a match of a sequence of parsed items needs: each maximal run of literal characters,
    each small character class, what each group or repeat (at least once) within it needs, and for an
    alternation the union of one set of each branch."""
    out: list[frozenset[str]] = []
    run: list[str] = []

    def close() -> None:
        if run:
            out.append(frozenset(["".join(run)]))
            run.clear()

    for op, av in items:
        if op is c.LITERAL and av < 128:
            run.append(chr(av).lower())
            continue
        close()
        if op is c.SUBPATTERN:
            out.extend(_sequence(list(av[3]), c))
        elif op is c.ATOMIC_GROUP:
            out.extend(_sequence(list(av), c))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and av[0] >= 1:
            out.extend(_sequence(list(av[2]), c))
        elif op is c.BRANCH:
            union: set[str] | None = set()
            for branch in av[1]:
                got = _best(_sequence(list(branch), c))
                if got is None:
                    union = None
                    break
                assert union is not None
                union |= got
            if union:
                out.append(frozenset(union))
        elif op is c.IN:
            chars = _class(av, c)
            if chars:
                out.append(chars)
    close()
    return out


def _class(members: list[tuple[Any, Any]], c: Any) -> frozenset[str] | None:
    """The characters of a character class, lower-cased, when it is small, ASCII and not negated."""
    chars: set[str] = set()
    for op, av in members:
        if op is c.LITERAL and av < 128:
            chars.add(chr(av).lower())
        elif op is c.RANGE and av[1] < 128 and av[1] - av[0] < _CLASS_MAX:
            chars.update(chr(i).lower() for i in range(av[0], av[1] + 1))
        elif op is c.CATEGORY and av is c.CATEGORY_DIGIT:
            chars.update("0123456789")
        else:
            return None
    return frozenset(chars) if len(chars) <= _CLASS_MAX else None
