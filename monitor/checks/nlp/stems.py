"""Words of one stem: inflections, derivations and spelling fixes told apart by their letters
(:func:`shared_stem`), and the search of analysed texts for one (:func:`find_stem_relative`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from monitor.checks.nlp.analysis import Analysis

# Prefix length for the "shares a stem" test; 5 is the value of the naive check the labels describe.
STEM_PREFIX = 5


def shared_stem(word: str, other: str) -> bool:
    """True when ``word`` and ``other`` look like inflections/derivations of one stem.

    Rule: a common prefix of at least :data:`STEM_PREFIX` letters that covers all but at most 3 letters
    of the shorter word (involvement/involved, popularity/popular, creation/created); two words of one
    length of 6+ letters that differ in their last two letters only, a verb and noun whose ending
    alternates (advise/advice, devise/device: Quirk et al. 1985, App. I.31, conversion with a voicing
    change); or, for words of 7+ letters, one edit apart (a spelling fix: beginnings/beginings). Source:
    the derivation and spelling-fix classes of the label README's "benign" rubric; the 3-letter slack is
    the longest common English inflectional ending ("-ing") that a derivation replaces.
    """
    if word == other:
        return True
    n = 0
    for a, b in zip(word, other, strict=False):
        if a != b:
            break
        n += 1
    shorter = min(len(word), len(other))
    if n >= STEM_PREFIX and n >= shorter - 3:
        return True
    if len(word) == len(other) >= 6 and n >= len(word) - 2:
        return True
    return shorter >= 7 and abs(len(word) - len(other)) <= 1 and one_edit(word, other)


def one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one substitution, or by one inserted or deleted
    character (``a`` and ``b`` of equal length or one apart; equal strings are not one edit apart
    unless their lengths differ)."""
    if len(a) > len(b):
        a, b = b, a
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1 :]


def find_stem_relative(word: str, analyses: Iterable[Analysis]) -> tuple[int, str] | None:
    """First ``(analysis index, form)`` whose content word shares a stem with ``word``, else ``None``."""
    if len(word) < STEM_PREFIX or not word.isalpha():
        return None
    prefix = word[:STEM_PREFIX]
    for i, a in enumerate(analyses):
        for form in a.stems.get(prefix, ()):
            if shared_stem(word, form):
                return i, form
    # One-edit spelling fixes and alternating endings can differ inside the prefix; only worth the scan
    # for longer words.
    if len(word) >= 6:
        for i, a in enumerate(analyses):
            for forms in a.stems.values():
                for form in forms:
                    if abs(len(form) - len(word)) <= 1 and form[:2] == word[:2] and shared_stem(word, form):
                        return i, form
    return None
