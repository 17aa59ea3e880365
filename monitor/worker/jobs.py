"""The jobs, as plain functions the CLI (and later the scheduler) call by name.

Each takes what it needs explicitly (a session, the loaded rules) and returns a summary dataclass
(``monitor.worker.summaries``); none prints. Transcript text never goes to logs from here. The alert
evaluation the leader runs is ``monitor.worker.alerting``.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from sqlalchemy import text
from sqlalchemy.orm import Session

from monitor.checks.store import (
    ProfileReader,
    clear_runs,
    count_unchecked,
    coverage,
    record_added_lemmas,
    restyle_findings,
    store_outcomes,
    unchecked_newest_first,
    unchecked_record_ids,
)
from monitor.errors import PoolError
from monitor.ingest.store.records import (
    RecordHead,
    changed_shapes,
    load_heads,
    load_records,
    newest_record_id,
)
from monitor.store.engine import refresh_planner_statistics
from monitor.worker.alerting import CLOCK_SKEW, evaluate_alerts
from monitor.worker.heap import trim_heap
from monitor.worker.pool import Graded, KeptRecords, Lemmas, StoredBatch, store_url
from monitor.worker.summaries import CheckSummary, CycleSummary, DailySummary, RunSummary

if TYPE_CHECKING:
    from monitor.alerts.policy import Decision
    from monitor.checks.base import CheckOutcome
    from monitor.checks.profile import RewriterProfile
    from monitor.checks.rules import Rules
    from monitor.ingest.sources import Source
    from monitor.ingest.store.retention import RetentionResult
    from monitor.queue.store import EnqueueResult
    from monitor.record import RewriteRecord
    from monitor.setting_groups import QueueSettings
    from monitor.settings import Settings
    from monitor.worker.context import WorkerContext
    from monitor.worker.pool import Ahead, CheckPool, Pending

__all__ = [
    "ADMISSION_LOCK",
    "CLOCK_SKEW",
    "WORKER_JOBS",
    "CheckSummary",
    "CycleSummary",
    "DailySummary",
    "JobSummary",
    "RunSummary",
    "alerts_job",
    "check_job",
    "cycle_job",
    "daily_job",
    "enqueue_job",
    "evaluate_alerts",
    "queue_summary",
    "retention_job",
    "run_job",
    "with_store_learning",
]

_worker_log = logging.getLogger("monitor.worker")
B = TypeVar("B")
_A = TypeVar("_A")
AHEAD = 2
"""Batches handed to a pool's processes beyond the one being written (:func:`_in_turn`: three in hand at
most). With one, a
process that finished its share of the newest batch waited for the other's share of the one before: the
shards of a batch differ in size and in the length of their conversations."""
ADMISSION_LOCK = "rewrite-monitor:admission"
"""Name of the PostgreSQL advisory lock that serialises queue admissions (see :func:`enqueue_job`)."""


def check_job(
    *,
    session: Session,
    rules: Rules,
    recheck: bool = False,
    check_rate: float = 1.0,
    batch_size: int = 500,
    on_batch: Callable[[int], None] | None = None,
    claim: bool = False,
    stop: Callable[[], bool] | None = None,
    learn: bool = True,
    pool: CheckPool | None = None,
    ahead: dict[int, Ahead] | None = None,
) -> CheckSummary:
    """Run every registered check over the records not yet checked at the current versions.

    With ``recheck``, the current versions' runs and findings are deleted first and every record is
    checked again. With ``check_rate`` < 1 only records whose draw is below the rate are checked.
    ``summary.days`` collects the UTC days of the rewrites checked (for queue admission). Commits once
    per batch, so an interrupted run keeps what it finished. ``claim`` locks each batch's records
    (``FOR UPDATE SKIP LOCKED`` on PostgreSQL) so several workers check disjoint batches; ``stop()``
    is asked between batches (a worker shutting down finishes the batch in hand, then returns).

    The rewriter profile (``monitor.checks.profile``) is learned first: the added lemmas of every record
    to check are stored before any is graded, so a store checked in one run grades every rewrite against
    the same profile, whatever the batch size. Data arriving in parts is graded as the profile grows;
    queue admission (:func:`enqueue_job`) grades the days it plans again against the whole store, and
    ``recheck`` grades everything again. With ``learn`` (the ``learn_from_verdicts`` setting) the words
    are also graded with the reviewers' verdicts so far (:func:`with_store_learning`).

    With ``pool`` (``monitor.worker.pool.CheckPool``), when it ``wants`` the job's size, the records of
    each batch are read, analysed and graded on its processes, each through its own connection to the
    store (one more connection per process; ``monitor.worker.pool.store_url``: a store they cannot see is
    read here and the records sent); the claims, the profile and every write stay here, in the same
    order, so the store ends as one process leaves it. Raises ``PoolError`` when one of them dies (the
    batch in hand is not written) or read another store than this process; a database error of theirs
    (``sqlalchemy.exc.DBAPIError``, such as too many connections) is raised here as it was there.
    ``ahead``: the lemmas the processes found while ``run`` ingested (``CheckPool.found_ahead``, by
    record id): the learning pass stores them for each record whose conversation did not change since,
    instead of finding them again.
    """
    from monitor.checks import current_versions, run_checks

    checks = current_versions()
    summary = CheckSummary()
    started = time.perf_counter()
    # Read once per run, and only when there is something to grade (the worker's idle cycles skip it),
    # but before a recheck clears the findings it is counted from: a run grades with the table as it
    # was when it began (its hash is in every run's rules hash).
    learned = not learn
    if learn and recheck:
        rules, learned = with_store_learning(session=session, rules=rules, checks=checks), True
    if recheck:
        summary.cleared_runs = clear_runs(session=session, checks=checks)
        session.commit()
    handed_before = pool.handed if pool is not None else 0
    if pool is not None and pool.workers > 1:
        waiting = count_unchecked(session=session, checks=checks, up_to=pool.min_job, check_rate=check_rate)
        if not pool.wants(waiting):
            pool = None
    # Before any claim: concurrent runs each store every lemma once (insert-or-ignore). Each batch is
    # graded against the store's profile as this job first read it (ProfileReader): lemmas a concurrent
    # run stores later count from the next job, and queue admission grades the days it plans again.
    stored = store_url(session) if pool is not None else None
    if stored is not None:
        # The processes read the records through their own connections: what this session wrote before
        # the job (an ingest not yet committed) must be theirs to see. The job's first commit would
        # have committed it anyway.
        session.commit()
    learnt = _learn_profile(
        session=session,
        rules=rules,
        checks=checks,
        check_rate=check_rate,
        batch_size=batch_size,
        stop=stop,
        pool=pool,
        stored=stored,
        ahead=ahead,
    )
    profiles = ProfileReader(session=session, check_rate=check_rate)

    def finish(batch: _Batch) -> None:
        """Grade ``batch`` (or take what the pool graded), count it, store it and commit."""
        if batch.pending is not None:
            got = batch.pending.results()
        else:
            got = [Graded(r.request_id, r.ts, run_checks(r, batch.rules)) for r in batch.records or ()]
        outcomes: list[tuple[int, str, CheckOutcome]] = []
        for n, (record_id, graded) in enumerate(zip(batch.ids, got, strict=True)):
            if graded is None:  # gone from the store before a worker process read it (retention)
                continue
            if batch.request_ids is not None and graded.request_id != batch.request_ids[n]:
                raise PoolError(
                    f"a check worker process read record {record_id} as request {graded.request_id!r}, "
                    f"not {batch.request_ids[n]!r}: it reads another store than this process; nothing of "
                    "the batch was written"
                )
            outcome = graded.outcome
            outcomes.append((record_id, graded.request_id, outcome))
            summary.records += 1
            if graded.ts is not None:
                summary.days.add(graded.ts.date())
            for f in outcome.findings:
                summary.findings[(f.kind, f.severity)] += 1
            for s in outcome.statuses:
                if s.status == "skipped":
                    summary.skipped[s.check_id] += 1
        store_outcomes(session=session, outcomes=outcomes, now=batch.now)
        session.commit()
        # the pages the batches before this one freed (records, outcomes, rows) back to the system (``heap``)
        trim_heap()
        if on_batch:
            on_batch(len(outcomes))

    def batches() -> Iterator[_Batch]:
        """The loop's batches, read (and handed to the pool) one by one, as :func:`_in_turn` asks."""
        nonlocal rules, learned
        for ids in unchecked_newest_first(
            session=session,
            checks=checks,
            check_rate=check_rate,
            batch_size=batch_size,
            claim=claim,
            floor=learnt.floor or 0,
            top=newest_record_id(session=session),
            stop=stop,
        ):
            if not learned:
                rules, learned = with_store_learning(session=session, rules=rules, checks=checks), True
            now = datetime.now(UTC)
            if stored is not None and pool is not None and pool.ready():
                # The processes read the records themselves: here only what the profile and the shards need.
                heads = load_heads(session=session, record_ids=ids)
                # what this process kept of the learning pass (its first batches, graded here while the
                # processes started) is not graded here: let go
                learnt.records.take(ids)
                batch_rules = rules.with_profile(_batch_profile(profiles, heads))
                batch = StoredBatch(stored, learnt.job, [(h.id, h.conv_id) for h in heads])
                pending = pool.submit_grade(batch_rules, batch)
                if pending is not None:
                    request_ids = [h.request_id for h in heads]
                    yield _Batch([h.id for h in heads], None, batch_rules, now, pending, request_ids)
                    continue
            loaded = learnt.records.read(session, ids)
            records = [r for _, r in loaded]
            batch_rules = rules.with_profile(_batch_profile(profiles, records))
            yield _Batch(
                [i for i, _ in loaded],
                records,
                batch_rules,
                now,
                pool.submit_grade(batch_rules, records) if pool is not None else None,
            )

    # Not one behind where a claim is a row lock (PostgreSQL): committing the last batch would release
    # the claim on the next.
    _in_turn(
        batches(),
        finish,
        ahead=0 if pool is None or (claim and session.get_bind().dialect.name == "postgresql") else AHEAD,
    )
    # what comes next (coverage, queue admission) reads what this run wrote
    refresh_planner_statistics(
        session, ("records", "check_runs", "check_skips", "findings", "added_lemmas"), rows=summary.records
    )
    summary.seconds = time.perf_counter() - started
    summary.coverage = coverage(session=session, checks=checks)
    if pool is not None and pool.handed > handed_before:
        summary.processes = pool.workers
    return summary


def with_store_learning(
    *, session: Session, rules: Rules, checks: list[tuple[str, int]] | None = None
) -> Rules:
    """``rules`` with the store's learned word evidence (``monitor.review.store.learned_table``): what the
    check job grades with, and the rules hash ``evaluate`` calls current. A store without verdicts keeps
    ``rules.hash``."""
    from monitor.checks import current_versions
    from monitor.review.store import learned_table

    return rules.with_learned(learned_table(session=session, checks=checks or current_versions()))


def _in_turn(batches: Iterable[B], finish: Callable[[B], None], *, ahead: int) -> None:
    """``finish`` each of ``batches`` in order, ``ahead`` behind: up to that many batches are read (and
    handed to a pool's processes) before the oldest is finished, so the processes work while this process
    writes; with 0, each is finished before the next is read."""
    in_hand: deque[B] = deque()
    for batch in batches:
        in_hand.append(batch)
        if len(in_hand) > ahead:
            finish(in_hand.popleft())
    while in_hand:
        finish(in_hand.popleft())


def _learn_profile(
    *,
    session: Session,
    rules: Rules,
    checks: list[tuple[str, int]],
    check_rate: float,
    batch_size: int,
    stop: Callable[[], bool] | None = None,
    pool: CheckPool | None = None,
    stored: str | None = None,
    ahead: dict[int, Ahead] | None = None,
) -> _Learnt:
    """Store the added lemmas of every record still to check (committed per batch; ``stop()`` is asked
    between batches, as the check loop does). ``stored``: the store's URL when the pool's processes can
    read it (``monitor.worker.pool.store_url``); they then read the records and keep them for the loop.
    ``ahead``: lemmas found during the ingest (``CheckPool.found_ahead``), by record id, taken out as
    used, for each record whose conversation is unchanged since (``changed_shapes``); the others are
    read and analysed again."""
    learnt = _Learnt()
    ahead = ahead or {}

    def batches() -> Iterator[_Handed]:
        # Oldest first: the check loop starts with the newest, which this pass analyses last, so the
        # analysis cache still holds them (and the processes' caches hold the newest the ingest handed
        # them). Both passes in the same direction, a job larger than the cache found none of its texts
        # there in the check loop: each batch had pushed out the next one's (20,000 rewrites of the
        # non-repeating corpus on one process: 82,345 misses in the check loop, 61,572 in turn).
        # What is stored during the pass (another process's ingest) is learned too; what is stored
        # after it is graded without its own lemmas (:func:`_batch_profile`).
        top = newest_record_id(session=session)
        after = 0
        while not (stop and stop()):
            ids = unchecked_record_ids(
                session=session, checks=checks, after_id=after, limit=batch_size, check_rate=check_rate
            )
            if not ids:
                if learnt.floor is None:
                    # nothing to check: every record the store held when the pass began was checked
                    learnt.floor = top or 0
                return
            if learnt.floor is None:
                learnt.floor = ids[0] - 1  # every record up to it was checked when it was scanned
            after = ids[-1]
            yield from hand(ids)

    def hand(ids: list[int]) -> Iterator[_Handed]:
        """One batch of the pass: the lemmas found ahead that still hold, the rest handed to the pool's
        processes, or read here (and handed when the pool takes records)."""
        found = {i: ahead.pop(i) for i in ids if i in ahead}
        stale = changed_shapes(session=session, shapes=[(i, x.shape) for i, x in found.items()])
        held = {i: x.lemmas for i, x in found.items() if i not in stale}
        ids = [i for i in ids if i not in held]
        if not ids:
            yield _Handed(held)
            return
        if stored is not None and pool is not None and pool.ready():
            heads = [(h.id, h.conv_id) for h in load_heads(session=session, record_ids=ids)]
            pending = pool.submit_lemmas(rules, StoredBatch(stored, learnt.job, heads, keep=True))
            if pending is not None:
                yield _Handed(held, sent=[i for i, _ in heads], pending=pending)
                return
        batch = dict(load_records(session=session, record_ids=ids))
        pending = pool.submit_lemmas(rules, list(batch.values())) if pool is not None else None
        yield _Handed(held, sent=list(batch), pending=pending, batch=batch)

    def store(got: _Handed) -> None:
        found: dict[int, Lemmas | None] = dict(got.held)
        if got.pending is not None:
            found.update(zip(got.sent, got.pending.results(), strict=True))
        elif got.batch is not None:
            found.update((i, Lemmas.of(r, rules)) for i, r in got.batch.items())
        # in id order, as one process without the warm-up stores them
        rows = [row for i in sorted(found) if (x := found[i]) is not None for row in x.rows()]
        record_added_lemmas(session=session, rows=rows)
        if got.batch is not None:
            learnt.records.keep(got.batch)
        session.commit()

    _in_turn(batches(), store, ahead=AHEAD if pool is not None else 0)
    return learnt


@dataclass(frozen=True)
class _Batch:
    """A batch of the check loop between reading and writing: its record ids, its records (None: the
    pool's processes read them), the rules with its profile, the time its runs are stamped with, and
    what the pool was handed (None: graded here)."""

    ids: list[int]
    records: list[RewriteRecord] | None
    rules: Rules
    now: datetime
    pending: Pending[Graded | None] | None
    request_ids: list[str] | None = None
    """The records' request ids as this process read them, when the processes read the records."""


@dataclass(frozen=True)
class _Handed:
    """A batch of the learning pass between finding its lemmas and storing them: ``held``, those found
    during the ingest that still hold, by record id; ``sent``, the ids of the rest, whose lemmas
    ``pending`` brings (in that order) or which were read here (``batch``)."""

    held: dict[int, Lemmas]
    sent: list[int] = field(default_factory=list)
    pending: Pending[Lemmas | None] | None = None
    batch: dict[int, RewriteRecord] | None = None


@dataclass
class _Learnt:
    """What the learning pass leaves the check loop: ``floor``, a record id up to which every record was
    checked when the pass scanned it (None: the pass was stopped before its first batch), the records it
    kept to grade without reading them again (those the pool's processes read, they keep), and the token
    that names this job to the processes."""

    floor: int | None = None
    records: KeptRecords = field(default_factory=KeptRecords)
    job: str = field(default_factory=lambda: uuid.uuid4().hex)


def _batch_profile(profiles: ProfileReader, records: Sequence[RewriteRecord | RecordHead]) -> RewriterProfile:
    """The profile a batch is graded with, read from the store: ``_learn_profile`` stored the batch's
    lemmas before the first batch, so nothing is analysed twice, and the job stores none after, so each
    count is read once per job (``profiles``). A record ingested after that pass is graded without its own
    lemmas counted, which can only make a word look less like the rewriter's style."""
    return profiles.load(
        prompt_versions={r.prompt_version for r in records}, conv_ids={r.conv_id for r in records}
    )


def enqueue_job(
    *, session: Session, settings: QueueSettings, days: Iterable[date], now: datetime
) -> EnqueueResult:
    """Admit to the review queue the given days, plus every day checked since the last admission, and
    commit (idempotent). Each day's style grades are refreshed first (``restyle_findings``), so the plan
    does not depend on the order its rewrites were checked in."""
    from monitor.checks import current_versions
    from monitor.queue.store import days_to_admit, enqueue_days

    checks = current_versions()
    if session.get_bind().dialect.name == "postgresql":
        # Admissions re-plan whole days: two at once (concurrent `run`s, a `run` beside the worker's
        # leader) would each withdraw what the other adds. Serialised until this transaction commits.
        session.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"), {"k": ADMISSION_LOCK})
    days = set(days) | set(days_to_admit(session=session))
    restyle_findings(session=session, days=days, check_rate=settings.check_rate)
    result = enqueue_days(session=session, days=sorted(days), checks=checks, settings=settings, now=now)
    session.commit()
    return result


def run_job(
    *,
    session: Session,
    settings: Settings,
    rules: Rules,
    sources: list[Source],
    now: datetime | None = None,
    on_bytes: Callable[[int], None] | None = None,
    on_source: Callable[[Source], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
    release_caches: bool = False,
) -> RunSummary:
    """The main job: ingest ``sources``, check what is unchecked, admit the days touched to the queue,
    and report finding rates over the whole store with the queue's depth.

    ``now`` defaults to the current time (it sets queue timestamps and what is overdue).
    ``release_caches``: empty the analysis cache after the check phase (a one-shot ``rewrite-monitor
    run``; a worker keeps it for its next cycle's conversations). Admission holds one small object per
    rewrite of the day it plans, and a backfill's day holds tens of thousands: with the cache's memory
    free for them, the process peaks during the check phase, not after it (issue 18's 500 MB).
    """
    from monitor.checks import current_versions
    from monitor.ingest.store.batches import IngestSummary, ingest_sources
    from monitor.queue.store import queue_depth
    from monitor.severity import SEVERITY_RANK
    from monitor.stats.store import finding_rates
    from monitor.worker.ahead import WarmUp
    from monitor.worker.pool import CheckPool

    now = now or datetime.now(UTC)
    started = time.perf_counter()
    ingest = None
    ahead: dict[int, Ahead] = {}
    with CheckPool.for_settings(settings) as pool:
        if sources:
            ingest = IngestSummary()
            warm_up = WarmUp(session, rules, settings.check_rate, pool, ingest=ingest)
            ingest_sources(
                session,
                sources,
                source_name=settings.source_name,
                batch_size=settings.batch_size,
                max_line_bytes=settings.max_line_bytes,
                sample_seed=settings.sample_seed,
                redact_key=settings.ingest_redact_key,
                trace_rules=settings.trace_rules,
                on_bytes=_both(warm_up.count, on_bytes),
                on_source=_both(warm_up.source, on_source),
                on_commit=warm_up,
                summary=ingest,
            )
            ahead = warm_up.found()
        # claim: concurrent runs on PostgreSQL check disjoint batches instead of all repeating the work.
        check = check_job(
            session=session,
            rules=rules,
            check_rate=settings.check_rate,
            on_batch=on_batch,
            claim=True,
            learn=settings.learn_from_verdicts,
            pool=pool,
            ahead=ahead,
        )
    if release_caches:
        from monitor.checks.nlp import release_analyses

        release_analyses()
    enqueue = enqueue_job(session=session, settings=settings.queue, days=check.days, now=now)
    checks = current_versions()
    rates = finding_rates(session=session, checks=checks, min_rank=SEVERITY_RANK[settings.queue_min_severity])
    depth, overdue = queue_depth(session=session, now=now)
    return RunSummary(
        ingest=ingest,
        check=check,
        enqueue=enqueue,
        rates=rates,
        depth=depth,
        overdue=overdue,
        min_severity=settings.queue_min_severity,
        seconds=time.perf_counter() - started,
    )


def _both(first: Callable[[_A], None], then: Callable[[_A], None] | None) -> Callable[[_A], None]:
    """A callback that calls ``first`` and then ``then`` with what it is given; ``first`` itself when
    there is no ``then``."""
    if then is None:
        return first

    def both(given: _A) -> None:
        first(given)
        then(given)

    return both


# -- the worker's jobs (scheduled by monitor.worker.scheduler, runnable by name: `worker run JOB`) ---


_WARNED_WAITING: set[str] = set()


def cycle_job(ctx: WorkerContext) -> CycleSummary:
    """The worker's cycle: read the configured sources on from their cursors, check what is
    unchecked, then, if this worker is the leader, admit the days touched to the queue and evaluate
    the alerts. ``ctx`` is a ``monitor.worker.context.WorkerContext``.

    Several workers on PostgreSQL share the work: each file is read by one worker at a time (advisory
    lock ``ingest:<path>``), check batches are claimed ``FOR UPDATE SKIP LOCKED``, and admission and
    alerts run under the ``leader`` lock (skipped by the others).
    """
    from monitor.ingest.tail import Tailer, resolve_sources
    from monitor.worker.store import heartbeat

    settings = ctx.settings
    with ctx.session() as session:
        tailer = Tailer(
            session,
            source_name=settings.source_name,
            batch_size=settings.batch_size,
            max_line_bytes=settings.max_line_bytes,
            sample_seed=settings.sample_seed,
            redact_key=settings.ingest_redact_key,
            trace_rules=settings.trace_rules,
            try_lock=lambda origin: ctx.locks.try_lock(f"ingest:{origin}"),
            unlock=lambda origin: ctx.locks.unlock(f"ingest:{origin}"),
            stop=ctx.stopping,
        )
        t0 = time.perf_counter()
        files, waiting = resolve_sources(settings.sources)
        report = tailer.run(files, order_key=ctx.holder)
        t1 = time.perf_counter()
        check = check_job(
            session=session,
            rules=ctx.rules,
            check_rate=settings.check_rate,
            claim=True,
            stop=ctx.stopping,
            learn=settings.learn_from_verdicts,
            pool=ctx.pool,
        )
        summary = CycleSummary(report.ingest, report.actions, check, leader=False, stopped=ctx.stopping())
        summary.sources_waiting = waiting
        for pattern in summary.sources_waiting:
            if pattern not in _WARNED_WAITING:
                # Once per process and source: at one cycle a minute a repeated warning drowns the log.
                _WARNED_WAITING.add(pattern)
                _worker_log.warning(
                    "source names no log file yet: waiting for it (check the path if it should exist)",
                    extra={"fields": {"source": pattern}},
                )
        summary.phase_seconds = {"ingest": round(t1 - t0, 3), "check": round(time.perf_counter() - t1, 3)}
        now = ctx.clock()
        heartbeat(session=session, name=f"worker:{ctx.holder}", holder=ctx.holder, now=now, ttl=ctx.lease_ttl)
        session.commit()
        if ctx.stopping() or not ctx.locks.try_lock("leader"):
            return summary
        try:
            summary.leader = True
            heartbeat(session=session, name="leader", holder=ctx.holder, now=now, ttl=ctx.lease_ttl)
            days = check.days  # enqueue_job adds every day checked since the last admission
            t2 = time.perf_counter()
            summary.enqueue = enqueue_job(session=session, settings=settings.queue, days=days, now=now)
            t3 = time.perf_counter()
            summary.alerts = evaluate_alerts(ctx, session)
            summary.phase_seconds["enqueue"] = round(t3 - t2, 3)
            summary.phase_seconds["alerts"] = round(time.perf_counter() - t3, 3)
        finally:
            ctx.locks.unlock("leader")
    return summary


def alerts_job(ctx: WorkerContext) -> list[Decision]:
    """Evaluate the alerts once, under the leader lock (skipped, returning ``[]``, when another worker
    leads right now)."""
    if not ctx.locks.try_lock("leader"):
        return []
    try:
        with ctx.session() as session:
            return evaluate_alerts(ctx, session)
    finally:
        ctx.locks.unlock("leader")


def retention_job(ctx: WorkerContext) -> RetentionResult:
    """Remove transcripts older than ``retention_days`` (``monitor.ingest.store.retention``)."""
    from monitor.ingest.store.retention import apply_retention

    now = ctx.clock()
    with ctx.session() as session:
        return apply_retention(
            session=session, cutoff=now - timedelta(days=ctx.settings.worker.retention_days), now=now
        )


def queue_summary(session: Session, day: date, now: datetime) -> dict[str, int | dict[str, int]]:
    """The queue for the daily log: open and overdue items, and ``day``'s items per stratum and state."""
    from monitor.queue.store import list_queue, queue_depth

    depth, overdue = queue_depth(session=session, now=now)
    items = [r for r in list_queue(session=session, now=now, state=None, limit=None) if r.day == day]
    by_stratum = Counter(r.stratum for r in items)
    by_state = Counter(r.state for r in items)
    return {
        "open": depth,
        "overdue": overdue,
        "day_items": len(items),
        "day_by_stratum": dict(sorted(by_stratum.items())),
        "day_by_state": dict(sorted(by_state.items())),
    }


def daily_job(ctx: WorkerContext) -> DailySummary:
    """Write the queue summary of the day before ``now`` (in ``timezone``) to the log, then apply
    retention. The log line is written by the caller (``run_job``) from ``log_fields``."""
    from zoneinfo import ZoneInfo

    now = ctx.clock()
    local = now.replace(tzinfo=UTC).astimezone(ZoneInfo(ctx.settings.worker.timezone))
    day = local.date() - timedelta(days=1)
    with ctx.session() as session:
        queue = queue_summary(session, day, now)
    return DailySummary(day, queue, retention_job(ctx))


JobSummary: TypeAlias = "CycleSummary | DailySummary | list[Decision] | RetentionResult"
"""What a worker job returns (``alerts``: every group's decision)."""

WORKER_JOBS: dict[str, Callable[[WorkerContext], JobSummary]] = {
    "cycle": cycle_job,
    "daily": daily_job,
    "alerts": alerts_job,
    "retention": retention_job,
}
"""Jobs by name, for the scheduler and ``rewrite-monitor worker run JOB``."""
