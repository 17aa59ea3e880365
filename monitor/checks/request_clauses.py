"""Which clauses of the latest message ask (:func:`request_spans`) and which half of a correction the
user rejects (:func:`rejected_spans`): what ``intent_dropped`` (:mod:`monitor.checks.intent`) counts as
what the user asks for.
"""

from __future__ import annotations

import re

from monitor.checks.reference_patterns import QUESTION_START_RE
from monitor.checks.sentences import ABBREVIATIONS, split_sentences

INTERJECTIONS = frozenset(
    {
        "oh",
        "wow",
        "ok",
        "okay",
        "thanks",
        "thank",
        "great",
        "cool",
        "nice",
        "sounds",
        "interesting",
        "sure",
        "hmm",
        "ah",
        "awesome",
        "perfect",
        "yeah",
        "alright",
        "gotcha",
        "hi",
        "hello",
        "oops",
    }
)
"""First words that mark a reaction or greeting, not a request. Source: the interjections and response
forms of English conversation in Biber et al., *Longman Grammar of Spoken and Written English* (1999),
§14.3 ("inserts"); not taken from any data file. "No" and "yes" are left out: they open corrections
("No, I meant drinking alcohol."), which carry the intent."""


# A stop before a lower-case word ends a clause of chat text ("wow, that sounds great. maybe tell me
# more"): users often do not capitalise. The general splitter keeps such text together (it cannot tell
# "e.g. the" from "great. maybe"); here a stop ends a clause after a plain word that is no abbreviation.
_CLAUSE_STOP_RE = re.compile(r"(?<=[A-Za-z])[.!]+(?=\s+[a-z])")
LEADING_WORDS = frozenset({"and", "but", "so", "then", "also", "now", "well", "please", "maybe", "perhaps"})
"""Words that may open a request clause before its question word or imperative ("so what about",
"maybe tell me", "please list"): coordinators and discourse markers (Quirk et al. 1985, 8.137 and
13.5), the politeness marker "please" and the hedges of :data:`monitor.checks.intent.FRAME_RE`. Not
taken from any data file."""
ASK_FRAME_RE = re.compile(
    r"^\s*i\s*(?:want|would\s+like|'d\s+like|’d\s+like|need|wish)\s+to\s+(?:know|learn|understand|find\s+out)\b"
    r"|^\s*i\s*(?:am|'m|’m|was)\s+(?:just\s+)?(?:wondering|curious)\b",
    re.IGNORECASE,
)
"""A statement that is a request ("I want to know how...", "I was wondering which..."): the
query-preparatory and want statements of Blum-Kulka, House and Kasper (1989). Not fitted to data."""
CONSTRAINING_STATEMENT_RE = re.compile(
    r"^\s*(?:no|not|actually|rather)\b|\bi\s+(?:meant|mean)\b"
    r"|^\s*(?:i\s*(?:am|'m|’m)|we\s*(?:are|'re|’re)|my\s+\w+\s+(?:is|are|was|were))\b",
    re.IGNORECASE,
)
"""A statement beside a question that still says what is asked: a correction ("No, I meant drinking
alcohol.": Schegloff, Jefferson and Sacks, "The preference for self-correction in the organization of
repair in conversation", *Language* 53, 1977) or the user describing themselves ("I'm a woman over 50.",
"my budget is..."): what the answer must fit. Not fitted to data."""


def _clauses(text: str) -> list[tuple[int, int]]:
    """``text``'s sentences (:func:`split_sentences`), each cut again at a stop before a lower-case word
    when the word before the stop is no abbreviation: spans ``[start, end)``, stripped."""
    out: list[tuple[int, int]] = []
    for s in split_sentences(text):
        start = s.start
        for m in _CLAUSE_STOP_RE.finditer(text, s.start, s.end):
            word = re.search(r"([A-Za-z]+)$", text[start : m.start()])
            if word is None or word.group(1).lower() in ABBREVIATIONS or len(word.group(1)) == 1:
                continue
            out.append((start, m.end()))
            start = m.end()
        out.append((start, s.end))
    spans = []
    for a, b in out:
        chunk = text[a:b]
        lead = len(chunk) - len(chunk.lstrip())
        if chunk.strip():
            spans.append((a + lead, a + lead + len(chunk.strip())))
    return spans


def asks(clause: str) -> bool:
    """Whether ``clause`` is a question or a request: it has a ``?``, opens (after leading
    interjections, coordinators and hedges: :data:`INTERJECTIONS`, :data:`LEADING_WORDS`) with a
    question word, an inverted auxiliary or an imperative (``QUESTION_START_RE``), or is a want
    statement (:data:`ASK_FRAME_RE`)."""
    if "?" in clause:
        return True
    words = clause.split()
    i = 0
    while i < len(words) and words[i].strip(",.!;:").lower() in INTERJECTIONS | LEADING_WORDS:
        i += 1
    rest = " ".join(words[i:])
    return bool(QUESTION_START_RE.search(rest) or ASK_FRAME_RE.search(rest))


def request_spans(latest: str) -> list[tuple[int, int]]:
    """Character spans of the request clauses of ``latest`` (:func:`_clauses`).

    When any clause asks (:func:`asks`), the request is those clauses and the statements that correct
    it or describe the user (:data:`CONSTRAINING_STATEMENT_RE`): another statement beside a question
    ("I just check my credit score via credit karma.", "It sounds like the Tesla is very competitive.")
    is an aside, context for the rewriter rather than what is asked (Searle's distinction of the
    illocutionary act from the propositional content it carries, *Speech Acts*, 1969). Otherwise every
    clause that is not a reaction: a reaction is exclamatory, at most three words, or starts with one of
    :data:`INTERJECTIONS`. When every clause is a reaction the whole message is returned (a follow-up
    such as "ok, the second one!" still asks).
    """
    clauses = _clauses(latest)
    asking = [(a, b) for a, b in clauses if asks(latest[a:b])]
    if asking:
        # A question opened by an interjection beside another question is a reaction ("Oh, IP addresses
        # are considered PII? What is the full range of personal data?"): an echo of the answer
        # (Biber et al. 1999, 14.3.2), not what is asked.
        plain = [(a, b) for a, b in asking if _first_word(latest[a:b]) not in INTERJECTIONS]
        echoes = set(asking) - set(plain) if plain else set()
        return [
            (a, b)
            for a, b in clauses
            if ((a, b) in asking and (a, b) not in echoes) or CONSTRAINING_STATEMENT_RE.search(latest[a:b])
        ]
    keep = []
    for a, b in clauses:
        text = latest[a:b]
        if not (text.endswith("!") or len(text.split()) <= 3 or _first_word(text) in INTERJECTIONS):
            keep.append((a, b))
    return keep or [(0, len(latest))]


def _first_word(text: str) -> str:
    words = text.split()
    return words[0].strip(",.!?").lower() if words else ""


REJECTED_RE = re.compile(
    r"^\W*(?:no|nope|actually)\b[\s,.!]*not\s+(?P<rejected>[^.;!?]+)|\bnot\s+(?P<rejected2>[^.;,!?]+?),?\s+but\b",
    re.IGNORECASE,
)
"""The half of a correction the user rejects: "No, not information about its acquisition." or "not the
island but the language": the repaired item that the repair replaces (Schegloff, Jefferson and Sacks
1977), so its words are no intent. Not fitted to data."""


def rejected_spans(latest: str) -> list[tuple[int, int]]:
    """Character spans of the rejected halves of corrections in ``latest`` (:data:`REJECTED_RE`)."""
    out = []
    for m in REJECTED_RE.finditer(latest):
        group = "rejected" if m.group("rejected") is not None else "rejected2"
        out.append(m.span(group))
    return out
