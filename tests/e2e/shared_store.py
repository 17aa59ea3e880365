"""What the browser tests over the shared logs have in common: the logs, the store made of them, the
XPaths of the live form and the wait for the page. Importing it skips the importing test module when
the shared logs are not here."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import delete, update

from monitor.store.models import QueueItem, Verdict
from tests.helpers import SHARED_DATA, store_session

LOGS = ("mtrag_dev_sonnet45agg.jsonl", "mtrag_dev_mixtral.jsonl", "cast2020.jsonl")
"""Three shared logs: long MTRAG transcripts (sonnet45agg, Mixtral) and CAsT 2020; about 100 queue
items over three models and prompt versions and three days."""
WAIT = 60.0
# While a run draws the next item, the previous item's elements stay on the page marked stale.
LIVE = "[not(ancestor-or-self::*[@data-stale='true'])]"
SUBMIT = f"//button[.//p[normalize-space()='Submit and next']]{LIVE}"

if not all((SHARED_DATA / "logs" / name).exists() for name in LOGS):
    pytest.skip("the shared logs are not here", allow_module_level=True)


def make_store(home: Path) -> str:
    """A SQLite store in ``home``, migrated, with :data:`LOGS` run into it (ingest, checks, queue); its
    URL."""
    url = f"sqlite:///{home / 'store.db'}"
    cli = [sys.executable, "-m", "monitor", "--database-url", url]
    subprocess.run([*cli, "db", "upgrade"], check=True, capture_output=True)
    subprocess.run(
        [*cli, "run", *(str(SHARED_DATA / "logs" / n) for n in LOGS)], check=True, capture_output=True
    )
    return url


def until(check: Callable[[], object], timeout: float = WAIT) -> None:
    """Poll ``check`` every 20 ms until it is true; an element redrawn meanwhile by a rerun is looked up
    again. Raises ``AssertionError`` after ``timeout`` seconds."""
    from selenium.common.exceptions import WebDriverException

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except WebDriverException:
            pass
        time.sleep(0.02)
    raise AssertionError(f"gave up after {timeout:.0f} s waiting for the page")


def reopen(url: str, due_odd: datetime | None = None) -> None:
    """Every item back in the queue with no verdict, so each walk meets the same items; with ``due_odd``
    (naive UTC), the items with odd ids due then."""
    with store_session(url) as session:
        session.execute(delete(Verdict))
        session.execute(
            update(QueueItem).values(state="pending", claimed_by=None, claimed_at=None, lease_expires_at=None)
        )
        if due_odd is not None:
            session.execute(update(QueueItem).where(QueueItem.id % 2 == 1).values(due_at=due_odd))
        session.commit()
