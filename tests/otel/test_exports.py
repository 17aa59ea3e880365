"""Span exports that are not Collector JSON Lines (issue 33, part 4): Arize Phoenix span JSON, as an
array document (``.spans.json``), as JSON Lines, or as its REST listing, is read into the same records as
the OTLP file of the same trace; the OTLP protobuf file format and a broken document are refused whole,
naming the form, with nothing quarantined line by line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.ingest.store.batches import ingest_bytes
from monitor.otel.spans import is_phoenix_span, phoenix_traces, span_time, spans_of
from monitor.store.models import Event, Quarantine, Record
from tests.helpers import REPO

TRACE_FILE = REPO / "tests" / "data" / "traces" / "openinference_langchain_history_aware.otlp.jsonl"


def _nested(flat: dict[str, Any]) -> dict[str, Any]:
    """Dotted keys nested as Phoenix stores and exports them (numbered parts become list items)."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        node: Any = root
        parts = key.split(".")
        for part, after in zip(parts, parts[1:], strict=False):
            nxt: Any = [] if after.isdigit() else {}
            if isinstance(node, list):
                i = int(part)
                while len(node) <= i:
                    node.append(nxt)
                node = node[i]
            else:
                node = node.setdefault(part, nxt)
        if isinstance(node, list):
            node.append(value)
        else:
            node[parts[-1]] = value
    return root


def phoenix_spans() -> list[dict[str, Any]]:
    """The spans of TRACE_FILE in Phoenix's span JSON (``phoenix.trace.span_json_encoder``: name,
    context, span_kind, parent_id, ISO times, status, nested attributes, events)."""
    out = []
    for line in TRACE_FILE.read_text(encoding="utf-8").splitlines():
        for s in spans_of(json.loads(line)):
            attrs = dict(s["attributes"])
            kind = attrs.pop("openinference.span.kind", "UNKNOWN")
            out.append(
                {
                    "name": s["name"],
                    "context": {"trace_id": s["trace_id"], "span_id": s["span_id"]},
                    "span_kind": kind,
                    "parent_id": s["parent_span_id"],
                    "start_time": span_time(s["start_unix_nano"]).replace("Z", "+00:00"),
                    "end_time": span_time(s["end_unix_nano"]).replace("Z", "+00:00"),
                    "status_code": "OK",
                    "status_message": "",
                    "attributes": _nested(attrs),
                    "events": [],
                    "conversation": None,
                }
            )
    return out


def _rewrites(session: Session) -> list[tuple[str, int, str, str, int]]:
    rows = []
    for rec in session.scalars(select(Record).order_by(Record.conv_id, Record.turn)):
        rw = session.get(Event, rec.rewrite_event_id)
        ctx = session.get(Event, rec.ctx_event_id)
        assert rw is not None and ctx is not None
        rows.append((rec.conv_id, rec.turn, rw.raw["latest"], rw.raw["query"], len(ctx.raw["messages"])))
    return rows


@pytest.fixture
def from_otlp(session: Session) -> list[tuple[str, int, str, str, int]]:
    ingest_bytes(session, TRACE_FILE.read_bytes(), origin="traces.otlp.jsonl")
    got = _rewrites(session)
    session.rollback()
    for model in (Record, Event):
        session.execute(model.__table__.delete())
    session.commit()
    return got


@pytest.mark.parametrize("form", ["array", "jsonl", "rest"])
def test_a_phoenix_export_gives_the_records_of_the_same_otlp_trace(
    form: str, from_otlp: list[tuple[str, int, str, str, int]], session: Session
) -> None:
    spans = phoenix_spans()
    assert all(is_phoenix_span(s) for s in spans)
    data = {
        "array": json.dumps(spans, indent=2),  # one span over many lines, as a .spans.json file holds it
        "jsonl": "\n".join(json.dumps(s) for s in spans) + "\n",
        "rest": json.dumps({"data": spans, "next_cursor": None}, indent=2),
    }[form].encode()
    summary = ingest_bytes(session, data, origin=f"export.{form}")
    session.commit()
    assert (summary.rejected_total, summary.source_errors) == (0, [])
    assert summary.stored_by_kind["span"] == len(spans)
    assert len(from_otlp) == 3
    assert _rewrites(session) == from_otlp


def test_a_phoenix_span_with_a_bad_time_is_quarantined_naming_the_field(session: Session) -> None:
    (span, *_rest) = phoenix_spans()
    bad = {**span, "start_time": "yesterday"}
    with pytest.raises(ValueError, match="start_time: expected an ISO-8601 time"):
        phoenix_traces(bad)
    summary = ingest_bytes(session, (json.dumps(bad) + "\n").encode(), origin="bad.jsonl")
    assert summary.rejected == {"wrong_type": 1}
    row = session.scalars(select(Quarantine)).one()
    assert row.detail == "Phoenix span: start_time: expected an ISO-8601 time"


def test_the_otlp_protobuf_file_format_is_refused_whole_naming_it(session: Session) -> None:
    from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

    msg = TracesData()
    span = msg.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes(range(1, 17)), bytes(range(1, 9)), "chat"
    body = msg.SerializeToString()
    data = len(body).to_bytes(4, "big") + body  # the Collector file exporter's format: proto
    summary = ingest_bytes(session, data * 3, origin="traces.pb")
    assert summary.lines_read == 0 and summary.rejected_total == 0
    ((origin, error),) = summary.source_errors
    assert origin == "traces.pb"
    assert error.startswith("the OTLP protobuf file format (the Collector file exporter's format: proto)")
    assert "format: json" in error
    assert session.scalars(select(Quarantine)).all() == []


def test_a_broken_json_document_is_refused_whole_with_where_it_breaks(session: Session) -> None:
    summary = ingest_bytes(session, b'[\n  {"name": "a",\n  oops\n]\n', origin="export.spans.json")
    ((_origin, error),) = summary.source_errors
    assert error.startswith("a JSON document (a file that opens with '[' or a lone '{'), not JSON Lines")
    assert "at line 3, column 3" in error
    assert summary.rejected_total == 0


GOOD = (REPO / "tests" / "data" / "traces" / "genai_openai_condense.otlp.jsonl").read_bytes()


def test_a_json_lines_file_whose_first_line_is_an_array_keeps_its_other_lines(session: Session) -> None:
    """A complete array on the first line followed by more lines is JSON Lines: that line is refused alone."""
    summary = ingest_bytes(session, b"[1, 2]\n" + GOOD, origin="first.jsonl")
    assert summary.source_errors == []
    assert summary.rejected == {"not_an_object": 1}
    assert summary.stored_by_kind["rewrite"] == 3
    row = session.scalars(select(Quarantine)).one()
    assert row.detail == "a log line must be a JSON object, got an array"


@pytest.mark.parametrize("before", [b"  \n\n  ", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n"])
def test_a_document_after_blank_lines_or_a_byte_order_mark_is_still_a_document(
    before: bytes, session: Session
) -> None:
    spans = phoenix_spans()
    summary = ingest_bytes(session, before + json.dumps(spans, indent=2).encode(), origin="x.spans.json")
    assert (summary.rejected_total, summary.source_errors) == (0, [])
    assert summary.stored_by_kind["span"] == len(spans) and summary.stored_by_kind["rewrite"] == 3


def _varint(n: int) -> bytes:
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _length_prefixed_head(size: int) -> bytes:
    """The first bytes of an OTLP protobuf file whose first TracesData is ``size`` bytes long: the length,
    the tag of resource_spans, its varint length, the tag of scope_spans."""
    n = size - 1
    while len(_varint(n)) + n + 1 > size:
        n -= 1
    return size.to_bytes(4, "big") + b"\x0a" + _varint(n) + b"\x12" + b"\x00" * 32


@pytest.mark.parametrize(
    ("data", "start"),
    [
        # a length whose byte is a newline (10, 266), and one of 16 MiB and more
        (_length_prefixed_head(10), "the OTLP protobuf file format"),
        (_length_prefixed_head(266), "the OTLP protobuf file format"),
        (_length_prefixed_head((1 << 24) + 16), "the OTLP protobuf file format"),
        (gzip.compress(b'{"event": "rewrite"}\n'), "a gzip stream, not text"),
    ],
)
def test_binary_input_is_refused_whole(data: bytes, start: str, session: Session) -> None:
    """The OTLP protobuf file format (by its structure, whatever its length) and a gzip stream on
    standard input are refused by what they are, not read as lines of garbage."""
    summary = ingest_bytes(session, data, origin="-")
    ((_o, error),) = summary.source_errors
    assert error.startswith(start)
    assert summary.rejected_total == 0 and session.scalars(select(Quarantine)).all() == []


@pytest.mark.parametrize(
    "junk",
    [b"\x08", b"\x00\x00\x00\x00", b"\x1f\x8b", b"\x1f\x8b\x08", b"\x00\x00\x00\x0a", b"[", b"{", b"  [ {"],
)
def test_one_junk_first_line_costs_that_line_only(junk: bytes, session: Session) -> None:
    """A control character or a lone magic number at the start is no binary signature (gzip's signature
    then a newline reads as a defined flag byte, but what follows does not inflate), and a lone ``[`` or
    ``{`` ahead of JSON Lines opens no document: that line is quarantined and the good lines after it are
    stored (all found by the hypothesis ingest test)."""
    summary = ingest_bytes(session, junk + b"\n" + GOOD, origin="junk.jsonl")
    assert summary.source_errors == []
    assert summary.rejected_total == 1 and summary.stored_by_kind["rewrite"] == 3


def test_two_text_lines_shaped_like_a_protobuf_length_prefix_cost_those_lines_only(session: Session) -> None:
    """Found by the hypothesis ingest test: "0\\xe0\\xa0\\x80", "\\n", "0", "\\n" has a newline where the
    field tag and the ResourceSpans tag sit; its "length" (820 MB) is more than any TracesData holds."""
    summary = ingest_bytes(session, b"0\xe0\xa0\x80\n0\n" + GOOD, origin="junk.jsonl")
    assert summary.source_errors == []
    assert summary.rejected_total == 2 and summary.stored_by_kind["rewrite"] == 3


def test_a_lone_brace_then_json_lines_then_a_byte_that_is_not_utf8_keeps_the_good_lines(
    session: Session,
) -> None:
    """Found by the hypothesis ingest test: "{" first and a stray 0x80 last made the whole file one
    document that is not UTF-8, refused whole. The two bad lines are quarantined, the rest stored."""
    summary = ingest_bytes(session, b"{\n" + GOOD + b"\x80", origin="junk.jsonl")
    assert summary.source_errors == []
    assert summary.rejected_total == 2 and summary.stored_by_kind["rewrite"] == 3


def test_a_fixed_document_resolves_no_row_of_the_lines_it_once_had(session: Session) -> None:
    """Elements are numbered by place, not by line: storing element 3 resolves no row of file line 3."""
    spans = phoenix_spans()
    broken = b"{oops\n" * 5
    ingest_bytes(session, broken, origin="x.json")
    assert len(session.scalars(select(Quarantine).where(Quarantine.resolved_at.is_(None))).all()) == 5
    ingest_bytes(session, json.dumps(spans, indent=2).encode(), origin="x.json")
    assert len(session.scalars(select(Quarantine).where(Quarantine.resolved_at.is_(None))).all()) == 5


def test_the_worker_refuses_a_json_document_and_binary_whole(session: Session, tmp_path: Path) -> None:
    """The worker follows JSON Lines as they grow; a document (a span export) or a binary file is a
    source error each pass, naming the form, with no line quarantined."""
    from monitor.ingest.tail import Tailer, expand_sources

    (tmp_path / "x.spans.json").write_text(json.dumps(phoenix_spans(), indent=2), encoding="utf-8")
    (tmp_path / "t.json").write_bytes(_length_prefixed_head(266))
    (tmp_path / "good.jsonl").write_bytes(GOOD)
    report = Tailer(session, source_name="t", batch_size=50, max_line_bytes=1 << 20, sample_seed="s").run(
        expand_sources([str(tmp_path / "*")])
    )
    errors = {Path(o).name: e for o, e in report.ingest.source_errors}
    assert errors["x.spans.json"].startswith("a JSON document (it opens with '[' or a lone '{'")
    assert "rewrite-monitor ingest PATH" in errors["x.spans.json"]
    assert errors["t.json"].startswith("the OTLP protobuf file format")
    assert report.ingest.rejected_total == 0
    assert report.ingest.stored_by_kind["rewrite"] == 3


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ({"context": None}, "Phoenix span: context: expected an object with trace_id and span_id"),
        (
            {"context": {"trace_id": "xyz", "span_id": "0" * 15 + "1"}},
            "Phoenix span: context.trace_id: expected 32 hex digits, not all zero",
        ),
        ({"end_time": "1960-01-01T00:00:00Z"}, "Phoenix span: end_time: expected a time after 1970-01-01"),
    ],
)
def test_a_malformed_phoenix_span_is_refused_naming_its_own_field(
    change: dict[str, Any], detail: str, session: Session
) -> None:
    (span, *_rest) = phoenix_spans()
    summary = ingest_bytes(session, (json.dumps({**span, **change}) + "\n").encode(), origin="bad.jsonl")
    assert summary.rejected == {"wrong_type": 1}
    assert session.scalars(select(Quarantine)).one().detail == detail
