"""Ingest into a real store (SQLite and PostgreSQL): nothing good lost, nothing counted twice."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.errors import IngestError
from monitor.ingest.sources import discover
from monitor.ingest.store.batches import ingest_bytes, ingest_sources
from monitor.store.models import Event, Quarantine, Record
from tests.factories import ctx_input, line, log, rewrite


def quarantined(session: Session) -> list[tuple[int, str]]:
    """(line, reason) of the open quarantine rows."""
    return [
        tuple(r)
        for r in session.execute(
            select(Quarantine.line_no, Quarantine.reason)
            .where(Quarantine.resolved_at.is_(None))
            .order_by(Quarantine.line_no)
        )
    ]


def resolutions(session: Session) -> list[tuple[str, int, str, str | None]]:
    """(origin, line, reason, resolution) of every quarantine row."""
    return [
        tuple(r)
        for r in session.execute(
            select(Quarantine.origin, Quarantine.line_no, Quarantine.reason, Quarantine.resolution).order_by(
                Quarantine.origin, Quarantine.line_no
            )
        )
    ]


def count(session: Session, model: type) -> int:
    return session.scalar(select(func.count()).select_from(model))


def test_good_pair_is_stored_and_joined(session: Session) -> None:
    summary = ingest_bytes(session, log(ctx_input(), rewrite()))
    assert (summary.stored, summary.joined, summary.rejected_total) == (2, 1, 0)
    rec = session.scalars(select(Record)).one()
    assert (rec.conv_id, rec.request_id, rec.turn, rec.join_method) == ("c1", "c1_2", 2, "request_id")
    assert (rec.model, rec.prompt_version) == ("m1", "ctx-v1")
    assert rec.ctx_event_id is not None and rec.rewrite_event_id is not None


def test_every_bad_input_kind_is_quarantined_and_the_batch_goes_on(session: Session) -> None:
    missing = rewrite(req="c1_3", turn=3)
    del missing["latest"]
    conflicting = rewrite(query="a different rewrite")  # same key as line 2, other content
    data = b"".join(
        [
            line(ctx_input()),  # 1 stored
            line(rewrite()),  # 2 stored
            b'{"event": "rewrite", "conv_id": \n',  # 3 invalid_json
            b"[1, 2, 3]\n",  # 4 not_an_object
            line(missing),  # 5 missing_field
            line(rewrite(req="c1_4", turn="4")),  # 6 wrong_type
            b'{"event": "ctx_input", "conv_id": "\xff\xfe"}\n',  # 7 invalid_utf8
            b'{"event": "rewrite", "pad": "' + b"x" * 5000 + b'"}\n',  # 8 line_too_long (limit 4096)
            line({"event": "rerank", "request_id": "c1_2"}),  # 9 unknown_event
            line(conflicting),  # 10 duplicate_event (conflicts)
            line(rewrite()),  # 11 duplicate_event (identical, another line)
            b"   \n",  # 12 blank: skipped, not a reject
            line(ctx_input(req="c2_2", conv="c2")),  # 13 stored
            b'{"event": "rewrite", "conv_id": "c2"',  # 14 truncated_line: producer still writing
        ]
    )
    summary = ingest_bytes(session, data, origin="app.log", max_line_bytes=4096)
    assert summary.lines_read == 14
    assert summary.stored == 3
    assert summary.blank == 1
    assert summary.joined == 1
    assert dict(summary.rejected) == {
        "invalid_json": 1,
        "not_an_object": 1,
        "missing_field": 1,
        "wrong_type": 1,
        "invalid_utf8": 1,
        "line_too_long": 1,
        "unknown_event": 1,
        "duplicate_event": 2,
        "truncated_line": 1,
    }
    assert quarantined(session) == [
        (3, "invalid_json"),
        (4, "not_an_object"),
        (5, "missing_field"),
        (6, "wrong_type"),
        (7, "invalid_utf8"),
        (8, "line_too_long"),
        (9, "unknown_event"),
        (10, "duplicate_event"),
        (11, "duplicate_event"),
        (14, "truncated_line"),
    ]
    details = {r.line_no: r.detail for r in session.execute(select(Quarantine.line_no, Quarantine.detail))}
    assert details[5] == "field 'latest' is required"
    assert details[6].startswith("field 'turn': Input should be a valid integer")
    assert details[8] == "line is 5031 bytes, over the 4096-byte limit"
    assert details[10] == "rewrite 'c1_2' conflicts with the event from app.log:2"
    assert details[11] == "rewrite 'c1_2' is identical to the event from app.log:2"
    # the stored rewrite is the first one, not the conflicting one
    raw = session.scalar(select(Event.raw).where(Event.kind == "rewrite"))
    assert raw["query"] == "What is the uptime SLA for the Dublin region?"
    excerpt = session.scalar(select(Quarantine.raw_excerpt).where(Quarantine.line_no == 8))
    assert len(excerpt) == 2000


def test_reingesting_the_same_file_adds_nothing(session: Session) -> None:
    data = log(ctx_input(), rewrite()) + b"not json\n"
    first = ingest_bytes(session, data, origin="a.log")
    second = ingest_bytes(session, data, origin="a.log")
    assert (first.stored, first.rejected_total) == (2, 1)
    assert (second.stored, second.already_stored, second.joined) == (0, 2, 0)
    assert (count(session, Event), count(session, Record), count(session, Quarantine)) == (2, 1, 1)


def test_completed_truncated_line_is_stored_and_leaves_quarantine(session: Session) -> None:
    whole = line(rewrite())
    ingest_bytes(session, line(ctx_input()) + whole[:40], origin="live.log")
    assert quarantined(session) == [(2, "truncated_line")]
    summary = ingest_bytes(session, line(ctx_input()) + whole, origin="live.log")
    assert (summary.stored, summary.already_stored, summary.joined) == (1, 1, 1)
    assert quarantined(session) == []
    assert resolutions(session) == [("live.log", 2, "truncated_line", "stored")]


def test_a_fixed_line_ingested_again_resolves_its_quarantine_row(session: Session) -> None:
    bad = log(ctx_input()) + b'{"event": "rewrite", "conv_id": "c1"}\n' + b"not json\n"
    ingest_bytes(session, bad, origin="a.log")
    assert quarantined(session) == [(2, "missing_field"), (3, "invalid_json")]
    fixed = log(ctx_input(), rewrite()) + b"not json\n"
    summary = ingest_bytes(session, fixed, origin="a.log")
    assert (summary.stored, summary.already_stored, summary.joined) == (1, 1, 1)
    # line 2 is stored now; line 3 is still the same bad line (its row is kept, not doubled)
    assert resolutions(session) == [
        ("a.log", 2, "missing_field", "stored"),
        ("a.log", 3, "invalid_json", None),
    ]


def test_stdin_line_numbers_alone_resolve_nothing(session: Session) -> None:
    """Two runs on standard input both start at line 1: a good line 1 of the second run says nothing
    about the bad line 1 of the first, but a truncated line completed later does match its start."""
    ingest_bytes(session, b"not json\n", origin="-")
    ingest_bytes(session, log(ctx_input()), origin="-")
    assert quarantined(session) == [(1, "invalid_json")]
    whole = line(rewrite())
    ingest_bytes(session, line(ctx_input(conv="c9", req="c9_2")) + whole[:40], origin="-")
    ingest_bytes(session, line(ctx_input(conv="c9", req="c9_2")) + whole, origin="-")
    assert resolutions(session) == [("-", 1, "invalid_json", None), ("-", 2, "truncated_line", "stored")]


def test_resolve_and_clear(session: Session) -> None:
    from datetime import UTC, datetime, timedelta

    from monitor.ingest.store.quarantine import clear_resolved, list_quarantine, resolve

    ingest_bytes(session, b"not json\n" + b"[1]\n" + b"{}\n", origin="a.log")
    ingest_bytes(session, b"not json\n", origin="b.log")
    t = datetime(2026, 12, 1, tzinfo=UTC)
    assert resolve(session=session, now=t, reason="invalid_json", origin="a.log") == 1
    assert resolve(session=session, now=t, reason="invalid_json", origin="a.log") == 0  # idempotent
    rows, counts = list_quarantine(session=session)
    assert sorted((r.origin, r.line_no) for r in rows) == [("a.log", 2), ("a.log", 3), ("b.log", 1)]
    assert counts == {"invalid_json": 1, "missing_field": 1, "not_an_object": 1}
    assert [r.resolution for r in list_quarantine(session=session, include_resolved=True)[0]].count(
        "dismissed"
    ) == 1
    assert clear_resolved(session=session, before=t - timedelta(days=1)) == 0  # resolved too recently
    assert clear_resolved(session=session) == 1
    assert resolutions(session) == [
        ("a.log", 2, "not_an_object", None),
        ("a.log", 3, "missing_field", None),
        ("b.log", 1, "invalid_json", None),
    ]


def test_last_line_without_newline_that_is_complete_json_is_stored(session: Session) -> None:
    summary = ingest_bytes(session, line(ctx_input()) + line(rewrite()).rstrip(b"\n"))
    assert (summary.stored, summary.rejected_total) == (2, 0)


def test_rewrite_before_ctx_input_in_another_run_still_joins(session: Session) -> None:
    first = ingest_bytes(session, log(rewrite()), origin="b.log")
    assert (first.joined, first.unjoined_rewrites, first.unjoined_ctx) == (0, 1, 0)
    second = ingest_bytes(session, log(ctx_input()), origin="a.log")
    assert (second.joined, second.unjoined_rewrites, second.unjoined_ctx) == (1, 0, 0)
    assert count(session, Record) == 1


def test_join_falls_back_to_conversation_and_turn(session: Session) -> None:
    # The ctx_input was logged by another service under its own request id.
    summary = ingest_bytes(session, log(ctx_input(req="gw-77"), rewrite(req="c1_2")))
    rec = session.scalars(select(Record)).one()
    assert (summary.joined, rec.join_method, rec.request_id) == (1, "turn", "c1_2")


def test_request_id_match_wins_over_turn_match(session: Session) -> None:
    data = log(ctx_input(req="x", turn=2), ctx_input(req="c1_2", turn=2), rewrite(req="c1_2", turn=2))
    ingest_bytes(session, data)
    joined = session.scalars(select(Record).where(Record.join_method.is_not(None))).one()
    ctx_req = session.scalar(select(Event.request_id).where(Event.id == joined.ctx_event_id))
    assert (joined.join_method, ctx_req) == ("request_id", "c1_2")


def test_retrieve_and_answer_events_are_stored(session: Session) -> None:
    retrieve = {
        "event": "retrieve",
        "request_id": "c1_2",
        "hits": [{"rank": 1, "doc_id": "d9", "score": 0.7}],
    }
    answer = {"event": "answer", "request_id": "c1_2", "text": "99.99%", "citations": ["d9"]}
    summary = ingest_bytes(session, log(ctx_input(), rewrite(), retrieve, answer))
    assert dict(summary.stored_by_kind) == {"answer": 1, "ctx_input": 1, "retrieve": 1, "rewrite": 1}


def test_small_batches_give_the_same_result(session: Session) -> None:
    events = [
        e for t in range(2, 9) for e in (rewrite(req=f"c1_{t}", turn=t), ctx_input(req=f"c1_{t}", turn=t))
    ]
    summary = ingest_bytes(session, log(*events), batch_size=3)
    assert (summary.stored, summary.joined, summary.unjoined_ctx, summary.unjoined_rewrites) == (14, 7, 0, 0)


def test_files_gzip_and_directories_in_stable_order(session: Session, tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "2.jsonl.gz").write_bytes(gzip.compress(log(rewrite())))
    (tmp_path / "a.jsonl").write_bytes(log(ctx_input()))
    (tmp_path / "notes.txt").write_text("not a log")
    (tmp_path / ".hidden.jsonl").write_text("{}")
    sources = discover([tmp_path])
    assert [Path(s.origin).relative_to(tmp_path).as_posix() for s in sources] == ["a.jsonl", "b/2.jsonl.gz"]
    summary = ingest_sources(session, sources)
    assert (summary.stored, summary.joined, summary.source_errors) == (2, 1, [])


def test_a_directory_walk_reads_rotated_generations_and_json_and_counts_what_it_skips(tmp_path: Path) -> None:
    logs = [
        "app.jsonl",
        "app.jsonl.1",
        "app.jsonl.2.gz",
        "app.jsonl-20240304",
        "app.log.2024-03-04_10",
        "export.json",
    ]
    for n in [*logs, "notes.txt", "README.md", "app.jsonl.bak"]:
        (tmp_path / n).write_text("")
    skipped: list[Path] = []
    assert [Path(s.origin).name for s in discover([tmp_path], skipped=skipped)] == sorted(logs)
    assert sorted(f.name for f in skipped) == ["README.md", "app.jsonl.bak", "notes.txt"]
    assert [Path(s.origin).name for s in discover([tmp_path], globs=["*.txt", "*.bak"])] == [
        "app.jsonl.bak",
        "notes.txt",
    ]
    with pytest.raises(IngestError, match=r"directory holds no log files matching \*\.csv"):
        discover([tmp_path], globs=["*.csv"])


def test_ingest_says_how_many_files_of_a_directory_it_skipped(tmp_path: Path, cli_db: str) -> None:
    from typer.testing import CliRunner

    from monitor.cli.main import app

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "app.jsonl.1").write_bytes(log(ctx_input(), rewrite()))
    (tmp_path / "logs" / "README.md").write_text("how the logs are kept")
    result = CliRunner().invoke(app, ["--database-url", cli_db, "ingest", str(tmp_path / "logs"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["stored"] == 2
    assert (
        "skipped 1 file in the given directories whose names are not log names (README.md)" in result.stderr
    )


def test_corrupt_gzip_keeps_earlier_sources_and_reports_the_error(session: Session, tmp_path: Path) -> None:
    good = tmp_path / "a.jsonl"
    good.write_bytes(log(ctx_input(), rewrite()))
    bad = tmp_path / "b.jsonl.gz"
    # 40 events whose queries are hashes (so the stream does not compress to nothing), cut at half:
    # gzip decodes 11 whole lines before the cut (counted by reading the same bytes with GzipFile).
    events = [
        e
        for t in range(3, 23)
        for e in (
            ctx_input(req=f"c1_{t}", turn=t),
            rewrite(req=f"c1_{t}", turn=t, query=hashlib.sha256(str(t).encode()).hexdigest()),
        )
    ]
    whole = gzip.compress(log(*events), mtime=0)
    bad.write_bytes(whole[: len(whole) // 2])
    summary = ingest_sources(session, discover([good, bad]))
    assert (summary.stored, summary.lines_read, summary.rejected_total) == (2 + 11, 2 + 11, 0)
    assert [o for o, _ in summary.source_errors] == [str(bad.resolve())]
    assert summary.source_errors[0][1] == (
        "read failed part-way, after line 11: the compressed stream ends early (cut or still being written)"
    )


def test_giant_line_over_one_mebibyte_is_quarantined(session: Session) -> None:
    big = json.dumps(rewrite(query="q" * (1 << 20))).encode() + b"\n"
    summary = ingest_bytes(session, big + log(ctx_input(), rewrite(req="c1_9", turn=9)))
    assert dict(summary.rejected) == {"line_too_long": 1}
    assert summary.stored == 2


def test_unstorable_lines_are_quarantined_and_the_rest_stored(session: Session) -> None:
    # Regression: on PostgreSQL a NUL in a string failed the whole batch, and a lone surrogate stored on
    # SQLite made every later check crash in the tokenizer.
    data = log(
        ctx_input(),
        rewrite(query="a\u0000b"),
        rewrite(req="c1_3", turn=3, latest="x\ud800y"),
        rewrite(req="c1_4", turn=10**30),
        rewrite(req="c1_5", turn=5),
    )
    summary = ingest_bytes(session, data)
    assert dict(summary.rejected) == {"unsupported_text": 2, "wrong_type": 1}
    assert summary.stored == 2
    assert quarantined(session) == [(2, "unsupported_text"), (3, "unsupported_text"), (4, "wrong_type")]


def test_a_line_edited_in_place_is_a_conflict_not_a_reingest(session: Session) -> None:
    ingest_bytes(session, log(ctx_input(), rewrite()), origin="a.log")
    summary = ingest_bytes(session, log(ctx_input(), rewrite(query="edited after the fact")), origin="a.log")
    assert (summary.already_stored, summary.stored, dict(summary.rejected)) == (1, 0, {"duplicate_event": 1})
    detail = session.scalar(select(Quarantine.detail))
    assert detail == "rewrite 'c1_2' conflicts with the event from a.log:2"


def test_a_poison_corpus_between_good_lines_stores_every_good_line(session: Session) -> None:
    """On PostgreSQL one NaN, one over-long model or one out-of-range time used to roll back the batch and
    stop ingest at that line for good; each is now one quarantined line and the good ones are stored."""
    good = [
        log(ctx_input(conv=f"g{i}", req=f"g{i}_2"), rewrite(conv=f"g{i}", req=f"g{i}_2")) for i in range(3)
    ]
    nan = json.dumps(rewrite(conv="p1", req="p1_2", latency_ms=float("nan"))).encode() + b"\n"
    long_model = line(rewrite(conv="p2", req="p2_2", model="m" * 300))
    old = line(rewrite(conv="p3", req="p3_2", ts="0001-01-01T00:00:00+14:00"))
    data = b"\xef\xbb\xbf" + good[0] + nan + good[1] + long_model + old + good[2]
    summary = ingest_bytes(session, data, batch_size=2)
    assert (summary.stored, summary.joined) == (6, 3)
    assert dict(summary.rejected) == {"non_finite_number": 1, "wrong_type": 2}
    assert sorted(session.scalars(select(Quarantine.line_no))) == [3, 6, 7]


def _refuse_request(session: Session, request_id: str) -> None:
    """A trigger that makes the store itself refuse events of ``request_id``, with the value in the
    driver's message (what a constraint the validation does not know about looks like)."""
    from sqlalchemy import text

    if session.get_bind().dialect.name == "sqlite":
        session.execute(
            text(
                "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.request_id = :rid "
                "BEGIN SELECT RAISE(ABORT, 'refused secret-value'); END".replace(":rid", f"'{request_id}'")
            )
        )
    else:
        session.execute(
            text(
                "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                f"IF NEW.request_id = '{request_id}' THEN "
                "RAISE EXCEPTION 'refused %', NEW.raw; END IF; RETURN NEW; END $$ LANGUAGE plpgsql"
            )
        )
        session.execute(
            text("CREATE TRIGGER refuse BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse()")
        )
    session.commit()


def test_a_line_the_store_refuses_is_quarantined_and_the_rest_of_its_batch_stored(session: Session) -> None:
    """A batch write that fails is retried line by line: the refused line is quarantined as
    store_refused with the driver's error class (never its text, which quotes the row), the other lines
    of the same batch are stored and joined, and the counts are those of what was stored."""
    _refuse_request(session, "bad_2")
    data = (
        log(ctx_input(conv="a", req="a_2"), rewrite(conv="a", req="a_2"))
        + line(rewrite(conv="bad", req="bad_2", query="secret-value in the query"))
        + log(ctx_input(conv="b", req="b_2"), rewrite(conv="b", req="b_2"))
    )
    summary = ingest_bytes(session, data, batch_size=10)  # one batch holds all five lines
    assert (summary.stored, summary.joined, dict(summary.rejected)) == (4, 2, {"store_refused": 1})
    assert summary.stored_by_kind == {"ctx_input": 2, "rewrite": 2}
    (q,) = session.scalars(select(Quarantine))
    assert (q.line_no, q.reason) == (3, "store_refused")
    assert q.detail.startswith("the store refused the event (") and "secret" not in q.detail
    assert session.scalar(select(func.count()).select_from(Record)) == 2
    again = ingest_bytes(session, data, batch_size=10)  # idempotent: nothing new, nothing twice
    assert (
        again.stored,
        again.already_stored,
        session.scalar(select(func.count()).select_from(Quarantine)),
    ) == (
        0,
        4,
        1,
    )


def test_a_batch_is_committed_once_its_lines_hold_batch_bytes(session: Session) -> None:
    """Memory is bounded per batch: 10 lines of about 1,000 bytes with a 2,500-byte bound commit in
    batches of 3, 3, 3 and 1 lines, although the count bound (1,000) is never reached."""
    from monitor.ingest.sources import read_lines
    from monitor.ingest.store.batches import Ingestor, IngestSummary

    data = b"".join(
        line(ctx_input(conv=f"c{i}", req=f"c{i}_2", messages=[{"role": "user", "content": "x" * 800}]))
        for i in range(10)
    )
    sizes = {len(x) + 1 for x in data.splitlines()}
    assert all(900 < n < 1250 for n in sizes), sizes
    commits: list[int] = []
    summary = IngestSummary()
    ing = Ingestor(session, source_name="t", summary=summary, batch_size=1000, batch_bytes=2500)
    ing.run(
        "big.log",
        read_lines(io.BytesIO(data), 1 << 20),
        1 << 20,
        before_commit=lambda ln: commits.append(ln.line_no),
    )
    assert commits == [3, 6, 9, 10]
    assert summary.stored == 10


def test_quarantine_origin_takes_the_relative_path_ingest_was_given(
    tmp_path: Path, cli_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from monitor.cli.main import app

    monkeypatch.chdir(tmp_path)
    Path("bad.jsonl").write_bytes(b"not json\n")
    runner = CliRunner()
    assert runner.invoke(app, ["--database-url", cli_db, "ingest", "bad.jsonl"]).exit_code == 0
    listed = runner.invoke(app, ["--database-url", cli_db, "quarantine", "--origin", "bad.jsonl", "--json"])
    assert [json.loads(x)["origin"] for x in listed.stdout.splitlines()] == [str(tmp_path / "bad.jsonl")]
    done = runner.invoke(app, ["--database-url", cli_db, "quarantine", "resolve", "--origin", "bad.jsonl"])
    assert done.stdout == "dismissed 1 rejected line\n"


def test_redact_at_ingest_stores_no_personal_detail_and_keeps_the_request_checkable(session: Session) -> None:
    """With a redaction key, the transcript and the rewrite are stored with keyed placeholders: the
    e-mail address gets one placeholder in both events, the name introduced by "my name is" is
    replaced in its event, the digest is that of the stored messages, and the checks see the
    placeholder in the query as received (no added word, no digest mismatch)."""
    from monitor.checks import run_checks
    from monitor.checks.rules import load_rules
    from monitor.ingest.store.records import load_records

    key = b"a-test-key-of-32-characters-long"
    msgs = [
        {"role": "user", "content": "Hi, my name is Dana Reyes. Mail dana.reyes@example.com the plan."},
        {"role": "assistant", "content": "Sent the Frankfurt plan to dana.reyes@example.com."},
    ]
    data = log(
        ctx_input(messages=msgs),
        rewrite(latest="Was it sent?", query="Was the Frankfurt plan sent to dana.reyes@example.com?"),
    )
    summary = ingest_bytes(session, data, redact_key=key)
    assert (summary.stored, summary.joined) == (2, 1)
    raws = {e.kind: e.raw for e in session.scalars(select(Event))}
    stored_text = json.dumps(raws)
    assert "dana.reyes" not in stored_text and "Dana" not in stored_text and "Reyes" not in stored_text
    (email,) = set(re.findall(r"<EMAIL_[0-9a-f]{8}>", stored_text))
    assert raws["rewrite"]["query"] == f"Was the Frankfurt plan sent to {email}?"
    assert raws["ctx_input"]["messages"][0]["content"].startswith("Hi, my name is <NAME_")
    (record_id,) = session.scalars(select(Record.id))
    ((_, rec),) = load_records(session=session, record_ids=[record_id])
    out = run_checks(rec, load_rules())
    assert [f.kind for f in out.findings if f.kind in ("digest_mismatch", "added_content_word")] == []
    assert ingest_bytes(session, data, redact_key=key).already_stored == 2  # idempotent


def test_redact_at_ingest_needs_a_key_of_16_characters() -> None:
    from monitor.errors import ConfigError
    from monitor.settings import load_settings

    with pytest.raises(ConfigError, match="redact_at_ingest needs redact_key") as info:
        load_settings(redact_at_ingest=True, redact_key="short-secret")
    assert "short-secret" not in str(info.value)
    with pytest.raises(ConfigError, match="redact_at_ingest needs redact_key"):
        load_settings(redact_at_ingest=True, redact_key=" " * 20)


def test_redact_at_ingest_redacts_every_quarantine_excerpt_and_still_resolves_a_completed_line(
    session: Session,
) -> None:
    """A duplicate's excerpt, a malformed line's excerpt (names in compact JSON too) and a truncated
    last line's are stored redacted; the truncated line, once complete, is stored and its row resolved."""
    key = b"a-test-key-of-32-characters-long"
    ev = line(rewrite(conv="a", req="a_2", query="Mail zoe@example.com the plan"))
    ingest_bytes(session, ev, origin="one.jsonl", redact_key=key)
    ingest_bytes(session, ev, origin="two.jsonl", redact_key=key)  # the same event elsewhere: a duplicate
    bad = b'{"event":"rewrite","latest":"my name is Bob Jones, bob@corp.io"}\n'  # no request_id
    ingest_bytes(session, bad, origin="bad.jsonl", redact_key=key)
    whole = line(rewrite(conv="t", req="t_2", query="Call zoe@example.com"))
    cut = whole.index(b"zoe@example.com") + 20  # still being written, just past the address
    ingest_bytes(session, whole[:cut], origin="t.jsonl", redact_key=key)
    ingest_bytes(session, whole, origin="t.jsonl", redact_key=key)
    rows = {q.origin: q for q in session.scalars(select(Quarantine))}
    assert {o: q.reason for o, q in rows.items()} == {
        "two.jsonl": "duplicate_event",
        "bad.jsonl": "missing_field",
        "t.jsonl": "truncated_line",
    }
    excerpts = " ".join(q.raw_excerpt for q in rows.values())
    assert (
        "zoe@" not in excerpts
        and "bob@" not in excerpts
        and "Bob" not in excerpts
        and "Jones" not in excerpts
    )
    assert rows["t.jsonl"].resolution == "stored"


def test_standard_input_given_twice_is_refused(cli_db: str) -> None:
    """``ingest - -`` read the stream once and said it read it twice; now exit 2, before reading."""
    from typer.testing import CliRunner

    from monitor.cli.main import app

    result = CliRunner().invoke(app, ["--database-url", cli_db, "ingest", "-", "-"], input='{"x": 1}\n')
    assert result.exit_code == 2
    assert result.stderr == "error: - (standard input) is given more than once: it can be read only once\n"


def test_a_file_named_twice_is_read_once(tmp_path: Path) -> None:
    """``ingest f f`` (or ``f`` and its folder) read the file twice: nothing stored twice, but the
    summary counted its lines twice. The sources are the first place each file came, once."""
    from monitor.ingest.sources import discover

    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (logs / name).write_text("{}\n")
    got = discover([logs / "b.jsonl", logs, logs / "b.jsonl"])
    assert [Path(s.origin).name for s in got] == ["b.jsonl", "a.jsonl"]
