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
