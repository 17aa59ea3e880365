"""Incremental ingest with per-file cursors: partial lines, truncation, rotation, gzip, and the cursor
committed with the events it covers."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
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


def test_the_collector_file_exporters_backups_are_generations(session: Session, tmp_path: Path) -> None:
    """The OpenTelemetry Collector's file exporter rotates ``traces.jsonl`` to
    ``traces-<UTC time>.jsonl`` (lumberjack's backup names). With two rotations between passes the
    middle file, which no pass has seen, is found by that name, as ``app.jsonl.1`` is."""
    f = tmp_path / "traces.jsonl"
    f.write_bytes(ev(1))
    tail(session, f)
    with f.open("ab") as fh:
        fh.write(ev(2))
    first = tmp_path / "traces-2024-03-04T08-00-00.000.jsonl"
    f.rename(first)
    f.write_bytes(ev(3))  # a file no pass will see at this path ...
    middle = tmp_path / "traces-2024-03-04T09-00-00.000.jsonl"
    f.rename(middle)  # ... rotated away before the next pass
    f.write_bytes(ev(4))
    report = tail(session, f)
    assert report.actions[str(first)] == "rotated_rest"
    assert str(middle) in report.actions
    assert sorted(r for _o, _n, r in stored(session)) == ["c1_1", "c1_2", "c1_3", "c1_4"]


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


class _Killed(BaseException):
    """A SIGKILL: no handler of the code under test runs."""


def _rotate(f: Path, to: str, new: bytes) -> None:
    f.rename(f.parent / to)
    f.write_bytes(new)


def test_a_drain_cut_short_resumes_from_its_own_cursor(session: Session, tmp_path: Path) -> None:
    """A crash while the rest of a rotated file is read used to lose the rest for good: the old name
    had a cursor, so the next pass took the drain for done. The batch that failed is rolled back; the
    next pass sees the same rotation and reads on from the drained file's cursor."""
    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1))
    tail(session, f)
    with f.open("ab") as fh:
        fh.write(b"".join(ev(i) for i in range(2, 8)))  # six lines nobody read yet ...
    _rotate(f, "app.jsonl.1", ev(8))  # ... then rotated away
    calls = [0]
    from monitor.ingest.store import cursors

    real = cursors.save_cursor

    def crash_on_second_batch(**kw):  # type: ignore[no-untyped-def]
        if kw["cursor"].path.endswith("app.jsonl.1"):
            calls[0] += 1
            if calls[0] == 2:
                raise _Killed  # the worker dies inside the second batch of the drain
        return real(**kw)

    import monitor.ingest.tail as tail_mod

    tail_mod.save_cursor = crash_on_second_batch  # type: ignore[assignment]
    try:
        with pytest.raises(_Killed):
            tail(session, f, batch_size=2)
    finally:
        tail_mod.save_cursor = real  # type: ignore[assignment]
    session.rollback()  # what the killed process had not committed is gone
    assert [r for _o, _n, r in stored(session)] == ["c1_1", "c1_2", "c1_3"]
    report = tail(session, f, batch_size=2)
    assert report.actions == {str(tmp_path / "app.jsonl.1"): "rotated_rest", str(f): "rotated"}
    assert [r for _o, _n, r in stored(session)] == [f"c1_{i}" for i in range(1, 9)]
    assert report.ingest.rejected_total == 0


def test_two_rotations_between_passes_read_the_middle_generation(session: Session, tmp_path: Path) -> None:
    """logrotate-style numbering: app.jsonl -> .1 -> .2 between two passes. The drained old file is
    now app.jsonl.2, and app.jsonl.1, which no pass has seen, is read too (before the new file)."""
    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1))
    tail(session, f)
    with f.open("ab") as fh:
        fh.write(ev(2))
    _rotate(f, "app.jsonl.1", ev(3) + ev(4))  # first rotation: the middle generation is written
    (tmp_path / "app.jsonl.1").rename(tmp_path / "app.jsonl.2")
    _rotate(f, "app.jsonl.1", ev(5))  # second rotation
    report = tail(session, f)
    assert report.actions == {
        str(tmp_path / "app.jsonl.2"): "rotated_rest",
        str(tmp_path / "app.jsonl.1"): "rotated_generation",
        str(f): "rotated",
    }
    assert stored(session) == [
        ("app.jsonl", 1, "c1_1"),
        ("app.jsonl.2", 2, "c1_2"),
        ("app.jsonl.1", 1, "c1_3"),
        ("app.jsonl.1", 2, "c1_4"),
        ("app.jsonl", 1, "c1_5"),
    ]
    # the next rotation finds app.jsonl.1's stale cursor under the name and drains the new .1 anyway
    with f.open("ab") as fh:
        fh.write(ev(6))
    (tmp_path / "app.jsonl.1").rename(tmp_path / "app.jsonl.3")
    _rotate(f, "app.jsonl.1", ev(7))
    tail(session, f)
    assert [r for _o, _n, r in stored(session)][-2:] == ["c1_6", "c1_7"]
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0


def test_a_drain_killed_before_the_live_cursor_moved_resumes_after_the_file_shifted_on(
    session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fault suite's read-twice flake: a pass drains the rotated file at app.jsonl.1 and is killed
    before the live cursor moves on; a numbered rotation then shifts that file to app.jsonl.2. The next
    pass sees the same rotation and drains it again, and must resume from the drain's cursor, which
    is still under app.jsonl.1 (before, only a cursor under the file's current name was looked at,
    so app.jsonl.2 was read again from the live cursor's offset: from line 1)."""
    f = tmp_path / "app.jsonl"
    f.write_bytes(b"")
    tail(session, f)  # the live file is known from its creation, at offset 0
    with f.open("ab") as fh:
        fh.write(b"".join(ev(i) for i in range(1, 6)))
    _rotate(f, "app.jsonl.1", ev(6))

    def killed(*_a: object, **_k: object) -> int:
        raise _Killed  # after the drain committed, before the live cursor moved to the new file

    with monkeypatch.context() as m:
        m.setattr(Tailer, "_read_generations", killed)
        with pytest.raises(_Killed):
            tail(session, f)
    session.rollback()
    assert stored(session) == [("app.jsonl.1", i, f"c1_{i}") for i in range(1, 6)]
    live = get_cursor(session=session, path=str(f))
    assert live is not None and (live.offset, live.line_no) == (0, 0)  # still names the drained file
    (tmp_path / "app.jsonl.1").rename(tmp_path / "app.jsonl.2")  # the next numbered rotation
    _rotate(f, "app.jsonl.1", ev(7))
    report = tail(session, f)
    assert report.actions == {
        str(tmp_path / "app.jsonl.2"): "rotated_rest",
        str(tmp_path / "app.jsonl.1"): "rotated_generation",
        str(f): "rotated",
    }
    # only the two new lines are read: none of app.jsonl.2 again (5 duplicate_event rows before)
    assert (report.ingest.lines_read, report.ingest.stored, report.ingest.rejected_total) == (2, 2, 0)
    assert stored(session)[5:] == [("app.jsonl.1", 1, "c1_6"), ("app.jsonl", 1, "c1_7")]
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0


def test_a_file_rotated_away_between_its_stat_and_its_read_is_left_to_the_next_pass(
    session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass decides on a path from a stat taken before it reads (late writes to generations come
    first). A rotation in between used to put the new file's lines and head under the old file's
    identity (app.jsonl's line 4 stored as the old file's line 2), and the next pass read the new file
    again from its start. The file opened is checked to be the one decided on; when it is not, the
    next pass reads the rotation."""
    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1))
    tail(session, f)
    with f.open("ab") as fh:
        fh.write(ev(2))
    real = Tailer._read_generations

    def then_rotate(self: Tailer, *a: object, **k: object) -> int:
        done = real(self, *a, **k)  # type: ignore[arg-type]
        _rotate(f, "app.jsonl.1", ev(3) + ev(4))  # after the stat of app.jsonl, before its read
        return done

    with monkeypatch.context() as m:
        m.setattr(Tailer, "_read_generations", then_rotate)
        report = tail(session, f)
    assert report.actions == {str(f): "moved"} and report.ingest.lines_read == 0
    cur = get_cursor(session=session, path=str(f))
    assert cur is not None and (cur.line_no, cur.offset) == (1, len(ev(1)))  # still the rotated file's
    report = tail(session, f)
    assert report.actions == {str(tmp_path / "app.jsonl.1"): "rotated_rest", str(f): "rotated"}
    assert (report.ingest.lines_read, report.ingest.stored, report.ingest.rejected_total) == (3, 3, 0)
    assert stored(session) == [
        ("app.jsonl", 1, "c1_1"),
        ("app.jsonl.1", 2, "c1_2"),
        ("app.jsonl", 1, "c1_3"),
        ("app.jsonl", 2, "c1_4"),
    ]
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0


def test_an_old_file_compressed_after_its_rotation_is_read_from_the_cursor(
    session: Session, tmp_path: Path
) -> None:
    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1) + ev(2))
    tail(session, f)
    rest = ev(3)
    (tmp_path / "app.jsonl.1.gz").write_bytes(gzip.compress(f.read_bytes() + rest))  # rotate + compress
    (tmp_path / "new").write_bytes(ev(4))  # a new inode while the old one still exists
    f.unlink()
    (tmp_path / "new").rename(f)
    report = tail(session, f)
    assert report.actions[str(tmp_path / "app.jsonl.1.gz")] == "rotated_generation"
    assert [r for _o, _n, r in stored(session)] == ["c1_1", "c1_2", "c1_3", "c1_4"]
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0  # nothing read twice


def test_copytruncate_reads_the_lines_after_the_cursor_from_the_copy(
    session: Session, tmp_path: Path
) -> None:
    """copytruncate copies the live file to app.jsonl.1, then empties it: the line written after the last
    pass is in the copy only, and is read from there (from the cursor on: nothing read twice)."""
    import shutil

    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1) + ev(2))
    tail(session, f)
    with f.open("ab") as fh:
        fh.write(ev(3))
    shutil.copyfile(f, tmp_path / "app.jsonl.1")
    with f.open("r+b") as fh:
        fh.truncate(0)
    with f.open("ab") as fh:
        fh.write(ev(4))
    report = tail(session, f)
    assert report.actions == {str(tmp_path / "app.jsonl.1"): "rotated_generation", str(f): "truncated"}
    assert stored(session) == [
        ("app.jsonl", 1, "c1_1"),
        ("app.jsonl", 2, "c1_2"),
        ("app.jsonl.1", 3, "c1_3"),
        ("app.jsonl", 1, "c1_4"),
    ]
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0


def test_a_late_write_to_a_drained_generation_is_read_on_a_later_pass(
    session: Session, tmp_path: Path
) -> None:
    """A logger writes on to the renamed file until it reopens the path: the lines it wrote to
    app.jsonl.1 after the drain are read from the drain's cursor, and nothing twice."""
    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1))
    tail(session, f)
    old = f.open("ab")  # the producer's descriptor
    f.rename(tmp_path / "app.jsonl.1")
    f.write_bytes(b"")
    old.write(ev(2))
    old.flush()
    assert tail(session, f).actions[str(tmp_path / "app.jsonl.1")] == "rotated_rest"
    old.write(ev(3))  # the late write, after the drain
    old.close()
    with f.open("ab") as fh:
        fh.write(ev(4))
    report = tail(session, f)
    assert report.actions[str(tmp_path / "app.jsonl.1")] == "late_write"
    # the generation before the live file, as at a rotation
    assert stored(session)[2:] == [("app.jsonl.1", 3, "c1_3"), ("app.jsonl", 1, "c1_4")]
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0


def test_numbered_generations_shifted_on_keep_their_cursors(session: Session, tmp_path: Path) -> None:
    """Three rotations with the older generations shifted up each time (.1 -> .2 -> .3): every file
    keeps its cursor under its new name, so no generation is taken for an unseen one and read again
    (before, the row of app.jsonl.1 was overwritten while the file it named sat at app.jsonl.2)."""
    f = tmp_path / "app.jsonl"
    n = 0

    def write(k: int) -> None:
        nonlocal n
        with f.open("ab") as fh:
            for _ in range(k):
                n += 1
                fh.write(ev(n))

    def shift_and_rotate() -> None:
        gens = sorted((int(p.name.rsplit(".", 1)[1]), p) for p in tmp_path.glob("app.jsonl.[0-9]*"))
        for k, p in reversed(gens):
            p.rename(tmp_path / f"app.jsonl.{k + 1}")
        f.rename(tmp_path / "app.jsonl.1")
        f.write_bytes(b"")

    write(2)
    tail(session, f)
    for _ in range(3):
        write(1)
        shift_and_rotate()
        write(1)
        tail(session, f)
        write(1)
        tail(session, f)
    assert sorted(r for _o, _n, r in stored(session)) == sorted(f"c1_{i}" for i in range(1, n + 1))
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0
    for k in (1, 2, 3):
        cur = get_cursor(session=session, path=str(tmp_path / f"app.jsonl.{k}"))
        assert cur is not None and cur.file_id == f"{os.stat(tmp_path / f'app.jsonl.{k}').st_dev}:" + str(
            os.stat(tmp_path / f"app.jsonl.{k}").st_ino
        )


def test_copytruncate_is_reported_with_the_bytes_read_from_the_copy(
    session: Session, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The warning of a truncation says how many bytes were read from copytruncate's copy (the line
    written after the last pass); what fell between the copy and the truncation is on no disk."""
    import logging
    import shutil

    f = tmp_path / "app.jsonl"
    f.write_bytes(ev(1))
    tail(session, f)
    with f.open("ab") as fh:
        fh.write(ev(2))
    shutil.copyfile(f, tmp_path / "app.jsonl.1")
    with f.open("r+b") as fh:
        fh.truncate(0)
    with caplog.at_level(logging.INFO, logger="monitor.worker.tail"):
        tail(session, f)
    (warning,) = [r for r in caplog.records if r.getMessage() == "source truncated"]
    assert warning.fields == {"origin": str(f), "previous_offset": len(ev(1)), "copy_bytes_read": len(ev(2))}
