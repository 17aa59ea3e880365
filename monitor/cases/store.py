"""Regression cases built from verdicts, as plain data for the CLI, the export and the dashboard.

A case is a prefix (the messages the rewriter received), a follow-up (the latest message) and a gold
label (label, first wrong artifact, expected query, must-include and must-not-include terms).

When a verdict makes a case (:func:`case_decision`; :data:`NO_CASE` names why one does not):

- an error on the rewrite with a corrected query or at least one must / must-not term (without them no
  replay could fail the case: ``monitor.verdicts.nothing_to_assert``; the review forms ask for them);
- an error in the retrieval or the answer (the logged query is the expected one);
- ``ok`` / ``false_alarm_synonym`` on a hard case: the record has a stored finding at medium or above
  from the current checks (a false alarm stays a useful negative case); a clean control item does not;
- never for a chat-state fault (the replay gives the rewriter the same received messages: it cannot
  fail), never when the message list was not logged (without the prefix there is nothing to replay),
  nor when the stored rewrite event no longer parses.

:func:`sync_cases` also withdraws the current cases that a verdict made before this rule
(:func:`asserts_nothing`), and :func:`verdicts_without_case` lists the standing verdicts with no case
and why (``export`` reports them).

Identity and versions (:func:`apply_verdict`):

- ``case_key`` = sha256 of the JSON array ``[prefix_sha256, latest, label]``, where ``prefix_sha256``
  is sha256 of the canonical JSON of ``[[role, content], ...]``. Two requests with the same prefix,
  latest message and label are one case (deduplicated).
- A verdict whose gold equals the current version's adds nothing. A different gold adds version + 1
  and stamps the previous version's ``superseded_at``: nothing is overwritten, the unique
  ``(case_key, version)`` constraint makes concurrent writers collide instead of both winning.
- A re-review of a record that no longer yields its case (another label, or ``ok`` on a clean item)
  stamps that case's current version superseded with no successor: the case is withdrawn.

:func:`record_verdict <monitor.review.store.record_verdict>` calls :func:`apply_verdict` inside the
verdict's transaction; :func:`sync_cases` (run by ``export``) applies the newest verdict of every item
that has no case row yet, e.g. verdicts stored before this module existed. Both are idempotent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import exists, func, select, tuple_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from monitor.ingest.store.records import load_records
from monitor.store.models import Event, Finding, QueueItem, Record, RegressionCase, Verdict
from monitor.store.rows import to_row
from monitor.verdicts import FINE_LABELS, Artifact, Rating, nothing_to_assert, standing_verdict

HARD_MIN_RANK = 1
"""A finding at this severity rank or above (medium) makes an ``ok`` verdict a hard negative case."""


@dataclass(frozen=True, slots=True)
class CaseRow:
    """One regression case version; ``superseded`` is True when a later review replaced or withdrew it.

    ``record_id`` and ``verdict_id`` are the source ids of the version (the record whose verdict
    created it).
    """

    id: int
    case_key: str
    version: int
    superseded: bool
    source_request_id: str
    messages: list[dict[str, Any]]
    latest: str
    expected_query: str | None
    must_include: list[str]
    must_not_include: list[str]
    accepted_terms: dict[str, list[str]] | None
    label: str
    artifact: str
    reviewer: str
    verdict_at: datetime
    prompt_version: str | None
    model: str | None
    record_id: int
    verdict_id: int


@dataclass(frozen=True, slots=True)
class CaseSpec:
    """What a verdict says a case should be (before it is stored). ``accepted_terms``: which of the terms
    the reviewer accepted from the findings' suggestions (``Verdict.accepted_terms``; None when the
    verdict predates migration 0014); provenance, not gold."""

    key: str
    messages: list[dict[str, str]]
    latest: str
    expected_query: str | None
    must_include: list[str]
    must_not_include: list[str]
    accepted_terms: dict[str, list[str]] | None
    label: str
    artifact: str
    prompt_version: str | None
    model: str | None

    def gold(self) -> tuple[Any, ...]:
        return (self.expected_query, self.must_include, self.must_not_include, self.artifact)


def case_key(messages: Sequence[dict[str, str]], latest: str, label: str) -> str:
    """The 64-hex deduplication key of a case (see the module docstring for the exact bytes)."""
    prefix = json.dumps([[m["role"], m["content"]] for m in messages], ensure_ascii=False)
    prefix_sha = hashlib.sha256(prefix.encode()).hexdigest()
    return hashlib.sha256(json.dumps([prefix_sha, latest, label], ensure_ascii=False).encode()).hexdigest()


def _current_checks() -> list[tuple[str, int]]:
    from monitor.checks import current_versions

    return current_versions()


def is_hard(*, session: Session, record_id: int) -> bool:
    """True when the record has a finding at medium or above from the current check versions."""
    current = tuple_(Finding.check_id, Finding.check_version).in_(_current_checks())
    stmt = select(
        exists().where(Finding.record_id == record_id, Finding.severity_rank >= HARD_MIN_RANK, current)
    )
    return bool(session.scalar(stmt))


NO_CASE: dict[str, str] = {
    "fine_on_clean": "fine on a rewrite without a medium or high finding: nothing for a replay to hold",
    "not_logged": "the rewriter's message list was not logged: there is nothing to replay",
    "unparsable": "the stored rewrite no longer parses",
    "chat_state": "a chat-state fault: a replay gives the rewriter the same messages, so it cannot fail",
    "nothing_to_assert": "an error on the rewrite with no corrected query and no must / must-not term",
}
"""Why a standing verdict makes no regression case, by reason (what ``export`` reports)."""


@dataclass(frozen=True, slots=True)
class NoCase:
    """A verdict that makes no case, and why (a key of :data:`NO_CASE`)."""

    reason: str

    @property
    def why(self) -> str:
        return NO_CASE[self.reason]


def case_decision(*, session: Session, verdict: Verdict) -> CaseSpec | NoCase:
    """The case ``verdict`` makes, or why it makes none (module docstring, first list; :data:`NO_CASE`).

    ``expected_query`` is the reviewer's corrected query; without one, the logged query when the
    reviewer judged the rewrite right (a fine label, or a first wrong artifact after the rewrite:
    retrieval or generation), else ``None``. A case must be one a replay can fail
    (``monitor.verdicts.nothing_to_assert``): a rewrite error with neither a corrected query nor a term,
    and a chat-state fault, make none.
    """
    if verdict.label in FINE_LABELS and not is_hard(session=session, record_id=verdict.record_id):
        return NoCase("fine_on_clean")
    if verdict.artifact == Artifact.CHAT_STATE:
        return NoCase("chat_state")
    if nothing_to_assert(
        verdict.label,
        verdict.artifact,
        corrected=verdict.corrected_query is not None,
        must_include=verdict.must_include,
        must_not_include=verdict.must_not_include,
    ):
        return NoCase("nothing_to_assert")
    try:
        loaded = load_records(session=session, record_ids=[verdict.record_id])
    except ValidationError:
        # A stored event that no longer parses (altered by hand; ingest validates every event) makes
        # no case: the verdict itself must still be recorded.
        return NoCase("unparsable")
    if not loaded:
        return NoCase("not_logged")
    record = loaded[0][1]
    if record.context is None or record.context.messages is None:
        return NoCase("not_logged")
    messages = [{"role": m.role, "content": m.content} for m in record.context.messages]
    expected = verdict.corrected_query
    if expected is None and (verdict.label in FINE_LABELS or verdict.artifact in ("retrieval", "generation")):
        expected = record.query
    return CaseSpec(
        key=case_key(messages, record.latest, verdict.label),
        messages=messages,
        latest=record.latest,
        expected_query=expected,
        must_include=list(verdict.must_include),
        must_not_include=list(verdict.must_not_include),
        accepted_terms=verdict.accepted_terms,
        label=verdict.label,
        artifact=verdict.artifact,
        prompt_version=record.prompt_version,
        model=record.model,
    )


def case_spec(*, session: Session, verdict: Verdict) -> CaseSpec | None:
    """The case ``verdict`` makes, or ``None`` when it makes none (:func:`case_decision` says why)."""
    got = case_decision(session=session, verdict=verdict)
    return got if isinstance(got, CaseSpec) else None


def _current(session: Session, key: str) -> RegressionCase | None:
    return session.scalars(
        select(RegressionCase).where(RegressionCase.case_key == key, RegressionCase.superseded_at.is_(None))
    ).first()


def apply_verdict(*, session: Session, verdict: Verdict, now: datetime, attempts: int = 3) -> int | None:
    """Create, version or withdraw the regression case of ``verdict``; returns the id of the case row
    that now stands for it (``None`` when the verdict makes no case). Flushes; does not commit.

    Idempotent: applying the same verdict twice changes nothing the second time. A concurrent writer
    that took the same ``(case_key, version)`` first makes this one re-read and try again, up to
    ``attempts`` times (then the ``IntegrityError`` propagates).
    """
    spec = case_spec(session=session, verdict=verdict)
    withdraw = select(RegressionCase).where(
        RegressionCase.record_id == verdict.record_id, RegressionCase.superseded_at.is_(None)
    )
    if spec is not None:
        withdraw = withdraw.where(RegressionCase.case_key != spec.key)
    for old in session.scalars(withdraw):
        old.superseded_at = now
    if spec is None:
        session.flush()
        return None
    for attempt in range(attempts):
        current = _current(session, spec.key)
        if current is not None and current.verdict_id == verdict.id:
            return current.id
        if current is not None and spec.gold() == (
            current.expected_query,
            list(current.must_include),
            list(current.must_not_include),
            current.artifact,
        ):
            return current.id
        version = (
            session.scalar(
                select(func.max(RegressionCase.version)).where(RegressionCase.case_key == spec.key)
            )
            or 0
        ) + 1
        try:
            with session.begin_nested():
                if current is not None:
                    current.superseded_at = now
                row = RegressionCase(
                    case_key=spec.key,
                    version=version,
                    superseded_at=None,
                    verdict_id=verdict.id,
                    record_id=verdict.record_id,
                    source_request_id=verdict.request_id,
                    messages=spec.messages,
                    latest=spec.latest,
                    expected_query=spec.expected_query,
                    must_include=spec.must_include,
                    must_not_include=spec.must_not_include,
                    accepted_terms=spec.accepted_terms,
                    label=spec.label,
                    artifact=spec.artifact,
                    reviewer=verdict.reviewer,
                    verdict_at=verdict.created_at,
                    prompt_version=spec.prompt_version,
                    model=spec.model,
                    created_at=now,
                )
                session.add(row)
            return row.id
        except IntegrityError:
            if attempt == attempts - 1:
                raise
            session.expire_all()
    return None  # unreachable: the loop returns or raises


def item_ratings(
    session: Session, item_ids: Sequence[int] | None = None
) -> dict[int, tuple[int, list[Rating]]]:
    """Queue item id -> (reviewers it needs, its verdicts as ``monitor.verdicts.Rating`` in
    verdict order), for the items of ``item_ids`` (every item with a verdict when None). The one read
    of verdicts that standing verdicts, review progress and agreement are computed from."""
    stmt = (
        select(
            Verdict.queue_item_id,
            QueueItem.reviews_needed,
            Verdict.id,
            Verdict.reviewer,
            Verdict.label,
            Verdict.artifact,
            Verdict.adjudication,
        )
        .join(QueueItem, QueueItem.id == Verdict.queue_item_id)
        .order_by(Verdict.id)
    )
    if item_ids is not None:
        stmt = stmt.where(Verdict.queue_item_id.in_(list(item_ids)))
    out: dict[int, tuple[int, list[Rating]]] = {}
    for item_id, needed, vid, reviewer, label, artifact, adjudication in session.execute(stmt):
        out.setdefault(item_id, (int(needed), []))[1].append(
            Rating(vid, reviewer, label, artifact, adjudication)
        )
    return out


def standing_ids(session: Session) -> dict[int, int]:
    """Queue item id -> the id of its standing verdict (``monitor.verdicts.standing_verdict``),
    for every item that has one: an item that awaits its second reviewer or an adjudicator has none, so
    the eval set and ``stats`` leave it out until it is settled. One query."""
    out: dict[int, int] = {}
    for item_id, (needed, ratings) in item_ratings(session).items():
        standing = standing_verdict(ratings, needed)
        if standing is not None:
            out[item_id] = standing
    return out


def sync_cases(*, session: Session, now: datetime) -> int:
    """Apply the standing verdict of every queue item that has no case row from it yet; commit.

    Returns how many verdicts were applied (most add nothing: ``ok`` on clean items, duplicates).
    Only the standing verdict of an item counts (:func:`standing_ids`: its newest,
    or on a doubly reviewed item the agreed or adjudicated one), so an older one can never undo a newer
    review, and an item that awaits its second reviewer or an adjudicator makes no case yet.
    """
    standing = sorted(standing_ids(session).values())
    has_case = exists().where(RegressionCase.verdict_id == Verdict.id)
    verdicts: list[Verdict] = []
    for start in range(0, len(standing), 500):
        chunk = standing[start : start + 500]
        verdicts += session.scalars(select(Verdict).where(Verdict.id.in_(chunk), ~has_case)).all()
    n = 0
    for verdict in sorted(verdicts, key=lambda v: v.id):
        apply_verdict(session=session, verdict=verdict, now=now)
        n += 1
    withdraw_empty_cases(session=session, now=now)
    session.commit()
    return n


def asserts_nothing(case: RegressionCase | CaseRow) -> bool:
    """Whether a stored case is one no replay can fail: a chat-state fault, or an error on the rewrite
    with no expected query and no term (:func:`case_decision` no longer makes them)."""
    return case.artifact == Artifact.CHAT_STATE or (
        nothing_to_assert(
            case.label,
            case.artifact,
            corrected=case.expected_query is not None,
            must_include=case.must_include,
            must_not_include=case.must_not_include,
        )
        is not None
    )


def withdraw_empty_cases(*, session: Session, now: datetime) -> int:
    """Stamp superseded (withdrawn, no successor) every current case that asserts nothing
    (:func:`asserts_nothing`), made before the rule; returns how many. Flushes; idempotent."""
    candidates = session.scalars(
        select(RegressionCase).where(
            RegressionCase.superseded_at.is_(None),
            RegressionCase.expected_query.is_(None) | (RegressionCase.artifact == Artifact.CHAT_STATE.value),
        )
    )
    n = 0
    for case in candidates:
        if asserts_nothing(case):
            case.superseded_at = now
            n += 1
    session.flush()
    return n


def no_case_why(*, session: Session, verdict_id: int) -> str | None:
    """Why the verdict ``verdict_id`` makes no regression case (:data:`NO_CASE`, in words), or None when
    it makes one: what the review forms and ``verdict`` say after storing it. Reads only."""
    verdict = session.get(Verdict, verdict_id)
    if verdict is None:
        return None
    got = case_decision(session=session, verdict=verdict)
    return got.why if isinstance(got, NoCase) else None


@dataclass(frozen=True, slots=True)
class UncasedVerdict:
    """A standing verdict that makes no regression case: its ids, label and why (:data:`NO_CASE`)."""

    verdict_id: int
    request_id: str
    label: str
    artifact: str
    reason: str


def verdicts_without_case(
    *, session: Session, since: datetime | None = None, label: str | None = None
) -> list[UncasedVerdict]:
    """Every standing verdict (:func:`standing_ids`) given at or after ``since`` (naive UTC), with
    ``label`` when given, that makes no case, oldest first, with the reason (:func:`case_decision`). A
    verdict whose case another verdict already made (the same prefix, latest message and label) is not
    listed: the eval set holds its case. Only the verdicts without a current case of their own are
    decided (each decision reads its record): the export runs this every time. Reads only."""
    standing = sorted(standing_ids(session).values())
    has_current_case = exists().where(
        RegressionCase.verdict_id == Verdict.id, RegressionCase.superseded_at.is_(None)
    )
    out: list[UncasedVerdict] = []
    for start in range(0, len(standing), 500):
        chunk = standing[start : start + 500]
        stmt = select(Verdict).where(Verdict.id.in_(chunk), ~has_current_case).order_by(Verdict.id)
        if since is not None:
            stmt = stmt.where(Verdict.created_at >= since)
        if label is not None:
            stmt = stmt.where(Verdict.label == label)
        for verdict in session.scalars(stmt):
            got = case_decision(session=session, verdict=verdict)
            if isinstance(got, NoCase):
                v = verdict
                out.append(UncasedVerdict(v.id, v.request_id, v.label, v.artifact, got.reason))
    return out


def _row(c: RegressionCase) -> CaseRow:
    return to_row(CaseRow, c, superseded=c.superseded_at is not None)


def list_cases(
    *,
    session: Session,
    label: str | None = None,
    since: datetime | None = None,
    include_superseded: bool = False,
    limit: int | None = 100,
    offset: int = 0,
    oldest_first: bool = False,
) -> list[CaseRow]:
    """Regression cases, newest verdict first (``oldest_first``: oldest first, the export's stable
    order); by default only the current version of each case. ``since`` bounds ``verdict_at``."""
    order: tuple[Any, ...]
    if oldest_first:
        order = (RegressionCase.verdict_at, RegressionCase.id)
    else:
        order = (RegressionCase.verdict_at.desc(), RegressionCase.id.desc())
    stmt = select(RegressionCase).where(*_case_filters(label, since, include_superseded)).order_by(*order)
    stmt = stmt.offset(offset)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [_row(c) for c in session.scalars(stmt)]


def _case_filters(label: str | None, since: datetime | None, include_superseded: bool) -> list[Any]:
    where: list[Any] = []
    if not include_superseded:
        where.append(RegressionCase.superseded_at.is_(None))
    if label is not None:
        where.append(RegressionCase.label == label)
    if since is not None:
        where.append(RegressionCase.verdict_at >= since)
    return where


def count_cases(
    *,
    session: Session,
    label: str | None = None,
    since: datetime | None = None,
    include_superseded: bool = False,
) -> int:
    """How many cases :func:`list_cases` would list with these filters, ignoring its limit and offset
    (current versions only, unless ``include_superseded``; ``since`` bounds ``verdict_at``)."""
    stmt = select(func.count()).select_from(RegressionCase)
    return int(session.scalar(stmt.where(*_case_filters(label, since, include_superseded))) or 0)


def logged_rewrites(*, session: Session, record_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Per record id, the logged rewrite the case came from: ``{query, rewritten, resolved, dropped}``
    (``resolved`` as ``[{surface, antecedent, turn}]``), for ``replay --compare`` against the logs."""
    out: dict[int, dict[str, Any]] = {}
    ids = list(record_ids)
    for start in range(0, len(ids), 500):
        rows = session.execute(
            select(Record.id, Event.raw)
            .join(Event, Event.id == Record.rewrite_event_id)
            .where(Record.id.in_(ids[start : start + 500]))
        )
        for rid, raw in rows:
            out[rid] = {
                "query": raw.get("query", ""),
                "rewritten": bool(raw.get("rewritten", True)),
                "resolved": [
                    {
                        "surface": r.get("surface", ""),
                        "antecedent": r.get("antecedent", ""),
                        "turn": r.get("turn"),
                    }
                    for r in raw.get("resolved") or []
                ],
                "dropped": list(raw.get("dropped") or []),
            }
    return out
