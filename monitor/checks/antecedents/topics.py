"""What a conversation has said its topic is, read by ``topic_shift`` and ``antecedent_recency``: the
frames that set a topic ("What about X?", "Tell me about X"), the phrase they name, and the last turn
that mentions a name.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from monitor.checks.base import analyzer
from monitor.checks.names import (
    distinctive,
    mentions,
)
from monitor.lexicon import noun_classes


def last_mention(name: str, texts: list[str]) -> int | None:
    """Index of the last of ``texts`` that mentions ``name`` (:func:`monitor.checks.names.mentions`), or
    its last word written as a name there when that word is distinctive ("Butterfield" for "Paul
    Butterfield"; not "Empire" for "Byzantine Empire"). Three letters at least, as :func:`_names` asks
    of a last word."""
    words = name.split()
    short = words[-1] if len(words) > 1 and len(words[-1]) >= 3 and distinctive(words[-1], texts) else None
    for i in range(len(texts) - 1, -1, -1):
        if mentions(name, texts[i]):
            return i
        if short and re.search(rf"(?<![\w-]){re.escape(short)}(?![\w-])", texts[i]):
            return i
    return None


ABOUT_RE = re.compile(
    r"\b(?:what|how)\s+about\b|\btell\s+me\s+(?:more\s+)?about\b|\b(?:talk|ask)\s+about\b", re.IGNORECASE
)
"""The frames that name what a turn is about: "What about X?", "How about X?", "Tell me (more) about X",
"Let's talk about X". They are the aboutness test of Reinhart ("Pragmatics and linguistics: an analysis
of sentence topics", *Philosophica* 27, 1981): X is the topic the user sets, so it is a candidate for a
later "it" even when it is a common noun ("a food truck")."""
_NP_END_RE = re.compile(
    r"[?.!;,:()]|\s(?:that|which|who|in|on|of|for|with|to|from|at|by|than|and|or|vs\.?|versus|instead)\s",
    re.IGNORECASE,
)
_NP_LEAD_RE = re.compile(
    r"^(?:\s*\b(?:for|in|on|with|at|the|a|an|some|any|my|your|our|their)\b)+", re.IGNORECASE
)
"""What may open the phrase after a frame and is not part of the topic ("for a", "the", "some")."""


def about_topic(turn: str, earlier: list[str]) -> str | None:
    """The topic a turn sets with an :data:`ABOUT_RE` frame when it is new to the conversation: the
    run of nouns that ends the noun phrase after the frame ("food truck" of "What about for a
    pimped-out food truck?"), when its last noun (the head of an English noun phrase) is in none of
    ``earlier`` (discourse-new, Prince, "Toward a taxonomy of given-new information", 1981); None
    otherwise. A given head ("Tell me more about the exercises") continues a topic, it sets none."""
    framed = framed_phrase(turn)
    if framed is None:
        return None
    topic, forms = framed
    an = analyzer()
    return None if given_in(forms, (an.analyze(t).vocab for t in earlier)) else topic


def given_in(forms: frozenset[str], vocabs: Iterable[frozenset[str]]) -> bool:
    """Whether a form of a topic's head is in one of ``vocabs`` (the analyses' vocabularies, keys and
    surfaces built once per text and shared with the other checks): a set look-up per earlier message,
    where a search through every message's text made a request of a long conversation 1.5 times as
    slow."""
    return any(not forms.isdisjoint(v) for v in vocabs)


@functools.lru_cache(maxsize=8192)
def framed_phrase(turn: str) -> tuple[str, frozenset[str]] | None:
    """The run of nouns ending the noun phrase after an :data:`ABOUT_RE` frame in ``turn``, and the
    forms of its head (lower-cased, and its lemma); None without one. Memoised: every later request of a
    conversation reads its user turns again."""
    m = ABOUT_RE.search(turn)
    if m is None:
        return None
    rest = _NP_LEAD_RE.sub("", turn[m.end() :]).strip()
    end = _NP_END_RE.search(f" {rest} ")
    if end is not None and end.group(0).strip().lower() == "of":
        return None  # "the series of manifestos": which of the two the user means is not clear
    phrase = rest[: max(0, end.start() - 1)] if end else rest
    run: list[str] = []
    for t in analyzer().analyze(phrase).tokens:
        if t.is_punct:
            continue
        if t.is_content and not t.has_digit and noun_classes(t.lower, t.key) and not t.is_stop:
            run.append(t.text)
        else:
            run = []
    if not run:
        return None
    head = run[-1]
    return " ".join(run), frozenset({head.lower(), analyzer().lemma(head, head.lower()).lower()})
