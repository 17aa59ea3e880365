"""Sentence splitting that does not break on abbreviations, initials or dotted acronyms.

A full stop ends a sentence only when the word before it is not an abbreviation (:data:`ABBREVIATIONS`;
"No." only before a number), not an initial (a capital letter after a capitalised word or before another
initial: "Joseph P. Kennedy", "E. E. Cummings", but not "vitamin C. Which"), not a dotted acronym
("E.T.A.", "U.S.") and not inside a number ("3.5"), and the next word starts a sentence (a capital, a
digit or a quote) or the text ends. A lower-case next word never starts one ("e.g. the"), so "... a lot.
which fruits" stays one sentence. ``?`` and ``!`` end one, except in a quotation the sentence goes on
after (a closing quote or bracket, then a lower-case word: 'the quote "A horse!" in Richard III');
closing quotes and brackets after an end belong to its sentence. Pure regular expressions: no model,
deterministic.

Source of the abbreviation list: the courtesy titles, name suffixes and Latin abbreviations of *The
Chicago Manual of Style* (17th ed., §10.4–10.19) that are written with a full stop in running English
text. It was chosen from the style guide, not from any data file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "gen",
        "col",
        "lt",
        "sgt",
        "capt",
        "rev",
        "hon",
        "gov",
        "sen",
        "rep",
        "pres",
        "vs",
        "etc",
        "al",
        "cf",
        "ca",
        "ft",
        "ave",
        "maj",
        "esq",
        "approx",
        "nos",
        "vol",
        "fig",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "univ",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    }
)
"""Words written with a full stop that does not end the sentence (lower case, without the stop)."""

_END_RE = re.compile(r"[.!?]+[\"'”’)\]]*")
"""A sentence end with the closing quotes and brackets after it, which belong to the sentence."""
_WORD_BEFORE_RE = re.compile(r"([\w.'’-]*)$")
_STARTS_SENTENCE_RE = re.compile(r"\s+[\"'“‘(\[]?[A-Z0-9]")
_INITIAL_NEXT_RE = re.compile(r"\s+[A-Z]\.")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence: its text (stripped) and its character span ``[start, end)`` in the source text."""

    text: str
    start: int
    end: int


def _is_boundary(text: str, match: re.Match[str]) -> bool:
    rest = text[match.end() :]
    if "?" in match.group() or "!" in match.group():
        # a quoted question or exclamation inside a sentence: 'the quote "A horse!" in Richard III'
        return not (match.group()[-1] in "\"'”’)]" and re.match(r"\s+[a-z]", rest))
    if rest.strip() == "":
        return True
    if not _STARTS_SENTENCE_RE.match(rest):
        return False  # "3.5", "e.g. the", a stop followed by a lower-case word
    head = text[: match.start()]
    before = _WORD_BEFORE_RE.search(head)
    word = before.group(1) if before else ""
    bare = word.strip("'’").lower()
    if bare in ABBREVIATIONS:
        return False
    if bare == "no" and re.match(r"\s+\d", rest):
        return False  # "No. 5"
    if (
        len(word) == 1
        and word.isupper()
        and (_after_a_name(head[: -len(word)]) or _INITIAL_NEXT_RE.match(rest))
    ):
        return False  # an initial: "Joseph P. Kennedy", "E. E. Cummings" (but "vitamin C. Which" ends one)
    parts = [p for p in word.split(".") if p]
    if "." in word and len(parts) > 1 and all(len(p) <= 2 and p.isalpha() for p in parts):
        return False  # a dotted acronym such as "E.T.A" or "U.S" (not a decimal such as "3.11")
    return True


def _after_a_name(head: str) -> bool:
    """Whether the word before an initial is capitalised (a first name or another initial)."""
    m = _WORD_BEFORE_RE.search(head.rstrip())
    prev = m.group(1) if m else ""
    return bool(prev) and prev[0].isupper()


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` in order (empty ones dropped); text with no boundary is one sentence.

    >>> [s.text for s in split_sentences("Joseph P. Kennedy Sr. was born in 1888. Where did he study?")]
    ['Joseph P. Kennedy Sr. was born in 1888.', 'Where did he study?']
    """
    out: list[Sentence] = []
    start = 0
    for m in _END_RE.finditer(text):
        if _is_boundary(text, m):
            _add(out, text, start, m.end())
            start = m.end()
    _add(out, text, start, len(text))
    return out


def _add(out: list[Sentence], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        lead = len(piece) - len(piece.lstrip())
        out.append(Sentence(stripped, start + lead, start + lead + len(stripped)))


BARE_VERB_AUXILIARIES = frozenset("do does did can could will would shall should may might must".split())
"""Modal and do-support auxiliaries: after them the clause's verb comes bare (Quirk et al. 1985, ch. 3)."""
AUXILIARIES = BARE_VERB_AUXILIARIES | frozenset("am are is was were be been being have has had".split())
"""Those and the forms of "be" and "have" (Quirk et al. 1985, 3.21-3.23): before its subject an
auxiliary makes a question ("can I", "are we"); before a word it makes that word a verb ("does it
offer", "we are talking")."""

_CUT_RE = re.compile(r"[.?!\n]")


def sentence_around(text: str, start: int, end: int) -> str:
    """The stretch of ``text`` around ``[start, end)`` up to the nearest ``.``, ``?``, ``!`` or line
    break on each side: a coarser cut than :func:`split_sentences` (an abbreviation's stop cuts it too),
    for asking what the words near a match say ("I'm vegetarian", "two regions: ..."), where a cut too
    early only narrows what is read."""
    left = max((m.end() for m in _CUT_RE.finditer(text, 0, start)), default=0)
    right = next((m.start() for m in _CUT_RE.finditer(text, end)), len(text))
    return text[left:right]
