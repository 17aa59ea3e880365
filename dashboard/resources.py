"""What every page shares: the settings, the engine, a session, the reviewer's identity, the clock.

Settings are built once per browser session from the same sources as the CLI (environment, the file
in ``REWRITE_MONITOR_CONFIG``); ``rewrite-monitor dashboard`` passes the database URL that way. The
engine is one per URL for the whole server (``st.cache_resource``), so sessions share its pool.
"""

from __future__ import annotations

import functools
import getpass
import logging
import os
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, cast

import streamlit as st
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from monitor.settings import Settings, load_settings
from monitor.store.engine import open_store, session_factory

if TYPE_CHECKING:
    from monitor.queue.store import QueueRow
    from monitor.queue.store.filters import QueueFilters

LOG = logging.getLogger("rewrite_monitor.dashboard")
_P = ParamSpec("_P")


def settings() -> Settings:
    """This browser session's settings (built on first use; its ``checks`` setting applied to the check
    registry, so the pages list what ``run`` checks). Raises ``ConfigError`` when invalid."""
    if "settings" not in st.session_state:
        from monitor.checks.registry import configure

        config = os.environ.get("REWRITE_MONITOR_CONFIG")
        loaded = load_settings(Path(config) if config else None)
        configure(loaded.checks)
        st.session_state["settings"] = loaded
    return cast(Settings, st.session_state["settings"])  # session_state values are untyped


def database_url() -> str:
    """The store's URL (a secret: it may hold a password; never shown or logged)."""
    return settings().database_url.get_secret_value()


@st.cache_resource(show_spinner=False)
def engine(url: str, writes: bool = False) -> Engine:
    """One engine per database URL (and use) for the server's life. ``writes``: SQLite transactions take
    the write lock at BEGIN (``BEGIN IMMEDIATE``), so a claim or verdict beside the worker waits its
    turn instead of failing with "database is locked"; pages read through the other engine, which WAL
    lets read beside a writer. Raises ``StorageError`` when the schema is not at head (the page shows
    the message: run ``rewrite-monitor db upgrade``)."""
    return open_store(url, writes=writes)


@contextmanager
def db(writes: bool = False) -> Iterator[Session]:
    """A session on the store, closed on exit (services commit their own writes). Callbacks that write
    (claim, verdict, skip, release) pass ``writes=True``."""
    with session_factory(engine(database_url(), writes))() as session:
        yield session


def now() -> datetime:
    """The current time, timezone-aware UTC (claims, leases and overdue use it)."""
    return datetime.now(UTC)


def auth_configured() -> bool:
    """True when Streamlit's OIDC login is configured (an ``[auth]`` section in secrets.toml).

    Streamlit adds ``is_logged_in`` to ``st.user`` exactly when that section exists.
    """
    return "is_logged_in" in st.user


def reviewer() -> str:
    """The reviewer's name, which signs claims and verdicts.

    With a login configured: the logged-in identity (email, else name, else subject); a visitor who
    is not logged in gets a log-in button and the page stops there. Without one: ``reviewer_name``
    from the settings, else the operating-system account running the server.
    """
    if auth_configured():
        if not st.user.is_logged_in:
            st.title("rewrite-monitor review")
            st.button("Log in", on_click=st.login, type="primary")
            st.stop()
        return str(st.user.get("email") or st.user.get("name") or st.user.get("sub"))
    return settings().reviewer_name or getpass.getuser()


def flash(kind: str, message: str) -> None:
    """Keep a message for the next page render (callbacks run before the page is drawn)."""
    st.session_state["flash"] = (kind, message)


def show_flash(
    kinds: tuple[str, ...] = ("success", "error", "warning", "info"), *, toast: bool = False
) -> None:
    """Show, once, the message a callback left (``success``, ``error``, ``warning`` or ``info``), as
    literal text: an error message can quote a logged value (``artifacts.md``). Only a message of one
    of ``kinds`` is shown (and consumed) here: the Item page shows errors next to its buttons and the
    rest at its top. With ``toast`` a success shows as a toast, which takes no room on the page (the
    Item page's confirmation pushed the next item's Submit off a 1280x720 screen)."""
    from artifacts import md

    kind, message = st.session_state.get("flash", (None, None))
    if kind is not None and kind in kinds:
        del st.session_state["flash"]
        if toast and kind == "success":
            st.toast(md(message), icon=":material/check_circle:")
        else:
            getattr(st, kind)(md(message))


def reads_changed() -> None:
    """Forget cached reads after this session wrote: the reviewer must see their own write at once.

    Other reviewers' writes show up when the cache's ttl runs out (seconds; see ``reads``).
    """
    st.cache_data.clear()


def log_failure(what: str, exc: BaseException) -> str:
    """Log that ``what`` failed with the exception's type and innermost frame, never its message.

    Streamlit's own handler would log the message, and messages can quote transcripts (a pydantic
    error echoes its input; a database error its parameters). Returns the text to show the reviewer.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
    LOG.error("%s failed: %s at %s", what, type(exc).__name__, where)
    return f"{what} failed ({type(exc).__name__}); the server log says where. Nothing was stored."


def guarded(callback: Callable[_P, None]) -> Callable[_P, None]:
    """Wrap an ``on_click`` callback so an unexpected error is logged without its message (see
    :func:`log_failure`) and shown to the reviewer on the next render."""

    @functools.wraps(callback)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> None:
        try:
            callback(*args, **kwargs)
        except Exception as exc:  # anything else is a bug: keep its text out of the log
            flash("error", log_failure(callback.__name__.strip("_").replace("_", " ").capitalize(), exc))

    return run


def review_filters() -> QueueFilters:
    """The Queue page's filters "Review next" keeps to: those it showed last (every open item before)."""
    from monitor.queue.store.filters import NO_FILTERS

    filters: QueueFilters = st.session_state.get("review_filters", NO_FILTERS)
    return filters


def review_scope() -> dict[str, Any]:
    """What "Review next" hands out, as ``claim_next`` and ``reviewable_count`` take it: the filters the
    Queue page showed when it was pressed (kept for the session; every open item without), with the
    current checks and the queue's minimum severity that its kind filter reads."""
    from monitor.checks import current_versions
    from monitor.severity import SEVERITY_RANK

    return {
        "filters": review_filters(),
        "checks": current_versions(),
        "min_rank": SEVERITY_RANK[settings().queue_min_severity],
    }


def claim_filtered(session: Session) -> QueueRow | None:
    """The reviewer's next item within :func:`review_scope` (``claim_next``), under the queue's lease;
    ``None`` when none is left. Commits."""
    from datetime import timedelta

    from monitor.queue.store import claim_next

    return claim_next(
        session=session,
        reviewer=st.session_state["reviewer"],
        now=now(),
        lease=timedelta(minutes=settings().claim_lease_minutes),
        **review_scope(),
    )
