"""Rejected lines leave no personal data in details or logs; logged text cannot drive the terminal;
paths that are not regular files are refused with a message that says what they are."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from sqlalchemy import select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from monitor.checks.store import list_findings
from monitor.cli.main import app
from monitor.cli.render import _rewrite, quarantine_table
from monitor.errors import IngestError
from monitor.ingest.events import LineError, parse_line, parse_ts
from monitor.ingest.sources import discover
from monitor.ingest.store.batches import ingest_bytes
from monitor.ingest.store.quarantine import QuarantineRow, list_quarantine, scrub_detail
from monitor.ingest.store.records import get_record_view
from monitor.ingest.store.retention import apply_retention
from monitor.queue.store import enqueue_days
from monitor.settings import Settings
from monitor.store.engine import make_engine, session_factory
from monitor.store.models import Quarantine
from monitor.text import visible
from tests.factories import ctx_input, ingest_checked, line, log, quarantine_row, rewrite

runner = CliRunner()
EMAIL, SSN = "jane@corp.com", "123-45-6789"
SECRET = f"My SSN is {SSN} and email {EMAIL}"
NOW = datetime(2024, 3, 5, 9, 30, tzinfo=UTC)


def _no_pii(text: str) -> bool:
    return EMAIL not in text and SSN not in text and "SSN" not in text


# -- 1. no personal data in quarantine details ------------------------------------------------------
PII_LINES: list[tuple[dict[str, Any] | str, str, str]] = [
    (
        rewrite(query={"text": SECRET}),
        "wrong_type",
        "field 'query': Input should be a valid string, got an object",
    ),
    (
        rewrite(query=[SECRET, EMAIL]),
        "wrong_type",
        "field 'query': Input should be a valid string, got an array",
    ),
    (rewrite(ts=SECRET), "wrong_type", "field 'ts': not an ISO-8601 timestamp, got a string"),
    (rewrite(ts=[SECRET]), "wrong_type", "field 'ts': a timestamp must be ISO-8601 text"),
    (
        rewrite(rewritten=EMAIL),
        "wrong_type",
        "field 'rewritten': Input should be a valid boolean, got a string",
    ),
    (rewrite(turn=SSN), "wrong_type", "field 'turn': Input should be a valid integer, got a string"),
    (
        rewrite(dropped=["x", {"who": EMAIL}]),
        "wrong_type",
        "field 'dropped.1': Input should be a valid string",
    ),
    (rewrite(resolved=[{"surface": SECRET}]), "missing_field", "field 'resolved.0.antecedent' is required"),
    (
        ctx_input(messages=[{"role": "user", "content": {"t": SECRET}}]),
        "wrong_type",
        "field 'messages.0.content'",
    ),
    (ctx_input(roles={"user": SSN}), "wrong_type", "field 'roles.user': Input should be a valid integer"),
    (
        {"event": "retrieve", "request_id": "r", "hits": [{"rank": EMAIL, "doc_id": "d"}]},
        "wrong_type",
        "hits.0.rank",
    ),
    (
        {"message": f"user {EMAIL} logged in, {SSN}"},
        "unknown_event",
        "message: a 41-character text, not shown",
    ),
    ({"msg": EMAIL}, "unknown_event", "msg: a 13-character text, not shown"),
    ({"event": SSN}, "unknown_event", "event: a 11-character text, not shown"),
    (rewrite(filters={EMAIL: "a\u0000b"}), "unsupported_text", "field 'filters.*' holds a NUL character"),
    (
        rewrite(filters={"x": {SECRET: "\ud800"}}),
        "unsupported_text",
        "field 'filters.x.*' holds a lone surrogate",
    ),
    (f'{{"event": "rewrite", "query": "{SECRET}", ', "invalid_json", "invalid JSON at column"),
    (f'["{SECRET}"]', "not_an_object", "a log line must be a JSON object"),
]


@pytest.mark.parametrize(("obj", "reason", "detail"), PII_LINES)
def test_a_rejected_line_names_the_field_and_types_never_the_value(
    obj: dict[str, Any] | str, reason: str, detail: str
) -> None:
    text = obj if isinstance(obj, str) else json.dumps(obj)
    result = parse_line(text)
    assert isinstance(result, LineError)
    assert (result.reason, _no_pii(result.detail)) == (reason, True), result.detail
    assert detail in result.detail


def test_a_name_like_event_name_is_still_quoted() -> None:
    result = parse_line('{"event": "rerank", "message": "rewriter input logged"}')
    assert isinstance(result, LineError)
    assert result.detail.startswith(
        "unknown event name (event='rerank'; message: a 21-character text, not shown); known:"
    )


def test_timestamp_errors_do_not_quote_the_value() -> None:
    for bad in (SECRET, [SECRET], 1e300):
        with pytest.raises(ValueError) as info:
            parse_ts(bad)
        assert _no_pii(str(info.value)) and "1e+300" not in str(info.value)


def test_a_number_python_cannot_read_is_invalid_json_not_a_crash() -> None:
    result = parse_line('{"event": "rewrite", "turn": ' + "1" * 5000 + "}")
    assert result == LineError("invalid_json", "invalid JSON: a number has too many digits")


def test_stored_details_quarantine_json_and_outputs_hold_no_personal_data(
    cli_db: str, tmp_path: Path
) -> None:
    src = tmp_path / "pii.jsonl"
    src.write_bytes(
        b"".join(x.encode() + b"\n" if isinstance(x, str) else line(x) for x, _r, _d in PII_LINES)
    )
    texts = []
    for args in (
        ["ingest", str(src)],
        ["ingest", str(src), "--json"],
        ["quarantine"],
        ["quarantine", "--json"],
    ):
        result = runner.invoke(app, ["--database-url", cli_db, *args])
        assert result.exit_code == 0, result.output
        texts += [result.stdout, result.stderr]
    assert all(_no_pii(t) for t in texts), [t for t in texts if not _no_pii(t)]
    rows = [json.loads(x) for x in texts[-2].splitlines()]
    assert len(rows) == len(PII_LINES) and all("excerpt" not in r for r in rows)
    assert rows[0]["detail"] == PII_LINES[0][2]
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        details = s.scalars(select(Quarantine.detail)).all()
        excerpts = s.scalars(select(Quarantine.raw_excerpt)).all()
    engine.dispose()
    assert len(details) == len(PII_LINES) and all(_no_pii(d) for d in details)
    assert any(EMAIL in e for e in excerpts)  # the excerpt keeps the line: shown only with --excerpt
    shown = runner.invoke(app, ["--database-url", cli_db, "quarantine", "--json", "--excerpt"])
    assert EMAIL in shown.stdout


def test_the_worker_log_of_a_cycle_holds_no_personal_data(
    cli_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "pii.jsonl"
    src.write_bytes(b"".join(line(x) for x, _r, _d in PII_LINES if not isinstance(x, str)))
    monkeypatch.setenv("REWRITE_MONITOR_SOURCES", json.dumps([str(src)]))
    for fmt in ("true", "false"):
        monkeypatch.setenv("REWRITE_MONITOR_LOG_JSON", fmt)
        result = runner.invoke(app, ["--database-url", cli_db, "worker", "run", "cycle", "--json"])
        assert result.exit_code == 0, result.output
        assert "cycle done" in result.stderr
        assert _no_pii(result.stdout) and _no_pii(result.stderr)


OLD_DETAILS = [
    (
        "wrong_type",
        f'field \'query\': Input should be a valid string (got {{"text": "{SECRET}"}}); field '
        f"'ts': Value error, not an ISO-8601 timestamp: '{SECRET}' (got \"{SECRET}\") (+2 more)",
        "field 'query': wrong type (value removed); field 'ts': wrong type (value removed) (+2 more)",
    ),
    (
        "missing_field",
        f"field 'latest' is required; field 'turn': Input should be a valid integer (got \"{SSN}\")",
        "field 'latest' is required; field 'turn': wrong type (value removed)",
    ),
    (
        "unknown_event",
        f"unknown event name (event='rerank'; message='user {EMAIL} logged in'); known: ctx_input, rewrite",
        "unknown event name (event='rerank'; message: a text, not shown); known: ctx_input, rewrite",
    ),
    (
        "unsupported_text",
        f"field 'filters.{EMAIL}.0' holds a NUL character (\\u0000)",
        "field 'filters.*' holds a NUL character (\\u0000)",
    ),
]


def test_details_stored_by_older_versions_are_scrubbed_on_read_and_by_retention(session: Session) -> None:
    for i, (reason, old, _new) in enumerate(OLD_DETAILS):
        quarantine_row(session, line_no=i + 1, reason=reason, detail=old, raw_sha=f"{i:064d}")
    for reason, old, new in OLD_DETAILS:
        assert scrub_detail(reason, old) == new
        assert scrub_detail(reason, new) == new  # a current or scrubbed detail stays as it is
    rows, _counts = list_quarantine(session=session, origin="old.log")
    assert sorted(r.detail for r in rows) == sorted(new for _r, _o, new in OLD_DETAILS)
    cutoff = datetime(2024, 1, 1)  # older than every row: only the scrub applies
    result = apply_retention(session=session, cutoff=cutoff, now=datetime(2024, 3, 6))
    assert (result.details_scrubbed, result.excerpts_removed) == (len(OLD_DETAILS), 0)
    stored = session.scalars(select(Quarantine.detail).where(Quarantine.origin == "old.log")).all()
    assert sorted(stored) == sorted(new for _r, _o, new in OLD_DETAILS)
    assert apply_retention(session=session, cutoff=cutoff, now=datetime(2024, 3, 6)).details_scrubbed == 0


# -- 2. logged text cannot drive the terminal -------------------------------------------------------
def test_visible_escapes_every_control_character_but_newline_and_tab() -> None:
    assert visible("a\x1b[2Jb\x1b]0;title\x07c") == "a\\u001b[2Jb\\u001b]0;title\\u0007c"
    assert visible("\x00\x08\x7f\x85\x9b\u00a0é") == "\\u0000\\u0008\\u007f\\u0085\\u009b\u00a0é"
    assert visible("one\ttwo\nthree\r\nfour\rfive") == "one\ttwo\nthree\nfour\\u000dfive"
    assert visible("[red]x[/red]") == "[red]x[/red]"  # markup is the Text's business, not visible's


ESCAPED = "\x1b[2J\x1b]0;owned\x07"
MARKUP = "[red]x[/red] [link=https://evil.example]here[/link]"
TAINTED_QUERY = f"What is the uptime {ESCAPED}SLA for the Dublin region on the enterprise plan?"


TAINTED = [
    ctx_input(
        "t1",
        "t1_2",
        messages=[
            {
                "role": "user",
                "content": f"Which EU regions support CMK? {ESCAPED} {MARKUP}",
                "ts": "2024-03-04T08:00:00Z",
            },
            {
                "role": "assistant\x9b",
                "content": "Frankfurt and Dublin. [bold]b[/bold]",
                "ts": "2024-03-04T08:00:20Z",
            },
        ],
    ),
    rewrite(
        "t1",
        "t1_2",
        query=TAINTED_QUERY,
        resolved=[{"surface": "the second one", "antecedent": "Dublin", "turn": 2}],
        model=f"m{ESCAPED}[red]1[/red]",
    ),
    {
        "event": "retrieve",
        "request_id": "t1_2",
        "hits": [{"rank": 1, "doc_id": f"[red]d{ESCAPED}", "title": MARKUP}],
    },
    {"event": "answer", "request_id": "t1_2", "text": f"Dublin: 99.9% {ESCAPED}{MARKUP}"},
]


def _assert_safe(output: str) -> None:
    assert "\x1b" not in output and "\x07" not in output and "\x9b" not in output
    assert "\\u001b[2J\\u001b]0;owned\\u0007" in output
    assert "[red]x[/red] [link=https://evil.example]here[/link]" in output  # shown as typed
    assert "[bold]b[/bold]" in output and "assistant\\u009b" in output


def test_show_prints_control_characters_escaped_and_markup_as_typed(cli_db: str) -> None:
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        ingest_checked(s, *TAINTED)
        s.commit()
    engine.dispose()
    result = runner.invoke(app, ["--database-url", cli_db, "show", "t1_2"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    _assert_safe(result.stdout)
    assert (
        f"[red]d{visible(ESCAPED)}" in result.stdout and f"m{visible(ESCAPED)}[red]1[/red]" in result.stdout
    )


def test_review_prints_control_characters_escaped_and_markup_as_typed(cli_db: str) -> None:
    from monitor.checks import current_versions

    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        ingest_checked(s, *TAINTED)
        enqueue_days(
            session=s, days=[date(2024, 3, 4)], checks=current_versions(), settings=Settings().queue, now=NOW
        )  # type: ignore[call-arg]
        s.commit()
    engine.dispose()
    result = runner.invoke(
        app, ["--database-url", cli_db, "review", "--reviewer", "rita"], input="q\n", env={"COLUMNS": "400"}
    )
    assert result.exit_code == 0, result.output
    assert "t1_2" in result.stdout
    # each rewrite finding says what the verdicts taught of its step: none given yet, the prior
    assert "real, by the verdicts" in result.stdout
    assert "prior only (no" in result.stdout  # the column wraps the rest
    _assert_safe(result.stdout)


def test_the_flagged_word_stays_highlighted_after_an_escape_before_it(session: Session) -> None:
    from monitor.checks import current_versions

    ingest_checked(session, *TAINTED)
    view = get_record_view(session=session, request_id="t1_2")
    findings = list_findings(session=session, checks=current_versions(), request_id="t1_2")
    assert view is not None and any(f.kind == "added_content_word" for f in findings)
    body = _rewrite(view, findings).renderable
    marked = [body.plain[s.start : s.end] for s in body.spans if str(s.style) == "bold white on red"]
    # the escape before "SLA" made the shown query longer: the span still marks the flagged word
    assert "enterprise" in marked and body.plain.count("\\u001b") == 2


def test_quarantine_rows_and_table_escape_control_characters_and_keep_markup_literal(
    session: Session,
) -> None:
    raw = f'{{"event": "rewrite", "query": "{ESCAPED} {MARKUP}"}}\n'.encode()  # a raw ESC: invalid JSON
    ingest_bytes(session, raw, origin="esc.log")
    rows, _counts = list_quarantine(session=session, origin="esc.log", with_excerpt=True)
    assert [r.reason for r in rows] == ["invalid_json"]
    assert "\x1b" not in rows[0].excerpt and visible(ESCAPED) in rows[0].excerpt  # type: ignore[operator]
    console = Console(width=400, record=True, force_terminal=False)
    console.print(quarantine_table(rows, excerpt=True))
    text = console.export_text()
    assert "\x1b" not in text and MARKUP[:12] in text
    forged = QuarantineRow(
        "a[bold]\x1b.log", 1, "wrong_type", "[red]d\x9b", "[link=x]e[/link]", datetime(2024, 1, 1)
    )
    console.print(quarantine_table([forged], excerpt=True))
    text = console.export_text()
    assert "a[bold]\\u001b.log" in text and "[red]d\\u009b" in text and "[link=x]e[/link]" in text


# -- 3. paths that are not regular files ------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_a_named_pipe_is_refused_before_it_is_opened(cli_db: str, tmp_path: Path) -> None:
    fifo = tmp_path / "logs.fifo"
    os.mkfifo(fifo)  # no writer: opening it would block, so the refusal must come first
    with pytest.raises(IngestError, match=r"logs\.fifo: not a regular file or directory \(a pipe\)"):
        discover([fifo])
    result = runner.invoke(app, ["--database-url", cli_db, "ingest", str(fifo)])
    assert result.exit_code == 3
    assert "not a regular file or directory (a pipe): pipe it to `rewrite-monitor ingest -`" in result.stderr
    assert "no such file" not in result.stderr


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_a_device_is_refused_and_named() -> None:
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(
        IngestError, match=r"/dev/null: not a regular file or directory \(a character device\)"
    ):
        discover(["/dev/null"])


def test_missing_and_dangling_paths_still_say_no_such_file(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"nope\.jsonl: no such file or directory$"):
        discover([tmp_path / "nope.jsonl"])
    link = tmp_path / "dangling.jsonl"
    link.symlink_to(tmp_path / "gone.jsonl")
    with pytest.raises(
        IngestError, match=r"no such file or directory \(a symbolic link to a missing target\)"
    ):
        discover([link])
    real = tmp_path / "real.jsonl"
    real.write_bytes(log(rewrite()))
    (tmp_path / "via.jsonl").symlink_to(real)
    assert [s.origin for s in discover([tmp_path / "via.jsonl", "-"])] == [str(real.resolve()), "-"]


def test_findings_queue_and_stats_escape_logged_text(cli_db: str) -> None:
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        ingest_checked(s, *TAINTED)
        s.commit()
    engine.dispose()
    outputs = {
        args[0]: runner.invoke(app, ["--database-url", cli_db, *args], env={"COLUMNS": "400"})
        for args in (["findings"], ["stats", "--by", "model"], ["queue", "--state", "all"])
    }
    for name, result in outputs.items():
        assert result.exit_code == 0, (name, result.output)
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\x9b" not in result.stdout
    # the model name is a group of `stats --by model`: escaped, its markup shown as typed
    assert f"m{visible(ESCAPED)}[red]1[/red]" in outputs["stats"].stdout
    assert "\\u001b" in outputs["findings"].stdout  # a finding quotes the tainted query's words
