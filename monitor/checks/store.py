"""Store check outcomes and read findings back. Keyword-only, session in, plain dataclasses out."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, Literal, overload

from sqlalchemy import CTE, BindParameter, Subquery, delete, func, select, tuple_
from sqlalchemy.orm import Session

from monitor.checks.profile import RewriterProfile
from monitor.severity import SEVERITY_RANK
from monitor.store.engine import bulk_insert_ignore, insert_ignore, rowcount
from monitor.store.models import AddedLemma, CheckRun, Event, Finding, Record
from monitor.store.rows import to_row

if TYPE_CHECKING:
    from monitor.checks.base import CheckOutcome


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


@dataclass(frozen=True, slots=True)
class Coverage:
    """How many rewrites a check ran on, was skipped on, and has not yet seen (at its current version)."""

    check_id: str
    version: int
    ran: int
    skipped: int
    rewrites: int
    top_skip_reason: str | None = None

    @property
    def share_ran(self) -> float | None:
        return self.ran / self.rewrites if self.rewrites else None


@overload
def fully_checked(
    checks: Sequence[tuple[str, int]],
    start: datetime | BindParameter[datetime] | None = None,
    end: datetime | BindParameter[datetime] | None = None,
    *,
    cte: Literal[False] = False,
) -> Subquery: ...
@overload
def fully_checked(
    checks: Sequence[tuple[str, int]],
    start: datetime | BindParameter[datetime] | None = None,
    end: datetime | BindParameter[datetime] | None = None,
    *,
    cte: Literal[True],
) -> CTE: ...
def fully_checked(
    checks: Sequence[tuple[str, int]],
    start: datetime | BindParameter[datetime] | None = None,
    end: datetime | BindParameter[datetime] | None = None,
    *,
    cte: bool = False,
) -> Subquery | CTE:
    """Subquery (column ``record_id``) of the records with a run of every current check in ``checks``,
    of rewrites with ``start <= ts < end`` when bounds are given (naive UTC datetimes, or parameters
    bound when the statement runs); with ``cte``, a common table expression named ``checked``, for a
    statement that reads it more than once.

    The bounds sit inside the grouping, joined through the record's time (indexed), so a bounded read
    costs the window's runs rather than every run in the store.
    """
    stmt = select(CheckRun.record_id).where(tuple_(CheckRun.check_id, CheckRun.check_version).in_(checks))
    if start is not None or end is not None:
        stmt = stmt.join(Record, Record.id == CheckRun.record_id)
        if start is not None:
            stmt = stmt.where(Record.ts >= start)
        if end is not None:
            stmt = stmt.where(Record.ts < end)
    grouped = stmt.group_by(CheckRun.record_id).having(func.count() >= len(checks))
    return grouped.cte("checked") if cte else grouped.subquery()


def unchecked_record_ids(
    *,
    session: Session,
    checks: Sequence[tuple[str, int]],
    after_id: int,
    limit: int,
    check_rate: float = 1.0,
    claim: bool = False,
) -> list[int]:
    """Ids (ascending, above ``after_id``) of records with a rewrite lacking a run of some current check.

    ``checks`` is the list of ``(check_id, version)`` currently registered; with ``check_rate`` < 1
    only records whose ``check_draw`` is below the rate are returned. With ``claim`` on PostgreSQL
    the rows are locked ``FOR UPDATE SKIP LOCKED`` until the caller's transaction ends, so concurrent
    checkers take disjoint batches (on SQLite, one writer at a time, it changes nothing).
    """
    # Candidates are read by primary-key range, then their runs counted for that range only: two
    # index range scans per batch whatever the planner knows (a correlated count per record became a
    # scan of check_runs per record on a fresh PostgreSQL table without statistics).
    scan = max(limit, 1000)
    current = tuple_(CheckRun.check_id, CheckRun.check_version).in_(checks)
    pg_claim = claim and session.get_bind().dialect.name == "postgresql"

    def unfinished(ids: list[int]) -> list[int]:
        full = {
            rid
            for rid, n in session.execute(
                select(CheckRun.record_id, func.count())
                .where(current, CheckRun.record_id >= ids[0], CheckRun.record_id <= ids[-1])
                .group_by(CheckRun.record_id)
            )
            if n >= len(checks)
        }
        return [i for i in ids if i not in full]

    after = after_id
    while True:
        window = select(Record.id).where(Record.rewrite_event_id.is_not(None), Record.id > after)
        if check_rate < 1.0:
            window = window.where(Record.check_draw < check_rate)
        candidates = list(session.scalars(window.order_by(Record.id).limit(scan)))
        if not candidates:
            return []
        ids = unfinished(candidates)[:limit]
        if ids and pg_claim:
            locked = list(
                session.scalars(
                    select(Record.id)
                    .where(Record.id.in_(ids))
                    .order_by(Record.id)
                    .with_for_update(skip_locked=True, of=Record)
                )
            )
            # Another checker may have committed some of them between the count and the lock; a new
            # statement sees its commit, and nobody else can check them while we hold them.
            ids = unfinished(locked) if locked else []
        if ids:
            return ids
        after = candidates[-1]


def clear_runs(*, session: Session, checks: Sequence[tuple[str, int]]) -> int:
    """Delete the runs and findings of these check versions so they run again; returns runs deleted.

    The rewriter profile (``added_lemmas``) is emptied too: the re-check learns it again from every record
    under the current rules, so rows written under other rules or versions never inflate its counts.
    """
    run_ids = select(CheckRun.id).where(tuple_(CheckRun.check_id, CheckRun.check_version).in_(checks))
    session.execute(delete(Finding).where(Finding.check_run_id.in_(run_ids)))
    session.execute(delete(AddedLemma))
    result = session.execute(
        delete(CheckRun).where(tuple_(CheckRun.check_id, CheckRun.check_version).in_(checks))
    )
    return rowcount(result)


def store_outcomes(
    *, session: Session, outcomes: Sequence[tuple[int, str, CheckOutcome]], now: datetime
) -> int:
    """Store ``(record_id, request_id, CheckOutcome)`` triples in two statements; returns findings stored.

    Idempotent: a run already stored for (record, check, version) is left as it is and its findings
    are not added again (the unique key lives in the schema, so concurrent checkers agree too).
    """
    if not outcomes:
        return 0
    record_ids = [record_id for record_id, _req, _out in outcomes]

    def stored_runs(ids: list[int], check_ids: set[str] | None = None) -> dict[tuple[int, str, int], int]:
        stmt = select(CheckRun.id, CheckRun.record_id, CheckRun.check_id, CheckRun.check_version).where(
            CheckRun.record_id.in_(ids)
        )
        if check_ids is not None:
            stmt = stmt.where(CheckRun.check_id.in_(sorted(check_ids)))
        return {(r.record_id, r.check_id, r.check_version): r.id for r in session.execute(stmt)}

    before = stored_runs(record_ids)
    runs = [
        {
            "record_id": record_id,
            "check_id": st.check_id,
            "check_version": st.version,
            "rules_hash": outcome.rules_hash,
            "status": st.status,
            "skip_reason": st.reason,
            "n_findings": st.n_findings,
            "checked_at": now,
        }
        for record_id, _req, outcome in outcomes
        for st in outcome.statuses
        if (record_id, st.check_id, st.version) not in before
    ]
    if not runs:
        return 0
    # No RETURNING: SQLAlchemy's insert-many-values with RETURNING is quadratic on SQLite.
    # Core inserts (the tables, not the mapped classes): the ORM's bulk path costs more than the
    # statements themselves here, and nothing needs ORM objects back; on SQLite the driver's own
    # executemany (:func:`bulk_insert_ignore`).
    bulk_insert_ignore(session, CheckRun, ["record_id", "check_id", "check_version"], runs)
    # The new runs' ids, read back only where a finding needs one: the records with findings, the checks
    # that found something (a third of the runs of the shared logs' records; reading back every run's
    # row cost as much as inserting them).
    found = [(record_id, f.check_id) for record_id, _req, outcome in outcomes for f in outcome.findings]
    run_ids = (
        {
            (rec, cid): rid
            for (rec, cid, ver), rid in stored_runs(
                sorted({rec for rec, _cid in found}), {cid for _rec, cid in found}
            ).items()
            if (rec, cid, ver) not in before
        }
        if found
        else {}
    )
    rows = []
    for record_id, request_id, outcome in outcomes:
        ordinal: dict[str, int] = {}
        for f in outcome.findings:
            run_id = run_ids.get((record_id, f.check_id))
            if run_id is None:  # stored before (or by a concurrent checker): so are its findings
                continue
            n = ordinal[f.check_id] = ordinal.get(f.check_id, -1) + 1
            rows.append(
                {
                    "check_run_id": run_id,
                    "ordinal": n,
                    "record_id": record_id,
                    "request_id": request_id,
                    "kind": f.kind,
                    "severity": f.severity,
                    "severity_rank": SEVERITY_RANK[f.severity],
                    "reason": f.reason,
                    "words": f.words,
                    "evidence": f.evidence,
                    "check_id": f.check_id,
                    "check_version": f.check_version,
                    "step": f.step,
                    "rules_hash": outcome.rules_hash,
                    "created_at": now,
                }
            )
    bulk_insert_ignore(session, Finding, ["check_run_id", "ordinal"], rows)
    return len(rows)


RESTYLE_PAGE = 1000
"""Findings :func:`restyle_findings` reads and grades at a time."""


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

    Consecutive days are read together, page by page (:func:`day_spans`): each finding is graded on its
    own against counts over the whole store, so which findings share a page changes no grade, and a
    backfill's hundred consecutive days cost two pages instead of a hundred reads and profile loads.
    """
    from monitor.checks import added_words
    from monitor.checks.base import Finding as Found

    changed = 0
    # Conversations per prompt version (the profile's base): the same for every day, counted once per
    # set of versions rather than once per page of findings (each count scans the checked rewrites).
    counted: dict[tuple[str, ...], dict[str, int]] = {}
    for start, end in day_spans(days):
        after = 0
        while True:
            rows = session.execute(
                select(Finding, Record.prompt_version, Record.conv_id)
                .join(Record, Record.id == Finding.record_id)
                .where(
                    Finding.check_id == added_words.CHECK_ID,
                    Finding.check_version == added_words.VERSION,
                    Record.ts >= start,
                    Record.ts < end,
                    Finding.id > after,
                )
                .order_by(Finding.id)
                .limit(RESTYLE_PAGE)
            ).all()
            if not rows:
                break
            after = rows[-1][0].id
            versions = {pv for _, pv, _ in rows}
            key = tuple(sorted(pv or "" for pv in versions))
            if key not in counted:
                counted[key] = profile_conversations(session=session, versions=key, check_rate=check_rate)
            profile = load_profile(
                session=session,
                prompt_versions=versions,
                conv_ids={conv for _, _, conv in rows},
                check_rate=check_rate,
                conversations=counted[key],
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
            if len(rows) < RESTYLE_PAGE:
                break  # the span's last page: asking for another would find nothing
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


def coverage(*, session: Session, checks: Sequence[tuple[str, int]]) -> list[Coverage]:
    """Per current check: rewrites it ran on, was skipped on (with the commonest reason), and the
    number of stored rewrites."""
    rewrites = session.scalar(select(func.count()).where(Record.rewrite_event_id.is_not(None))) or 0
    counts = {
        (cid, ver, status): n
        for cid, ver, status, n in session.execute(
            select(CheckRun.check_id, CheckRun.check_version, CheckRun.status, func.count())
            .where(tuple_(CheckRun.check_id, CheckRun.check_version).in_(checks))
            .group_by(CheckRun.check_id, CheckRun.check_version, CheckRun.status)
        )
    }
    reasons: dict[tuple[str, int], str | None] = {}
    for cid, ver, reason, _n in session.execute(
        select(CheckRun.check_id, CheckRun.check_version, CheckRun.skip_reason, func.count().label("n"))
        .where(tuple_(CheckRun.check_id, CheckRun.check_version).in_(checks), CheckRun.status == "skipped")
        .group_by(CheckRun.check_id, CheckRun.check_version, CheckRun.skip_reason)
        .order_by(func.count().desc())
    ):
        reasons.setdefault((cid, ver), reason)
    return [
        Coverage(
            cid,
            ver,
            counts.get((cid, ver, "ran"), 0),
            counts.get((cid, ver, "skipped"), 0),
            rewrites,
            reasons.get((cid, ver)),
        )
        for cid, ver in checks
    ]


@dataclass(slots=True)
class StoredRewrite:
    """What the store holds about one logged rewrite, for scoring it against a label.

    ``statuses`` maps a check id to ``(status, rules_hash)`` of its run at the version asked for;
    ``findings`` are that run's findings (each with its ``rules_hash``).
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
        for req, conv_id, model, prompt_version, raw in session.execute(
            select(Record.request_id, Record.conv_id, Record.model, Record.prompt_version, Event.raw)
            .join(Event, Event.id == Record.rewrite_event_id)
            .where(Record.request_id.in_(chunk))
        ):
            source = raw.get("source") if isinstance(raw, dict) else None
            selection = source.get("selection") if isinstance(source, dict) else None
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
        for req, cid, status, rules_hash in session.execute(
            select(Record.request_id, CheckRun.check_id, CheckRun.status, CheckRun.rules_hash)
            .join(CheckRun, CheckRun.record_id == Record.id)
            .where(
                Record.request_id.in_(chunk), tuple_(CheckRun.check_id, CheckRun.check_version).in_(checks)
            )
        ):
            if req in out:
                out[req].statuses[cid] = (status, rules_hash)
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
    is not diluted by records never checked."""
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


def load_profile(
    *,
    session: Session,
    prompt_versions: Iterable[str | None],
    conv_ids: Iterable[str],
    check_rate: float = 1.0,
    conversations: dict[str, int] | None = None,
) -> RewriterProfile:
    """The rewriter profile of these prompt versions, restricted to the lemmas added in ``conv_ids`` (what
    a batch needs): conversations per prompt version and conversations per (version, lemma). With
    ``check_rate`` < 1 the conversations are those of the checked sample (``check_draw`` below the rate),
    the same records the lemmas are learned from, so the share is not diluted by records never checked.
    ``conversations``: :func:`profile_conversations` of these versions, when the caller counted them."""
    versions = sorted({pv or "" for pv in prompt_versions})
    convs = sorted(set(conv_ids))
    added: dict[tuple[str, str], int] = {}
    if not versions:
        return RewriterProfile()
    wanted: set[str] = set()
    for start in range(0, len(convs), 500):
        wanted.update(
            session.scalars(
                select(AddedLemma.lemma)
                .where(
                    AddedLemma.conv_id.in_(convs[start : start + 500]),
                    AddedLemma.prompt_version.in_(versions),
                )
                .distinct()
            )
        )
    if conversations is None:
        conversations = profile_conversations(session=session, versions=versions, check_rate=check_rate)
    lemmas = sorted(wanted)
    for start in range(0, len(lemmas), 500):
        chunk = lemmas[start : start + 500]
        for pv, lemma, n in session.execute(
            select(AddedLemma.prompt_version, AddedLemma.lemma, func.count())
            .where(AddedLemma.prompt_version.in_(versions), AddedLemma.lemma.in_(chunk))
            .group_by(AddedLemma.prompt_version, AddedLemma.lemma)
        ):
            added[(pv, lemma)] = int(n)
    return RewriterProfile(conversations, added)
