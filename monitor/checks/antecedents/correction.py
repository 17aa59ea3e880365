"""``ignored_correction`` (issue 14): the user corrected what they meant ("no, I meant ...") and the
query does not carry the correction.
"""

from __future__ import annotations

import re

from monitor.checks.antecedents.swapped_name import TITLES, same_name, short_form
from monitor.checks.base import Finding, SkipCheck, analyzer
from monitor.checks.names import (
    mentions,
    names,
)
from monitor.checks.nlp import find_stem_relative, synonym_in
from monitor.checks.references import PRONOUN_RE
from monitor.checks.registry import register
from monitor.checks.rules import Rules
from monitor.checks.sentences import split_sentences
from monitor.checks.steps import Step
from monitor.record import RewriteRecord

# -- a correction the query does not carry (issue 14) -----------------------------------------------
CORRECTION_VERSION = 1
CORRECTION_STEPS = (
    Step(
        "correction_lost",
        "medium",
        "Schegloff, Jefferson and Sacks 1977 (self-repair)",
        "the latest message corrects what the user meant and the query does not carry the correction",
    ),
)
REPAIR_RE = re.compile(
    r"\bI\s+(?:actually\s+|really\s+)?meant\s+(?:to\s+(?:ask|say|talk|write)\s+(?:about\s+)?)?"
    r"|\bwhat\s+I\s+(?:meant|mean)\s+(?:was|is)\s+"
    r"|\b(?:no|nope|sorry|oops|oh)\b[\s,.!]*I\s+(?:mean\s+|was\s+(?:asking|talking)\s+about\s+)",
    re.IGNORECASE,
)
"""A repair of the user's own earlier turn: "No, I meant drinking alcohol.", "My bad, I meant the
island.", "What I meant was ...", "No, I mean the island.", "Sorry, I was asking about ...". The
third-position repair of Schegloff ("Repair after next turn", *American Journal of Sociology* 97(5),
1992): the user sees from the answer that an earlier turn was understood as being about something else,
and says what it was about. Not the filler "I mean, ...", nor "I meant to thank you" (an intention).
Not fitted to any data file."""
_REJECTED_RE = re.compile(
    r",?\s+(?:not|rather\s+than|instead\s+of)\b(?P<other>.*)$|,?\s+(?:rather|instead)\s*$", re.I
)
"""The half of a correction the user rejects ("..., not the programming language"), as ``other``; or a
closing "rather" / "instead", which rejects nothing named."""
MOVES_ON_RE = re.compile(r"^\W*(?:but|anyway|also|besides)\b", re.IGNORECASE)
_DESCRIPTION_RE = re.compile(r"^(?:the|a|an|this|that|these|those|my|your|his|her|its|our|their)\b", re.I)
_DEICTIC_RE = re.compile(
    r"\b(?:last|next|previous|this|that)\s+\w+|\b(?:today|yesterday|tomorrow|tonight)\b", re.I
)
CORRECTION_SHOWN = 60
"""The characters of a correction the reason quotes; the evidence keeps it whole."""


def _repair(latest: str) -> tuple[str, int, str, str] | None:
    """The last repair of ``latest``: (what the user says they meant, its offset, the half the user
    rejects with "not" / "rather than" / "instead of", the text after its sentence); a closing "rather"
    left out; None without one."""
    found = None
    for sent in split_sentences(latest):
        for m in REPAIR_RE.finditer(sent.text):
            rest = sent.text[m.end() :]
            rejected = _REJECTED_RE.search(rest)
            meant = (rest[: rejected.start()] if rejected else rest).strip().rstrip(".!?;,")
            if meant and not re.match(r"to\b", meant, re.I):  # "I meant to thank you": an intention
                other = (rejected.group("other") or "") if rejected else ""
                found = (meant, sent.start + m.end(), other.strip().rstrip(".!?;,"), latest[sent.end :])
    return found


def _written_as(name: str, other: str) -> bool:
    """Whether every word of ``name`` but a title (:data:`TITLES`) is a word of ``other``, a short form
    of its words (:func:`short_form`) or a spelling of one (:func:`same_name`): "St" as "Saint Louis",
    "President Obama" as "Barack Obama"; not "Michelle Obama" as "Barack Obama"."""
    theirs = other.split()
    low = {w.lower() for w in theirs}
    return all(
        w.lower() in low or short_form(w, theirs) or any(same_name(w, o) for o in theirs)
        for w in name.split()
        if w.lower().rstrip(".") not in TITLES
    )


def _carries(meant: str, query: str) -> bool | None:
    """Whether ``query`` carries the correction ``meant``: a name in it mentioned (:func:`mentions`), or
    for a bare phrase one of its content words, an inflection or a WordNet synonym; None when that cannot
    be told from the words: an acronym, a number, a description or a deictic the query may resolve ("NYC",
    "3.12", "the second one", "the actor", "last year")."""
    named = [n.text for n in names(meant)]
    if named:
        if any(len(n) > 1 and n.isupper() for n in named):
            return None
        return any(mentions(n, query) or any(_written_as(n, m.text) for m in names(query)) for n in named)
    if _DESCRIPTION_RE.match(meant) or _DEICTIC_RE.search(meant) or PRONOUN_RE.search(meant):
        return None
    if re.search(r"\d|\b[A-Z]{2,}\b", meant):
        return None
    an = analyzer()
    mine, theirs = an.analyze(meant), an.analyze(query)
    keys = set(mine.content_keys)
    if not keys:
        return None
    return bool(
        keys & set(theirs.content_keys)
        or any(find_stem_relative(k, [theirs]) for k in keys)
        or any(synonym_in([t.key, t.lower], [theirs]) for t in mine.tokens if t.is_content)
    )


@register(
    "ignored_correction",
    family="antecedents",
    version=CORRECTION_VERSION,
    kinds=("wrong_antecedent",),
    steps=CORRECTION_STEPS,
    summary="the user corrected what they meant and the query does not carry the correction",
)
def check_ignored_correction(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``wrong_antecedent`` (medium) when the latest message corrects what the user meant
    (:data:`REPAIR_RE`, the last repair of the message) and the query does not carry the correction:
    "No, I meant drinking alcohol. What are some rehab treatment options to consider?" made "What are
    some rehab treatment options to consider after stopping smoking?". After a repair the corrected
    referent is what the rest of the turn is about, so a query without it resolved the question to the
    referent the user just rejected.

    What counts as carried: for a correction that names something ("No, I meant the Model 3."), the
    query mentions that name; for a bare phrase ("drinking alcohol"), the query holds one of its content
    words, an inflection or a WordNet synonym (:func:`_carries`); a name written otherwise counts
    (:func:`_written_as`: "St. Louis" as "Saint Louis"). Not judged: a correction that is
    itself a description or a reference the query may resolve ("the second one", "the actor", "last
    year", "NYC", a number), unless the user rejected the other half ("the island, not the programming
    language") and the query keeps that half and nothing of the correction; and a turn that goes on
    with "but" / "anyway" / "also" / "besides" after the correction ("No, I meant the funny car. But I
    heard it has a ludicrous mode."): the rest asks about something else. A correction the query keeps
    as it stands is ``unresolved_reference``'s (v4): it holds the words.

    Measured on a fresh store of the shared logs: it fires on 1 of 3,385 rewrites, labelled
    ``wrong_antecedent`` (``cast_audit_labels.jsonl``); 14 latest messages there hold a correction, and
    the other queries keep its words. Too few to say more than that.

    Evidence: ``expected`` (the corrected referent, which a verdict's assertions start from),
    ``correction`` {text, start, end} (in the latest message), ``words`` (empty: the query lost
    words, it added none). Skips when the latest message corrects nothing.
    """
    got = _repair(record.latest)
    if got is None:
        raise SkipCheck("the latest message corrects nothing")
    meant, start, rejected, after = got
    if MOVES_ON_RE.match(after):
        return []
    carried = _carries(meant, record.query)
    if carried is None and rejected:
        # A description ("the island, not the programming language"): a query that keeps every content
        # word of the half the user rejected and none of the other took the rejected referent.
        an = analyzer()
        query_keys = set(an.analyze(record.query).content_keys)
        gone = set(an.analyze(rejected).content_keys)
        if gone and gone <= query_keys and not query_keys & set(an.analyze(meant).content_keys):
            carried = False
    if carried is None or carried:
        return []
    shown = meant if len(meant) <= CORRECTION_SHOWN else meant[: CORRECTION_SHOWN - 1] + "…"
    return [
        Finding(
            kind="wrong_antecedent",
            severity="medium",
            evidence={
                "expected": meant,
                "correction": {"text": meant, "start": start, "end": start + len(meant)},
                "words": [],
            },
            reason=(
                f"the user corrected themselves: they meant '{shown}', which the query does not say: check "
                "the antecedent"
            ),
            check_id="ignored_correction",
            check_version=CORRECTION_VERSION,
            step="correction_lost",
        )
    ]
