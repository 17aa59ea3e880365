"""Incremental ingest with per-file cursors: partial lines, truncation, rotation, gzip, and the cursor
committed with the events it covers."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.ingest.store.cursors import get_cursor
from monitor.ingest.tail import Tailer, TailReport, expand_sources
from monitor.store.models import Event, Quarantine
from tests.factories import ctx_input, line, rewrite


def ev(i: int, conv: str = "c1") -> bytes:
    """One short ``rewrite`` line for request ``<conv>_<i>``."""
    return line(rewrite(conv=conv, req=f"{conv}_{i}", turn=i))


def tail(session: Session, *patterns: Path, batch_size: int = 2) -> TailReport:
    return Tailer(
        session, source_name="t", batch_size=batch_size, max_line_bytes=1 << 20, sample_seed="s"
    ).run(expand_sources([str(p) for p in patterns]))


def stored(session: Session) -> list[tuple[str, int, str]]:
    rows = session.execute(select(Event.origin, Event.line_no, Event.request_id).order_by(Event.id))
    return [(Path(o).name, n, r) for o, n, r in rows]


def test_partial_last_line_waits_until_complete(session: Session, tmp_path: Path) -> None:
    f = tmp_path / "app.jsonl"
    third = ev(3)
    f.write_bytes(ev(1) + ev(2) + third[:20])
    assert tail(session, f).actions == {str(f): "read"}
    cur = get_cursor(session=session, path=str(f))
    assert cur is not None and (cur.line_no, cur.offset) == (2, len(ev(1) + ev(2)))
    assert stored(session) == [("app.jsonl", 1, "c1_1"), ("app.jsonl", 2, "c1_2")]
    with f.open("ab") as fh:
        fh.write(third[20:])
    report = tail(session, f)
    assert report.ingest.stored == 1 and report.ingest.rejected_total == 0
    assert stored(session)[-1] == ("app.jsonl", 3, "c1_3")
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0
    assert tail(session, f).actions == {str(f): "unchanged"}


def test_cursor_is_committed_with_each_batch(session: Session, tmp_path: Path) -> None:
    f = tmp_path / "app.jsonl"
    f.write_bytes(b"".join(ev(i) for i in range(1, 6)) + b"\n\n")
    tail(session, f, batch_size=2)
    cur = get_cursor(session=session, path=str(f))
    # 5 events, then 2 blank lines the cursor moves past too.
    assert cur is not None and (cur.line_no, cur.offset, cur.size) == (7, f.stat().st_size, f.stat().st_size)
    assert len(stored(session)) == 5


def test_truncated_file_is_read_again_from_the_start(session: Session, tmp_path: Path) -> None:
    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1) + ev(2) + ev(3))
    tail(session, f)
    f.write_bytes(ev(4))  # copytruncate, then a new line: shorter than the cursor's offset
    assert tail(session, f).actions == {str(f): "truncated"}
    assert stored(session)[-1] == ("app.jsonl", 1, "c1_4")
    cur = get_cursor(session=session, path=str(f))
    assert cur is not None and (cur.line_no, cur.offset) == (1, len(ev(4)))


def test_rewritten_head_counts_as_truncation(session: Session, tmp_path: Path) -> None:
    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1))
    tail(session, f)
    f.write_bytes(ev(7) + ev(8))  # same inode, longer, but a different first line
    assert tail(session, f).actions == {str(f): "truncated"}
    assert [r for _o, _n, r in stored(session)] == ["c1_1", "c1_7", "c1_8"]


def test_rotation_reads_the_rest_of_the_renamed_file_then_the_new_one(
    session: Session, tmp_path: Path
) -> None:
    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1) + ev(2))
    tail(session, f)
    with f.open("ab") as fh:
        fh.write(ev(3) + ev(4))  # written after the last read ...
    f.rename(tmp_path / "app.jsonl.1")  # ... then rotated away
    f.write_bytes(ev(5))
    report = tail(session, f)  # only app.jsonl is configured
    assert report.actions == {str(tmp_path / "app.jsonl.1"): "rotated_rest", str(f): "rotated"}
    assert stored(session) == [
        ("app.jsonl", 1, "c1_1"),
        ("app.jsonl", 2, "c1_2"),
        ("app.jsonl.1", 3, "c1_3"),
        ("app.jsonl.1", 4, "c1_4"),
        ("app.jsonl", 1, "c1_5"),
    ]
    assert tail(session, f).actions == {str(f): "unchanged"}


def test_renamed_file_matched_by_a_glob_continues_from_its_cursor(session: Session, tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    a.write_bytes(ev(1) + ev(2))
    tail(session, tmp_path / "*.jsonl")
    os.rename(a, tmp_path / "b.jsonl")
    with (tmp_path / "b.jsonl").open("ab") as fh:
        fh.write(ev(3))
    report = tail(session, tmp_path / "*.jsonl")
    assert report.actions == {str(tmp_path / "b.jsonl"): "renamed"}
    assert stored(session)[-1] == ("b.jsonl", 3, "c1_3")
    assert report.ingest.rejected_total == 0


def test_gzip_is_read_once_complete(session: Session, tmp_path: Path) -> None:
    data = line(ctx_input()) + line(rewrite())
    full = gzip.compress(data)
    g = tmp_path / "app.jsonl.gz"
    g.write_bytes(full[:-8])  # no trailer yet: still being written
    assert tail(session, g).actions == {str(g): "gzip_incomplete"}
    assert stored(session) == []
    g.write_bytes(full)
    report = tail(session, g)
    assert report.actions == {str(g): "read"} and report.ingest.joined == 1
    cur = get_cursor(session=session, path=str(g))
    assert cur is not None and cur.completed and (cur.line_no, cur.offset) == (2, len(data))
    assert tail(session, g).actions == {str(g): "unchanged"}


def test_missing_sources_are_waited_for(tmp_path: Path) -> None:
    assert expand_sources([str(tmp_path / "nope.jsonl"), str(tmp_path / "*.jsonl")]) == []
