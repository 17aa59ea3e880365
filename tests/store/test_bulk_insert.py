"""``bulk_insert_ignore`` stores what the ``insert_ignore`` statement stores, byte for byte, and skips
the rows that conflict (on SQLite through the driver's executemany, on PostgreSQL through one statement
of arrays, ``unnest``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import Text, cast, select
from sqlalchemy.orm import Session

from monitor.store.engine import bulk_insert_ignore, insert_ignore
from monitor.store.models import Finding
from tests.factories import check_run_row, event_row, record_row

PARIS = timezone(timedelta(hours=1))


def _rows(run_id: int, record_id: int, created_at: datetime) -> list[dict[str, Any]]:
    """Two findings of run ``run_id`` with non-ASCII JSON, a null in the evidence and one shared
    timestamp object (the check job passes one ``now`` for a whole batch)."""
    return [
        {
            "check_run_id": run_id,
            "ordinal": n,
            "record_id": record_id,
            "request_id": "c_2",
            "kind": "added_content_word",
            "severity": "high",
            "severity_rank": 3,
            "reason": f"'café' {n} in no turn",
            "words": ["café", "naïve"][: n + 1],
            "evidence": {
                "words": [{"text": "café", "start": 4, "end": 8}],
                "n_messages": n,
                "x": [1.5, None],
            },
            "check_id": "added_content_word",
            "check_version": 9,
            "rules_hash": "h",
            "created_at": created_at,
        }
        for n in range(2)
    ]


def _stored(session: Session, run_id: int) -> list[tuple[Any, ...]]:
    """Each finding of run ``run_id`` as stored: the JSON and datetime columns as the database's text."""
    return [
        tuple(r)
        for r in session.execute(
            select(
                Finding.ordinal,
                Finding.reason,
                cast(Finding.words, Text),
                cast(Finding.evidence, Text),
                cast(Finding.created_at, Text),
            )
            .where(Finding.check_run_id == run_id)
            .order_by(Finding.ordinal)
        )
    ]


def test_bulk_insert_stores_what_the_statement_stores_and_skips_conflicts(session: Session) -> None:
    record = record_row(session)
    bulk_run = check_run_row(session, record_id=record.id, check_id="a", check_version=1)
    stmt_run = check_run_row(session, record_id=record.id, check_id="b", check_version=1)
    aware = datetime(2024, 3, 4, 11, 30, 15, 250000, tzinfo=PARIS)  # 10:30:15.25 UTC

    bulk_insert_ignore(session, Finding, ["check_run_id", "ordinal"], _rows(bulk_run.id, record.id, aware))
    session.execute(
        insert_ignore(session, Finding.__table__, ["check_run_id", "ordinal"]),
        _rows(stmt_run.id, record.id, aware),
    )
    # a second batch whose first row conflicts (same run and ordinal): skipped, the first kept
    again = _rows(bulk_run.id, record.id, aware)
    again[0]["reason"] = "changed"
    again[1]["ordinal"] = 2
    again[1]["words"], again[1]["evidence"] = [], {}  # empty JSON, and null in no other column
    bulk_insert_ignore(session, Finding, ["check_run_id", "ordinal"], again)
    bulk_insert_ignore(session, Finding, ["check_run_id", "ordinal"], [])  # nothing to do

    bulk = _stored(session, bulk_run.id)
    assert bulk[:2] == _stored(session, stmt_run.id)
    assert [(o, reason) for o, reason, *_ in bulk] == [
        (0, "'café' 0 in no turn"),
        (1, "'café' 1 in no turn"),
        (2, "'café' 1 in no turn"),
    ]
    loaded = session.execute(
        select(Finding.words, Finding.evidence, Finding.created_at)
        .where(Finding.check_run_id == bulk_run.id)
        .order_by(Finding.ordinal)
    ).all()
    assert loaded[1] == (
        ["café", "naïve"],
        {"words": [{"text": "café", "start": 4, "end": 8}], "n_messages": 1, "x": [1.5, None]},
        datetime(2024, 3, 4, 10, 30, 15, 250000),  # naive UTC, as every datetime column
    )
    assert loaded[2][:2] == ([], {})


def test_insert_ignore_returning_gives_the_rows_it_inserted_and_not_the_skipped(session: Session) -> None:
    """The events' insert (``monitor.ingest``) reads back the ids of what it stored: a row that conflicts
    is neither stored again nor returned, and what is stored is the statement path's."""
    from monitor.store.engine import insert_ignore_returning

    record = record_row(session)
    run = check_run_row(session, record_id=record.id, check_id="a", check_version=1)
    aware = datetime(2024, 3, 4, 11, 30, 15, 250000, tzinfo=PARIS)
    first = insert_ignore_returning(
        session, Finding, ["check_run_id", "ordinal"], _rows(run.id, record.id, aware), ["id", "ordinal"]
    )
    assert sorted(r.ordinal for r in first) == [0, 1]
    again = _rows(run.id, record.id, aware)
    again[1]["ordinal"] = 5
    second = insert_ignore_returning(session, Finding, ["check_run_id", "ordinal"], again, ["id", "ordinal"])
    assert [r.ordinal for r in second] == [5]  # ordinal 0 was there: skipped, not returned
    stored = {o: i for i, o in session.execute(select(Finding.id, Finding.ordinal))}
    assert {r.ordinal: r.id for r in [*first, *second]} == stored
    assert insert_ignore_returning(session, Finding, ["check_run_id", "ordinal"], [], ["id"]) == []
    stmt_run = check_run_row(session, record_id=record.id, check_id="b", check_version=1)
    session.execute(
        insert_ignore(session, Finding.__table__, ["check_run_id", "ordinal"]),
        _rows(stmt_run.id, record.id, aware),
    )
    assert _stored(session, run.id)[:2] == _stored(session, stmt_run.id)


def test_a_value_longer_than_its_column_is_refused_on_postgresql_not_cut(session: Session) -> None:
    """The arrays' elements are unbounded text, so the INSERT's own assignment checks the length, as
    the statement path does: an explicit cast to VARCHAR(64) would cut "k" * 65 to 64 without a word.
    SQLite keeps what it is given (its VARCHAR has no length)."""
    from sqlalchemy.exc import DataError

    record = record_row(session)
    run = check_run_row(session, record_id=record.id, check_id="a", check_version=1)
    rows = _rows(run.id, record.id, datetime(2024, 3, 4, 10, 0))
    rows[1]["kind"] = "k" * 65  # findings.kind is String(64)
    if session.get_bind().dialect.name == "postgresql":
        with pytest.raises(DataError, match="value too long"):
            bulk_insert_ignore(session, Finding, ["check_run_id", "ordinal"], rows)
    else:
        bulk_insert_ignore(session, Finding, ["check_run_id", "ordinal"], rows)
        assert session.scalar(select(Finding.kind).where(Finding.ordinal == 1)) == "k" * 65


def test_insert_many_runs_an_upsert_and_its_own_parameters(session: Session) -> None:
    """The records' upsert (``monitor.ingest``): ON CONFLICT DO UPDATE with a constant of its own
    (``join_method``) and a WHERE, one statement of arrays on PostgreSQL. The half stored first is
    completed by the second insert; a row whose slot is taken is neither updated nor returned."""
    from sqlalchemy import func, or_

    from monitor.store.engine import dialect_insert, insert_many
    from monitor.store.models import Record

    table = Record.__table__
    ins = dialect_insert(session, table)
    x = ins.excluded
    stmt = ins.on_conflict_do_update(
        index_elements=["conv_id", "request_id"],
        set_={
            "ctx_event_id": func.coalesce(table.c.ctx_event_id, x.ctx_event_id),
            "rewrite_event_id": func.coalesce(table.c.rewrite_event_id, x.rewrite_event_id),
            "join_method": "request_id",
        },
        where=or_(table.c.ctx_event_id.is_(None), x.ctx_event_id.is_(None)),
    ).returning(table.c.request_id, table.c.ctx_event_id, table.c.rewrite_event_id, table.c.join_method)

    ev = {name: event_row(session, request_id=name).id for name in ("a1", "a2", "b1", "b2", "c3")}

    def row(req: str, ctx: str | None, rw: str | None) -> dict[str, Any]:
        ids = {"ctx_event_id": ev[ctx] if ctx else None, "rewrite_event_id": ev[rw] if rw else None}
        return {"conv_id": "c", "request_id": req, "turn": 2, **ids}

    first = insert_many(session, stmt, [row("r1", "a1", None), row("r2", "a2", None)])
    assert sorted(tuple(r) for r in first) == [("r1", ev["a1"], None, None), ("r2", ev["a2"], None, None)]
    second = insert_many(session, stmt, [row("r1", None, "b1"), row("r2", "b2", None), row("r3", None, "c3")])
    # r1 completed by request id; r2's ctx slot is taken (the WHERE): skipped; r3 new
    assert sorted(tuple(r) for r in second) == [
        ("r1", ev["a1"], ev["b1"], "request_id"),
        ("r3", None, ev["c3"], None),
    ]
    assert insert_many(session, stmt, []) == []


def test_insert_many_follows_the_insert_s_column_order_not_the_rows_keys(session: Session) -> None:
    """Rows whose keys are not in the table's order land in their own columns (the arrays follow the
    INSERT's column list); a column the INSERT writes by a Python-side default but the rows leave out is
    refused on PostgreSQL, by name, rather than shifting the arrays."""
    from monitor.store.engine import insert_many
    from monitor.store.models import AddedLemma, QueueItem

    stmt = insert_ignore(session, AddedLemma.__table__, ["prompt_version", "lemma", "conv_id"])
    insert_many(session, stmt, [{"lemma": "boeing", "conv_id": "c1", "prompt_version": "v3"}])
    stored = session.execute(select(AddedLemma.prompt_version, AddedLemma.lemma, AddedLemma.conv_id)).all()
    assert [tuple(r) for r in stored] == [("v3", "boeing", "c1")]
    if session.get_bind().dialect.name == "postgresql":
        item = insert_ignore(session, QueueItem.__table__, ["record_id", "day"])
        with pytest.raises(ValueError, match="reviews_needed"):
            insert_many(session, item, [{"record_id": 1, "day": datetime(2024, 3, 4).date()}])
