"""Check runs in the store: one row per record and set of check versions (issue 36, part 2).

A run (``check_runs``) says a record was checked at a set of check versions (``check_sets``, whose pairs
are ``check_set_members``); the checks of the set that were skipped on it are ``check_skips`` rows, with
their reason; every other check of the set ran. Its findings hang on it (``findings.check_run_id``).

Before migration 0015 each record had one row per check (20 checks now), grouped and counted each
time a reader asked whether a record was checked at the current versions (0.43 s of the Overview's
0.55 s on a 100,000-rewrite store). Now that question is an index lookup: does the record have a run
whose set holds every current pair (:func:`fully_checked`). A set that holds more (a check since turned
off) still counts, so turning a check off re-checks nothing.

Keyword-only, session in, plain values out. Nothing here commits.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, overload

from sqlalchemy import CTE, BindParameter, Select, Subquery, delete, func, select, tuple_, update
from sqlalchemy.orm import Session

from monitor.severity import SEVERITY_RANK
from monitor.store.engine import bulk_insert_ignore, insert_ignore, rowcount
from monitor.store.models import (
    AddedLemma,
    CheckRun,
    CheckSet,
    CheckSetMember,
    CheckSkip,
    Finding,
    Record,
)

if TYPE_CHECKING:
    from monitor.checks.base import CheckOutcome

Pair = tuple[str, int]
"""A check version: ``(check_id, version)``."""


def check_set_key(pairs: Iterable[Pair]) -> str:
    """The key of a set of check versions: the SHA-256 (hex, 64 characters) of its pairs sorted, one
    ``check_id@version`` per line. The order the pairs come in does not matter.

    Raises ``ValueError`` when a check appears at two versions (a run checks each check once)."""
    ordered = sorted(set(pairs))
    ids = [cid for cid, _ in ordered]
    if len(ids) != len(set(ids)):
        raise ValueError(f"a check set holds one version per check: {ordered}")
    return hashlib.sha256("\n".join(f"{cid}@{ver}" for cid, ver in ordered).encode()).hexdigest()


def check_set_ids(*, session: Session, sets: Iterable[Iterable[Pair]], now: datetime) -> dict[str, int]:
    """``check_set_key`` -> id of each set of ``sets``, storing the sets not stored yet (insert-or-ignore on
    the key, so concurrent checkers agree), executed at once; does not commit. Raises ``ValueError`` as
    :func:`check_set_key` does."""
    by_key = {check_set_key(pairs): sorted(set(pairs)) for pairs in sets}
    if not by_key:
        return {}

    def stored() -> dict[str, int]:
        stmt = select(CheckSet.key, CheckSet.id).where(CheckSet.key.in_(sorted(by_key)))
        return {key: set_id for key, set_id in session.execute(stmt)}

    ids = stored()
    missing = [key for key in by_key if key not in ids]
    if missing:
        session.execute(
            insert_ignore(session, CheckSet, ["key"]), [{"key": k, "created_at": now} for k in missing]
        )
        ids = stored()
        members = [
            {"check_set_id": ids[key], "check_id": cid, "check_version": ver}
            for key in missing
            for cid, ver in by_key[key]
        ]
        session.execute(insert_ignore(session, CheckSetMember, ["check_set_id", "check_id"]), members)
    return ids


def sets_holding(checks: Sequence[Pair], *, every: bool = True) -> Select[int]:
    """Subquery of the ids of the check sets that hold every pair of ``checks`` (``every``) or any of them."""
    stmt = select(CheckSetMember.check_set_id).where(
        tuple_(CheckSetMember.check_id, CheckSetMember.check_version).in_(checks)
    )
    if not every:
        return stmt.distinct()
    return stmt.group_by(CheckSetMember.check_set_id).having(func.count() >= len(set(checks)))


@overload
def fully_checked(
    checks: Sequence[Pair],
    start: datetime | BindParameter[datetime] | None = None,
    end: datetime | BindParameter[datetime] | None = None,
    *,
    cte: Literal[False] = False,
) -> Subquery: ...
@overload
def fully_checked(
    checks: Sequence[Pair],
    start: datetime | BindParameter[datetime] | None = None,
    end: datetime | BindParameter[datetime] | None = None,
    *,
    cte: Literal[True],
) -> CTE: ...
def fully_checked(
    checks: Sequence[Pair],
    start: datetime | BindParameter[datetime] | None = None,
    end: datetime | BindParameter[datetime] | None = None,
    *,
    cte: bool = False,
) -> Subquery | CTE:
    """Subquery (column ``record_id``) of the records with a run of a set holding every pair of
    ``checks``, of rewrites with ``start <= ts < end`` when bounds are given (naive UTC datetimes, or
    parameters bound when the statement runs); with ``cte``, a common table expression named
    ``checked``, for a statement that reads it more than once.

    One index range per set that holds them (``ix_check_runs_set_record``), joined through the record's
    time (indexed) when bounded. Each record comes once: a check version is held by one run of a record
    (:func:`store_outcomes`), so no two of its runs hold them all."""
    stmt = select(CheckRun.record_id).where(CheckRun.check_set_id.in_(sets_holding(checks)))
    if start is not None or end is not None:
        stmt = stmt.join(Record, Record.id == CheckRun.record_id)
        if start is not None:
            stmt = stmt.where(Record.ts >= start)
        if end is not None:
            stmt = stmt.where(Record.ts < end)
    return stmt.cte("checked") if cte else stmt.subquery()


def unchecked_record_ids(
    *,
    session: Session,
    checks: Sequence[Pair],
    after_id: int,
    limit: int,
    check_rate: float = 1.0,
    claim: bool = False,
    before_id: int | None = None,
) -> list[int]:
    """Ids (ascending, above ``after_id``) of records with a rewrite and no run of a set holding every pair
    of ``checks`` (the versions currently registered).

    With ``before_id``, the highest ``limit`` ids below it (and above ``after_id``), still ascending: a
    walk from the newest record down calls it with the lowest id the last call returned.

    With ``check_rate`` < 1 only records whose ``check_draw`` is below the rate are returned. With
    ``claim`` on PostgreSQL the rows are locked ``FOR UPDATE SKIP LOCKED`` until the caller's transaction
    ends, so concurrent checkers take disjoint batches (on SQLite, one writer at a time, it changes
    nothing).
    """
    # Candidates are read by primary-key range, then their runs looked up for that range only: two index
    # range scans per batch whatever the planner knows.
    scan = max(limit, 1000)
    pg_claim = claim and session.get_bind().dialect.name == "postgresql"

    def unfinished(ids: list[int]) -> list[int]:
        # The sets read in the same statement: a set another checker made since is seen with its runs.
        full = set(
            session.scalars(
                select(CheckRun.record_id).where(
                    CheckRun.check_set_id.in_(sets_holding(checks)),
                    CheckRun.record_id >= min(ids),
                    CheckRun.record_id <= max(ids),
                )
            )
        )
        return [i for i in ids if i not in full]

    after, before = after_id, before_id
    while True:
        window = select(Record.id).where(Record.rewrite_event_id.is_not(None), Record.id > after)
        if before is not None:
            window = window.where(Record.id < before)
        if check_rate < 1.0:
            window = window.where(Record.check_draw < check_rate)
        order = Record.id.desc() if before is not None else Record.id
        candidates = list(session.scalars(window.order_by(order).limit(scan)))
        if not candidates:
            return []
        ids = sorted(unfinished(candidates)[:limit])
        if ids and pg_claim:
            locked = list(
                session.scalars(
                    select(Record.id)
                    .where(Record.id.in_(ids))
                    .order_by(Record.id)
                    .with_for_update(skip_locked=True, of=Record)
                )
            )
            # Another checker may have committed some of them between the lookup and the lock; a new
            # statement sees its commit, and nobody else can check them while we hold them.
            ids = unfinished(locked) if locked else []
        if ids:
            return ids
        if before is not None:
            before = candidates[-1]
        else:
            after = candidates[-1]


def count_unchecked(*, session: Session, checks: Sequence[Pair], up_to: int, check_rate: float = 1.0) -> int:
    """How many records wait for ``checks`` (as :func:`unchecked_record_ids` finds them, ``check_rate``
    passed on), counted up to ``up_to``: what a check job decides its processes by (``monitor.worker.
    jobs``). One call of :func:`unchecked_record_ids` is not that count: it returns the unchecked ids of
    the first window of candidates that holds any, so after a job that checked the shared logs' 3,385
    rewrites, a run of 15,000 more counted 1,615 waiting and graded them all on one process (a newcomer's
    run). Reads windows of candidates (at least 1,000 each) from the oldest record up until it has counted
    ``up_to`` or passed the newest."""
    counted, after = 0, 0
    while counted < up_to:
        ids = unchecked_record_ids(
            session=session, checks=checks, after_id=after, limit=up_to - counted, check_rate=check_rate
        )
        if not ids:
            break
        counted, after = counted + len(ids), ids[-1]
    return counted


def unchecked_newest_first(
    *,
    session: Session,
    checks: list[tuple[str, int]],
    check_rate: float,
    batch_size: int,
    claim: bool,
    floor: int,
    top: int | None,
    stop: Callable[[], bool] | None = None,
) -> Iterator[list[int]]:
    """The check job's batches of unchecked record ids (each of at most ``batch_size``, ascending, as
    :func:`unchecked_record_ids` returns them, ``claim`` passed on): from ``top`` (the newest record id,
    ``None`` for an empty store) down to ``floor``, exclusive (every record up to it is known checked: the
    walk spares a scan of their runs, which costs as much as the store is large), then up from ``top``,
    for what was stored meanwhile (another process's ingest). A record below ``top`` completed after the
    walk down passed it (its rewrite stored after its ctx_input, by another process) is left to the next
    job: the walk up cannot go below ``top`` while the batches above it may still be in flight
    (``_in_turn`` reads ahead), and a record read twice would be graded twice. ``stop()`` is asked before
    each batch.
    Newest first because the check job's learning pass goes oldest first: the analysis cache still
    holds the newest records' texts when its grading begins (``monitor.worker.jobs``)."""
    # the walk down, then the walk up: (after_id, before_id), and which of them each batch moves
    walks: list[tuple[int, int | None, bool]] = (
        [(floor, top + 1, True)] if top is not None and top > floor else []
    )
    walks.append((top or 0, None, False))
    for after, before, down in walks:
        while not (stop and stop()):
            ids = unchecked_record_ids(
                session=session,
                checks=checks,
                after_id=after,
                before_id=before,
                limit=batch_size,
                check_rate=check_rate,
                claim=claim,
            )
            if not ids:
                break
            if down:
                before = ids[0]
            else:
                after = ids[-1]
            yield ids


def delete_runs(*, session: Session, run_ids: Select[int] | Sequence[int]) -> int:
    """Delete the runs ``run_ids`` (a list, or a subquery of ids) with their findings and skips; returns
    the runs deleted. The findings and skips are deleted first rather than left to ``ON DELETE CASCADE``,
    which SQLite would run row by row."""
    session.execute(delete(Finding).where(Finding.check_run_id.in_(run_ids)))
    session.execute(delete(CheckSkip).where(CheckSkip.check_run_id.in_(run_ids)))
    return rowcount(session.execute(delete(CheckRun).where(CheckRun.id.in_(run_ids))))


def clear_runs(*, session: Session, checks: Sequence[Pair]) -> int:
    """Delete the runs of every set holding any of these check versions, with their findings, so that the
    records are checked again; returns runs deleted.

    A run's findings of other versions (a check bumped since) go with it: they are history, read by no
    report. The rewriter profile (``added_lemmas``) is emptied too: the re-check learns it again from
    every record under the current rules, so rows written under other rules or versions never inflate
    its counts.
    """
    runs = select(CheckRun.id).where(CheckRun.check_set_id.in_(sets_holding(checks, every=False)))
    deleted = delete_runs(session=session, run_ids=runs)
    session.execute(delete(AddedLemma))
    return deleted


def store_outcomes(
    *, session: Session, outcomes: Sequence[tuple[int, str, CheckOutcome]], now: datetime
) -> int:
    """Store ``(record_id, request_id, CheckOutcome)`` triples: one run per record at the set of versions of
    its statuses, with its skips and findings; returns findings stored.

    Each (record, check version) is held by one run, the newest: a record checked again at a new set
    (another check's version bumped, a check turned on) has the versions both sets hold handed over from
    its earlier runs (their findings and skips deleted there, stored again here; :func:`_release`), so a
    check version's status, rules hash and findings always come from one run. What the earlier runs keep
    is history (versions since replaced).

    Idempotent: a run already stored for (record, set) is left as it is and nothing of it is added again.
    On PostgreSQL the records are locked (``FOR UPDATE``, in id order) before their runs are read, so two
    checkers storing one record, even at two sets of versions, store it one after the other.
    """
    if not outcomes:
        return 0
    pairs = {rid: tuple((st.check_id, st.version) for st in out.statuses) for rid, _req, out in outcomes}
    # A batch's records share one set or a few: each is keyed (hashed) once.
    keys = {p: check_set_key(p) for p in set(pairs.values())}
    set_ids = check_set_ids(session=session, sets=keys, now=now)
    set_of = {rid: set_ids[keys[p]] for rid, p in pairs.items()}
    record_ids = sorted(pairs)
    if session.get_bind().dialect.name == "postgresql":
        session.execute(
            select(Record.id).where(Record.id.in_(record_ids)).order_by(Record.id).with_for_update()
        )
    before: dict[int, list[tuple[int, int]]] = {}
    for run_id, rid, sid in session.execute(
        select(CheckRun.id, CheckRun.record_id, CheckRun.check_set_id).where(
            CheckRun.record_id.in_(record_ids)
        )
    ):
        before.setdefault(rid, []).append((run_id, sid))
    fresh = [
        (rid, req, out)
        for rid, req, out in outcomes
        if all(sid != set_of[rid] for _, sid in before.get(rid, ()))
    ]
    if not fresh:
        return 0
    _release(session, fresh, before, now)
    # No RETURNING: SQLAlchemy's insert-many-values with RETURNING is quadratic on SQLite. Core inserts
    # (the tables, not the mapped classes): the ORM's bulk path costs more than the statements here.
    bulk_insert_ignore(
        session,
        CheckRun,
        ["record_id", "check_set_id"],
        [
            {
                "record_id": rid,
                "check_set_id": set_of[rid],
                "rules_hash": out.rules_hash,
                "n_findings": len(out.findings),
                "checked_at": now,
            }
            for rid, _req, out in fresh
        ],
    )
    run_of = {
        rid: run_id
        for run_id, rid, sid in session.execute(
            select(CheckRun.id, CheckRun.record_id, CheckRun.check_set_id).where(
                CheckRun.record_id.in_([rid for rid, _req, _out in fresh])
            )
        )
        if sid == set_of[rid]
    }
    skips = [
        {"check_run_id": run_of[rid], "check_id": st.check_id, "reason": st.reason}
        for rid, _req, out in fresh
        for st in out.statuses
        if st.status == "skipped"
    ]
    bulk_insert_ignore(session, CheckSkip, ["check_run_id", "check_id"], skips)
    rows = [
        {
            "check_run_id": run_of[rid],
            "ordinal": n,
            "record_id": rid,
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
            "rules_hash": out.rules_hash,
            "created_at": now,
        }
        for rid, request_id, out in fresh
        for n, f in enumerate(out.findings)
    ]
    bulk_insert_ignore(session, Finding, ["check_run_id", "ordinal"], rows)
    return len(rows)


def _release(
    session: Session,
    fresh: Sequence[tuple[int, str, CheckOutcome]],
    before: dict[int, list[tuple[int, int]]],
    now: datetime,
) -> None:
    """Hand the check versions the new runs of the ``fresh`` records hold over from their earlier runs
    (``before``: record -> ``(run id, set id)``): those runs lose the findings and skips of these versions
    and hold only the rest of their set (a run left with none is deleted), and their ``n_findings`` is
    counted again.

    So every (record, check version) is held by one run: a reader that finds a run holding some versions
    reads their status off that run, whichever reader it is (coverage, the alerts' "every fabrication
    check ran", ``run_statuses``). Were an earlier run to keep holding a version it no longer has the
    skip of, a set of versions turned back to (a check turned off again) would read it as run."""
    pairs_of = _pairs_of_sets(session, {sid for runs in before.values() for _, sid in runs})
    owned: list[tuple[int, str, int]] = []
    rest: dict[int, frozenset[Pair]] = {}
    for rid, _req, out in fresh:
        new = {(st.check_id, st.version) for st in out.statuses}
        for run_id, sid in before.get(rid, ()):
            shared = pairs_of[sid] & new
            if shared:
                owned.extend((run_id, cid, ver) for cid, ver in shared)
                rest[run_id] = pairs_of[sid] - shared
    if not owned:
        return
    for start in range(0, len(owned), 300):
        chunk = owned[start : start + 300]
        session.execute(
            delete(Finding).where(
                tuple_(Finding.check_run_id, Finding.check_id, Finding.check_version).in_(chunk)
            )
        )
        session.execute(
            delete(CheckSkip).where(
                tuple_(CheckSkip.check_run_id, CheckSkip.check_id).in_([(r, c) for r, c, _ in chunk])
            )
        )
    gone = sorted(run_id for run_id, pairs in rest.items() if not pairs)
    for start in range(0, len(gone), 500):
        delete_runs(session=session, run_ids=gone[start : start + 500])
    kept = {run_id: pairs for run_id, pairs in rest.items() if pairs}
    ids = check_set_ids(session=session, sets=set(kept.values()), now=now)
    by_set: dict[int, list[int]] = {}
    for run_id, pairs in kept.items():
        by_set.setdefault(ids[check_set_key(pairs)], []).append(run_id)
    count = (
        select(func.count()).where(Finding.check_run_id == CheckRun.id).correlate(CheckRun).scalar_subquery()
    )
    for set_id, runs in by_set.items():
        for start in range(0, len(runs), 500):
            session.execute(
                update(CheckRun)
                .where(CheckRun.id.in_(runs[start : start + 500]))
                .values(check_set_id=set_id, n_findings=count)
            )


def _pairs_of_sets(session: Session, set_ids: Iterable[int]) -> dict[int, frozenset[Pair]]:
    """Set id -> its pairs, for ``set_ids`` (sets are few: one per registry a store was checked with)."""
    out: dict[int, set[Pair]] = {}
    wanted = sorted(set(set_ids))
    if wanted:
        for sid, cid, ver in session.execute(
            select(CheckSetMember.check_set_id, CheckSetMember.check_id, CheckSetMember.check_version).where(
                CheckSetMember.check_set_id.in_(wanted)
            )
        ):
            out.setdefault(sid, set()).add((cid, ver))
    return {sid: frozenset(p) for sid, p in out.items()}


@dataclass(frozen=True, slots=True)
class Coverage:
    """How many rewrites a check ran on and was skipped on, among those checked at the current versions,
    out of ``rewrites`` stored; ``top_skip_reason`` is the commonest reason it was skipped."""

    check_id: str
    version: int
    ran: int
    skipped: int
    rewrites: int
    top_skip_reason: str | None = None

    @property
    def share_ran(self) -> float | None:
        return self.ran / self.rewrites if self.rewrites else None


def coverage(*, session: Session, checks: Sequence[Pair]) -> list[Coverage]:
    """Per current check: rewrites it ran on and was skipped on (with the commonest reason), among the
    rewrites checked at every current version (:func:`fully_checked`), and the number of stored rewrites.
    A rewrite not yet checked at the current versions counts for no check. Three statements: the
    rewrites, the checked ones, and the skips grouped by check and reason."""
    rewrites = session.scalar(select(func.count()).where(Record.rewrite_event_id.is_not(None))) or 0
    checked = fully_checked(checks)
    n_checked = session.scalar(select(func.count()).select_from(checked)) or 0
    holding = sets_holding(checks)
    skipped: Counter[str] = Counter()
    reasons: dict[str, Counter[str | None]] = {}
    for cid, reason, n in session.execute(
        select(CheckSkip.check_id, CheckSkip.reason, func.count())
        .join(CheckRun, CheckRun.id == CheckSkip.check_run_id)
        .where(CheckRun.check_set_id.in_(holding), CheckSkip.check_id.in_([c for c, _ in checks]))
        .group_by(CheckSkip.check_id, CheckSkip.reason)
    ):
        skipped[cid] += int(n)
        reasons.setdefault(cid, Counter())[reason] += int(n)
    out = []
    for cid, ver in checks:
        # One run per record holds the current versions (store_outcomes), so each skip is one rewrite.
        top = max(reasons[cid].items(), key=lambda kv: (kv[1], str(kv[0])))[0] if cid in reasons else None
        out.append(Coverage(cid, ver, n_checked - skipped[cid], skipped[cid], rewrites, top))
    return out


def run_statuses(
    *, session: Session, record_ids: Sequence[int], checks: Sequence[Pair]
) -> dict[int, dict[str, tuple[str, str]]]:
    """Record id -> check id -> ``(status, rules_hash)`` of the record's run holding that check at the
    version ``checks`` gives (the newest such run when there are several); a check the record has no
    run of at that version is absent. ``status`` is ``ran`` or ``skipped``."""
    wanted = set(checks)
    runs = session.execute(
        select(CheckRun.id, CheckRun.record_id, CheckRun.check_set_id, CheckRun.rules_hash)
        .where(CheckRun.record_id.in_(list(record_ids)))
        .order_by(CheckRun.id)
    ).all()
    pairs = _pairs_of_sets(session, {sid for _, _, sid, _ in runs})
    skipped = {
        (run_id, cid)
        for run_id, cid in session.execute(
            select(CheckSkip.check_run_id, CheckSkip.check_id).where(
                CheckSkip.check_run_id.in_([run_id for run_id, _, _, _ in runs])
            )
        )
    }
    out: dict[int, dict[str, tuple[str, str]]] = {}
    for run_id, rid, sid, rules_hash in runs:  # by id: a newer run overwrites an older one's status
        for cid, ver in pairs.get(sid, frozenset()):
            if (cid, ver) in wanted:
                status = "skipped" if (run_id, cid) in skipped else "ran"
                out.setdefault(rid, {})[cid] = (status, rules_hash)
    return out
