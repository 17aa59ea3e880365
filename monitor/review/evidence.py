"""What a verdict form starts from: the assertion terms the findings suggest, per label (issue 16, part 1).

One model for the dashboard's Item page and the terminal ``review``: both show and store what this
module returns, so the same findings suggest the same terms on either screen. Pure: it reads findings
as plain objects (``kind``, ``severity``, ``evidence``), imports only the standard library, the verdict
vocabulary and ``monitor.text``.

The suggestions follow the label, because the label says what the eval set must test:

========================= ==========================================================================
label                     suggested (``must_include`` / ``must_not_include``)
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

Only findings at medium or above count (what put the item in the queue). The terms are suggestions
(issue 35, part 4): the forms show them (:func:`suggestions`), and a suggested term is stored only when
the reviewer accepts it (one key accepts all of them; one click or number accepts one). The verdict and
its case record which terms were accepted and which typed (:class:`TermChoice`, :func:`choose_terms`),
so a case never holds a term nobody read. A corrected query is stored only when it differs from the
logged one (:func:`corrected_query`), and an alias proposal is filed only when the reviewer fills its own
field: nothing suggested becomes one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from monitor.text import normalise_terms
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


@dataclass(frozen=True, slots=True, order=True)
class Suggestion:
    """One suggested assertion term: ``field`` is ``must_include`` or ``must_not_include``. Shown as
    "must: X" / "must not: X" (its ``str``: the dashboard's pill, the terminal's numbered line)."""

    field: str
    term: str

    def __str__(self) -> str:
        return f"{'must' if self.field == 'must_include' else 'must not'}: {self.term}"


def suggestions(pre: Prefill) -> tuple[Suggestion, ...]:
    """The suggested terms of ``pre`` as one list: the must-include terms first, in the findings' order."""
    return (
        *(Suggestion("must_include", t) for t in pre.must_include),
        *(Suggestion("must_not_include", t) for t in pre.must_not_include),
    )


@dataclass(frozen=True, slots=True)
class TermChoice:
    """The assertion terms of a verdict and where each came from: ``accepted_*`` are suggestions the
    reviewer accepted, ``typed_*`` what they typed themselves (a typed term equal to an accepted one,
    ignoring case, is kept once, as accepted). ``must_include`` / ``must_not_include`` are what the case
    asserts: accepted first, then typed."""

    accepted_include: tuple[str, ...] = ()
    accepted_exclude: tuple[str, ...] = ()
    typed_include: tuple[str, ...] = ()
    typed_exclude: tuple[str, ...] = ()

    @property
    def must_include(self) -> list[str]:
        return [*self.accepted_include, *self.typed_include]

    @property
    def must_not_include(self) -> list[str]:
        return [*self.accepted_exclude, *self.typed_exclude]

    def accepted(self) -> dict[str, list[str]]:
        """The accepted terms as stored (``verdicts.accepted_terms``): ``{must_include: [...],
        must_not_include: [...]}``."""
        return {"must_include": list(self.accepted_include), "must_not_include": list(self.accepted_exclude)}


def choose_terms(
    accepted: Iterable[Suggestion],
    typed_include: Iterable[str] = (),
    typed_exclude: Iterable[str] = (),
    *,
    offered: Sequence[Suggestion] = (),
) -> TermChoice:
    """The terms of a verdict from the suggestions the reviewer ``accepted`` and the terms they typed,
    each list normalised (``monitor.text.normalise_terms``) with repeats dropped ignoring case; the
    accepted ones in the order they were ``offered`` (those not offered after them, as given), so the
    order in which pills were clicked never makes another case version.
    ``choose_terms([Suggestion("must_include", "Dublin")], ["dublin", "SLA"])`` -> accepted_include
    ``("Dublin",)``, typed_include ``("SLA",)``."""
    place = {s: n for n, s in enumerate(offered)}
    chosen = sorted(dict.fromkeys(accepted), key=lambda s: place.get(s, len(place)))
    acc_in = normalise_terms((s.term for s in chosen if s.field == "must_include"), ignore_case=True)
    acc_ex = normalise_terms((s.term for s in chosen if s.field == "must_not_include"), ignore_case=True)

    def typed(terms: Iterable[str], taken: list[str]) -> tuple[str, ...]:
        seen = {t.casefold() for t in taken}
        return tuple(t for t in normalise_terms(terms, ignore_case=True) if t.casefold() not in seen)

    return TermChoice(
        tuple(acc_in), tuple(acc_ex), typed(typed_include, acc_in), typed(typed_exclude, acc_ex)
    )


def accepted_numbers(answer: str, count: int) -> tuple[int, ...]:
    """The suggestions a terminal answer accepts, as 0-based indexes of ``count`` numbered ones: ``a``
    (or ``all``) all of them, numbers 1..count (spaces or commas between) those, empty none.
    ``accepted_numbers("1, 3", 3)`` -> ``(0, 2)``. Raises ``ValueError`` naming what is not a
    suggestion's number."""
    words = answer.replace(",", " ").split()
    if [w.lower() for w in words] in (["a"], ["all"]):
        return tuple(range(count))
    bad = [w for w in words if not w.isdecimal() or not 1 <= int(w) <= count]  # isdigit takes "²"
    if bad:
        raise ValueError(f"not a suggestion's number (1 to {count}, or a for all): {', '.join(bad)}")
    return tuple(sorted({int(w) - 1 for w in words}))


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


__all__ = [
    "PLAIN_KINDS",
    "FindingLike",
    "Prefill",
    "Suggestion",
    "TermChoice",
    "accepted_numbers",
    "choose_terms",
    "corrected_query",
    "one_in",
    "plain_reason",
    "prefill",
    "suggestions",
]
