"""Three worker processes against the real PostgreSQL on 20,000 events written while they run: every
event stored once, every record checked once, and the queue identical to a single-worker run.

The default queue settings bind (see QUEUE). Admission re-plans the whole day each time and grades the
day's style words again against the grown rewriter profile, and nobody reviews during the test, so
the final queue must equal a one-shot admission whatever the order the three workers checked in:
any lost, doubled, mis-graded or mis-weighted admission by the leader shows.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from monitor.store.engine import make_engine, session_factory
from monitor.store.models import CheckRun, Event, Quarantine, Record
from tests.factories import stream_lines
from tests.helpers import REPO, Writer, count, fresh_database, queue_of, start_worker, worker_env

# The default queue settings: a budget of 40 a day binds (about 830 flagged rewrites arrive on the
# one day), so identity with the single worker shows that re-planning the day at each admission makes
# the queue independent of arrival order, not merely that everything fitted.
QUEUE = {"batch_size": 200}


def log_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.startswith("{")]


def run_until_admitted(
    url: str, workers: list[Any], logs: list[Path], files: list[Path], per_file: list[list[bytes]]
) -> None:
    """Write the files while the workers run, wait until every record is checked and a leader cycle
    started after that, then stop the workers with SIGTERM (they must exit 0)."""
    writers = [
        Writer(f, ls, seconds=10, seed=i) for i, (f, ls) in enumerate(zip(files, per_file, strict=True))
    ]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    expected_runs = 10_000  # one run per record
    # Generous: on a busy 2-core machine the 10,000 rewrites' checks alone take minutes.
    deadline = time.monotonic() + 540
    while count(url, select(func.count()).select_from(CheckRun)) < expected_runs:
        assert time.monotonic() < deadline, "workers did not finish checking in time"
        assert all(p.poll() is None for p in workers), [log.read_text()[-2000:] for log in logs]
        time.sleep(0.5)
    checked_at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 1))
    # Wait for two leader cycles that ended after the last check committed: leader sections are
    # mutually exclusive, so the second one's admission began after the first ended, after the checks.
    while True:
        assert time.monotonic() < deadline, "no leader cycle after the last check"
        done = [r for log in logs for r in log_records(log) if r["event"] == "cycle done" and r["leader"]]
        if sum(r["ts"] > checked_at for r in done) >= 2:
            break
        time.sleep(0.5)
    for p in workers:
        p.send_signal(signal.SIGTERM)
    assert [p.wait(timeout=120) for p in workers] == [0, 0, 0]


@pytest.fixture
def pg_db(tmp_path: Path) -> Any:
    yield from fresh_database("postgresql", tmp_path)


@pytest.mark.slow
def test_three_workers_store_and_check_everything_once(pg_db: str, tmp_path: Path) -> None:
    lines = stream_lines(2500, turns=4, seed=11)  # 20,000 events: 10,000 rewrites with their ctx_input
    assert len(lines) == 20_000
    files = [tmp_path / f"rag-{i}.jsonl" for i in range(4)]
    per_file: list[list[bytes]] = [[] for _ in files]
    for i, ln in enumerate(lines):
        # A conversation stays in one file (its lines are 2 per turn, conversations interleaved).
        per_file[(i // 2) % 2500 % 4].append(ln)
    for f in files:
        f.touch()
    env = worker_env(pg_db, [str(tmp_path / "rag-*.jsonl")], worker_interval_minutes=0.01, **QUEUE)
    logs = [tmp_path / f"worker-{i}.log" for i in range(3)]
    started = time.monotonic()
    workers = [start_worker(env, log) for log in logs]
    try:
        run_until_admitted(pg_db, workers, logs, files, per_file)
    finally:
        for p in workers:  # never leave a worker behind a failed assertion (the database is dropped next)
            if p.poll() is None:
                p.kill()
                p.wait()
    multi_seconds = time.monotonic() - started
    expected_runs = 10_000  # one run per record

    engine = make_engine(pg_db)
    with session_factory(engine)() as s:
        assert s.scalar(select(func.count()).select_from(Event)) == 20_000
        assert (
            s.scalar(
                select(
                    func.count(
                        func.distinct(Event.origin + ":" + func.cast(Event.line_no, Event.origin.type))
                    )
                )
            )
            == 20_000
        )
        assert s.scalar(select(func.count()).select_from(Quarantine)) == 0
        assert s.scalar(select(func.count()).select_from(Record)) == 10_000
        assert s.scalar(select(func.count()).where(Record.ctx_event_id.is_(None))) == 0
        # One run per (record, set of check versions) is the schema's unique key; the count shows none
        # missing.
        assert s.scalar(select(func.count()).select_from(CheckRun)) == expected_runs
    engine.dispose()
    checked_by = Counter()
    for i, log in enumerate(logs):
        for r in log_records(log):
            if r["event"] == "cycle done":
                checked_by[i] += r["checked"]
    # SKIP LOCKED spreads the checking: at least two workers did some; re-checks are rare and harmless.
    assert sum(1 for n in checked_by.values() if n) >= 2, checked_by
    multi_queue = queue_of(pg_db)
    assert len(multi_queue) == 40  # the day's budget, filled
    assert {q[2] for q in multi_queue} <= {"high", "medium", "control"} and "control" in {
        q[2] for q in multi_queue
    }

    # The same input, read by one worker in one cycle on a fresh database.
    ref_gen = fresh_database("postgresql", tmp_path / "ref")
    (tmp_path / "ref").mkdir()
    ref_url = next(ref_gen)
    try:
        single_started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "monitor", "worker", "run", "cycle", "--json"],
            env=worker_env(ref_url, [str(tmp_path / "rag-*.jsonl")], **QUEUE),
            capture_output=True,
            cwd=REPO,
            check=True,
        )
        single_seconds = time.monotonic() - single_started
        assert queue_of(ref_url) == multi_queue
    finally:
        next(ref_gen, None)
    print(
        f"\nscale-out: 3 workers stored and checked 20,000 events in {multi_seconds:.1f} s "
        f"(checked per worker {dict(checked_by)}); one cycle of one worker: {single_seconds:.1f} s; "
        f"queue items {len(multi_queue)}"
    )
