"""SQLite writers queue instead of failing: the worker and the dashboard's writing callbacks take the
write lock at BEGIN, and the terminal review never holds a transaction while it waits for a key."""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text, update

from monitor.ingest.store.batches import ingest_bytes
from monitor.settings import Settings
from monitor.store.engine import open_store, session_factory, upgrade
from monitor.store.models import Record
from tests.factories import ctx_input, log, rewrite


@pytest.fixture
def store(tmp_path: Path) -> tuple[str, Path]:
    path = tmp_path / "s.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    engine = open_store(url, writes=True)
    with session_factory(engine)() as s:
        ingest_bytes(s, log(ctx_input(), rewrite()))
        s.commit()
    engine.dispose()
    return url, path


def _read_then_write(url: str, writes: bool, started: threading.Event, errors: list[str]) -> None:
    engine = open_store(url, writes=writes)
    try:
        with session_factory(engine)() as s:
            s.execute(select(Record.id)).all()  # the transaction reads first ...
            started.set()
            time.sleep(0.3)
            s.execute(update(Record).values(turn=Record.turn))  # ... then writes
            s.commit()
    except Exception as exc:  # noqa: BLE001 (the test records what failed)
        errors.append(type(exc).__name__ + ": " + str(exc).splitlines()[0])
    finally:
        engine.dispose()


@pytest.mark.parametrize(("writes", "fails"), [(False, True), (True, False)])
def test_two_read_then_write_transactions(store: tuple[str, Path], writes: bool, fails: bool) -> None:
    """Deferred (a plain BEGIN), the second writer's read snapshot is stale once the first commits and
    SQLite refuses its write at once; with the lock taken at BEGIN it waits and succeeds."""
    url, _ = store
    errors: list[str] = []
    first, second = threading.Event(), threading.Event()
    a = threading.Thread(target=_read_then_write, args=(url, writes, first, errors))
    b = threading.Thread(target=_read_then_write, args=(url, writes, second, errors))
    a.start()
    first.wait(5) if writes else None
    b.start()
    a.join(10)
    b.join(10)
    assert bool(errors) is fails, errors
    if fails:
        assert "database is locked" in errors[0]


def test_the_worker_and_the_dashboard_writers_take_the_lock_at_begin(
    store: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic import SecretStr

    import monitor.store.engine as eng
    from dashboard import resources
    from monitor.worker.runtime import open_worker

    seen: list[bool] = []
    real = eng.open_store

    def spy(url: str, **kw: Any) -> Any:
        seen.append(bool(kw.get("writes")))
        return real(url, **kw)

    monkeypatch.setattr(eng, "open_store", spy)
    monkeypatch.setattr(resources, "open_store", spy)
    url, _ = store
    ctx = open_worker(Settings(database_url=SecretStr(url)))
    ctx.close()
    resources.engine.clear()
    resources.engine(url, True)
    resources.engine(url)
    assert seen == [True, True, False]  # worker; dashboard callbacks; dashboard pages


def test_review_waits_for_a_key_outside_any_transaction(store: tuple[str, Path]) -> None:
    from monitor.checks import current_versions
    from monitor.checks.rules import load_rules
    from monitor.cli.commands.review import review_loop
    from monitor.queue.store import enqueue_days
    from monitor.settings import load_settings
    from monitor.worker.jobs import check_job

    url, path = store
    engine = open_store(url, writes=True)
    with session_factory(engine)() as s:
        check_job(session=s, rules=load_rules())
        enqueue_days(
            session=s,
            days=[datetime(2024, 3, 4).date()],
            checks=current_versions(),
            settings=load_settings().queue,
            now=datetime(2024, 3, 5, tzinfo=UTC),
        )
        s.commit()
    states: list[bool] = []

    def key() -> str:
        states.append(s.in_transaction())
        # another process can take the write lock at once while the reviewer thinks
        other = sqlite3.connect(path, timeout=0.1, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        other.close()
        return "q"

    with session_factory(engine)() as s:
        done = review_loop(
            session=s,
            reviewer="rita",
            lease=timedelta(minutes=30),
            kind=None,
            read_key=key,
            read_line=lambda prompt, default: default,
            show=lambda _: None,
            now=lambda: datetime(2024, 3, 5, 1, tzinfo=UTC),
        )
        assert s.execute(text("SELECT 1")).scalar() == 1
    engine.dispose()
    assert (done, states) == ({"verdicts": 0, "skipped": 0}, [False])
