"""Two `run`s at once on one PostgreSQL store split the checking and leave the queue a single run makes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from monitor.store.engine import make_engine, session_factory
from monitor.store.models import CheckRun, QueueItem
from tests.helpers import DEMO_LOGS, REPO, throwaway_pg_database


@pytest.fixture
def two_stores() -> Iterator[tuple[str, str]]:
    with (
        throwaway_pg_database("rm_runs", migrate=True) as a,
        throwaway_pg_database("rm_one", migrate=True) as b,
    ):
        yield a, b


def start_run(url: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("REWRITE_MONITOR_SOURCES", None)
    return subprocess.Popen(
        [sys.executable, "-m", "monitor", "--database-url", url, "run", *DEMO_LOGS, "--json"],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def queue(url: str) -> list[tuple[str, str, str, float]]:
    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            rows = s.execute(
                select(QueueItem.request_id, QueueItem.stratum, QueueItem.state, QueueItem.inclusion_prob)
                .where(QueueItem.state == "pending")
                .order_by(QueueItem.request_id)
            )
            return [tuple(r) for r in rows]
    finally:
        engine.dispose()


@pytest.mark.slow
def test_two_concurrent_runs_check_disjoint_batches_and_queue_as_one(two_stores: tuple[str, str]) -> None:
    shared, single = two_stores
    procs = [start_run(shared), start_run(shared)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    reports = [json.loads(o[0]) for o in outs]
    # examples/: 294 rewrites (examples/README.md); each is checked by exactly one of the two runs
    assert sum(r["checked"] for r in reports) == 294
    engine = make_engine(shared)
    with session_factory(engine)() as s:
        runs = s.scalars(select(CheckRun.record_id)).all()
    engine.dispose()
    assert len(runs) == len(set(runs)) == 294  # one run per record: none checked twice
    one = start_run(single)
    out, err = one.communicate(timeout=600)
    assert one.returncode == 0, err[-2000:]
    assert queue(shared) == queue(single) and len(queue(single)) == json.loads(out)["queue"]["depth"]
