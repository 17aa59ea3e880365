"""The two halves of each request read by two writers at once, on real PostgreSQL: one whole record per
request (the unique request key of migration 0008 and the upsert join), never two half-records."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from monitor.ingest.sources import read_lines
from monitor.ingest.store.batches import Ingestor, IngestSummary, ingest_bytes
from monitor.store.engine import make_engine, session_factory
from monitor.store.models import CheckRun, Record
from tests.factories import ctx_input, line, rewrite
from tests.helpers import fresh_database


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    yield from fresh_database("postgresql", tmp_path)


def test_halves_written_at_once_by_two_writers_join_into_one_record(pg_url: str) -> None:
    """Writer A stores the 40 ctx_input halves and holds its transaction open; writer B, meanwhile,
    finds no open record (A's are not committed) and writes the 40 rewrites. Before 0008 B opened 40
    records of its own: 80 half-records. Now B's inserts wait for A's commit and join A's records."""
    n = 40
    ctx = b"".join(line(ctx_input(conv=f"c{i}", req=f"c{i}_2")) for i in range(n))
    rewrites = b"".join(line(rewrite(conv=f"c{i}", req=f"c{i}_2")) for i in range(n))
    engine = make_engine(pg_url)
    sessions = session_factory(engine)
    a_written = threading.Event()
    b_summary: list[IngestSummary] = []

    def writer_a() -> None:
        with sessions() as s:
            ing = Ingestor(s, source_name="a", summary=IngestSummary(), batch_size=1000)

            def hold(_last: object) -> None:
                a_written.set()
                time.sleep(1.5)  # B runs now, against A's uncommitted records

            ing.run("ctx.jsonl", read_lines(io.BytesIO(ctx), 1 << 20), 1 << 20, before_commit=hold)

    def writer_b() -> None:
        assert a_written.wait(10)
        with sessions() as s:
            b_summary.append(ingest_bytes(s, rewrites, origin="rewrites.jsonl"))

    threads = [threading.Thread(target=writer_a), threading.Thread(target=writer_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    try:
        with sessions() as s:
            assert s.scalar(select(func.count()).select_from(Record)) == n
            assert s.scalar(select(func.count()).where(Record.ctx_event_id.is_(None))) == 0
            assert s.scalar(select(func.count()).where(Record.rewrite_event_id.is_(None))) == 0
            assert set(s.scalars(select(Record.join_method))) == {"request_id"}
            assert s.scalar(select(func.count()).select_from(CheckRun)) == 0
        assert (b_summary[0].stored, b_summary[0].joined, b_summary[0].unjoined_ctx) == (n, n, 0)
    finally:
        engine.dispose()
