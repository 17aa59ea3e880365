"""The worker as a process: SIGKILL at random points while a log grows loses and duplicates nothing;
SIGTERM shuts down cleanly; a second worker on a SQLite store is refused; the scheduler's triggers;
logs carry no transcript text.

``stream_lines`` (tests/factories.py) generates realistic, short traffic, ``tests/helpers.py`` starts
and feeds the worker processes (for ``test_scaleout`` too).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from monitor.cli.main import app
from monitor.ingest.store.cursors import get_cursor
from monitor.observability.logs import JsonFormatter, configure_logging
from monitor.settings import Settings
from monitor.store.engine import make_engine, session_factory, upgrade
from monitor.store.models import CheckRun, Event, Quarantine, Record
from monitor.worker.locks import SqliteWorkerLock, WorkerError
from monitor.worker.scheduler import build_scheduler
from tests.factories import TOPICS, stream_lines
from tests.helpers import REPO, Writer, count, fresh_database, start_worker, worker_env


@pytest.fixture(params=["sqlite", "postgresql"])
def worker_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from fresh_database(request.param, tmp_path)


# -- crash safety ----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_sigkill_at_random_points_loses_and_duplicates_nothing(worker_db: str, tmp_path: Path) -> None:
    lines = stream_lines(60, turns=4)  # 480 lines
    log_file = tmp_path / "app.jsonl"
    log_file.touch()
    env = worker_env(worker_db, [str(log_file)], worker_interval_minutes=0.005, batch_size=7)
    writer = Writer(log_file, lines, seconds=8)
    rng = random.Random(20240304)
    worker_log = tmp_path / "worker.log"
    writer.start()
    kills, partial_seen = 0, 0
    while writer.is_alive() or kills < 4:
        started_before = worker_log.read_bytes().count(b'"worker started"') if worker_log.exists() else 0
        proc = start_worker(env, worker_log)
        # Start-up (imports, spaCy) takes ~1.5 s on an idle machine and far longer on a loaded one: wait
        # for it, so the kill lands inside cycles rather than in the imports.
        deadline = time.monotonic() + 120
        while worker_log.read_bytes().count(b'"worker started"') == started_before:
            assert time.monotonic() < deadline and proc.poll() is None, worker_log.read_text()
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        stored = count(worker_db, select(func.count()).select_from(Event))
        partial_seen += 0 < stored < len(lines)
    writer.join()
    # A last, complete cycle after the crashes.
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "worker", "run", "cycle", "--json"],
        env=env,
        capture_output=True,
        cwd=REPO,
        check=True,
    )
    assert json.loads(done.stdout)["ingest"]["rejected_total"] == 0
    assert partial_seen >= 1, "no kill landed while the log was only partly stored"
    engine = make_engine(worker_db)
    with session_factory(engine)() as s:
        got = s.execute(select(Event.line_no).where(Event.origin == str(log_file)).order_by(Event.line_no))
        assert [n for (n,) in got] == list(range(1, len(lines) + 1))  # every line once, none twice
        assert s.scalar(select(func.count()).select_from(Quarantine)) == 0
        cur = get_cursor(session=s, path=str(log_file))
        assert cur is not None and (cur.line_no, cur.offset) == (len(lines), log_file.stat().st_size)
        assert s.scalar(select(func.count()).select_from(Record)) == len(lines) // 2
        assert s.scalar(select(func.count()).where(Record.ctx_event_id.is_(None))) == 0
        runs = s.scalar(select(func.count()).select_from(CheckRun))
        assert runs == len(lines) // 2  # every record checked once, at one set of versions (unique key)
    engine.dispose()


# -- shutdown, refusal, scheduler, logs --------------------------------------------------------------------
@pytest.mark.slow
def test_sigterm_finishes_the_cycle_and_exits_cleanly(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'w.db'}"
    upgrade(url)
    src = tmp_path / "app.jsonl"
    lines = stream_lines(20, turns=2)
    src.write_bytes(b"".join(lines))
    log = tmp_path / "worker.log"
    proc = start_worker(worker_env(url, [str(src)], worker_interval_minutes=0.01), log)
    try:
        deadline = time.monotonic() + 120
        while b'"cycle done"' not in log.read_bytes():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    records = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
    events = [r["event"] for r in records]
    assert events[0] == "worker started" and events[-1] == "worker stopped"
    # The signal may land between cycles or during one (cycles run back to back at this interval). Either
    # way the in-flight cycle, and only it, finishes after the request; no new one starts.
    after = events[events.index("shutdown requested") + 1 : -1]
    assert after in ([], ["cycle done"]), events
    first = next(r for r in records if r["event"] == "cycle done")
    assert (first["stored"], first["checked"], first["leader"]) == (80, 40, True)
    # No transcript text in the logs: no message, latest or query of the input appears.
    texts = {t for q, a, f, _ in TOPICS for t in (q, a, f"What's the {f} on that?")}
    assert not [t for t in texts if t in log.read_text()]
    assert count(url, select(func.count()).select_from(Event)) == 80


def test_a_second_worker_on_sqlite_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'w.db'}"
    upgrade(url)
    guard = SqliteWorkerLock(str(tmp_path / "w.db"), "first")
    try:
        with pytest.raises(WorkerError, match=r"another worker \(pid \d+, holder first\) is running"):
            SqliteWorkerLock(str(tmp_path / "w.db"), "second")
        result = CliRunner().invoke(app, ["--database-url", url, "worker", "run", "cycle"])
        assert result.exit_code == 7
        assert "SQLite supports one worker: stop that one, or use PostgreSQL to run several" in result.output
    finally:
        guard.close()
    SqliteWorkerLock(str(tmp_path / "w.db"), "third").close()  # free again


def test_scheduler_maps_job_ids_to_triggers() -> None:
    calls: list[str] = []
    s = build_scheduler(
        Settings(worker_interval_minutes=5, daily_time="06:30", timezone="Europe/Berlin").worker, calls.append
    )
    jobs = {j.id: j for j in s.get_jobs()}
    assert set(jobs) == {"cycle", "daily"}
    cycle, daily = jobs["cycle"], jobs["daily"]
    assert (cycle.coalesce, cycle.max_instances, cycle.misfire_grace_time) == (True, 1, 300)
    assert cycle.trigger.interval == timedelta(minutes=5) and cycle.args == ("cycle",)
    assert (daily.coalesce, daily.max_instances, daily.misfire_grace_time) == (True, 1, 6 * 3600)
    assert (
        str(daily.trigger) == "cron[hour='6', minute='30']" and str(daily.trigger.timezone) == "Europe/Berlin"
    )


def test_log_formatter_drops_transcript_fields() -> None:
    import io
    import logging

    buf = io.StringIO()
    handler = configure_logging(json_output=True, stream=buf)
    try:
        logging.getLogger("monitor.worker").info(
            "cycle done",
            extra={"fields": {"stored": 3, "query": "secret q", "nested": {"messages": ["m"], "n": 1}}},
        )
    finally:
        logging.getLogger("monitor").removeHandler(handler)
    rec = json.loads(buf.getvalue())
    assert {k: v for k, v in rec.items() if k != "ts"} == {
        "level": "info",
        "logger": "monitor.worker",
        "event": "cycle done",
        "stored": 3,
        "nested": {"n": 1},
    }
    assert isinstance(JsonFormatter(), logging.Formatter)


def test_worker_run_prints_a_human_summary_and_json_on_request(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    upgrade(url)
    alerts = CliRunner().invoke(app, ["--database-url", url, "worker", "run", "alerts"])
    assert alerts.exit_code == 0, alerts.output
    assert alerts.stdout == "alerts: no alert or recovery\n"
    as_json = CliRunner().invoke(app, ["--database-url", url, "worker", "run", "alerts", "--json"])
    assert json.loads(as_json.stdout) == []
