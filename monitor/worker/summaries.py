"""What the jobs return: one dataclass per job (``check``, ``run``, the worker's cycle and its daily job),
each with its JSON shape (``as_dict``) and, for the worker's, the counts it logs (``log_fields``).

Counts and names only: no transcript text, so every one of them may go to the structured log.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from monitor.alerts.policy import Decision
    from monitor.checks.store.runs import Coverage
    from monitor.ingest.store.batches import IngestSummary
    from monitor.ingest.store.retention import RetentionResult
    from monitor.queue.store import EnqueueResult
    from monitor.stats.store import KindRate


@dataclass
class CheckSummary:
    """What one ``check`` run did: records checked, findings by kind and severity, skips by check."""

    records: int = 0
    findings: Counter[tuple[str, str]] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    cleared_runs: int = 0
    days: set[date] = field(default_factory=set)
    seconds: float = 0.0
    coverage: list[Coverage] = field(default_factory=list)
    processes: int = 1
    """Processes that graded the rewrites: 1 when the main process did (no pool, or a job too small)."""

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
            "processes": self.processes,
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


@dataclass
class RunSummary:
    """The main job's report: what was ingested, checked and queued, and the state of the queue."""

    ingest: IngestSummary | None
    check: CheckSummary
    enqueue: EnqueueResult
    rates: list[KindRate]
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
            "check_processes": check["processes"],
            "findings_this_run": check["findings"],
            "coverage": check["coverage"],
            "rates": {
                "min_severity": self.min_severity,
                "kinds": [
                    {
                        "kind": r.kind,
                        "rewrites_flagged": r.flagged,
                        "rewrites_checked": r.checked,
                        # four places: the terminal prints one, and rounding twice (26.846 -> 26.85 -> 26.9)
                        # made `run` disagree with `stats` on the same store
                        "per_1000": round(r.per_1000, 4) if r.per_1000 is not None else None,
                        "ci95_per_1000": [round(x, 4) for x in r.ci_per_1000] if r.ci_per_1000 else None,
                    }
                    for r in self.rates
                ],
            },
            "queue": {
                "added": self.enqueue.added,
                "withdrawn": self.enqueue.withdrawn,
                "capped": self.enqueue.capped,
                "subsampled": self.enqueue.subsampled,
                "days": [d.isoformat() for d in self.enqueue.days],
                "depth": self.depth,
                "overdue": self.overdue,
            },
        }


@dataclass
class CycleSummary:
    """One worker cycle: what was read per file, checked, admitted, and alerted.

    ``leader`` says whether this worker held the leader lock (only the leader admits and alerts).
    """

    ingest: IngestSummary
    files: dict[str, str]
    check: CheckSummary
    leader: bool
    enqueue: EnqueueResult | None = None
    alerts: list[Decision] = field(default_factory=list)
    stopped: bool = False
    phase_seconds: dict[str, float] = field(default_factory=dict)
    sources_waiting: list[str] = field(default_factory=list)

    def log_fields(self) -> dict[str, Any]:
        """Counts only (no text), for the structured log."""
        ing = self.ingest
        return {
            "files": len(self.files),
            "files_read": sum(1 for a in self.files.values() if a not in ("unchanged", "locked")),
            "lines": ing.lines_read,
            "stored": ing.stored,
            "rejected": ing.rejected_total,
            "traces_skipped": sum(ing.skipped.values()),
            "source_errors": len(ing.source_errors),
            "sources_waiting": len(self.sources_waiting),
            "checked": self.check.records,
            "leader": self.leader,
            "queued": sum(self.enqueue.added.values()) if self.enqueue else 0,
            "withdrawn": sum(self.enqueue.withdrawn.values()) if self.enqueue else 0,
            "alerts": [f"{d.action}:{d.group.group_key}" for d in self.alerts if d.action],
            "stopped": self.stopped,
            "phase_seconds": self.phase_seconds,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase_seconds": self.phase_seconds,
            "ingest": self.ingest.as_dict(),
            "files": self.files,
            "check": self.check.as_dict(),
            "leader": self.leader,
            "sources_waiting": self.sources_waiting,
            "queue_added": self.enqueue.added if self.enqueue else {},
            "queue_withdrawn": self.enqueue.withdrawn if self.enqueue else {},
            "alerts": [
                {"group": d.group.group_key, "action": d.action, "reason": d.reason}
                for d in self.alerts
                if d.action
            ],
            "stopped": self.stopped,
        }


@dataclass
class DailySummary:
    """The daily job: the queue's state for ``day`` and what retention removed."""

    day: date
    queue: dict[str, int | dict[str, int]]
    retention: RetentionResult

    def log_fields(self) -> dict[str, Any]:
        return {"day": self.day.isoformat(), **self.queue, **self.retention.as_dict()}

    def as_dict(self) -> dict[str, Any]:
        return {"day": self.day.isoformat(), "queue": self.queue, "retention": self.retention.as_dict()}
