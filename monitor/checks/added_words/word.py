"""One unsupported query word as every grading step reads it (:class:`Word`), and its rarity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from monitor.checks.added_words import tuned
from monitor.checks.nlp import Analysis, Tok, Transcript
from monitor.checks.rules import QualifierMatch, Rules
from monitor.lexicon import zipf


@dataclass(frozen=True, slots=True)
class Word:
    """What every grading step reads about one unsupported query word: the token, its index in the
    query's analysis ``q``, the text of its unit, the transcript, the rules, the query's qualifier
    matches, why it is meta text (or None) and whether it is written as a name."""

    tok: Tok
    index: int
    unit_text: str
    q: Analysis
    tr: Transcript
    rules: Rules
    quals: list[QualifierMatch]
    meta: str | None

    @property
    def capitalised(self) -> bool:
        """Capitalised mid-sentence, or an all-capitals word of two or more letters (an acronym)."""
        t = self.tok
        return t.mid_cap or (t.text.isupper() and len(t.text) >= 2 and t.text.isalpha())

    @property
    def zipf(self) -> float:
        """The word's rarity: the commoner of its surface and lemma (inflected forms, "visits", are rarer
        than their lemma without being more specific), and a transparent compound of two common words
        ("birthplace") as common as its rarer part."""
        z = max(zipf(self.tok.lower), zipf(self.tok.key))
        if z < tuned.RARE_ZIPF and (parts := _compound_parts(self.tok.lower)) is not None:
            z = min(zipf(parts[0]), zipf(parts[1]))
        return z


Grade = dict[str, Any]
"""What a step says of a word: ``severity``, ``why`` and any evidence of its own (``related``, ...)."""


# Both parts of a transparent compound must be at least this common (zipf; ~30 per million words).
COMPOUND_PART_ZIPF = 4.5


def _compound_parts(word: str) -> tuple[str, str] | None:
    """Split ``word`` (8+ letters) into two common words of 4+ letters each, else None."""
    if len(word) < 8 or not word.isalpha():
        return None
    for i in range(4, len(word) - 3):
        a, b = word[:i], word[i:]
        if zipf(a) >= COMPOUND_PART_ZIPF and zipf(b) >= COMPOUND_PART_ZIPF:
            return a, b
    return None
