"""What a worker cycle says about sources it cannot read: a path naming no file yet, and a ``.gz`` file
that is not gzip (it can never become readable by waiting, unlike one still being written)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from monitor.cli.main import app
from monitor.ingest.tail import gzip_complete, resolve_sources
from monitor.store.engine import upgrade


def cycle(url: str, sources: list[str], monkeypatch: pytest.MonkeyPatch, code: int = 0) -> tuple[dict, str]:
    """One cycle through the CLI: its JSON summary and its log (stderr); exits ``code`` (3: a source
    could not be read)."""
    monkeypatch.setenv("REWRITE_MONITOR_SOURCES", json.dumps(sources))
    result = CliRunner().invoke(app, ["--database-url", url, "worker", "run", "cycle", "--json"])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout), result.stderr


def test_a_missing_source_is_named_and_a_non_gzip_file_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'w.db'}"
    upgrade(url)
    bad = tmp_path / "app.jsonl.gz"
    bad.write_bytes(b"plain text, not gzip\n")
    missing = str(tmp_path / "typo" / "app.jsonl")
    first, log = cycle(url, [missing, str(bad)], monkeypatch, code=3)
    assert first["sources_waiting"] == [missing]
    assert first["files"] == {str(bad): "error"}
    assert first["ingest"]["source_errors"] == [
        {"source": str(bad), "error": "read failed: not a gzip stream (bad header)"}
    ]
    waiting = [x for x in log.splitlines() if "source names no log file yet" in x]
    assert len(waiting) == 1 and f'source="{missing}"' in waiting[0]
    # the next cycle reports the same, without a second warning for the same source in this process
    second, log = cycle(url, [missing, str(bad)], monkeypatch, code=3)
    assert second["sources_waiting"] == [missing] and second["files"] == {str(bad): "error"}
    assert "source names no log file yet" not in log


def test_a_gzip_still_being_written_is_incomplete_not_an_error(tmp_path: Path) -> None:
    whole = gzip.compress(b'{"event": "x"}\n' * 1000)
    growing = tmp_path / "growing.jsonl.gz"
    growing.write_bytes(whole[: len(whole) // 2])
    assert gzip_complete(growing) is False
    growing.write_bytes(whole)
    assert gzip_complete(growing) is True


def test_resolve_sources_lists_the_waiting_ones_in_configuration_order(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_text("")
    (tmp_path / "empty").mkdir()
    patterns = [str(tmp_path / "nope-*.jsonl"), str(tmp_path / "logs"), str(tmp_path / "empty")]
    files, waiting = resolve_sources(patterns)
    assert waiting == [patterns[0], patterns[2]]
    assert files == [(tmp_path / "logs" / "a.jsonl").resolve()]


def test_a_cycle_that_reads_a_thousand_events_analyses_their_tables_on_postgresql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from tests.factories import stream_lines
    from tests.helpers import throwaway_pg_database

    log = tmp_path / "app.jsonl"
    log.write_bytes(b"".join(stream_lines(200, turns=3)))  # 1,200 events, 600 rewrites
    with throwaway_pg_database("rm_analyze", migrate=True) as url:
        summary, _ = cycle(url, [str(log)], monkeypatch)
        assert (summary["ingest"]["stored"], summary["check"]["records_checked"]) == (1200, 600)
        engine = create_engine(make_url(url).set(drivername="postgresql+psycopg"))
        try:
            with engine.connect() as conn:
                got = dict(
                    conn.execute(
                        text("SELECT relname, reltuples FROM pg_class WHERE relname IN ('events', 'records')")
                    ).all()
                )
        finally:
            engine.dispose()
        # reltuples is -1 until a table is analysed: the cycle's ingest analysed both
        assert got == {"events": 1200, "records": 600}


def test_a_recursive_glob_over_symlink_loops_and_a_fifo_ends_with_the_real_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: `ln -s . self` and `ln -s .. sub/up` under a `**` source kept the standard library's glob
    walking ever longer paths (a worker cycle killed at 60 s). Each directory is walked once by its real
    path now, a FIFO is no file to read, and a real file is found once, however many links lead to it."""
    import os

    from monitor.ingest.sources import PatternError, expand_pattern

    (tmp_path / "logs" / "sub").mkdir(parents=True)
    good = tmp_path / "logs" / "sub" / "a.jsonl"
    good.write_text("")
    (tmp_path / "logs" / "self").symlink_to(".")
    (tmp_path / "logs" / "sub" / "up").symlink_to("..")
    os.mkfifo(tmp_path / "logs" / "pipe.jsonl")
    pattern = str(tmp_path / "logs" / "**" / "*.jsonl")
    assert expand_pattern(pattern) == [str(tmp_path / "logs" / "pipe.jsonl"), str(good)]
    files, waiting = resolve_sources([pattern])
    assert (files, waiting) == ([good.resolve()], [])
    with pytest.raises(PatternError, match=r"names more than 1 paths: narrow it"):
        expand_pattern(pattern, max_paths=1)
    # relative to the working folder, as glob names them
    monkeypatch.chdir(tmp_path / "logs")
    assert expand_pattern("**/*.jsonl") == ["pipe.jsonl", "sub/a.jsonl"]


def test_a_fifo_a_source_names_is_skipped_with_one_warning_and_not_awaited(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A source naming a FIFO directly, or reaching it through a symlinked folder, gets one warning
    (keyed by the FIFO's real path) and is not listed as waiting for a log file to appear."""
    import logging
    import os

    (tmp_path / "d").mkdir()
    fifo = tmp_path / "d" / "live.jsonl"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to(tmp_path / "d")
    with caplog.at_level(logging.WARNING, logger="monitor"):
        first = resolve_sources([str(fifo), str(tmp_path / "link")])
        again = resolve_sources([str(fifo)])
    assert first == ([], [str(tmp_path / "link")]) and again == ([], [])
    said = [r for r in caplog.records if r.getMessage() == "source skipped: not a regular file"]
    assert len(said) == 1 and said[0].fields["kind"] == "a pipe"  # type: ignore[attr-defined]


def test_expand_pattern_agrees_with_glob_where_glob_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a tree without loops the walk names what glob names: a directory reached through a link and by
    its own name under both, hidden names only where the pattern writes the dot."""
    import glob

    from monitor.ingest.sources import expand_pattern

    monkeypatch.chdir(tmp_path)
    for d in ("logs/z_data/deep", "logs/.cache", "logs/b"):
        (tmp_path / d).mkdir(parents=True)
    for f in (
        "z_data/r.jsonl",
        "z_data/deep/q.jsonl",
        ".cache/c.jsonl",
        ".dot.jsonl",
        "b/x.txt",
        "top.jsonl",
    ):
        (tmp_path / "logs" / f).write_text("")
    (tmp_path / "logs" / "a_current").symlink_to("z_data")  # sorts before the directory it names
    for pattern in (
        "logs/**/*.jsonl",
        "**/z_data/*.jsonl",
        "logs/**/.cache/*.jsonl",
        "logs/**/.*.jsonl",
        "logs/*/**/*.txt",
        "**/*.jsonl",
        str(tmp_path / "logs" / "**" / "r.jsonl"),
    ):
        assert expand_pattern(pattern) == sorted(glob.glob(pattern, recursive=True)), pattern
    assert expand_pattern("logs/**/*.jsonl") == [
        "logs/a_current/deep/q.jsonl",
        "logs/a_current/r.jsonl",
        "logs/top.jsonl",
        "logs/z_data/deep/q.jsonl",
        "logs/z_data/r.jsonl",
    ]


def test_a_walk_over_too_large_a_folder_is_refused_and_the_cycle_reads_the_other_sources(
    tmp_path: Path,
) -> None:
    from monitor.ingest.sources import PatternError, expand_pattern

    (tmp_path / "big").mkdir()
    for i in range(30):
        (tmp_path / "big" / f"{i}.txt").write_text("")
    (tmp_path / "app.jsonl").write_text("")
    wide = str(tmp_path / "big" / "**" / "nothing.jsonl")
    with pytest.raises(PatternError, match=r"walks more than 10 directory entries: narrow it"):
        expand_pattern(wide, max_walk=10)
    assert expand_pattern(wide) == []  # within the default bound
    files, waiting = resolve_sources([str(tmp_path / "**" / "*.jsonl")])
    assert (files, waiting) == ([(tmp_path / "app.jsonl").resolve()], [])
