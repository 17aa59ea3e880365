"""SQLite writers side by side: the worker and two reviewers in the dashboard (``contention``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.factories import stream_lines
from tests.faults.common import Result, Size, backend, worker_cycle
from tests.helpers import REPO, Writer, start_worker, wait_started, worker_env

BUDGET = 400
"""A queue budget large enough that the reviewers do not run out of items while the test runs."""


def reviewer(url: str, name: str, seconds: float) -> dict[str, object]:
    """Claim the next item and submit a verdict, as the dashboard's Item page does (its writing engine,
    ``claim_next`` then ``record_verdict``), for ``seconds``; returns the submits, failures, idle polls
    and the first errors. Run in its own process (``python -m tests.faults.contention URL NAME S``)."""
    from monitor.queue.store import claim_next
    from monitor.review.store import record_verdict
    from monitor.store.engine import open_store, session_factory

    engine = open_store(url, writes=True)  # as dashboard.resources.engine(url, writes=True)
    make = session_factory(engine)
    lease = timedelta(minutes=10)
    done = failed = idle = 0
    errors: list[str] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with make() as session:
                row = claim_next(session=session, reviewer=name, now=datetime.now(UTC), lease=lease)
            if row is None:
                idle += 1
                time.sleep(0.05)
                continue
            with make() as session:
                record_verdict(
                    session=session,
                    item_id=row.id,
                    reviewer=name,
                    label="ok",
                    artifact="none",
                    now=datetime.now(UTC),
                    lease=lease,
                )
            done += 1
        except Exception as exc:  # noqa: BLE001 (every failure is what the scenario counts)
            failed += 1
            if len(errors) < 3:
                errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    engine.dispose()
    return {"name": name, "submitted": done, "failed": failed, "idle": idle, "errors": errors}


def contention(url: str, workdir: Path, size: Size) -> Result:
    """The worker runs with a short interval on a log that keeps growing (every cycle writes: events,
    checks, admission), while two reviewer processes claim and submit for ``size.contention_seconds``.
    No cycle may fail and no submit may fail. Only on SQLite: PostgreSQL's row locks never fail a
    writer this way."""
    res = Result("contention", backend(url))
    workdir.mkdir(parents=True)
    src = workdir / "app.jsonl"
    days = ["2024-03-04", "2024-03-05", "2024-03-06"]
    first = b"".join(stream_lines(150, turns=2, seed=61, day=days[0]))
    src.write_bytes(first)
    worker_cycle(url, [str(src)], queue_budget=BUDGET)  # a queue to review from the start
    later = [ln for d in days[1:] for ln in stream_lines(300, turns=3, seed=62, day=d)]
    env = worker_env(url, [str(src)], worker_interval_minutes=0.01, queue_budget=BUDGET)
    log = workdir / "worker.log"
    worker = start_worker(env, log)
    wait_started(worker, log)
    writer = Writer(src, later, seconds=size.contention_seconds, seed=3)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "tests.faults.contention"]
    writer.start()
    reviewers = [
        subprocess.Popen(
            [*cmd, url, f"r{i}", str(size.contention_seconds)], env=env, cwd=REPO, stdout=subprocess.PIPE
        )
        for i in (1, 2)
    ]
    results = []
    try:
        for p in reviewers:
            stdout, _ = p.communicate(timeout=size.contention_seconds + 120)
            if p.returncode != 0:
                raise RuntimeError(f"a reviewer process exited {p.returncode}")
            results.append(json.loads(stdout))
        writer.join()
    finally:  # never leave a reviewer or the worker behind a failure
        for p in reviewers:
            if p.poll() is None:
                p.kill()
                p.wait()
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=120)
    records = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
    cycles = sum(r["event"] == "cycle done" for r in records)
    failed_cycles = sum(r["event"] == "cycle failed" for r in records)
    res.figures.update(
        {
            "seconds": size.contention_seconds,
            "worker cycles": cycles,
            "failed cycles": failed_cycles,
            "submits": sum(int(r["submitted"]) for r in results),
            "failed submits": sum(int(r["failed"]) for r in results),
        }
    )
    errors = [str(e) for r in results for e in r["errors"]]
    res.expect(failed_cycles == 0, "worker cycles failed")
    res.expect(res.figures["failed submits"] == 0, "submits failed: " + "; ".join(errors))
    res.expect(res.figures["submits"] > 0 and cycles > 1, "nothing was exercised")
    return res


if __name__ == "__main__":
    print(json.dumps(reviewer(sys.argv[1], sys.argv[2], float(sys.argv[3]))))
