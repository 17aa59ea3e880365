"""The jobs, as plain functions the CLI (and later the scheduler) call by name.

Each takes what it needs explicitly (a session, the loaded rules) and returns a summary dataclass;
none prints. Transcript text never goes to logs from here.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy.orm import Session

from monitor.services.checks import clear_runs, coverage, store_outcomes, unchecked_record_ids
from monitor.services.records import load_records


@dataclass
class CheckSummary:
    """What one ``check`` run did: records checked, findings by kind and severity, skips by check."""

    records: int = 0
    findings: Counter[tuple[str, str]] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    cleared_runs: int = 0
    days: set[date] = field(default_factory=set)
    seconds: float = 0.0
    coverage: list[Any] = field(default_factory=list)

    @property
    def per_second(self) -> float | None:
        return self.records / self.seconds if self.seconds > 0 else None

    def as_dict(self) -> dict[str, Any]:
        by_kind: dict[str, dict[str, int]] = {}
        for (kind, sev), n in sorted(self.findings.items()):
            by_kind.setdefault(kind, {})[sev] = n
        return {
            "records_checked": self.records,
            "seconds": round(self.seconds, 3),
            "records_per_second": round(self.per_second, 1) if self.per_second else None,
            "findings": by_kind,
            "skipped": dict(sorted(self.skipped.items())),
            "cleared_runs": self.cleared_runs,
            "coverage": [
                {
                    "check": c.check_id,
                    "version": c.version,
                    "ran": c.ran,
                    "skipped": c.skipped,
                    "rewrites": c.rewrites,
                    "top_skip_reason": c.top_skip_reason,
                }
                for c in self.coverage
            ],
        }


def check_job(
    *,
    session: Session,
    rules: Any,
    recheck: bool = False,
    check_rate: float = 1.0,
    batch_size: int = 500,
    on_batch: Callable[[int], None] | None = None,
) -> CheckSummary:
    """Run every registered check over the records not yet checked at the current versions.

    With ``recheck``, the current versions' runs and findings are deleted first and every record is
    checked again. With ``check_rate`` < 1 only records whose draw is below the rate are checked.
    ``summary.days`` collects the UTC days of the rewrites checked (for queue admission). Commits once
    per batch, so an interrupted run keeps what it finished.
    """
    from monitor.checks import REGISTRY, run_checks

    checks = [(spec.id, spec.version) for spec in REGISTRY.values()]
    summary = CheckSummary()
    started = time.perf_counter()
    if recheck:
        summary.cleared_runs = clear_runs(session=session, checks=checks)
        session.commit()
    after = 0
    while True:
        ids = unchecked_record_ids(
            session=session, checks=checks, after_id=after, limit=batch_size, check_rate=check_rate
        )
        if not ids:
            break
        now = datetime.now(UTC).replace(tzinfo=None)
        outcomes = []
        for record_id, record in load_records(session=session, record_ids=ids):
            outcome = run_checks(record, rules)
            outcomes.append((record_id, record.request_id, outcome))
            summary.records += 1
            if record.ts is not None:
                summary.days.add(record.ts.date())
            for f in outcome.findings:
                summary.findings[(f.kind, f.severity)] += 1
            for s in outcome.statuses:
                if s.status == "skipped":
                    summary.skipped[s.check_id] += 1
        store_outcomes(session=session, outcomes=outcomes, now=now)
        session.commit()
        after = ids[-1]
        if on_batch:
            on_batch(len(ids))
    summary.seconds = time.perf_counter() - started
    summary.coverage = coverage(session=session, checks=checks)
    return summary


@dataclass
class RunSummary:
    """The main job's report: what was ingested, checked and queued, and the state of the queue."""

    ingest: Any
    check: CheckSummary
    enqueue: Any
    rates: list[Any]
    depth: int
    overdue: int
    min_severity: str
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        check = self.check.as_dict()
        return {
            "seconds": round(self.seconds, 2),
            "ingest": self.ingest.as_dict() if self.ingest is not None else None,
            "checked": check["records_checked"],
            "check_seconds": check["seconds"],
            "findings_this_run": check["findings"],
            "coverage": check["coverage"],
            "rates": {
                "min_severity": self.min_severity,
                "kinds": [
                    {
                        "kind": r.kind,
                        "rewrites_flagged": r.flagged,
                        "rewrites_checked": r.checked,
                        "per_1000": round(r.per_1000, 2) if r.per_1000 is not None else None,
                        "ci95_per_1000": [round(x, 2) for x in r.ci_per_1000] if r.ci_per_1000 else None,
                    }
                    for r in self.rates
                ],
            },
            "queue": {
                "added": self.enqueue.added,
                "capped": self.enqueue.capped,
                "subsampled": self.enqueue.subsampled,
                "days": [d.isoformat() for d in self.enqueue.days],
                "depth": self.depth,
                "overdue": self.overdue,
            },
        }


def enqueue_job(*, session: Session, settings: Any, days: Any, now: datetime) -> Any:
    """Admit to the review queue the given days, plus every day checked since the last admission, and
    commit (idempotent)."""
    from monitor.checks import REGISTRY
    from monitor.services.queue import days_to_admit, enqueue_days

    checks = [(spec.id, spec.version) for spec in REGISTRY.values()]
    days = set(days) | set(days_to_admit(session=session))
    result = enqueue_days(session=session, days=sorted(days), checks=checks, settings=settings, now=now)
    session.commit()
    return result


def run_job(
    *,
    session: Session,
    settings: Any,
    rules: Any,
    sources: list[Any],
    now: datetime | None = None,
    on_bytes: Callable[[int], None] | None = None,
    on_source: Callable[[Any], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> RunSummary:
    """The main job: ingest ``sources``, check what is unchecked, admit the days touched to the queue,
    and report finding rates over the whole store with the queue's depth.

    ``now`` defaults to the current time (it sets queue timestamps and what is overdue).
    """
    from monitor.checks import REGISTRY
    from monitor.ingest import ingest_sources
    from monitor.sampling import SEVERITY_RANK
    from monitor.services.queue import queue_depth
    from monitor.services.stats import finding_rates

    now = now or datetime.now(UTC)
    started = time.perf_counter()
    ingest = None
    if sources:
        ingest = ingest_sources(
            session,
            sources,
            source_name=settings.source_name,
            batch_size=settings.batch_size,
            max_line_bytes=settings.max_line_bytes,
            sample_seed=settings.sample_seed,
            on_bytes=on_bytes,
            on_source=on_source,
        )
    check = check_job(session=session, rules=rules, check_rate=settings.check_rate, on_batch=on_batch)
    enqueue = enqueue_job(session=session, settings=settings, days=check.days, now=now)
    checks = [(spec.id, spec.version) for spec in REGISTRY.values()]
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
