"""Numbers written in words, digits, fractions and version spellings, read as values.

A rewrite that writes a number the transcript wrote otherwise ("7 ½" for "7.5", "twenty" for "20",
"v2" for "version 2", "3 million" for "3,000,000") adds no number: :func:`number_spans` reads each
number of a text as its value, so ``added_content_word`` can tell a restated number from a new one.
English number words are spaCy stop words, so without this an added "three" or "second" is never seen
at all.

Sources: the cardinal and ordinal numerals and their compounds (Quirk et al., *A Comprehensive Grammar
of the English Language*, 1985, 6.63-6.66: "twenty-five", "two hundred and ten", "3 million"); Unicode's
vulgar fraction characters (U+00BC-U+00BE, U+2150-U+215E); the version spellings of the qualifier rules
(rules/qualifiers.yaml ``version``: "v2", "2.x"). Not fitted to any data file.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache
from typing import NamedTuple

CARDINALS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "dozen": 12,
}
ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "twentieth": 20,
    "hundredth": 100,
}
SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 10**9, "trillion": 10**12}
FRACTIONS = {
    "\u00bd": 0.5,
    "\u00bc": 0.25,
    "\u00be": 0.75,
    "\u2153": 1 / 3,
    "\u2154": 2 / 3,
    "\u215b": 0.125,
    "\u215c": 0.375,
    "\u215d": 0.625,
    "\u215e": 0.875,
}
NUMBER_WORDS = frozenset(CARDINALS) | frozenset(ORDINALS) | frozenset(SCALES)
"""Every word :func:`number_spans` reads as (part of) a number."""

QUERY_NUMBER_WORDS = NUMBER_WORDS - {"one", "first", "zero"}
"""The number words a query can add: not "one" (mostly a pronoun, "which one") nor "first" (mostly an
ordering of the answer, "the first time", "first of all"), nor "zero"."""

_FRACTION_CHARS = "".join(FRACTIONS)
_DIGITS_RE = re.compile(
    r"(?<![\w/])(?P<n2>\d+)/(?P<d2>\d+)(?![/\d])"  # a fraction, not a date: "3/4", not "3/4/2020"
    r"|(?<![\w.])(?:v(?:er(?:sion)?)?\.?\s?)?"  # a version spelling: "v2", "ver. 3"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<dec>\d+))?(?:\.x\b)?"
    rf"(?:\s?(?P<frac>[{_FRACTION_CHARS}])|\s(?P<num>\d+)/(?P<den>\d+)(?![/\d]))?"
    r"(?:st|nd|rd|th|s)?"
    rf"|(?P<alone>[{_FRACTION_CHARS}])",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[A-Za-z]+")


class NumberSpan(NamedTuple):
    """A number in a text: character span ``[start, end)`` and its ``value``."""

    start: int
    end: int
    value: float


def _digits(m: re.Match[str]) -> float | None:
    if m["alone"]:
        return FRACTIONS[m["alone"]]
    if m["n2"]:
        den = int(m["d2"])
        return int(m["n2"]) / den if den else None
    value = float(m["int"].replace(",", "") + ("." + m["dec"] if m["dec"] else ""))
    if m["frac"]:
        value += FRACTIONS[m["frac"]]
    elif m["num"]:
        den = int(m["den"])
        value += int(m["num"]) / den if den else 0
    return value


def _word_spans(text: str) -> list[NumberSpan]:
    """Runs of number words ("twenty-five", "two hundred and ten", "third") as values. Two words join
    when only a space or hyphen lies between them and the second can follow the first: a unit after a
    ten ("twenty-five"), a scale ("two hundred", "hundred thousand"), anything below 100 after a scale
    ("hundred and ten"); "two three" is two numbers."""
    out: list[NumberSpan] = []
    words = [(m.start(), m.end(), m[0].lower()) for m in _WORD_RE.finditer(text)]
    i = 0
    while i < len(words):
        start, end, w = words[i]
        if w in ORDINALS:
            out.append(NumberSpan(start, end, float(ORDINALS[w])))
            i += 1
            continue
        if w not in CARDINALS:
            i += 1
            continue
        total, current, after_scale = 0, CARDINALS[w], False
        j = i + 1
        while j < len(words):
            if text[words[j - 1][1] : words[j][0]].strip() not in ("", "-"):
                break
            nxt = words[j][2]
            if nxt == "and" and after_scale and j + 1 < len(words) and words[j + 1][2] in CARDINALS:
                j += 1
                continue
            tens = current % 100
            if nxt == "hundred" and 0 < current < 100:
                current *= 100
                after_scale = True
            elif nxt in SCALES and nxt != "hundred" and current:
                total, current, after_scale = total + current * SCALES[nxt], 0, True
            elif (nxt in CARDINALS and nxt != "dozen") or nxt in ORDINALS:
                v = CARDINALS.get(nxt, ORDINALS.get(nxt, 0))
                if not (
                    (after_scale and tens == 0 and v < 100) or (20 <= tens and tens % 10 == 0 and v < 10)
                ):
                    break
                current += v
                if nxt in ORDINALS:
                    end = words[j][1]
                    j += 1
                    break
            else:
                break
            end = words[j][1]
            j += 1
        out.append(NumberSpan(start, end, float(total + current)))
        i = j
    return out


_SCALE_AFTER_RE = re.compile(r"\s+(hundred|thousand|million|billion|trillion)\b", re.IGNORECASE)


@lru_cache(maxsize=65536)
def _spans(text: str) -> tuple[NumberSpan, ...]:
    out: list[NumberSpan] = []
    for m in _DIGITS_RE.finditer(text):
        value = _digits(m)
        if value is None:
            continue
        end = m.end()
        scale = _SCALE_AFTER_RE.match(text, end)
        if scale:
            value *= SCALES[scale[1].lower()]
            end = scale.end()
        out.append(NumberSpan(m.start(), end, value))
    # the digit spans are in text order and do not overlap: one bisect finds the one a word span might
    # overlap (word spans go after them in ``out``, so ``out[k - 1]`` is still a digit span)
    starts = [s.start for s in out]
    for w in _word_spans(text):
        k = bisect.bisect_left(starts, w.end)
        if k and out[k - 1].end > w.start:
            continue  # overlaps the digit span that starts before the word span ends
        out.append(w)
    return tuple(sorted(out))


def number_spans(text: str) -> list[NumberSpan]:
    """Every number of ``text`` with its value, in text order: digits ("1,250", "7.5", "2nd", "1990s",
    "v2", "2.x"), a digit with a fraction ("7 ½", "7 1/2"), a fraction alone ("½", "3/4"), a digit before
    a scale word ("3 million"), and runs of number words ("twenty-five", "two hundred and ten", "third").
    A date written with slashes ("3/4/2020") is no fraction. Linear in the text's length but for the sort;
    memoised per text."""
    return list(_spans(text))


def _key(value: float) -> float:
    return round(value, 6)


@lru_cache(maxsize=65536)
def number_values(text: str) -> frozenset[float]:
    """The values of every number of ``text`` (:func:`number_spans`), rounded to 6 decimals; memoised
    per text (a conversation's messages are read by every later request)."""
    return frozenset(_key(s.value) for s in number_spans(text))


def value_at(text: str, start: int, end: int) -> float | None:
    """The value of the number of ``text`` that the span ``[start, end)`` lies in, else None (one bisect
    over the memoised spans of ``text``)."""
    spans = _spans(text)
    # the spans do not overlap: only the last one starting at or before ``start`` can hold the span
    k = bisect.bisect_right(spans, (start, float("inf"), float("inf")))
    if k and end <= spans[k - 1].end:
        return _key(spans[k - 1].value)
    return None
