"""What the fault scenarios share: sizes, results, the store read back as plain values, and a one-shot
reference run of the same input."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from monitor.store.engine import make_engine, session_factory, upgrade
from monitor.store.models import Event, Finding, Quarantine, Record
from tests.helpers import REPO, queue_of, worker_env


@dataclass(frozen=True)
class Size:
    """How much of each fault a run injects: ``small`` for the README's test command, ``full`` for
    ``make faults`` (the figures issue 12 asks for)."""

    name: str
    kills: int
    conversations: int
    rotations: int
    workers_conversations: int
    poison_good: int
    contention_seconds: float
    outage_seconds: float


SIZES = {
    "small": Size(
        "small",
        kills=4,
        conversations=40,
        rotations=4,
        workers_conversations=60,
        poison_good=40,
        contention_seconds=8,
        outage_seconds=6,
    ),
    "full": Size(
        "full",
        kills=50,
        conversations=400,
        rotations=24,
        workers_conversations=600,
        poison_good=400,
        contention_seconds=60,
        # PostgreSQL stopped for longer than the 30 s the issue asks, and a SQLite lock held past the
        # store's 30 s busy timeout, so its cycles fail too
        outage_seconds=35,
    ),
}


@dataclass
class Result:
    """One scenario on one database: ``figures`` (name -> value, in print order) and the expectations
    that did not hold (empty when the scenario passed)."""

    scenario: str
    database: str
    figures: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def expect(self, ok: bool, what: str) -> None:
        """Record ``what`` as failed unless ``ok``."""
        if not ok:
            self.failures.append(what)

    def line(self) -> str:
        """One line for the report: scenario, database, figures, and PASS or the failures."""
        figs = ", ".join(f"{k} {v}" for k, v in self.figures.items())
        verdict = "PASS" if not self.failures else "FAIL: " + "; ".join(self.failures)
        return f"{self.scenario} [{self.database}] {figs} -> {verdict}"


def backend(url: str) -> str:
    return "sqlite" if url.startswith("sqlite") else "postgresql"


def stored_events(url: str) -> Counter[tuple[str, str]]:
    """How many times each (request id, event kind) is stored."""
    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            return Counter((r, k) for r, k in s.execute(select(Event.request_id, Event.kind)))
    finally:
        engine.dispose()


def quarantined(url: str) -> Counter[str]:
    """Quarantine rows by reason."""
    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            return Counter(r for (r,) in s.execute(select(Quarantine.reason)))
    finally:
        engine.dispose()


def half_records(url: str) -> int:
    """Records with one half only (a rewrite without its ctx_input, or the reverse)."""
    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            return int(
                s.scalar(
                    select(func.count()).where(
                        (Record.ctx_event_id.is_(None)) | (Record.rewrite_event_id.is_(None))
                    )
                )
                or 0
            )
    finally:
        engine.dispose()


def findings_of(url: str) -> tuple[Counter[tuple[Any, ...]], Counter[tuple[Any, ...]]]:
    """The stored findings as (request id, kind, words) and as (request id, kind, words, severity).

    The first is what any order of checking must reproduce; the second may differ for style words (a
    rewrite checked early meets a smaller rewriter profile: ``monitor.checks.profile``), which queue
    admission grades again, so the queue must still be equal."""
    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            rows = s.execute(select(Finding.request_id, Finding.kind, Finding.words, Finding.severity)).all()
    finally:
        engine.dispose()
    plain = Counter((r, k, json.dumps(w)) for r, k, w, _ in rows)
    graded = Counter((r, k, json.dumps(w), sev) for r, k, w, sev in rows)
    return plain, graded


def worker_cycle(url: str, sources: Iterable[str], **settings: Any) -> dict[str, Any]:
    """One ``worker run cycle --json`` on ``sources``; its JSON summary (raises on a non-zero exit)."""
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "worker", "run", "cycle", "--json"],
        env=worker_env(url, list(sources), **settings),
        capture_output=True,
        cwd=REPO,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"worker run cycle exited {done.returncode}: {done.stderr.decode()[-800:]}")
    return dict(json.loads(done.stdout))


def one_shot(url: str, lines: list[bytes], workdir: Path, **settings: Any) -> None:
    """The reference: ``lines`` in one file, read, checked and admitted by one cycle of one worker on the
    fresh, migrated store ``url``."""
    workdir.mkdir(parents=True, exist_ok=True)
    ref = workdir / "all.jsonl"
    ref.write_bytes(b"".join(lines))
    upgrade(url)
    worker_cycle(url, [str(ref)], **settings)


def compare_with(result: Result, url: str, ref_url: str) -> None:
    """Findings and queue of ``url`` against the one-shot reference ``ref_url``, as figures and
    expectations."""
    got, got_graded = findings_of(url)
    want, want_graded = findings_of(ref_url)
    result.figures["findings"] = sum(got.values())
    result.figures["findings differing from one-shot"] = sum(((got - want) + (want - got)).values())
    result.figures["severities differing (style step)"] = (
        sum(((got_graded - want_graded) + (want_graded - got_graded)).values()) // 2
    )
    q, ref_q = queue_of(url), queue_of(ref_url)
    result.figures["queue items"] = len(q)
    result.figures["queue equal to one-shot"] = q == ref_q
    # name what differs (request, kind, words; at most three each way): a failure on a busy CI machine
    # is only worth its run when it says which finding to look at
    extra = sorted((got - want).elements())[:3]
    missing = sorted((want - got).elements())[:3]
    result.expect(
        got == want, f"findings differ from the one-shot run (only here: {extra}; only there: {missing})"
    )
    result.expect(q == ref_q, "queue differs from the one-shot run")
