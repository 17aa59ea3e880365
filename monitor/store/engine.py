"""Engines, sessions and schema migrations (Alembic is the only way the schema is created)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, overload

from sqlalchemy import (
    URL,
    DateTime,
    Engine,
    Float,
    String,
    Table,
    create_engine,
    event,
    func,
    inspect,
    select,
    table,
    text,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import CursorResult, Result, Row, make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Mapper, Session, sessionmaker
from sqlalchemy.types import TypeDecorator

from monitor.bundled import bundled_dir
from monitor.errors import ConfigError, StorageError
from monitor.text import mask_url

SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite connection waits for another process's write lock before "database is locked".
A write transaction of ``run``, ``ingest`` or the worker lasts one batch (well under a second to a few
seconds), so 30 s lets a second writer queue behind several of them; an overlap longer than that is a
real conflict (a long backfill), better reported than waited out (see :func:`storage_error`)."""


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    # pysqlite's own transaction handling breaks SAVEPOINT and transactional DDL; SQLAlchemy's
    # documented fix is driver autocommit plus an explicit BEGIN (see _sqlite_begin).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    # WAL lets the dashboard read while the worker writes; busy_timeout rides out short write locks.
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _sqlite_begin(conn: Any) -> None:
    conn.exec_driver_sql("BEGIN")


def _sqlite_begin_immediate(conn: Any) -> None:
    # SQLite never runs the busy handler for a transaction that read and then wants to write (it
    # could deadlock), and a read snapshot older than another writer's commit cannot write at all:
    # with a plain BEGIN two writers fail at once with "database is locked", whatever the timeout.
    # Taking the write lock at BEGIN makes the second writer wait (busy_timeout) for the first's
    # commit and then read what it wrote.
    conn.exec_driver_sql("BEGIN IMMEDIATE")


def make_engine(url: str, *, immediate: bool = False) -> Engine:
    """An engine for ``url`` (``sqlite:///file.db`` or ``postgresql://...``).

    SQLite gets WAL mode, foreign keys and a busy timeout (:data:`SQLITE_BUSY_TIMEOUT_MS`); with
    ``immediate`` each SQLite transaction takes the write lock when it begins (``BEGIN IMMEDIATE``), so
    concurrent writers queue instead of failing; readers keep ``immediate`` off, since WAL lets them
    read beside a writer. A ``postgresql://`` URL uses psycopg 3 (``immediate`` has no effect there).
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
        event.listen(engine, "begin", _sqlite_begin_immediate if immediate else _sqlite_begin)
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
    """The Alembic ``Config`` of the bundled migrations (``monitor.store.migrations``, the repository's
    ``migrations/``), pointed at ``url``. Built here rather than read from ``alembic.ini``, which only a
    checkout has. Raises ``ConfigError`` when the migrations are not installed (see ``monitor.bundled``)."""
    from alembic.config import Config

    cfg = Config()
    # set_main_option goes through configparser interpolation: a "%" in the install path must be doubled.
    cfg.set_main_option("script_location", str(bundled_dir("migrations")).replace("%", "%%"))
    cfg.attributes["database_url"] = url
    return cfg


def display_url(url: str | URL) -> str:
    """``url`` as the operator wrote it, password hidden (``postgresql://monitor:***@db/rm``) by
    :func:`monitor.text.mask_url`, whatever its syntax; the driver :func:`make_engine` adds is left out."""
    text = url.render_as_string(hide_password=True) if isinstance(url, URL) else url
    return mask_url(re.sub(r"^postgresql\+psycopg://", "postgresql://", text))


_QUOTED_RE = re.compile(r'"[^"\n]*"|\'[^\'\n]*\'')


_SCHEMA_NAMES: set[str] = set()
"""Names of the store's tables, columns, indexes and constraints (:func:`register_schema`)."""


def register_schema(metadata: Any) -> None:
    """Record the names of ``metadata``'s schema, which :func:`value_free` keeps in driver errors
    (``monitor.store.models`` calls it once; without it every quoted literal is cut, the safe side)."""
    for t in metadata.tables.values():
        _SCHEMA_NAMES.add(t.name)
        _SCHEMA_NAMES.update(c.name for c in t.columns)
        _SCHEMA_NAMES.update(str(c.name) for c in t.constraints if c.name)
        _SCHEMA_NAMES.update(str(i.name) for i in t.indexes if i.name)


def value_free(orig: BaseException) -> str:
    """A driver error's text without logged values: its first line, cut at the first quoted literal that
    is not a name of the store's schema (replaced by ``"…"``) or after a colon when what follows names
    something else than the schema (``no such table: …``), and ``(SQLSTATE 22P02)`` when the driver gives
    the code (psycopg's ``sqlstate``). Used for every database error the commands print or store."""
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    first = lines[0] if lines else type(orig).__name__
    names = _SCHEMA_NAMES
    # A quoted value may itself hold quotes ('"{"q": 1}"'): the line is cut at the first literal that
    # names nothing in the schema (drivers put the offending value last).
    text = first
    for m in _QUOTED_RE.finditer(first):
        if m.group(0)[1:-1] not in names:
            text = first[: m.start()] + '"…"'
            break
    # SQLite puts what it names after a colon, unquoted ("UNIQUE constraint failed: events.event_key",
    # "no such table: x"): kept when every word of it is a schema name.
    head, sep, tail = text.partition(": ")
    if (
        sep
        and tail != '"…"'
        and not all(w in names for part in re.split(r"[\s,]+", tail.strip()) for w in part.split(".") if w)
    ):
        text = f"{head}: …"
    code = getattr(orig, "sqlstate", None)
    return f"{text} (SQLSTATE {code})" if code else text


def storage_error(exc: DBAPIError, url: str | URL) -> StorageError:
    """The one-line :class:`StorageError` for a database error ``exc`` on ``url`` (password hidden).

    - SQLite busy (``database is locked``): another process holds the store's write lock.
    - An error while connecting: ``cannot reach the database URL: reason`` (a SQLite file in a missing
      folder says so).
    - Any other: ``database error on URL: reason``.

    A connection error's text is kept whole (its lines joined: psycopg adds a hint line). A statement's
    error is kept to its first line, with the SQLSTATE when the driver gives one, and without what
    could be logged data: PostgreSQL's DETAIL and CONTEXT lines quote the row and the
    value, and the first line is cut at a quoted literal (``invalid input syntax for type json: "..."``)
    unless it names a table, column, index or constraint of the store (:func:`value_free`). The password,
    should a driver ever echo it, is replaced by ``***`` where it stands alone (not inside a word).
    """
    where = display_url(url)
    orig = exc.orig if exc.orig is not None else exc
    if exc.statement is None:  # a connection error: no statement, so no logged value, in its text
        reason = (
            "; ".join(line.strip() for line in str(orig).splitlines() if line.strip()) or type(orig).__name__
        )
    else:
        reason = value_free(orig)
    try:
        parsed = make_url(url)
    except Exception:
        parsed = None
    secrets = [parsed.password, parsed.query.get("password")] if parsed is not None else []
    for secret in secrets:
        for value in secret if isinstance(secret, tuple) else (secret,):
            if value:
                # only where it stands alone: a short password ("p") would otherwise be masked inside
                # every word of the driver's text ("***ort 1", "acce***ting"), which also tells its letters
                reason = re.sub(rf"(?<![A-Za-z0-9]){re.escape(str(value))}(?![A-Za-z0-9])", "***", reason)
    sqlite_db = parsed.database if parsed is not None and parsed.get_backend_name() == "sqlite" else None
    # 5 is SQLITE_BUSY; its extended codes (BUSY_SNAPSHOT, ...) share the low byte.
    if sqlite_db is not None and (
        (getattr(orig, "sqlite_errorcode", 0) or 0) & 0xFF == 5 or "database is locked" in reason
    ):
        return StorageError(
            f"the SQLite store {sqlite_db} is locked: another process holds its write lock; retry when "
            "it has finished, or use PostgreSQL for concurrent writers"
        )
    if sqlite_db not in (None, "", ":memory:") and not Path(sqlite_db).parent.exists():
        folder = Path(sqlite_db).parent
        return StorageError(f"cannot reach the database {where}: the folder {folder} does not exist")
    if sqlite_db and "file is not a database" in reason:
        return StorageError(f"cannot reach the database {where}: {sqlite_db} is not a SQLite database")
    if exc.statement is None:  # SQLAlchemy had not sent a statement yet: the connection failed
        return StorageError(f"cannot reach the database {where}: {reason}")
    return StorageError(f"database error on {where}: {reason}")


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or ``None`` for an empty database.

    Raises ``StorageError`` (see :func:`storage_error`) when the database cannot be reached.
    """
    from alembic.runtime.migration import MigrationContext

    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except OperationalError as exc:
        raise storage_error(exc, engine.url) from exc


def _revision_at(url: str) -> str | None:
    engine = make_engine(url)
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


def _foreign_keys_off(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.execute("PRAGMA foreign_keys=OFF")


def migration_engine(url: str) -> Engine:
    """An engine to run migrations on ``url``: :func:`make_engine`'s, with SQLite's foreign keys off.

    A batch migration on SQLite copies a table, drops the original and renames the copy; with foreign
    keys on, that DROP deletes every row that references the table through ON DELETE CASCADE (the
    0003 downgrade rebuilt ``records`` and emptied check_runs and findings). Alembic's advice is to
    migrate SQLite with foreign keys off; the pragma cannot change inside a transaction, hence at
    connect. Used by :func:`upgrade` / :func:`downgrade` and by ``migrations/env.py``, so a bare
    ``alembic downgrade`` is as safe.
    """
    engine = make_engine(url)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _foreign_keys_off)
    return engine


def _migrate(url: str, step: Any, revision: str) -> None:
    """Run alembic's ``step`` (``command.upgrade`` or ``downgrade``) to ``revision`` on ``url``."""
    if make_url(url).get_backend_name() != "sqlite":
        step(alembic_config(url), revision)
        return
    engine = migration_engine(url)
    try:
        with engine.connect() as conn:
            cfg = alembic_config(url)
            cfg.attributes["connection"] = conn
            step(cfg, revision)
    finally:
        engine.dispose()


def upgrade(url: str, revision: str = "head") -> tuple[str | None, str | None]:
    """Apply migrations up to ``revision``; returns ``(revision before, revision after)``, ``None`` for
    an empty database. Raises ``StorageError`` when the database is unreachable (see
    :func:`storage_error`) and alembic's ``CommandError`` for an unknown revision."""
    from alembic import command

    before = _revision_at(url)
    try:
        _migrate(url, command.upgrade, revision)
    except OperationalError as exc:
        raise storage_error(exc, url) from exc
    return before, _revision_at(url)


@dataclass(frozen=True)
class DowngradePlan:
    """What ``downgrade(url, revision)`` would do, for the operator to confirm first.

    ``steps`` are the revisions whose downgrade runs (newest first; empty: nothing to do), ``target``
    the revision the database ends at (``None``: base, no schema), ``tables`` the tables dropped with
    their current row counts (``None`` when the table is missing), ``columns`` the ``table.column``
    dropped from tables that stay.
    """

    current: str | None
    target: str | None
    steps: list[str]
    tables: dict[str, int | None] = field(default_factory=dict)
    columns: list[str] = field(default_factory=list)

    @property
    def drops_data(self) -> bool:
        """Whether the downgrade drops a table or a column (indexes alone lose nothing)."""
        return bool(self.tables or self.columns)

    def describe(self) -> str:
        """``tables regression_cases (12 rows), alerts (0 rows); columns records.check_draw``, or
        ``no table or column`` when the downgrade drops only indexes or constraints."""
        parts = []
        if self.tables:
            counts = [
                f"{name} ({'?' if n is None else f'{n:,}'} row{'s' * (n != 1)})"
                for name, n in self.tables.items()
            ]
            parts.append(f"table{'s' * (len(counts) != 1)} {', '.join(counts)}")
        if self.columns:
            parts.append(f"column{'s' * (len(self.columns) != 1)} {', '.join(self.columns)}")
        return "; ".join(parts) or "no table or column"


def _schema_at(revision: str | None) -> dict[str, set[str]]:
    """The tables (name -> column names) the migrations create up to ``revision``, found by running
    them on a throw-away in-memory SQLite database (so every migration's effect counts, whatever it
    does); ``alembic_version`` left out."""
    from alembic import command

    if revision is None:
        return {}
    engine = make_engine("sqlite://")
    try:
        with engine.connect() as conn:
            cfg = alembic_config("sqlite://")
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
            insp = inspect(conn)
            return {
                t: {c["name"] for c in insp.get_columns(t)}
                for t in insp.get_table_names()
                if t != "alembic_version"
            }
    finally:
        engine.dispose()


def downgrade_plan(url: str, revision: str) -> DowngradePlan:
    """What downgrading ``url`` to ``revision`` (an id, a prefix, ``base`` or relative like ``-1``)
    drops, with row counts, without changing anything.

    Raises ``StorageError`` when the database is unreachable and ``ConfigError`` (``migration: ...``)
    when ``revision`` is unknown, ambiguous or not below the current revision.
    """
    from alembic.script import ScriptDirectory
    from alembic.script.revision import RangeNotAncestorError, RevisionError

    engine = make_engine(url)
    try:
        current = current_revision(engine)
        script = ScriptDirectory.from_config(alembic_config(url))
        try:
            scripts = list(script.iterate_revisions(current, revision, select_for_downgrade=True))
        except RangeNotAncestorError:
            raise ConfigError(
                f"migration: {revision} is not below the current revision ({current or 'none'}); "
                "use `rewrite-monitor db upgrade` to move up"
            ) from None
        except RevisionError as exc:
            raise ConfigError(f"migration: {exc}") from None
        if not scripts:
            return DowngradePlan(current=current, target=current, steps=[])
        down = scripts[-1].down_revision
        if isinstance(down, tuple | list):  # a merge point; our history is linear (one head)
            raise ConfigError(f"migration: cannot plan a downgrade across the merge {scripts[-1].revision}")
        now, then = _schema_at(current), _schema_at(down)
        existing = set(inspect(engine).get_table_names()) if current is not None else set()
        tables: dict[str, int | None] = {}
        for name in sorted(set(now) - set(then)):
            if name in existing:
                with engine.connect() as conn:
                    tables[name] = int(conn.scalar(select(func.count()).select_from(table(name))) or 0)
            else:
                tables[name] = None
        columns = sorted(f"{t}.{c}" for t in set(now) & set(then) for c in now[t] - then[t])
        return DowngradePlan(
            current=current,
            target=down,
            steps=[s.revision for s in scripts],
            tables=tables,
            columns=columns,
        )
    except OperationalError as exc:
        raise storage_error(exc, url) from exc
    finally:
        engine.dispose()


def downgrade(url: str, revision: str = "base") -> None:
    """Revert migrations down to ``revision`` (``base`` drops every table). Callers that face an
    operator confirm :func:`downgrade_plan` first. Raises ``StorageError`` when the database is
    unreachable and alembic's ``CommandError`` for an unknown revision."""
    from alembic import command

    try:
        _migrate(url, command.downgrade, revision)
    except OperationalError as exc:
        raise storage_error(exc, url) from exc


def head_revision() -> str:
    """The migrations' single head revision."""
    from alembic.script import ScriptDirectory

    heads = ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()
    if len(heads) != 1:
        raise StorageError(f"migrations have {len(heads)} heads, expected one: {heads}")
    return heads[0]


HEAD_REVISION = "0016"
"""The migrations' head revision id: what :func:`head_revision` reads from ``migrations/versions``
(``tests/store/test_migrations.py`` keeps the two equal, so a new migration must update it).

Why a constant: every command compares its store's revision with the head before it opens the store,
and asking Alembic for both took about 65 ms of each command's start-up (importing Alembic and Mako,
then parsing every migration script), a tenth of what ``run``'s start-up costs besides spaCy (issue 18)."""


def _at_head(engine: Engine) -> bool:
    """Whether the store's ``alembic_version`` table holds one row, :data:`HEAD_REVISION`: one query,
    without importing Alembic. False for anything else (no such table, another revision, several rows,
    an unreachable database), which :func:`require_current_schema` then asks Alembic about."""
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    except DBAPIError:
        return False
    return len(rows) == 1 and rows[0][0] == HEAD_REVISION


def require_current_schema(engine: Engine) -> None:
    """Raise ``StorageError`` unless the database schema is at the migrations' head.

    The message tells the operator to run ``rewrite-monitor db upgrade``; an unreachable database is
    reported by :func:`storage_error`. A store at :data:`HEAD_REVISION` is answered by one query
    (:func:`_at_head`); any other goes through Alembic, which names its revision.
    """
    if _at_head(engine):
        return
    rev = current_revision(engine)
    head = head_revision()
    if rev != head:
        state = "has no schema" if rev is None else f"is at revision {rev}, not {head}"
        raise StorageError(f"database {display_url(engine.url)} {state}: run `rewrite-monitor db upgrade`")


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


def insert_ignore(session: Session, model: Any, conflict: list[str]) -> Any:
    """An INSERT for ``model`` (a mapped class, or its ``__table__`` for a plain Core insert) that skips
    rows violating the unique ``conflict`` columns.

    Works on SQLite and PostgreSQL (``ON CONFLICT (...) DO NOTHING``); this is how every repeatable
    write stays idempotent under concurrent writers.
    """
    return dialect_insert(session, model).on_conflict_do_nothing(index_elements=conflict)


def bulk_insert_ignore(
    session: Session, target: Any, conflict: list[str], rows: list[dict[str, Any]]
) -> None:
    """Insert ``rows`` into ``target`` (a mapped class or its Core table) as ``session.execute(
    insert_ignore(session, table, conflict), rows)`` would: rows violating the unique ``conflict`` columns
    are skipped. ``rows`` are dicts with the same keys, in the same order, each a column name.

    On SQLite the rows go to the driver's ``executemany`` as tuples, each value passed through its
    column type's own bind processor (``TypeEngine.bind_processor``: naive UTC text for
    :class:`UTCDateTime`, JSON text for ``Json``), so the stored bytes are the statement path's. Why:
    SQLAlchemy's executemany builds and processes a parameter dict per row in Python, which cost more
    than SQLite's own work (the check job on the shared logs stores 50,775 runs and 3,451 findings:
    0.69 s of its 0.94 s of result storage went to SQLAlchemy's per-row work, under cProfile; SQLite's
    own inserts take 0.21 s). PostgreSQL takes one statement of arrays (:func:`_insert_unnest`), other
    dialects the statement path."""
    table = target if isinstance(target, Table) else target.__table__
    if not rows:
        return
    dialect = session.get_bind().dialect
    if dialect.name == "postgresql":
        insert_many(session, insert_ignore(session, table, conflict), rows)
        return
    if dialect.name != "sqlite":
        session.execute(insert_ignore(session, table, conflict), rows)
        return
    names = list(rows[0])
    quote = dialect.identifier_preparer.quote
    sql = (
        f"INSERT INTO {quote(table.name)} ({', '.join(quote(n) for n in names)}) "
        f"VALUES ({', '.join('?' * len(names))}) "
        f"ON CONFLICT ({', '.join(quote(n) for n in conflict)}) DO NOTHING"
    )
    procs = [table.c[n].type.dialect_impl(dialect).bind_processor(dialect) for n in names]
    processed = [(i, p) for i, p in enumerate(procs) if p is not None]
    # A batch's rows mostly share one timestamp object (``now``): a value that is the object the row
    # before had in that column is not processed again (values are not changed while this runs).
    last: dict[int, tuple[Any, Any]] = {}
    params = []
    for row in rows:
        values = [row[n] for n in names]
        for i, p in processed:
            v = values[i]
            seen = last.get(i)
            if seen is not None and seen[0] is v:
                values[i] = seen[1]
            else:
                values[i] = p(v)
                last[i] = (v, values[i])
        params.append(tuple(values))
    session.connection().exec_driver_sql(sql, params)


def insert_ignore_returning(
    session: Session, target: Any, conflict: list[str], rows: list[dict[str, Any]], returning: Sequence[str]
) -> list[Row[Any]]:
    """:func:`bulk_insert_ignore` that returns the ``returning`` columns of the rows it inserted (those a
    conflict skipped are not returned), in no set order. ``rows`` as there."""
    table = target if isinstance(target, Table) else target.__table__
    stmt = insert_ignore(session, table, conflict).returning(*(table.c[n] for n in returning))
    return insert_many(session, stmt, rows)


def insert_many(session: Session, stmt: Any, rows: list[dict[str, Any]]) -> list[Row[Any]]:
    """Execute the INSERT ``stmt`` (of :func:`dialect_insert` on a table, with its ``ON CONFLICT`` clause
    and any RETURNING, without values) for ``rows`` (dicts with the same keys, each a column name; every
    column the INSERT writes must be among them: a Python-side column default is not applied); returns
    what RETURNING gave (``[]`` without it), in no set order. Raises ``ValueError`` for a statement the
    PostgreSQL path cannot take (a column the rows leave out, an expanding IN in the ON CONFLICT clause).

    PostgreSQL through psycopg 3 takes one statement whatever the number of rows
    (:func:`_insert_unnest`); other dialects SQLAlchemy's executemany (with RETURNING, its
    insert-many-values: a thousand rows a statement)."""
    if not rows:
        return []
    dialect = session.get_bind().dialect
    if dialect.name == "postgresql" and dialect.driver == "psycopg":  # ``%b`` is psycopg 3's
        return _insert_unnest(session, stmt, rows)
    result = session.connection().execute(stmt, rows)
    return list(result) if result.returns_rows else []


def _array_element(column: Any, dialect: Any) -> str:
    """The element type of ``column``'s array in :func:`_insert_unnest`: its own, but a string as
    unbounded text. An explicit cast to ``VARCHAR(n)`` cuts a longer value without a word; the INSERT's
    own assignment to the column refuses it ("value too long"), as the statement path does, and applies
    the column's collation."""
    if isinstance(column.type, String):
        return "TEXT"
    return str(column.type.compile(dialect=dialect))


_VALUES = re.compile(r" VALUES \((?P<values>.*?)\)(?= ON CONFLICT | RETURNING |$)", re.DOTALL)
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _insert_unnest(session: Session, stmt: Any, rows: list[dict[str, Any]]) -> list[Row[Any]]:
    """PostgreSQL's path of :func:`insert_many`: ``stmt`` compiled once, its VALUES list replaced by
    ``SELECT * FROM unnest(...)`` of one array parameter per column, in the order of the INSERT's own
    column list, each value through its column type's bind processor; the rest of the statement (ON
    CONFLICT, RETURNING) as SQLAlchemy compiled it, its own parameters through their types' bind
    processors too.

    Why: SQLAlchemy sends a VALUES list of a thousand rows at a time, whose text psycopg parses again for
    each (too long for its cache) and the server plans again. On the shared logs, storing 3,385 outcomes
    (26,000 skips) spent 0.9 s waiting on the server and 0.3 s in psycopg's parsing (py-spy), and `run`
    took 23.5 s against 20.8 s with this path; the events' insert took 0.42 s of psycopg's and
    SQLAlchemy's work against 0.1 s. The arrays go in binary (``%b``): as text, psycopg escapes every
    element in Python (7,000 JSON texts of about 1 KB: 0.31 s as text, 0.036 s in binary, one statement
    each). An ARRAY column would be flattened by ``unnest``: no table has one."""
    dialect = session.get_bind().dialect
    given = list(rows[0])
    table: Table = stmt.table
    compiled = stmt.compile(dialect=dialect, column_keys=given)
    sql = str(compiled)
    found = _VALUES.search(sql)
    if found is None or "POSTCOMPILE" in sql:
        raise ValueError(f"not an INSERT with one VALUES list and no expanding IN: {sql[:200]}")
    names = _PLACEHOLDER.findall(found["values"])  # the INSERT's columns, in its order
    if sorted(names) != sorted(given):
        missing = sorted(set(names) - set(given)) or sorted(set(given) - set(names))
        raise ValueError(f"the rows and the INSERT's columns differ ({', '.join(missing)}): {sql[:200]}")
    casts = ", ".join(f"%({n})b::{_array_element(table.c[n], dialect)}[]" for n in names)
    sql = f"{sql[: found.start()]} SELECT * FROM unnest({casts}){sql[found.end() :]}"
    params: dict[str, Any] = {}
    for key, value in compiled.params.items():
        if key not in given:
            proc = compiled.binds[key].type.dialect_impl(dialect).bind_processor(dialect)
            params[key] = proc(value) if proc is not None else value
    for n in names:
        col = table.c[n]
        proc = col.type.dialect_impl(dialect).bind_processor(dialect)
        values = [proc(row[n]) for row in rows] if proc is not None else [row[n] for row in rows]
        if isinstance(col.type, Float):  # psycopg dumps no list that mixes int and float
            values = [float(v) if isinstance(v, int) else v for v in values]
        params[n] = values
    result = session.connection().exec_driver_sql(sql, params)
    return list(result) if result.returns_rows else []


ANALYZE_MIN_ROWS = 1000
"""A bulk write of at least this many rows refreshes the planner statistics of the tables it wrote."""


def refresh_planner_statistics(session: Session, tables: Sequence[str], *, rows: int) -> bool:
    """``ANALYZE`` ``tables`` on PostgreSQL after a write of ``rows`` rows (at least
    :data:`ANALYZE_MIN_ROWS`), and commit; a no-op on SQLite or a smaller write. Returns whether it ran.

    Why: autovacuum analyses a table only a minute or more after it grew, so the queries that follow a
    bulk write in the same run (the check job's record scans, queue admission's per-day scan) are planned
    on a store with no statistics at all: one per-day admission query took 107 ms on a freshly filled store
    and 2.7 ms after ``ANALYZE`` (issue 18). ``ANALYZE`` samples at most 300 x default_statistics_target
    rows a table, so it costs milliseconds here and well under a second on a large store.
    """
    dialect = session.get_bind().dialect
    if rows < ANALYZE_MIN_ROWS or dialect.name != "postgresql":
        return False
    for name in tables:
        session.execute(text(f"ANALYZE {dialect.identifier_preparer.quote(name)}"))
    session.commit()
    return True


def dialect_insert(session: Session, target: Any) -> Any:
    """The INSERT of the session's dialect (PostgreSQL or SQLite) for ``target`` (a model or a table),
    the one with ``ON CONFLICT`` clauses and ``excluded``."""
    dialect = session.get_bind().dialect.name
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(target)


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


class UTCDateTime(TypeDecorator[datetime]):
    """The store's one datetime type: a plain ``DateTime`` column (``timestamp without time zone``)
    holding naive UTC, so the schema and the migrations are those of ``DateTime``.

    - Bind (INSERT/UPDATE values, Core ``insert()`` rows, comparisons with a column of this type): an
      aware value is converted to UTC and its tzinfo dropped; a naive one is taken as UTC already.
    - Result: the naive UTC value as stored (as before this type: callers and tests compare with naive
      datetimes). Code comparing a loaded value with an aware clock in Python converts the clock with
      :func:`naive_utc`.
    - ORM attributes: assigning a datetime to a mapped attribute of this type stores it as naive UTC
      right away (:func:`normalize_utc_attributes`), so an object's in-memory value matches what a
      reload would return, whatever the caller passed.

    A ``literal()`` or ``bindparam()`` not compared with such a column needs ``type_=UTCDateTime()``.
    """

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        return naive_utc(value)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return value

    @property
    def python_type(self) -> type[datetime]:
        return datetime


def _naive_utc_on_set(_target: Any, value: Any, _old: Any, _initiator: Any) -> Any:
    return naive_utc(value) if isinstance(value, datetime) else value


def normalize_utc_attributes(base: type[Any]) -> None:
    """Make every mapped attribute of a :class:`UTCDateTime` column of ``base``'s models keep naive UTC
    on assignment (``Verdict(created_at=aware)``, ``item.finished_at = aware``)."""

    @event.listens_for(base, "mapper_configured", propagate=True)
    def _listen(mapper: Mapper[Any], _class: type[Any]) -> None:
        for attr in mapper.column_attrs:
            if any(isinstance(getattr(c, "type", None), UTCDateTime) for c in attr.columns):
                event.listen(attr.class_attribute, "set", _naive_utc_on_set, retval=True)


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (``None`` for in-memory SQLite and for PostgreSQL)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def open_store(url: str, *, require_schema: bool = True, writes: bool = False) -> Engine:
    """The engine of the store at ``url``: the one opener of every command, the worker and the dashboard.

    ``writes`` for callers that write (SQLite transactions then take the write lock at BEGIN, so a
    concurrent writer waits instead of failing). With ``require_schema`` a missing SQLite file is
    refused, never created (connecting would make an empty one), and the schema must be at head.
    Raises ``StorageError`` for a missing SQLite file or folder, an unreachable database or an old schema.
    """
    path = sqlite_file(url)
    if require_schema and path is not None:
        # Connecting would create an empty file; a missing store is a mistake worth naming instead.
        if not path.parent.is_dir():
            where = display_url(url)
            raise StorageError(f"cannot reach the database {where}: the folder {path.parent} does not exist")
        if not path.exists():
            raise StorageError(f"no database file {path}: run `rewrite-monitor db upgrade` to create it")
    engine = make_engine(url, immediate=writes)
    if require_schema:
        try:
            require_current_schema(engine)
        except BaseException:
            engine.dispose()  # the caller never gets it: its pooled connection is closed here
            raise
    return engine


def rowcount(result: Result[Any]) -> int:
    """Rows matched by an UPDATE or DELETE, from its ``session.execute`` result (``Session.execute`` is
    typed as returning ``Result``; a DML statement returns a ``CursorResult``). Raises ``TypeError`` for
    the result of a SELECT."""
    if not isinstance(result, CursorResult):
        raise TypeError("rowcount needs the result of an UPDATE or DELETE")
    return int(result.rowcount or 0)
