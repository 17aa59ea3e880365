"""The verdict vocabulary, and which verdict of an item stands.

What a reviewer can say about a rewrite (:class:`Label`) and which artifact went wrong first
(:class:`Artifact`): one definition for the queue, the regression cases, replay, the terminal review and
the dashboard. The members are ``StrEnum``s, so they compare equal to the strings stored in the
``verdicts`` table and serialise to them (``json.dumps(Label.OK) == '"ok"'``).

Which verdict stands when several reviewers judged one item (issue 16, part 6): a queue item may need
more than one reviewer (``QueueItem.reviews_needed``: the blind second review of
``double_review_share``). Each reviewer's newest verdict is theirs (a re-review replaces one's own, never
another's); an adjudication settles a disagreement. :func:`standing_verdict` says which verdict makes the
regression case and counts in every figure built on verdicts (the eval set, ``stats``, the learned
grades); :func:`first_per_reviewer` gives the ratings agreement is computed on
(``monitor.stats.agreement``): each reviewer's first verdict, the one given blind.
``monitor.cases.store.standing_ids`` reads the standing verdicts from the store.

A ground-floor module (standard library only): the cases stage, the review stage and the statistics
read it without reading each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class Label(StrEnum):
    """A verdict label (issue 6's form). ``ok`` and ``false_alarm_synonym`` mean the rewrite was fine."""

    OK = "ok"
    FABRICATED_CONSTRAINT = "fabricated_constraint"
    DROPPED_CONSTRAINT = "dropped_constraint"
    WRONG_ANTECEDENT = "wrong_antecedent"
    UNRESOLVED_REFERENCE = "unresolved_reference"
    OVER_CARRIED = "over_carried"
    NOT_A_QUERY = "not_a_query"
    WINDOW_TRUNCATED = "window_truncated"
    MISSING_ASSISTANT_TURNS = "missing_assistant_turns"
    FOREIGN_SESSION = "foreign_session"
    RANKING = "ranking"
    GENERATION = "generation"
    FALSE_ALARM_SYNONYM = "false_alarm_synonym"


class Artifact(StrEnum):
    """The first wrong artifact, in the order a reviewer reads them; ``none`` when nothing was wrong."""

    CHAT_STATE = "chat_state"
    REWRITE = "rewrite"
    RETRIEVAL = "retrieval"
    GENERATION = "generation"
    NONE = "none"


LABELS: tuple[str, ...] = tuple(label.value for label in Label)
ARTIFACTS: tuple[str, ...] = tuple(artifact.value for artifact in Artifact)
FINE_LABELS: tuple[str, ...] = (Label.OK.value, Label.FALSE_ALARM_SYNONYM.value)
"""Labels meaning the rewrite was fine; they go with artifact ``none``."""
DEFAULT_ARTIFACT: dict[str, str] = {
    **{label: Artifact.REWRITE.value for label in LABELS},
    Label.OK: Artifact.NONE,
    Label.FALSE_ALARM_SYNONYM: Artifact.NONE,
    Label.WINDOW_TRUNCATED: Artifact.CHAT_STATE,
    Label.MISSING_ASSISTANT_TURNS: Artifact.CHAT_STATE,
    Label.FOREIGN_SESSION: Artifact.CHAT_STATE,
    Label.RANKING: Artifact.RETRIEVAL,
    Label.GENERATION: Artifact.GENERATION,
}
"""The first wrong artifact a label implies, for the terminal commands' default ``--artifact``."""


@dataclass(frozen=True, slots=True)
class Rating:
    """One verdict reduced to what agreement compares: its id, reviewer, label and first wrong artifact,
    and whether it adjudicates."""

    id: int
    reviewer: str
    label: str
    artifact: str
    adjudication: bool = False


def newest_per_reviewer(ratings: Sequence[Rating]) -> list[Rating]:
    """Each reviewer's newest non-adjudication verdict of one item (a re-review replaces one's own
    verdict, never another reviewer's), in the order the reviewers first gave one. ``ratings`` must be
    in verdict order (oldest first)."""
    first: dict[str, int] = {}
    newest: dict[str, Rating] = {}
    for i, r in enumerate(ratings):
        if r.adjudication:
            continue
        first.setdefault(r.reviewer, i)
        newest[r.reviewer] = r
    return [newest[name] for name in sorted(newest, key=first.__getitem__)]


def standing_verdict(ratings: Sequence[Rating], reviews_needed: int) -> int | None:
    """The id of the verdict that stands for one item (makes its regression case), or None while none
    does. ``ratings`` in verdict order. One reviewer needed: the newest verdict. Several: the newest
    adjudication if any; else, once ``reviews_needed`` reviewers gave one and their newest verdicts
    agree on label and artifact, the newest of those; else None (awaiting a reviewer or an
    adjudicator)."""
    if not ratings:
        return None
    if reviews_needed <= 1:
        return ratings[-1].id
    adjudications = [r for r in ratings if r.adjudication]
    if adjudications:
        return adjudications[-1].id
    newest = newest_per_reviewer(ratings)
    if len(newest) < reviews_needed or len({(r.label, r.artifact) for r in newest}) > 1:
        return None
    return max(r.id for r in newest)


def first_per_reviewer(ratings: Sequence[Rating]) -> list[Rating]:
    """Each reviewer's first non-adjudication verdict of one item, in the order they gave them: the
    verdicts given blind (a later revision may have seen the other reviewer's verdict, in ``stats
    --agreement`` or the item page, so agreement is measured on the first). ``ratings`` in verdict
    order."""
    first: dict[str, Rating] = {}
    for r in ratings:
        if not r.adjudication:
            first.setdefault(r.reviewer, r)
    return list(first.values())


WHAT_TO_ASSERT: dict[str, str] = {
    Label.FABRICATED_CONSTRAINT: "the invented words under must not include",
    Label.DROPPED_CONSTRAINT: "the lost qualifier under must include",
    Label.WRONG_ANTECEDENT: "the right antecedent under must include, the wrong one under must not include",
    Label.UNRESOLVED_REFERENCE: "what the reference stands for under must include",
    Label.OVER_CARRIED: "the carried-over words under must not include",
    Label.NOT_A_QUERY: "a corrected query",
}
"""What a rewrite-error verdict's case should hold, said to a reviewer who gave it nothing to assert."""


def nothing_to_assert(
    label: str,
    artifact: str,
    *,
    corrected: bool,
    must_include: Sequence[str],
    must_not_include: Sequence[str],
) -> str | None:
    """Why a verdict with this ``label`` and first wrong ``artifact`` would make a regression case that no
    replay can fail, or None when it would not. A rewrite error (``artifact`` ``rewrite``) needs a
    ``corrected`` query or at least one must / must-not term: without them the case holds only the
    replay's own checks, which a rewriter passes by a different mistake. A fine label, and an error in
    the retrieval or the answer, keep the logged query as the expected one; a chat-state fault makes no
    case (the replay gives the rewriter the same received messages, so it cannot fail on them: the fix is
    the client's). What the dashboard's and the terminal's forms refuse before they submit (issue 35)."""
    if artifact != Artifact.REWRITE or label in FINE_LABELS:
        return None
    if corrected or any(t.strip() for t in (*must_include, *must_not_include)):
        return None
    what = WHAT_TO_ASSERT.get(label, "a must / must-not term")
    if label != Label.NOT_A_QUERY:
        what += ", or a corrected query"
    article = "an" if label[:1] in "aeiou" else "a"
    return f"{article} {label} verdict on the rewrite needs something a replay can fail: {what}"


def both_ways(must_include: Sequence[str], must_not_include: Sequence[str]) -> list[str]:
    """The terms that are both must-include and must-not-include, ignoring case (the replay's judge
    matches terms case-insensitively), in must-include order: a case holding one fails every rewrite.
    What ``record_verdict`` refuses and ``review`` asks again."""
    banned = {t.casefold() for t in must_not_include}
    return [t for t in must_include if t.casefold() in banned]


TermsByField = dict[str, list[str]]
"""Assertion terms by field: ``{"must_include": [...], "must_not_include": [...]}``."""


def term_origins(
    must_include: Sequence[str], must_not_include: Sequence[str], accepted_terms: TermsByField | None
) -> tuple[TermsByField, TermsByField] | None:
    """A verdict's or case's terms split by origin, ``(accepted, typed)``, each :data:`TermsByField` in
    the terms' order: a term is accepted when ``accepted_terms`` (``verdicts.accepted_terms``: which
    terms were accepted suggestions) holds it under its field, ignoring case, else typed. None when
    ``accepted_terms`` is None (stored before migration 0014: not recorded). What the export writes and
    what "Previous item" brings back into the form."""
    if accepted_terms is None:
        return None
    accepted: TermsByField = {}
    typed: TermsByField = {}
    for field, terms in (("must_include", must_include), ("must_not_include", must_not_include)):
        took = {t.casefold() for t in accepted_terms.get(field, [])}
        accepted[field] = [t for t in terms if t.casefold() in took]
        typed[field] = [t for t in terms if t.casefold() not in took]
    return accepted, typed
