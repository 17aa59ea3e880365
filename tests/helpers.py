"""Helpers the tests share that are neither fixtures nor factories: paths, throw-away PostgreSQL
databases, worker processes and the dashboard's seeded store. Not a test module.

PostgreSQL: throw-away databases are created on the server named by ``REWRITE_MONITOR_TEST_PG_URL``
(default ``postgresql://postgres@127.0.0.1:5432/test``). When it is unreachable the PostgreSQL variants
are skipped, unless ``REWRITE_MONITOR_REQUIRE_PG=1`` (set by ``.ci/run``), which turns that into a failure.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from monitor.checks import CheckOutcome, run_checks
from monitor.checks.rules import Rules
from monitor.record import RewriteRecord
from monitor.store.engine import make_engine, session_factory, upgrade
from tests import factories

REPO = Path(__file__).resolve().parent.parent
DEMO_LOGS = [
    str(REPO / "examples" / "cast2019_first_topics.jsonl.gz"),
    str(REPO / "examples" / "cast2020.jsonl"),
]
"""What ``make demo`` runs: the real CAsT sample (294 follow-ups), not the traces of examples/otel."""
SHARED_DATA = Path(os.environ.get("REWRITE_MONITOR_SHARED_DATA", REPO.parent / "shared" / "data"))
PG_ADMIN_URL = os.environ.get("REWRITE_MONITOR_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
REQUIRE_PG = os.environ.get("REWRITE_MONITOR_REQUIRE_PG") == "1"


def _pg_admin_engine() -> Engine:
    url = make_url(PG_ADMIN_URL).set(drivername="postgresql+psycopg")
    return create_engine(url, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5})


@contextmanager
def throwaway_pg_database(prefix: str, *, migrate: bool = False) -> Iterator[str]:
    """A new PostgreSQL database on the test server, dropped on exit (migrated to head if asked).

    Skips when the server is unreachable, or fails the test when ``REWRITE_MONITOR_REQUIRE_PG=1``.
    Tests that commit from several connections or processes use one of their own.
    """
    admin = _pg_admin_engine()
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        admin.dispose()
        if REQUIRE_PG:
            pytest.fail(f"PostgreSQL is required (REWRITE_MONITOR_REQUIRE_PG=1) but unreachable: {exc}")
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    url = make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        if migrate:
            upgrade(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


# -- databases the worker processes share -------------------------------------------------------------
def fresh_database(kind: str, tmp_path: Path) -> Iterator[str]:
    """A new, migrated database of ``kind`` (``sqlite`` file or a new PostgreSQL database)."""
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'worker.db'}"
        upgrade(url)
        yield url
        return
    with throwaway_pg_database("rm_worker", migrate=True) as url:
        yield url


def worker_env(url: str, sources: list[str], **settings: Any) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "REWRITE_MONITOR_DATABASE_URL": url,
            "REWRITE_MONITOR_SOURCES": json.dumps(sources),
            "REWRITE_MONITOR_LOG_JSON": "true",
            "PYTHONPATH": str(REPO),
        }
    )
    for k, v in settings.items():
        env[f"REWRITE_MONITOR_{k.upper()}"] = str(v)
    env.pop("REWRITE_MONITOR_SENTRY_DSN", None)
    return env


def start_worker(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as fh:
        return subprocess.Popen(
            [sys.executable, "-m", "monitor", "worker", *args], env=env, stdout=fh, stderr=fh, cwd=REPO
        )


def queue_of(url: str) -> list[tuple[Any, ...]]:
    """The queue as sorted (request id, day, stratum, inclusion probability to 9 places, kinds), the
    withdrawn items left out: what two runs of the same input must agree on."""
    from sqlalchemy import select

    from monitor.store.models import QueueItem

    with store_session(url) as s:
        rows = s.execute(
            select(
                QueueItem.request_id,
                QueueItem.day,
                QueueItem.stratum,
                QueueItem.inclusion_prob,
                QueueItem.kinds,
            ).where(QueueItem.state != "withdrawn")
        ).all()
    return sorted((r[0], str(r[1]), r[2], round(r[3], 9), tuple(r[4])) for r in rows)


def wait_started(proc: subprocess.Popen[bytes], log: Path, before: int = 0, timeout: float = 120) -> None:
    """Wait until the worker ``proc`` logged its ``worker started`` line (the ``before + 1``-th in
    ``log``): start-up (imports, spaCy) takes seconds, longer on a loaded machine. Kills it and raises
    ``RuntimeError`` with the log's end when it exits or does not start in ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not log.exists() or log.read_bytes().count(b'"worker started"') <= before:
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            proc.wait()
            tail = log.read_text()[-1500:] if log.exists() else ""
            raise RuntimeError("the worker did not start: " + tail)
        time.sleep(0.05)


@contextmanager
def store_session(url: str) -> Iterator[Session]:
    """A session on the store at ``url``, its engine disposed afterwards (a process under test holds its
    own)."""
    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            yield session
    finally:
        engine.dispose()


def count(url: str, stmt: Any) -> int:
    with store_session(url) as s:
        return int(s.scalar(stmt) or 0)


class Writer(threading.Thread):
    """Appends ``lines`` to ``path`` in small bursts, often splitting a line across two writes (a
    producer caught mid-line), for about ``seconds``."""

    def __init__(self, path: Path, lines: list[bytes], seconds: float, seed: int = 1):
        super().__init__(daemon=True)
        self.path, self.lines, self.seconds = path, lines, seconds
        self.rng = random.Random(seed)
        self.written = 0

    def run(self) -> None:
        pause = self.seconds / max(1, len(self.lines) // 20)
        with self.path.open("ab", buffering=0) as fh:
            i = 0
            while i < len(self.lines):
                burst = self.lines[i : i + self.rng.randint(1, 40)]
                data = b"".join(burst)
                cut = self.rng.randint(1, len(data) - 1)
                fh.write(data[:cut])
                time.sleep(pause / 4)  # a reader may see the half-written line now
                fh.write(data[cut:])
                i += len(burst)
                self.written = i
                time.sleep(pause)


# -- the dashboard's seeded store (the AppTest and the browser tests) -----------------------------------
QUEUED_AT = datetime(2024, 3, 6, tzinfo=UTC)


def seed_dashboard_store(url: str) -> None:
    """Migrate ``url`` and fill it with :func:`tests.factories.dashboard_log` as ``rewrite-monitor run``
    would (ingest, check, queue at :data:`QUEUED_AT`)."""
    from monitor.checks.rules import load_rules
    from monitor.ingest.store.batches import ingest_bytes
    from monitor.settings import load_settings
    from monitor.worker.jobs import check_job, enqueue_job

    upgrade(url)
    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            ingest_bytes(session, factories.dashboard_log())
            session.commit()
            check_job(session=session, rules=load_rules(None))
            enqueue_job(session=session, settings=load_settings().queue, days=[], now=QUEUED_AT)
    finally:
        engine.dispose()


# -- running the checks on one record -------------------------------------------------------------------
def summary(outcome: CheckOutcome) -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, severity, words) of every finding, in report order."""
    return [(f.kind, f.severity, tuple(f.words)) for f in outcome.findings]


def run(record: RewriteRecord, rules: Rules) -> CheckOutcome:
    return run_checks(record, rules)


# -- what a reviewer reads in a Streamlit element --------------------------------------------------------
def shown(markdown: str) -> str:
    """The text a Markdown element displays for ``markdown`` written by ``dashboard.artifacts.md``: the
    backslash escapes undone and the zero-width spaces that break autolinks removed."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u200b", "")


class Receiver:
    """A local HTTP endpoint that answers ``code`` (settable) and keeps every request (path, headers,
    body)."""

    def __init__(self, code: int = 200) -> None:
        import http.server
        import threading

        self.code = code
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append((self.path, dict(self.headers), body))
                self.send_response(outer.code)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def count_verdicts(url: str) -> int:
    """How many verdicts the store at ``url`` holds (what a screen under test has stored)."""
    from sqlalchemy import func, select

    from monitor.store.models import Verdict

    return count(url, select(func.count()).select_from(Verdict))


CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
"""Debian's headless Chromium and its driver, which ``.ci/run`` installs for the browser tests."""


def require_browser() -> None:
    """Skip the calling test module when selenium (the dev extra) or Chromium is not installed here; on
    CI, where ``.ci/run`` installs them, fail instead. Call at module level, before importing selenium."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("selenium") is None:
        if os.environ.get("CI"):
            pytest.fail("selenium is missing on CI (it is in the dev extra)", pytrace=False)
        pytest.skip("selenium not installed (pip install -e '.[dev]')", allow_module_level=True)
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        if os.environ.get("CI"):
            pytest.fail(
                "chromium and chromium-driver are missing on CI (.ci/run installs them)", pytrace=False
            )
        pytest.skip("chromium / chromium-driver not installed", allow_module_level=True)
