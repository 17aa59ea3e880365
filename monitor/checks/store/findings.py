"""Read findings back and grade them again. Keyword-only, session in, plain dataclasses out.

The runs themselves (which records were checked at which versions, storing outcomes) are
``monitor.checks.store.runs``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import Session

from monitor.checks.profile import RewriterProfile
from monitor.checks.store.runs import run_statuses
from monitor.severity import SEVERITY_RANK
from monitor.store.engine import insert_ignore
from monitor.store.models import AddedLemma, Event, Finding, Record
from monitor.store.rows import to_row


@dataclass(frozen=True, slots=True)
class FindingRow:
    """A stored finding as plain data (what the CLI and dashboard receive)."""

    request_id: str
    conv_id: str
    kind: str
    severity: str
    words: list[str]
    reason: str
    evidence: dict[str, Any]
    check_id: str
    check_version: int
    rules_hash: str = ""
    step: str | None = None
    """The grading step that set the severity (None for a finding stored before steps were recorded)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "kind": self.kind,
            "severity": self.severity,
            "check_id": self.check_id,
            "step": self.step,
            "words": self.words,
            "reason": self.reason,
        }


def finding_row(f: Finding, conv_id: str) -> FindingRow:
    """The plain row of stored finding ``f`` of a rewrite in conversation ``conv_id``."""
    return to_row(FindingRow, f, conv_id=conv_id)


RESTYLE_PAGE = 500
"""Findings :func:`restyle_findings` reads and grades at a time (their ids in one IN list: SQLite before
3.32 takes at most 999 parameters a statement)."""


def day_spans(days: Iterable[date]) -> list[tuple[datetime, datetime]]:
    """``days`` (UTC) as the fewest half-open ``[start, end)`` spans of naive UTC datetimes, each a run of
    consecutive days, in order: ``{Mar 4, Mar 5, Mar 7}`` -> ``[(Mar 4 00:00, Mar 6 00:00), (Mar 7 00:00,
    Mar 8 00:00)]``."""
    spans: list[tuple[datetime, datetime]] = []
    for day in sorted(set(days)):
        start = datetime.combine(day, time.min)
        if spans and spans[-1][1] == start:
            spans[-1] = (spans[-1][0], start + timedelta(days=1))
        else:
            spans.append((start, start + timedelta(days=1)))
    return spans


def restyle_findings(*, session: Session, days: Iterable[date], check_rate: float = 1.0) -> int:
    """Grade the ``added_content_word`` findings of rewrites on ``days`` (UTC) again against the store's
    rewriter profile (``monitor.checks.added_words.restyle``); returns how many changed. Flushes, does not
    commit; idempotent (a second run with the same store changes nothing).

    Queue admission runs this before it plans a day, so the day's strata do not depend on the order in
    which its rewrites were checked. ``check_rate`` is the check job's (the profile's base, see
    :func:`load_profile`). Findings of other check versions are left as they are.

    Consecutive days are read together (:func:`day_spans`): their findings' ids first, in one scan, then
    the findings a page at a time. Each finding is graded on its own against counts over the whole store,
    so which findings share a page changes no grade. Paging the scan itself (the next ``RESTYLE_PAGE``
    after the last id) read the span's findings again for each page: 12 s for a 20,000-rewrite run's days
    on a store of 200,000 rewrites, most of its admission.
    """
    from monitor.checks import added_words
    from monitor.checks.base import Finding as Found

    changed = 0
    # the counts are the same for every day and page: each is read once (ProfileReader)
    reader = ProfileReader(session=session, check_rate=check_rate)
    for start, end in day_spans(days):
        ids = session.scalars(
            select(Finding.id)
            .join(Record, Record.id == Finding.record_id)
            .where(
                Finding.check_id == added_words.CHECK_ID,
                Finding.check_version == added_words.VERSION,
                Record.ts >= start,
                Record.ts < end,
            )
            .order_by(Finding.id)
        ).all()
        for first in range(0, len(ids), RESTYLE_PAGE):
            rows = session.execute(
                select(Finding, Record.prompt_version, Record.conv_id)
                .join(Record, Record.id == Finding.record_id)
                .where(Finding.id.in_(ids[first : first + RESTYLE_PAGE]))
                .order_by(Finding.id)
            ).all()
            profile = reader.load(
                prompt_versions={pv for _, pv, _ in rows}, conv_ids={conv for _, _, conv in rows}
            )
            for f, pv, _ in rows:
                stored = Found(
                    f.kind, f.severity, f.evidence, f.reason, f.check_id, f.check_version, f.step or ""
                )
                new = added_words.restyle(stored, profile, pv)
                if new is None:
                    continue
                f.severity, f.severity_rank = new.severity, SEVERITY_RANK[new.severity]
                f.reason, f.evidence, f.words, f.step = new.reason, new.evidence, new.words, new.step
                changed += 1
            session.flush()
    return changed


def list_findings(
    *,
    session: Session,
    checks: Sequence[tuple[str, int]],
    request_id: str | None = None,
    kind: str | None = None,
    min_severity: str = "low",
    limit: int | None = None,
    conv_id: str | None = None,
) -> list[FindingRow]:
    """Stored findings of the current check versions, most severe first, then by record and order.

    ``request_id``, ``kind`` and ``conv_id`` narrow them (``conv_id`` tells apart rewrites of two
    conversations logged with one request id)."""
    stmt = (
        select(Finding, Record.conv_id)
        .join(Record, Record.id == Finding.record_id)
        .where(
            tuple_(Finding.check_id, Finding.check_version).in_(checks),
            Finding.severity_rank >= SEVERITY_RANK[min_severity],
        )
        .order_by(Finding.severity_rank.desc(), Finding.record_id, Finding.check_run_id, Finding.ordinal)
    )
    if request_id is not None:
        stmt = stmt.where(Finding.request_id == request_id)
    if kind is not None:
        stmt = stmt.where(Finding.kind == kind)
    if conv_id is not None:
        stmt = stmt.where(Record.conv_id == conv_id)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [finding_row(f, conv_id) for f, conv_id in session.execute(stmt)]


@dataclass(slots=True)
class StoredRewrite:
    """What the store holds about one logged rewrite, for scoring it against a label.

    ``statuses`` maps a check id to ``(status, rules_hash)`` of its run at the version asked for;
    ``findings`` are the findings of those versions (each with its ``rules_hash``), which the same run owns
    (``monitor.checks.store.runs.store_outcomes``).
    """

    request_id: str
    conv_id: str
    model: str | None
    prompt_version: str | None
    statuses: dict[str, tuple[str, str]] = field(default_factory=dict)
    findings: list[FindingRow] = field(default_factory=list)
    selection: str | None = None
    """The rewrite event's ``source.selection`` (how the item was sampled: ``natural``, ``traffic``...),
    when it logged one."""


def stored_rewrites(
    *, session: Session, request_ids: Sequence[str], checks: Sequence[tuple[str, int]]
) -> dict[str, StoredRewrite]:
    """The stored rewrites with these request ids, with their check statuses and findings at ``checks``
    (``(check_id, version)`` pairs); a request id with no logged rewrite is absent from the result.

    Reads in chunks of 500 ids (SQLite's bound-parameter limit).
    """
    out: dict[str, StoredRewrite] = {}
    ids = list(set(request_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        ids_of: dict[int, str] = {}
        for rid, req, conv_id, model, prompt_version, raw in session.execute(
            select(
                Record.id, Record.request_id, Record.conv_id, Record.model, Record.prompt_version, Event.raw
            )
            .join(Event, Event.id == Record.rewrite_event_id)
            .where(Record.request_id.in_(chunk))
        ):
            source = raw.get("source") if isinstance(raw, dict) else None
            selection = source.get("selection") if isinstance(source, dict) else None
            ids_of[rid] = req
            out[req] = StoredRewrite(
                req,
                conv_id,
                model,
                prompt_version,
                selection=selection if isinstance(selection, str) else None,
            )
        for f, conv_id in session.execute(
            select(Finding, Record.conv_id)
            .join(Record, Record.id == Finding.record_id)
            .where(Finding.request_id.in_(chunk), tuple_(Finding.check_id, Finding.check_version).in_(checks))
        ):
            if f.request_id in out:
                out[f.request_id].findings.append(finding_row(f, conv_id))
        for rid, statuses in run_statuses(session=session, record_ids=sorted(ids_of), checks=checks).items():
            out[ids_of[rid]].statuses.update(statuses)
    return out


@dataclass(frozen=True, slots=True)
class RewriteMeta:
    """What an export says of the rewrite a finding judges: its time (naive UTC), model, prompt version
    and, when it came from a trace (``monitor.otel.mapping``), the trace and span ids of its rewrite span."""

    ts: datetime | None
    model: str | None
    prompt_version: str | None
    trace_id: str | None = None
    span_id: str | None = None


def rewrite_meta(*, session: Session, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], RewriteMeta]:
    """``(conv_id, request_id)`` -> :class:`RewriteMeta`, for the keys that have a logged rewrite. Reads in
    chunks of 500 request ids."""
    wanted = set(keys)
    out: dict[tuple[str, str], RewriteMeta] = {}
    ids = sorted({r for _, r in wanted})
    for start in range(0, len(ids), 500):
        rows = session.execute(
            select(
                Record.conv_id, Record.request_id, Record.ts, Record.model, Record.prompt_version, Event.raw
            )
            .join(Event, Event.id == Record.rewrite_event_id)
            .where(Record.request_id.in_(ids[start : start + 500]))
        )
        for conv, req, ts, model, pv, raw in rows:
            if (conv, req) in wanted:
                otel = raw.get("otel") if isinstance(raw, dict) else None
                otel = otel if isinstance(otel, dict) else {}
                trace, span = otel.get("trace_id"), otel.get("span_id")
                out[(conv, req)] = RewriteMeta(
                    ts,
                    model,
                    pv,
                    trace if isinstance(trace, str) else None,
                    span if isinstance(span, str) else None,
                )
    return out


def evaluation_events(
    *, session: Session, rows: Sequence[FindingRow], ids_mode: str, version: str, now: datetime
) -> Iterator[dict[str, Any]]:
    """``rows`` as OpenTelemetry evaluation events (``findings --otlp``): OTLP JSON ``LogsData`` objects
    of ``monitor.otel.evaluations.evaluation_lines``, each rewrite's time, model, prompt version and trace
    ids read here, the ids going out as the ``ids_mode`` setting gives them
    (``monitor.store.keys.outbound_ids``: a missing key is made, so the caller commits). The objects
    are built as they are iterated, without the session."""
    from monitor.otel.evaluations import evaluation_lines
    from monitor.store.keys import outbound_ids

    meta = rewrite_meta(session=session, keys=[(r.conv_id, r.request_id) for r in rows])
    ids = outbound_ids(session=session, mode=ids_mode)
    return evaluation_lines(rows, meta, version=version, now=now, ids=ids)


def record_added_lemmas(*, session: Session, rows: Sequence[tuple[str | None, str, str]]) -> None:
    """Store ``(prompt_version, lemma, conv_id)`` rows of the rewriter profile (``""`` for no prompt
    version); a row already stored is left alone (insert-or-ignore on the unique key). Flushes, does not
    commit. Lemmas longer than the column are cut (a runaway token is no style)."""
    values = [
        {"prompt_version": (pv or "")[:255], "lemma": lemma[:255], "conv_id": conv[:255]}
        for pv, lemma, conv in rows
    ]
    for start in range(0, len(values), 500):
        session.execute(
            insert_ignore(session, AddedLemma, ["prompt_version", "lemma", "conv_id"]),
            values[start : start + 500],
        )


def profile_conversations(
    *, session: Session, versions: Sequence[str], check_rate: float = 1.0
) -> dict[str, int]:
    """Conversations with a checked rewrite per prompt version of ``versions`` (``""`` for none): the
    base of the rewriter profile (:func:`load_profile`). With ``check_rate`` < 1, those of the checked
    sample (``check_draw`` below the rate), the same records the lemmas are learned from, so the share
    is not diluted by records never checked. A scan of the records: 150 ms on a store of 200,000."""
    conversations: dict[str, int] = {}
    pv_col = func.coalesce(Record.prompt_version, "")
    sampled = [Record.check_draw < check_rate] if check_rate < 1.0 else []
    for pv, n in session.execute(
        select(pv_col, func.count(func.distinct(Record.conv_id)))
        .where(Record.rewrite_event_id.is_not(None), pv_col.in_(versions), *sampled)
        .group_by(pv_col)
    ):
        conversations[pv] = int(n)
    return conversations


PROFILE_PAIRS = 200_000
"""(prompt version, lemma) counts, zero ones included, a :class:`ProfileReader` keeps before it lets them
go: about 30 MB. A job over the shared logs (3,385 rewrites) keeps 2,392; one over the bench's
non-repeating corpus (``benchmarks.corpus``) 6,416, at 20,000 and at 200,000 rewrites alike, so each is
read once. A store of hundreds of thousands of distinct added lemmas has some read again."""


class ProfileReader:
    """The rewriter profile read part by part, each count once: what one job reads batch after batch
    (the check loop, queue admission's pages of findings).

    :meth:`load` gives what :func:`load_profile` gives for the same arguments, as the store was when each
    count was first read. Without it every batch counted the store's conversations again (150 ms a batch
    at 200,000 rewrites, a scan of the records: a backfill's cost grew with the square of its size). The
    counts cannot change under a job that stores no lemma while it reads them: the check job stores its
    records' lemmas before its first batch (``monitor.worker.jobs``). What a concurrent job stores
    meanwhile counts from the next job, and queue admission grades the days it plans again with a reader
    made for it (:func:`restyle_findings`)."""

    def __init__(self, *, session: Session, check_rate: float = 1.0) -> None:
        self.session, self.check_rate = session, check_rate
        self._conversations: dict[str, int] = {}
        self._added: dict[tuple[str, str], int] = {}
        self._counted: set[str] = set()  # versions whose conversations were counted (their count may be 0)

    def load(self, *, prompt_versions: Iterable[str | None], conv_ids: Iterable[str]) -> RewriterProfile:
        """The profile of these prompt versions, restricted to the lemmas added in ``conv_ids``: see
        :func:`load_profile`."""
        versions = sorted({pv or "" for pv in prompt_versions})
        if not versions:
            return RewriterProfile()
        convs = sorted(set(conv_ids))
        wanted: set[str] = set()
        for start in range(0, len(convs), 500):
            wanted.update(
                self.session.scalars(
                    select(AddedLemma.lemma)
                    .where(
                        AddedLemma.conv_id.in_(convs[start : start + 500]),
                        AddedLemma.prompt_version.in_(versions),
                    )
                    .distinct()
                )
            )
        if len(self._added) > PROFILE_PAIRS:
            self._added.clear()  # read again as needed: memory stays bounded on a store of many lemmas
        uncounted = [pv for pv in versions if pv not in self._counted]
        if uncounted:
            self._conversations.update(
                profile_conversations(session=self.session, versions=uncounted, check_rate=self.check_rate)
            )
            self._counted.update(uncounted)
        new = sorted({lemma for lemma in wanted for pv in versions if (pv, lemma) not in self._added})
        for start in range(0, len(new), 500):
            chunk = new[start : start + 500]
            read = {
                (pv, lemma): int(n)
                for pv, lemma, n in self.session.execute(
                    select(AddedLemma.prompt_version, AddedLemma.lemma, func.count())
                    .where(AddedLemma.prompt_version.in_(versions), AddedLemma.lemma.in_(chunk))
                    .group_by(AddedLemma.prompt_version, AddedLemma.lemma)
                )
            }
            for pair in ((pv, lemma) for pv in versions for lemma in chunk):
                self._added.setdefault(pair, read.get(pair, 0))  # a pair read before keeps its count
        conversations = {pv: self._conversations[pv] for pv in versions if self._conversations.get(pv)}
        added = {(pv, lemma): n for pv in versions for lemma in wanted if (n := self._added[(pv, lemma)])}
        return RewriterProfile(conversations, added)


def load_profile(
    *,
    session: Session,
    prompt_versions: Iterable[str | None],
    conv_ids: Iterable[str],
    check_rate: float = 1.0,
) -> RewriterProfile:
    """The rewriter profile of these prompt versions, restricted to the lemmas added in ``conv_ids`` (what
    a batch needs): conversations per prompt version and conversations per (version, lemma). With
    ``check_rate`` < 1 the conversations are those of the checked sample (``check_draw`` below the rate),
    the same records the lemmas are learned from, so the share is not diluted by records never checked.
    One read; a job reading batch after batch keeps a :class:`ProfileReader`."""
    return ProfileReader(session=session, check_rate=check_rate).load(
        prompt_versions=prompt_versions, conv_ids=conv_ids
    )
