"""The only door to the review tables: verdicts on queued items and the alias proposals they file.

A verdict claims its item (``monitor.queue.store.claim``), marks it done and updates its regression case
(``monitor.cases.store.apply_verdict``) in one transaction, so the eval set never lags the verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import distinct, func, select, tuple_, update
from sqlalchemy.orm import Session

from monitor.cases.store import apply_verdict, item_ratings
from monitor.checks.learned import LearnedTable, WordEvidence, flagged_words, rewriter_key
from monitor.errors import AmbiguousRequestError, ProposalError, QueueError
from monitor.queue.sampling import PRIORITY
from monitor.queue.store import MANUAL, WITHDRAWN, _own, claim
from monitor.review import evidence
from monitor.review.proposals import ProposalRow, clean_members
from monitor.severity import SEVERITY_RANK
from monitor.store.engine import insert_ignore, naive_utc
from monitor.store.models import AliasProposal, Event, Finding, LearnedOverride, QueueItem, Record, Verdict
from monitor.store.rows import to_row
from monitor.text import match_key, normalise_terms
from monitor.verdicts import ARTIFACTS, FINE_LABELS, LABELS, Label, Rating, both_ways, standing_verdict


def _validate(label: str, artifact: str) -> None:
    if label not in LABELS:
        raise QueueError(f"unknown label {label!r}; one of: {', '.join(LABELS)}")
    if artifact not in ARTIFACTS:
        raise QueueError(f"unknown artifact {artifact!r}; one of: {', '.join(ARTIFACTS)}")
    if (label in FINE_LABELS) != (artifact == "none"):
        raise QueueError(f"label {label!r} does not go with artifact {artifact!r}")


def _accepted(
    accepted: evidence.TermChoice | None, must_include: Sequence[str], must_not_include: Sequence[str]
) -> dict[str, list[str]]:
    """The ``accepted_terms`` to store: those of ``accepted`` (none without it), each checked to be
    among the verdict's terms of its field."""
    if accepted is None:
        return {"must_include": [], "must_not_include": []}
    stored = accepted.accepted()
    for field, terms in (("must_include", must_include), ("must_not_include", must_not_include)):
        given = {t.casefold() for t in normalise_terms(terms)}
        stray = [t for t in stored[field] if t.casefold() not in given]
        if stray:
            raise QueueError(f"accepted {field} terms not among the verdict's {field}: {', '.join(stray)}")
    return stored


def record_verdict(
    *,
    session: Session,
    item_id: int,
    reviewer: str,
    label: str,
    artifact: str,
    now: datetime,
    corrected_query: str | None = None,
    must_include: Sequence[str] = (),
    must_not_include: Sequence[str] = (),
    note: str | None = None,
    lease: timedelta = timedelta(minutes=10),
    adjudication: bool = False,
    again: bool = False,
    accepted: evidence.TermChoice | None = None,
) -> int:
    """Record a verdict on a queue item, mark it done (or back to pending while it awaits another
    reviewer) and update its regression case; returns the verdict id.

    The reviewer must hold the claim, or the item must be claimable (it is claimed on the spot); an item
    awaiting a second reviewer is refused to the reviewer who gave the first verdict unless ``again``
    (a deliberate re-review of one's own verdict). ``label`` must be one of :data:`LABELS`,
    ``artifact`` one of :data:`ARTIFACTS`; ``ok`` and ``false_alarm_synonym`` go with artifact ``none``.
    Raises ``QueueError`` otherwise. Assertion terms are stripped, blank ones and repeats (ignoring case)
    dropped, and a term both must-include and must-not-include is refused (``QueueError``); a corrected
    query equal to the logged one is stored as none (``monitor.review.evidence.corrected_query``: an
    untouched form field is no correction). ``accepted``, from a review form, says which of the terms
    the reviewer accepted from the findings' suggestions (``monitor.review.evidence.choose_terms``): its
    accepted terms are stored in ``accepted_terms`` and must be among ``must_include`` /
    ``must_not_include`` (else ``QueueError``); without it every term counts as typed.

    An item that needs several reviewers (``reviews_needed``, the blind second review) is done once that
    many distinct reviewers gave a verdict; until then it returns to the queue for someone else. An
    ``adjudication`` verdict settles a disagreement: it needs verdicts from two reviewers already, the
    adjudicator not among them (else ``QueueError``), and finishes the item. The regression case
    (``monitor.cases.store.apply_verdict``) is written, in the same transaction as the verdict so the
    eval set never lags, from the verdict that stands (:func:`standing_verdict`): on a doubly reviewed
    item only once the reviewers agree or an adjudicator decided.
    """
    _validate(label, artifact)
    must_include = normalise_terms(must_include, ignore_case=True)
    must_not_include = normalise_terms(must_not_include, ignore_case=True)
    if clash := both_ways(must_include, must_not_include):
        raise QueueError(
            f"{', '.join(map(repr, clash))} both must and must not be included: no rewrite could pass"
        )
    if adjudication:
        _adjudicable(session, item_id, reviewer)
    claim(
        session=session, item_id=item_id, reviewer=reviewer, now=now, lease=lease, again=again or adjudication
    )
    item = _own(session, item_id, reviewer, now)
    raw = session.scalar(
        select(Event.raw).join(Record, Record.rewrite_event_id == Event.id).where(Record.id == item.record_id)
    )
    logged = raw.get("query") if isinstance(raw, dict) else None
    verdict = Verdict(
        queue_item_id=item.id,
        record_id=item.record_id,
        request_id=item.request_id,
        reviewer=reviewer,
        artifact=artifact,
        label=label,
        corrected_query=evidence.corrected_query(
            corrected_query, logged if isinstance(logged, str) else None
        ),
        must_include=must_include,
        must_not_include=must_not_include,
        accepted_terms=_accepted(accepted, must_include, must_not_include),
        note=note,
        created_at=now,
        adjudication=adjudication,
    )
    session.add(verdict)
    session.flush()
    ratings = _verdicts(session, item.id)
    if adjudication or len(_reviewers(ratings)) >= item.reviews_needed:
        item.state, item.finished_at = "done", now
    else:
        # back to the queue for another reviewer (claim_next skips it for this one)
        item.state, item.claimed_by, item.claimed_at, item.lease_expires_at = "pending", None, None, None
    session.flush()
    if standing_verdict(ratings, item.reviews_needed) == verdict.id:
        apply_verdict(session=session, verdict=verdict, now=now)
    session.commit()
    return verdict.id


@dataclass(frozen=True, slots=True)
class ReviewProgress:
    """Reviewers of one queue item: how many distinct reviewers gave a verdict (``given``), how many it
    needs (``needed``), whether the asking reviewer is one of them (``mine``), and whether a verdict
    stands (``settled``: ``monitor.verdicts.standing_verdict``)."""

    given: int
    needed: int
    mine: bool
    settled: bool


def review_progress(*, session: Session, item_id: int, reviewer: str) -> ReviewProgress:
    """What the Item page may say about a blind second review: counts, whether ``reviewer`` gave one
    and whether the item is settled, never who the others are or what they said. One query."""
    needed, ratings = item_ratings(session, [item_id]).get(item_id, (1, []))
    if not ratings:
        needed = session.scalar(select(QueueItem.reviews_needed).where(QueueItem.id == item_id)) or 1
    given = _reviewers(ratings)
    settled = standing_verdict(ratings, needed) is not None
    return ReviewProgress(len(given), int(needed), reviewer in given, settled)


def _standing(verdicts: list[Verdict], reviews_needed: int) -> Verdict | None:
    """The standing one of an item's ``verdicts`` (in id order; ``monitor.verdicts``), or None."""
    ratings = [Rating(v.id, v.reviewer, v.label, v.artifact, v.adjudication) for v in verdicts]
    vid = standing_verdict(ratings, reviews_needed)
    return next((v for v in verdicts if v.id == vid), None)


def _adjudicable(session: Session, item_id: int | None, adjudicator: str) -> None:
    """Raise ``QueueError`` unless queue item ``item_id`` has verdicts from two reviewers or more and
    ``adjudicator`` is not one of them (settling one's own disagreement is no adjudication)."""
    if item_id is None:
        raise QueueError("nothing to adjudicate: the request is not in the review queue")
    reviewers = _reviewers(_verdicts(session, item_id))
    if adjudicator in reviewers:
        raise QueueError(
            f"{adjudicator} reviewed queue item {item_id}: an adjudicator is someone other than its reviewers"
        )
    if len(reviewers) < 2:
        raise QueueError(
            f"nothing to adjudicate on queue item {item_id}: it has verdicts from fewer than two reviewers"
        )


def _verdicts(session: Session, item_id: int) -> list[Rating]:
    return item_ratings(session, [item_id]).get(item_id, (1, []))[1]


def _reviewers(ratings: Sequence[Rating]) -> set[str]:
    return {r.reviewer for r in ratings if not r.adjudication}


def verdict_for_request(
    *,
    session: Session,
    request_id: str,
    reviewer: str,
    label: str,
    artifact: str,
    now: datetime,
    corrected_query: str | None = None,
    must_include: Sequence[str] = (),
    must_not_include: Sequence[str] = (),
    note: str | None = None,
    lease: timedelta = timedelta(minutes=10),
    conv_id: str | None = None,
    adjudication: bool = False,
    accepted: evidence.TermChoice | None = None,
) -> int:
    """Record a verdict on the rewrite of ``request_id`` (in ``conv_id``, when given), queued or not;
    returns the verdict id.

    A record already in the queue goes through :func:`record_verdict` (same claim rules); a finished
    (done or skipped) item is reopened first, so this is how a re-review is recorded (appended: the
    newest verdict of an item counts, and its case gets a new version). A record that is not queued is
    first added as a :data:`MANUAL` item (π 0, no kinds, due at once; see there for how ``stats``
    treats it), then verdicted; so is a withdrawn one (it left its day's sample). Raises
    ``QueueError`` for an unknown label or artifact, a request id with no logged rewrite (in
    ``conv_id``, when given), and ``AmbiguousRequestError`` for one shared by rewrites of several
    conversations when ``conv_id`` does not pick one. Naming the request is deliberate, so a reviewer may
    revise their own first verdict on an item that awaits a second reviewer; ``adjudication`` records
    an adjudicator's verdict on a doubly reviewed item and ``accepted`` which terms were accepted
    suggestions (see :func:`record_verdict`).
    """
    _validate(label, artifact)
    stmt = select(Record.id, Record.conv_id, Record.ts).where(
        Record.request_id == request_id, Record.rewrite_event_id.is_not(None)
    )
    if conv_id is not None:
        stmt = stmt.where(Record.conv_id == conv_id)
    records = session.execute(stmt.order_by(Record.id)).all()
    if not records:
        where = f" in conversation {conv_id!r}" if conv_id is not None else ""
        raise QueueError(f"no logged rewrite with request id {request_id!r}{where}")
    if len(records) > 1:
        raise AmbiguousRequestError(request_id, (r.conv_id for r in records))
    rec = records[0]
    item_id = session.scalar(select(QueueItem.id).where(QueueItem.record_id == rec.id))
    if adjudication:
        _adjudicable(session, item_id, reviewer)  # before a finished item is reopened for it
    if item_id is None:
        model, prompt_version = session.execute(
            select(Record.model, Record.prompt_version).where(Record.id == rec.id)
        ).one()
        row = {
            "record_id": rec.id,
            "request_id": request_id,
            "conv_id": rec.conv_id,
            "day": (rec.ts or naive_utc(now)).date(),  # the rewrite's UTC day
            "stratum": MANUAL,
            "priority": PRIORITY["control"],
            "inclusion_prob": 0.0,
            "kinds": [],
            "words": [],
            "model": model,
            "prompt_version": prompt_version,
            "state": "pending",
            "due_at": now,
            "created_at": now,
        }
        # insert-or-ignore: a concurrent admission or verdict may have queued the record meanwhile
        session.execute(insert_ignore(session, QueueItem, ["record_id"]), [row])
        session.flush()
        item_id = session.scalar(select(QueueItem.id).where(QueueItem.record_id == rec.id))
    else:
        # A withdrawn item is no longer part of its day's sample: like a request never queued, it
        # becomes a manual item (π 0), which later admissions leave alone.
        session.execute(
            update(QueueItem)
            .where(QueueItem.id == item_id, QueueItem.state == WITHDRAWN)
            .values(
                state="pending",
                stratum=MANUAL,
                priority=PRIORITY["control"],
                inclusion_prob=0.0,
                due_at=now,
                finished_at=None,
            )
            .execution_options(synchronize_session=False)
        )
        # A finished item is reopened for this re-review; compare-and-set, so of two concurrent
        # re-reviewers one reopens and claims it and the other meets the usual claim refusal.
        session.execute(
            update(QueueItem)
            .where(QueueItem.id == item_id, QueueItem.state.in_(("done", "skipped")))
            .values(
                state="pending", claimed_by=None, claimed_at=None, lease_expires_at=None, finished_at=None
            )
            .execution_options(synchronize_session=False)
        )
    return record_verdict(
        session=session,
        item_id=int(item_id),  # type: ignore[arg-type]
        reviewer=reviewer,
        label=label,
        artifact=artifact,
        now=now,
        corrected_query=corrected_query,
        must_include=must_include,
        must_not_include=must_not_include,
        note=note,
        lease=lease,
        adjudication=adjudication,
        again=True,
        accepted=accepted,
    )


@dataclass(frozen=True, slots=True)
class VerdictRow:
    """A stored verdict as plain data (the newest of an item is its verdict); ``accepted_terms`` as
    ``Verdict.accepted_terms`` (which terms were accepted suggestions; None before migration 0014)."""

    id: int
    queue_item_id: int
    request_id: str
    reviewer: str
    artifact: str
    label: str
    corrected_query: str | None
    must_include: list[str]
    must_not_include: list[str]
    note: str | None
    created_at: datetime
    accepted_terms: dict[str, list[str]] | None = None


def latest_verdict(*, session: Session, item_id: int, reviewer: str | None = None) -> VerdictRow | None:
    """The newest verdict on queue item ``item_id`` (by ``reviewer``, when given), or ``None``."""
    stmt = select(Verdict).where(Verdict.queue_item_id == item_id)
    if reviewer is not None:
        stmt = stmt.where(Verdict.reviewer == reviewer)
    v = session.scalars(stmt.order_by(Verdict.id.desc()).limit(1)).first()
    if v is None:
        return None
    return to_row(VerdictRow, v)


@dataclass(frozen=True, slots=True)
class Throughput:
    """Verdicts one reviewer gave on one UTC day."""

    day: date
    reviewer: str
    verdicts: int


def reviewer_throughput(*, session: Session, now: datetime, days: int = 14) -> list[Throughput]:
    """Verdicts per UTC day and reviewer over the last ``days`` days up to ``now``, oldest day first."""
    since = now - timedelta(days=days)
    day = func.date(Verdict.created_at)
    stmt = (
        select(day, Verdict.reviewer, func.count())
        .where(Verdict.created_at >= since)
        .group_by(day, Verdict.reviewer)
        .order_by(day, Verdict.reviewer)
    )
    return [
        Throughput(d if isinstance(d, date) else date.fromisoformat(str(d)), reviewer, int(n))
        for d, reviewer, n in session.execute(stmt)
    ]


def verdicts_since(*, session: Session, reviewer: str, since: datetime) -> int:
    """How many queue items ``reviewer`` gave a verdict on since ``since`` (items, not verdicts: a
    changed verdict is the same item; the "i" of the Item page's "item i of N")."""
    return int(
        session.scalar(
            select(func.count(distinct(Verdict.queue_item_id))).where(
                Verdict.reviewer == reviewer, Verdict.created_at >= naive_utc(since)
            )
        )
        or 0
    )


def propose_alias(
    *,
    session: Session,
    queue_item_id: int,
    proposer: str,
    members: Sequence[str],
    now: datetime,
    note: str | None = None,
) -> int:
    """Store a proposed alias group from the review of queue item ``queue_item_id``; returns its id.

    ``members`` are stripped of surrounding and repeated whitespace and deduplicated ignoring case
    (first spelling kept). Raises ``ProposalError`` when fewer than two distinct members remain (the
    alias file's schema needs two) or the queue item does not exist. Commits.
    """
    clean = clean_members(members)
    if len(clean) < 2:
        raise ProposalError(f"an alias group needs at least two distinct members, got {clean!r}")
    item = session.get(QueueItem, queue_item_id)
    if item is None:
        raise ProposalError(f"no queue item {queue_item_id}")
    proposal = AliasProposal(
        queue_item_id=queue_item_id,
        request_id=item.request_id,
        proposer=proposer,
        members=clean,
        note=note or None,
        created_at=now,
    )
    session.add(proposal)
    session.commit()
    return proposal.id


def list_proposals(*, session: Session, since: datetime | None = None) -> list[ProposalRow]:
    """Stored proposals, oldest first (``since``: created at or after, naive UTC)."""
    stmt = select(AliasProposal).order_by(AliasProposal.created_at, AliasProposal.id)
    if since is not None:
        stmt = stmt.where(AliasProposal.created_at >= since)
    return [to_row(ProposalRow, p) for p in session.scalars(stmt)]


# --- learned word evidence (issue 15) ---------------------------------------------------------------

CONFIRMING: dict[str, tuple[str, str]] = {
    "added_content_word": (Label.FABRICATED_CONSTRAINT.value, "must_not_include"),
    "intent_dropped": (Label.DROPPED_CONSTRAINT.value, "must_include"),
}
"""Per learned kind: the verdict label that confirms its words, and the assertion field that names them
(the verdict form suggests the added words as must-not terms and the lost words as must terms)."""


def _flagged_words(kind: str, evidence: dict[str, Any]) -> list[tuple[str, set[str], str]]:
    """``(lemma, names, severity)`` of each word a finding of ``kind`` flagged
    (``monitor.checks.learned.flagged_words``): ``names`` are the match keys an assertion term may give
    it (its lemma, its text, the text of the unit it is part of, "free tier" for "tier"), ``severity``
    its own grade before any step (a lost word of ``intent_dropped`` counts as medium)."""
    out: list[tuple[str, set[str], str]] = []
    for w, unit in flagged_words(evidence):
        if not isinstance(w.get("lemma"), str):
            continue
        own = w.get("graded") or w
        texts = (w["lemma"], w.get("text", ""), unit.get("text", "") if unit else "")
        severity = str(own.get("severity", "low")) if kind == "added_content_word" else "medium"
        out.append((w["lemma"], {match_key(str(x)) for x in texts} - {""}, severity))
    return out


def _reviewed(
    session: Session, checks: Sequence[tuple[str, int]]
) -> tuple[dict[int, list[Verdict]], dict[int, QueueItem], dict[int, list[Finding]]]:
    """The verdicts of every reviewed queue item by item id (in the order given), the items, and the
    findings of the current ``checks`` on their records by record id: what the learning reads."""
    verdicts: dict[int, list[Verdict]] = {}
    for v in session.scalars(select(Verdict).order_by(Verdict.queue_item_id, Verdict.id)):
        verdicts.setdefault(v.queue_item_id, []).append(v)
    items = (
        {i.id: i for i in session.scalars(select(QueueItem).where(QueueItem.id.in_(list(verdicts))))}
        if verdicts
        else {}
    )
    findings: dict[int, list[Finding]] = {}
    if items and checks:
        stmt = select(Finding).where(
            Finding.record_id.in_([i.record_id for i in items.values()]),
            tuple_(Finding.check_id, Finding.check_version).in_(list(checks)),
        )
        for f in session.scalars(stmt):
            findings.setdefault(f.record_id, []).append(f)
    return verdicts, items, findings


def learned_table(*, session: Session, checks: Sequence[tuple[str, int]]) -> LearnedTable:
    """The learned word evidence of the store (``monitor.checks.learned``), from every queue item with a
    verdict and its findings of the current ``checks`` of the learned kinds.

    Per item, its standing verdict counts (the newest: a re-review replaces the first; on a doubly
    reviewed item the agreed or adjudicated one, none while it is open), once per (kind, lemma). A fine
    verdict (``ok``, ``false_alarm_synonym``) dismisses every word the item's findings flagged, at any
    severity, and the distinct reviewers of the item's fine verdicts are counted; a confirming verdict
    (:data:`CONFIRMING`) confirms the words it names, or, naming none, the item's words graded medium or
    above on their own. The rewriter is the item's prompt version, else its model
    (``monitor.checks.learned.rewriter_key``). Each entry's prior pool (``others``) is the rewriter's
    dismissed and confirmed items of the kind where the word was not flagged. An operator's reset drops
    the verdicts before it; a pin fixes the entry's step (an entry with a pin and no verdicts is listed
    too). Reads only.
    """
    current = [(c, v) for c, v in checks if c in CONFIRMING]
    overrides = {(o.kind, o.rewriter, o.lemma): o for o in session.scalars(select(LearnedOverride))}
    counts: dict[tuple[str, str, str], dict[str, Any]] = {}

    # per (kind, rewriter): the items dismissed and confirmed, the pool of each word's prior
    pools: dict[tuple[str, str], tuple[set[int], set[int]]] = {}

    def entry(key: tuple[str, str, str]) -> dict[str, Any]:
        return counts.setdefault(
            key, {"dismissed": 0, "confirmed": 0, "reviewers": set(), "last": None, "items": set()}
        )

    if current:
        verdicts, items, findings = _reviewed(session, current)
        for item_id, vs in verdicts.items():
            item = items.get(item_id)
            if item is None:
                continue
            rewriter = rewriter_key(item.prompt_version, item.model)
            for f in findings.get(item.record_id, []):
                if f.kind not in CONFIRMING:
                    continue
                seen: set[str] = set()
                for lemma, names, severity in _flagged_words(f.kind, f.evidence):
                    if lemma in seen:
                        continue
                    seen.add(lemma)
                    key = (f.kind, rewriter, lemma)
                    reset = overrides[key].reset_at if key in overrides else None
                    live = [v for v in vs if reset is None or v.created_at >= reset]
                    if not live:
                        continue
                    newest = _standing(live, item.reviews_needed)
                    if newest is None:
                        continue  # awaits its second reviewer or an adjudicator
                    label, field = CONFIRMING[f.kind]
                    pool = pools.setdefault(key[:2], (set(), set()))
                    if newest.label in FINE_LABELS:
                        e = entry(key)
                        e["dismissed"] += 1
                        e["reviewers"] |= {v.reviewer for v in live if v.label in FINE_LABELS}
                        pool[0].add(item_id)
                    elif newest.label == label:
                        named: list[str] = getattr(newest, field) or []
                        if (named and any(match_key(t) in names for t in named)) or (
                            not named and SEVERITY_RANK.get(severity, 0) >= SEVERITY_RANK["medium"]
                        ):
                            entry(key)["confirmed"] += 1
                            pool[1].add(item_id)
                        else:
                            continue
                    else:
                        continue
                    e = entry(key)
                    e["items"].add(item_id)
                    if e["last"] is None or newest.created_at > e["last"]:
                        e["last"] = newest.created_at
    for key in overrides:
        if overrides[key].pinned is not None:
            entry(key)
    return LearnedTable.of(
        WordEvidence(
            kind=k[0],
            rewriter=k[1],
            lemma=k[2],
            dismissed=c["dismissed"],
            confirmed=c["confirmed"],
            reviewers=len(c["reviewers"]),
            pinned=overrides[k].pinned if k in overrides else None,
            last_at=c["last"],
            others=_others(pools.get(k[:2]), c["items"]),
        )
        for k, c in counts.items()
    )


def _others(pool: tuple[set[int], set[int]] | None, items: set[int]) -> tuple[int, int]:
    """(dismissed, confirmed) items of the pool where the word was not flagged."""
    if pool is None:
        return 0, 0
    return len(pool[0] - items), len(pool[1] - items)


def rewriter_known(*, session: Session, rewriter: str) -> bool:
    """Whether a stored rewrite names ``rewriter`` as its prompt version, or as its model when it logged
    no prompt version (``monitor.checks.learned.rewriter_key``)."""
    stmt = select(Record.id).where(
        (Record.prompt_version == rewriter) | ((Record.prompt_version.is_(None)) & (Record.model == rewriter))
    )
    return session.scalar(stmt.limit(1)) is not None


PIN_STEPS = (-2, -1, 0, 1)
"""The steps an operator may pin an entry to."""


def set_learned_override(
    *,
    session: Session,
    kind: str,
    rewriter: str,
    lemma: str,
    operator: str,
    now: datetime,
    pin: int | None = None,
    reset: bool = False,
    note: str | None = None,
) -> None:
    """Pin (``pin``: one of :data:`PIN_STEPS`) or reset (``reset``: forget the verdicts so far and any
    pin) one learned entry; ``pin=None, reset=False`` removes a pin. Commits; idempotent (one row per
    entry, updated in place). Raises ``QueueError`` for an unknown kind or step, or both actions at once.
    """
    if kind not in CONFIRMING:
        raise QueueError(f"unknown learned kind {kind!r}; one of: {', '.join(CONFIRMING)}")
    if pin is not None and pin not in PIN_STEPS:
        raise QueueError(f"a pin is one of {', '.join(map(str, PIN_STEPS))} steps, got {pin}")
    if pin is not None and reset:
        raise QueueError("pin or reset, not both")
    lemma = lemma.strip().lower()
    if not lemma:
        raise QueueError("the word must not be empty")
    row = session.scalars(
        select(LearnedOverride).where(
            LearnedOverride.kind == kind, LearnedOverride.rewriter == rewriter, LearnedOverride.lemma == lemma
        )
    ).first()
    if row is None:
        row = LearnedOverride(kind=kind, rewriter=rewriter, lemma=lemma, set_by=operator, updated_at=now)
        session.add(row)
    row.pinned = pin
    if reset:
        row.reset_at = now
    row.set_by, row.note, row.updated_at = operator, note or row.note, now
    session.commit()


def standing_reviews(
    *, session: Session, checks: Sequence[tuple[str, int]]
) -> list[tuple[QueueItem, Verdict, list[Finding]]]:
    """Every queue item with a standing verdict (the newest; on a doubly reviewed item the agreed or
    adjudicated one, none while it is open; ``monitor.verdicts.standing_verdict``), with that
    verdict and the findings of the current ``checks`` on its record, in queue item order. Reads only:
    what the calibration of the grading steps learns from (``monitor.stats.store.calibration``)."""
    verdicts, items, findings = _reviewed(session, checks)
    out = []
    for item_id, vs in verdicts.items():
        item = items.get(item_id)
        standing = _standing(vs, item.reviews_needed) if item is not None else None
        if item is not None and standing is not None:
            out.append((item, standing, findings.get(item.record_id, [])))
    return out
