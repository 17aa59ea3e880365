"""Engines, sessions and schema migrations (Alembic is the only way the schema is created)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, overload

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from monitor.errors import StorageError

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    # pysqlite's own transaction handling breaks SAVEPOINT and transactional DDL; SQLAlchemy's
    # documented fix is driver autocommit plus an explicit BEGIN (see _sqlite_begin).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    # WAL lets the dashboard read while the worker writes; busy_timeout rides out short write locks.
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _sqlite_begin(conn: Any) -> None:
    conn.exec_driver_sql("BEGIN")


def make_engine(url: str) -> Engine:
    """An engine for ``url`` (``sqlite:///file.db`` or ``postgresql://...``).

    SQLite gets WAL mode, foreign keys and a busy timeout; a ``postgresql://`` URL uses psycopg 3.
    Raises ``StorageError`` for an unsupported or malformed URL.
    """
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with the URL in its text
        raise StorageError(f"invalid database URL: {exc}") from exc
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    # hide_parameters: a database error must never echo bound values (queries, notes, transcripts)
    # into logs or Sentry.
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(parsed, hide_parameters=True)
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if parsed.get_backend_name() == "postgresql":
        return create_engine(parsed, pool_pre_ping=True, hide_parameters=True)
    raise StorageError(
        f"unsupported database backend {parsed.get_backend_name()!r}: use sqlite or postgresql"
    )


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """A ``sessionmaker`` whose sessions keep loaded values after commit (plain reads after writes)."""
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Any:
    """The Alembic ``Config`` for this repository's migrations, pointed at ``url``."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["database_url"] = url
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    """Apply migrations up to ``revision``. Raises ``StorageError`` when the database is unreachable."""
    from alembic import command

    try:
        command.upgrade(alembic_config(url), revision)
    except OperationalError as exc:
        raise StorageError(f"cannot reach the database: {exc.orig}") from exc


def downgrade(url: str, revision: str = "base") -> None:
    """Revert migrations down to ``revision`` (``base`` drops every table)."""
    from alembic import command

    command.downgrade(alembic_config(url), revision)


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or ``None`` for an empty database."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str:
    """The migrations' single head revision."""
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    if len(heads) != 1:
        raise StorageError(f"migrations have {len(heads)} heads, expected one: {heads}")
    return heads[0]


def require_current_schema(engine: Engine) -> None:
    """Raise ``StorageError`` unless the database schema is at the migrations' head.

    The message tells the operator to run ``rewrite-monitor db upgrade``.
    """
    try:
        rev = current_revision(engine)
    except OperationalError as exc:
        raise StorageError(f"cannot reach the database: {exc.orig}") from exc
    head = head_revision()
    if rev != head:
        # Show the URL as the operator wrote it, not with the driver make_engine picked.
        where = engine.url.set(drivername=engine.url.get_backend_name()).render_as_string(hide_password=True)
        state = "has no schema" if rev is None else f"is at revision {rev}, not {head}"
        raise StorageError(f"database {where} {state}: run `rewrite-monitor db upgrade`")


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """A session that commits on success and rolls back on any exception."""
    with session_factory(engine)() as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def insert_ignore(session: Session, model: type[Any], conflict: list[str]) -> Any:
    """An INSERT for ``model`` that skips rows violating the unique ``conflict`` columns.

    Works on SQLite and PostgreSQL (``ON CONFLICT (...) DO NOTHING``); this is how every repeatable
    write stays idempotent under concurrent writers.
    """
    dialect = session.get_bind().dialect.name
    ins = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(model)
    return ins.on_conflict_do_nothing(index_elements=conflict)


@overload
def naive_utc(dt: datetime) -> datetime: ...
@overload
def naive_utc(dt: None) -> None: ...
def naive_utc(dt: datetime | None) -> datetime | None:
    """``dt`` as the store keeps time: naive UTC (an aware value is converted; a naive one is taken
    as UTC already; ``None`` stays ``None``)."""
    if dt is None or dt.tzinfo is None:
        return dt
    return dt.astimezone(UTC).replace(tzinfo=None)
