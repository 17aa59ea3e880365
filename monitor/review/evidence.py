"""What a verdict form starts from: the assertion terms the findings suggest, per label (issue 16, part 1).

One model for the dashboard's Item page and the terminal ``review``: both show and store what this
module returns, so the same findings prefill the same terms on either screen. Pure: it reads findings
as plain objects (``kind``, ``severity``, ``evidence``), imports only the standard library and the
verdict vocabulary.

The prefill follows the label, because the label says what the eval set must test:

========================= ==========================================================================
label                     prefill (``must_include`` / ``must_not_include``)
========================= ==========================================================================
``ok``, ``false_alarm_*`` nothing: the rewrite was fine, and a flagged word kept as an assertion would
                          turn a false alarm into a case that fails every correct rewrite
``fabricated_constraint`` must not: the added words, conflicting values and replaced terms; must:
                          the live value a conflict replaced, the user's compound a term replaced
``dropped_constraint``,   must: the dropped live qualifier values and the lost intent words
``over_carried``
``wrong_antecedent``      must: the item a list reference points at, the name the user wrote, the
                          referent the user corrected to; must not: the item or name the query put
                          in its place
other labels              nothing (chat state, retrieval, generation, an unresolved reference and a
                          non-query are judged by the reviewer's own terms)
========================= ==========================================================================

Only findings at medium or above count (what put the item in the queue). A corrected query is stored
only when it differs from the logged one (:func:`corrected_query`), and an alias proposal is filed only
when the reviewer fills its own field: nothing prefilled becomes one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from monitor.verdicts import FINE_LABELS, Label


class FindingLike(Protocol):
    """What this module reads of a finding (``monitor.checks.store.FindingRow`` has it)."""

    @property
    def kind(self) -> str: ...

    @property
    def severity(self) -> str: ...

    @property
    def evidence(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Prefill:
    """The suggested assertion terms of a verdict, each in order of the findings, without repeats."""

    must_include: tuple[str, ...] = ()
    must_not_include: tuple[str, ...] = ()


QUEUED = ("medium", "high")
"""Severities whose findings suggest terms: those that put an item in the queue."""


class _Terms:
    def __init__(self) -> None:
        self.include: list[str] = []
        self.exclude: list[str] = []

    @staticmethod
    def _add(to: list[str], value: object) -> None:
        if (
            isinstance(value, str)
            and value.strip()
            and value.strip().casefold() not in {x.casefold() for x in to}
        ):
            to.append(value.strip())

    def include_(self, value: object) -> None:
        self._add(self.include, value)

    def exclude_(self, value: object) -> None:
        self._add(self.exclude, value)


def _fabricated(findings: Iterable[FindingLike], t: _Terms) -> None:
    for f in findings:
        ev = f.evidence
        if f.kind == "added_content_word":
            for w in ev.get("words", []):
                t.exclude_(w.get("text"))
        elif f.kind == "qualifier_conflict":
            for w in ev.get("words", []):
                t.exclude_(w.get("text"))
            for loc in ev.get("stated_at", []):
                t.include_(loc.get("text"))
        elif f.kind == "replaced_term":
            for w in ev.get("words", []):
                t.exclude_(w.get("text"))
            t.include_((ev.get("asked") or {}).get("text"))  # the user's compound


def _dropped(findings: Iterable[FindingLike], t: _Terms) -> None:
    for f in findings:
        ev = f.evidence
        if f.kind == "dropped_qualifier":
            t.include_((ev.get("stated_at") or {}).get("text") or ev.get("value"))
            for w in ev.get("missing", []):  # the live items a conversation-state check found missing
                if isinstance(w, Mapping):
                    t.include_(w.get("text"))
        elif f.kind == "intent_dropped":
            for w in ev.get("missing", []):
                if not (isinstance(w, Mapping) and w.get("pointer")):  # a replaced pointer is no loss
                    t.include_(w if isinstance(w, str) else w.get("text"))


def _antecedent(findings: Iterable[FindingLike], t: _Terms) -> None:
    for f in findings:
        ev = f.evidence
        if f.kind == "wrong_antecedent" and "expected" in ev:
            t.include_(ev.get("expected"))  # the list item, the user's name, the corrected referent
            t.exclude_(ev.get("named"))


def prefill(label: str | None, findings: Iterable[FindingLike]) -> Prefill:
    """The terms a verdict of ``label`` starts with, from the ``findings`` at medium or above (the
    module's table); empty for ``None`` (no label chosen yet), the fine labels and the labels no finding
    speaks to."""
    if label is None or label in FINE_LABELS:
        return Prefill()
    queued = [f for f in findings if f.severity in QUEUED]
    t = _Terms()
    if label == Label.FABRICATED_CONSTRAINT:
        _fabricated(queued, t)
    elif label in (Label.DROPPED_CONSTRAINT, Label.OVER_CARRIED):
        _dropped(queued, t)
    elif label == Label.WRONG_ANTECEDENT:
        _antecedent(queued, t)
    return Prefill(tuple(t.include), tuple(t.exclude))


def corrected_query(typed: str | None, logged: str | None) -> str | None:
    """The corrected standalone query to store: what the reviewer typed, stripped, or ``None`` when it is
    empty or the logged query itself (compared with whitespace collapsed): an untouched form field is
    no correction."""
    text = " ".join((typed or "").split())
    if not text or (logged is not None and text == " ".join(logged.split())):
        return None
    return (typed or "").strip()


PLAIN_KINDS = {
    "added_content_word": "added word",
    "qualifier_conflict": "replaced qualifier",
    "replaced_term": "replaced term",
    "dropped_qualifier": "dropped qualifier",
    "intent_dropped": "lost request word",
    "unresolved_reference": "unresolved reference",
    "wrong_antecedent": "check the antecedent",
    "antecedent_not_in_input": "antecedent in no turn",
    "not_a_query": "not a search query",
    "window_truncated": "truncated window",
    "missing_assistant_turns": "missing assistant turns",
    "non_monotonic": "turns out of order",
    "digest_mismatch": "digest mismatch",
    "roles_mismatch": "role counts differ",
    "session_mismatch": "another session's turns",
}
"""What each finding kind means, in the reviewer's words (the kind id stays beside it)."""

_ZIPF_RE = re.compile(r"zipf (\d+(?:\.\d+)?)(?: < \d+(?:\.\d+)?)?")


def one_in(zipf: float) -> str:
    """A Zipf frequency as "1 in N words": Zipf is log10 of occurrences per billion words (wordfreq), so
    a word of Zipf z occurs once in 10^(9 - z) words; N rounded to two significant figures
    (Zipf 4.29: "1 in 51,000 words")."""
    n = 10 ** (9 - zipf)
    digits = max(0, len(str(int(n))) - 2)
    return f"1 in {round(n, -digits):,.0f} words"


def plain_reason(reason: str) -> str:
    """A finding's reason with the word-frequency threshold said in words: "rare term (zipf 4.29 <
    4.4)" becomes "rare term (about 1 in 51,000 words of English)". The rest is already plain."""
    return _ZIPF_RE.sub(lambda m: f"about {one_in(float(m.group(1)))} of English", reason)


__all__ = ["PLAIN_KINDS", "FindingLike", "Prefill", "corrected_query", "one_in", "plain_reason", "prefill"]
