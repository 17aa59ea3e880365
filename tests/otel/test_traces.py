"""OpenTelemetry traces as input (issue 17, part 1): each fixture shape in examples/otel gives the same
findings as the equivalent log format v1 events; spans over several lines and batches; what cannot be
mapped is quarantined by trace; re-ingest stores nothing twice."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from monitor.checks import current_versions
from monitor.checks.rules import load_rules
from monitor.checks.store import list_findings
from monitor.ingest.events import parse_line
from monitor.ingest.store.batches import ingest_bytes
from monitor.instrument import ctx_input_event, rewrite_event
from monitor.otel import mapping as otel_mapping
from monitor.otel import spans as otel_spans
from monitor.store.models import AddedLemma, CheckRun, Event, Finding, Quarantine, Record
from monitor.worker.jobs import check_job
from tests.helpers import REPO

FIXTURES = REPO / "examples" / "otel"
H_USER = "Which EU regions support customer-managed keys?"
H_ASSIST = "Frankfurt and Dublin support customer-managed keys (CMK)."
LATEST = "What's the uptime SLA on the second one?"
QUERY = "What is the uptime SLA for the Dublin region on the enterprise plan?"
HISTORY = [("user", H_USER), ("assistant", H_ASSIST)]


def equivalent(shape: str) -> list[dict[str, Any]]:
    """The log format v1 events the traces of fixture ``shape`` stand for, written by the producers'
    helper (no message times: a trace carries none)."""

    def pair(
        conv: str, req: str, turn: int, history: list[tuple[str, str]], latest: str, query: str, **kw: Any
    ):
        ctc = kw.pop("client_turn_count", None)
        return [
            ctx_input_event(
                conv_id=conv,
                request_id=req,
                turn=turn,
                messages=history,
                client_turn_count=ctc,
                ts="2024-03-04T08:00:00Z",
            ),
            rewrite_event(
                conv_id=conv,
                request_id=req,
                turn=turn,
                latest=latest,
                query=query,
                ts="2024-03-04T08:00:01Z",
                **kw,
            ),
        ]

    if shape == "genai_semconv":
        kw = {"model": "claude-sonnet-4-5-20250929", "prompt_version": "standalone-v2"}
        return pair(
            "conv-genai-1",
            "4bf92f3577b34da6a3ce929d0e0e4736",
            1,
            [],
            H_USER,
            "Which EU regions support customer-managed keys (CMK)?",
            client_turn_count=0,
            **kw,
        ) + pair(
            "conv-genai-1",
            "5cf92f3577b34da6a3ce929d0e0e4737",
            2,
            HISTORY,
            LATEST,
            QUERY,
            client_turn_count=2,
            **kw,
        )
    if shape == "openinference_langchain":
        return pair(
            "conv-langchain-1",
            "6df92f3577b34da6a3ce929d0e0e4738",
            2,
            HISTORY,
            LATEST,
            QUERY,
            model="claude-sonnet-4-5",
        )
    assert shape == "openinference_llamaindex"
    return pair(
        "conv-llamaindex-1",
        "7ef92f3577b34da6a3ce929d0e0e4739",
        2,
        HISTORY,
        LATEST,
        QUERY,
        model="gpt-4o-mini",
        prompt_version="condense-v1",
    )


def findings(session: Session) -> set[tuple[str, str, str, tuple[str, ...]]]:
    return {
        (f.request_id, f.kind, f.severity, tuple(f.words))
        for f in list_findings(session=session, checks=current_versions())
    }


def _strip_times(events: list[dict[str, Any]]) -> bytes:
    """The helper's events without the message times a trace cannot carry."""
    out = []
    for ev in events:
        ev = {k: v for k, v in ev.items() if k not in ("first_ts", "last_ts", "monotonic")}
        if "messages" in ev:
            ev["messages"] = [{"role": m["role"], "content": m["content"]} for m in ev["messages"]]
        out.append(json.dumps(ev) + "\n")
    return "".join(out).encode()


@pytest.mark.parametrize("shape", ["genai_semconv", "openinference_langchain", "openinference_llamaindex"])
def test_each_fixture_shape_gives_the_findings_of_its_log_events(shape: str, session: Session) -> None:
    data = (FIXTURES / f"{shape}.jsonl").read_bytes()
    summary = ingest_bytes(session, data, origin=f"{shape}.jsonl", batch_size=1)  # spans over batches
    session.commit()
    assert summary.rejected_total == 0
    check_job(session=session, rules=load_rules())
    from_traces = findings(session)
    assert from_traces, "the fixtures hold an invented plan tier"
    assert ("enterprise", "plan") in {f[3] for f in from_traces}
    for model in (Finding, CheckRun, AddedLemma, Record, Event):
        session.execute(delete(model))
    ingest_bytes(session, _strip_times(equivalent(shape)), origin="equivalent.jsonl")
    session.commit()
    check_job(session=session, rules=load_rules())
    assert findings(session) == from_traces


def test_a_trace_maps_to_events_with_its_ids_and_the_retrieval(session: Session) -> None:
    ingest_bytes(session, (FIXTURES / "openinference_langchain.jsonl").read_bytes(), origin="lc.jsonl")
    session.commit()
    kinds = dict(session.execute(select(Event.kind, func.count()).group_by(Event.kind)).all())
    assert kinds == {"span": 6, "ctx_input": 1, "rewrite": 1, "retrieve": 1}
    rec = session.scalars(select(Record)).one()
    assert (rec.conv_id, rec.request_id, rec.turn, rec.model) == (
        "conv-langchain-1",
        "6df92f3577b34da6a3ce929d0e0e4738",
        2,
        "claude-sonnet-4-5",
    )
    rewrite = session.scalars(select(Event).where(Event.kind == "rewrite")).one()
    # the rewrite span is the model call the retriever's query came from; the conversation was read from
    # the template variables the chain passed down
    assert rewrite.raw["otel"] == {
        "trace_id": "6df92f3577b34da6a3ce929d0e0e4738",
        "span_id": "10f067aa0ba90204",
        "read_from": "variables",
    }
    assert (rewrite.raw["latest"], rewrite.raw["query"]) == (LATEST, QUERY)
    assert rewrite.line_no == 2  # the root span's line: the trace was mapped when its root arrived
    hits = session.scalars(select(Event).where(Event.kind == "retrieve")).one().raw["hits"]
    assert hits == [
        {"rank": 1, "doc_id": "kb-cmk-regions", "score": 0.88},
        {"rank": 2, "doc_id": "kb-sla-tiers", "score": 0.71},
    ]
    # the same file again stores nothing twice and maps nothing again
    again = ingest_bytes(
        session, (FIXTURES / "openinference_langchain.jsonl").read_bytes(), origin="lc.jsonl"
    )
    assert (again.stored, again.already_stored, again.rejected_total) == (0, 6, 0)


def _span(
    trace: str, span: str, parent: str | None, name: str, attrs: dict[str, Any], start: int = 1
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": span,
        "name": name,
        "startTimeUnixNano": str(1709539200_000_000_000 + start),
        "endTimeUnixNano": str(1709539200_000_000_000 + start + 1000),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }
    if parent:
        out["parentSpanId"] = parent
    return out


def _line(*spans: dict[str, Any]) -> bytes:
    return (
        json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]}) + "\n"
    ).encode()


T1, T2, T3 = "a" * 31 + "1", "a" * 31 + "2", "a" * 31 + "3"
ROOT, CHILD, OTHER = "b" * 15 + "1", "b" * 15 + "2", "b" * 15 + "3"
GENAI_CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": LATEST}]}]),
    "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": QUERY}]}]
    ),
}


def test_traces_that_cannot_be_mapped_are_quarantined_by_trace(session: Session) -> None:
    """A trace that holds no rewrite is counted as skipped, not quarantined (issue 33, part 3); one with
    two marked rewrites, or a rewrite without its text, is quarantined naming the trace."""
    data = (
        # nothing marks or shows a rewrite: skipped
        _line(_span(T1, ROOT, None, "GET /health", {}))
        # two spans marked as the rewrite
        + _line(
            _span(T2, CHILD, ROOT, "a", {**GENAI_CHAT, "rewrite_monitor.step": "rewrite"}),
            _span(T2, OTHER, ROOT, "b", {**GENAI_CHAT, "rewrite_monitor.step": "rewrite"}),
            _span(T2, ROOT, None, "POST /chat", {}),
        )
        # the rewrite span without message content (capture off)
        + _line(
            _span(
                T3, CHILD, ROOT, "chat", {"gen_ai.operation.name": "chat", "rewrite_monitor.step": "rewrite"}
            ),
            _span(T3, ROOT, None, "POST /chat", {}),
        )
    )
    summary = ingest_bytes(session, data, origin="bad.jsonl")
    session.commit()
    assert summary.stored_by_kind == {"span": 6}
    rows = {r.reason: (r.line_no, r.detail) for r in session.scalars(select(Quarantine))}
    assert rows["ambiguous_rewrite_span"] == (
        2,
        f"trace {T2}: 2 spans match rewrite_monitor.step = rewrite ('a', 'b')",
    )
    assert rows["content_not_captured"][0] == 3
    assert rows["content_not_captured"][1].startswith(f"trace {T3}: the rewrite span 'chat' carries no text")
    assert summary.rejected == {"ambiguous_rewrite_span": 1, "content_not_captured": 1}
    assert summary.skipped == {"not_a_rewrite_trace": 1}
    assert summary.as_dict()["skipped"] == {"not_a_rewrite_trace": 1}


def test_a_rewrite_span_after_its_root_maps_the_trace_then(session: Session) -> None:
    """Across a rotation a trace's root can be read before its last child: the root alone is counted as
    not a rewrite, and the child completes the trace when it arrives: mapped then. A span after that
    changes nothing."""
    chat = {**GENAI_CHAT, "rewrite_monitor.step": "rewrite", "gen_ai.conversation.id": "conv-late"}
    first = ingest_bytes(session, _line(_span(T1, ROOT, None, "POST /chat", {})), origin="traces.jsonl.1")
    assert (first.rejected, first.skipped) == ({}, {"not_a_rewrite_trace": 1})
    later = ingest_bytes(session, _line(_span(T1, CHILD, ROOT, "chat", chat)), origin="traces.jsonl")
    session.commit()
    assert later.stored_by_kind == {"span": 1, "ctx_input": 1, "rewrite": 1}
    assert later.joined == 1
    assert session.scalars(select(Quarantine)).all() == []
    late = ingest_bytes(
        session, _line(_span(T1, OTHER, ROOT, "other", {})), origin="traces.jsonl", batch_size=5
    )
    assert late.stored_by_kind == {"span": 1}
    rec = session.scalars(select(Record)).one()
    assert (rec.conv_id, rec.request_id) == ("conv-late", T1)


def test_a_malformed_span_is_refused_naming_its_path_and_its_line_kept(session: Session) -> None:
    """Only the bad span of a line is quarantined: the trace's other spans are stored and mapped."""
    chat = {**GENAI_CHAT, "rewrite_monitor.step": "rewrite"}
    good = json.loads(_line(_span(T1, CHILD, ROOT, "chat", chat), _span(T1, ROOT, None, "POST /chat", {})))
    good["resourceSpans"][0]["scopeSpans"][0]["spans"].insert(1, {"traceId": "xyz", "spanId": ROOT})
    got = parse_line(json.dumps(good))
    assert [e.kind for e in got.spans] == ["span", "span"]  # type: ignore[union-attr]
    assert [(e.reason, e.detail) for e in got.errors] == [  # type: ignore[union-attr]
        (
            "wrong_type",
            "resourceSpans[0].scopeSpans[0].spans[1].traceId: expected 32 hex digits, not all zero",
        )
    ]
    summary = ingest_bytes(session, (json.dumps(good) + "\n").encode(), origin="mixed.jsonl")
    assert summary.stored_by_kind == {"span": 2, "ctx_input": 1, "rewrite": 1}
    assert summary.rejected == {"wrong_type": 1}
    unreadable = parse_line(json.dumps({"resourceSpans": [{"scopeSpans": {"spans": []}}]}))
    assert (unreadable.reason, unreadable.detail) == (  # type: ignore[union-attr]
        "wrong_type",
        "resourceSpans[0].scopeSpans: expected a list",
    )


def test_an_entry_span_whose_parent_is_in_another_service_is_the_root(session: Session) -> None:
    """A gateway passed the trace on (``traceparent``): this service's SERVER span has a parent that
    never reaches this store, and the trace maps when that span arrives."""
    chat = {**GENAI_CHAT, "rewrite_monitor.step": "rewrite"}
    entry = {**_span(T1, ROOT, "f" * 16, "POST /chat", {}), "kind": 2}
    summary = ingest_bytes(
        session, _line(_span(T1, CHILD, ROOT, "chat", chat)) + _line(entry), origin="gw.jsonl"
    )
    assert summary.stored_by_kind == {"span": 2, "ctx_input": 1, "rewrite": 1}
    # an internal span with a foreign parent is no root: the trace waits for its own
    waiting = {**_span(T2, OTHER, "f" * 16, "handler", chat), "kind": 1}
    assert ingest_bytes(session, _line(waiting), origin="gw.jsonl").stored_by_kind == {"span": 1}


def test_a_request_id_another_trace_holds_is_a_duplicate(session: Session) -> None:
    """Two traces naming one request (a retry that reused its id): the second is refused as a
    ``duplicate_event`` naming both, never dropped without a word."""
    chat = {
        **GENAI_CHAT,
        "rewrite_monitor.step": "rewrite",
        "rewrite_monitor.request_id": "req-x",
        "gen_ai.conversation.id": "conv-x",
    }
    first = _line(_span(T1, CHILD, ROOT, "chat", chat), _span(T1, ROOT, None, "POST /chat", {}))
    ingest_bytes(session, first, origin="a.jsonl")
    second = _line(_span(T2, CHILD, ROOT, "chat", chat), _span(T2, ROOT, None, "POST /chat", {}))
    summary = ingest_bytes(session, second, origin="b.jsonl")
    assert summary.rejected == {"duplicate_event": 1}
    row = session.scalars(select(Quarantine).where(Quarantine.origin == "b.jsonl")).one()
    assert row.detail == f"trace {T2}: ctx_input 'req-x' is already stored from another trace (a.jsonl:1)"


def test_the_rewrite_span_rules_in_order() -> None:
    def spans(*raw: dict[str, Any]) -> list[dict[str, Any]]:
        return otel_spans.spans_of(json.loads(_line(*raw)))

    llm = {**GENAI_CHAT}
    retriever = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": QUERY}
    # the LLM span whose output the next retriever span searched for
    got, how = otel_mapping.rewrite_span(
        spans(
            _span(T1, ROOT, None, "root", {}),
            _span(T1, CHILD, ROOT, "llm", llm, start=5),
            _span(T1, OTHER, ROOT, "search", retriever, start=9),
        )
    )
    assert (got["name"], how) == ("llm", "retriever_input")
    # a name pattern wins over that; a configured pattern replaces the defaults
    named = spans(_span(T1, ROOT, None, "condense", {}), _span(T1, CHILD, ROOT, "llm", llm, start=5))
    rules = otel_mapping.MappingRules(span_names=("cond*",))
    assert otel_mapping.rewrite_span(named, rules)[0]["name"] == "condense"
    with pytest.raises(otel_mapping.TraceError, match="no span marked"):
        otel_mapping.rewrite_span(spans(_span(T1, ROOT, None, "root", {})))


def test_any_value_decodes_every_otlp_json_type() -> None:
    assert otel_spans.any_value({"intValue": "42"}) == 42
    assert otel_spans.any_value({"doubleValue": 0.5}) == 0.5
    assert otel_spans.any_value({"boolValue": True}) is True
    assert otel_spans.any_value({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": 1}]}}) == [
        "a",
        1,
    ]
    assert otel_spans.any_value(
        {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}
    ) == {"k": "v"}
    assert otel_spans.any_value({"bytesValue": "AQI="}) == "0102"
    assert otel_spans.any_value({}) is None


def test_redact_at_ingest_redacts_span_text_and_keeps_the_digest_true(session: Session) -> None:
    from monitor.instrument import digest

    history = [
        ("user", "Mail me at jane.doe@example.com about CMK regions."),
        ("assistant", "Frankfurt and Dublin."),
    ]
    messages = [{"role": r, "parts": [{"type": "text", "content": c}]} for r, c in history]
    messages.append({"role": "user", "parts": [{"type": "text", "content": LATEST}]})
    attrs = {
        **GENAI_CHAT,
        "gen_ai.input.messages": json.dumps(messages),
        "rewrite_monitor.step": "rewrite",
        "rewrite_monitor.digest": digest(history),
        "gen_ai.conversation.id": "conv-r",
    }
    data = _line(_span(T1, CHILD, ROOT, "chat", attrs), _span(T1, ROOT, None, "POST /chat", {}))
    ingest_bytes(session, data, origin="r.jsonl", redact_key=b"k" * 16)
    session.commit()
    stored = json.dumps([e.raw for e in session.scalars(select(Event))])
    assert "jane.doe@example.com" not in stored
    assert "<EMAIL_" in stored
    check_job(session=session, rules=load_rules())
    kinds = {f.kind for f in list_findings(session=session, checks=current_versions())}
    assert "digest_mismatch" not in kinds
    ctx = session.scalars(select(Event).where(Event.kind == "ctx_input")).one()
    assert ctx.conv_id == "conv-r"  # an id is never redacted


def test_a_fixture_file_is_one_traces_data_per_line() -> None:
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            obj = json.loads(line)
            assert otel_spans.is_traces(obj) and otel_spans.spans_of(obj), path.name


def test_examples_otel_shapes_are_the_three_named() -> None:
    assert sorted(p.stem for p in FIXTURES.glob("*.jsonl")) == [
        "genai_semconv",
        "openinference_langchain",
        "openinference_llamaindex",
    ]


def test_a_span_that_is_its_own_parent_is_refused_and_the_trace_still_maps(session: Session) -> None:
    """Issue 38: a rewrite span whose parentSpanId is its own spanId, its root in a later line, made the
    descendant walk grow without bound. The span is refused naming the field; the rest of the line is kept."""
    chat = {**GENAI_CHAT, "rewrite_monitor.step": "rewrite"}
    own = _span(T1, CHILD, CHILD, "chat", chat)
    got = parse_line(_line(own).decode())
    assert [(e.reason, e.detail) for e in got.errors] == [  # type: ignore[union-attr]
        (
            "wrong_type",
            "resourceSpans[0].scopeSpans[0].spans[0].parentSpanId: the span's own spanId (a span cannot be "
            "its own parent)",
        )
    ]
    summary = ingest_bytes(
        session, _line(own) + _line(_span(T1, ROOT, None, "POST /chat", {})), origin="t.jsonl"
    )
    assert (summary.rejected, summary.skipped) == ({"wrong_type": 1}, {"not_a_rewrite_trace": 1})
    assert summary.stored_by_kind == {"span": 1}


def test_a_cycle_of_parent_links_ends_the_descendant_walk() -> None:
    """Two spans each the other's parent: the walk ends, each descendant once, the span itself not among
    them."""
    a = otel_spans.spans_of(json.loads(_line(_span(T1, CHILD, OTHER, "a", {}, start=2))))[0]
    b = otel_spans.spans_of(json.loads(_line(_span(T1, OTHER, CHILD, "b", {}, start=3))))[0]
    assert [s["name"] for s in otel_mapping._children([a, b], CHILD)] == ["b"]


@pytest.mark.parametrize("field", ["startTimeUnixNano", "endTimeUnixNano"])
def test_a_span_time_after_year_9999_is_quarantined_not_a_crash(field: str, session: Session) -> None:
    """Issue 38: a span time at or after year 10000 crashed ``ingest`` (``datetime`` has no such year);
    it is a malformed field now, quarantined like a JSONL ``ts`` out of range, and the next line is read."""
    bad = _span(T1, ROOT, None, "POST /chat", {})
    bad[field] = str(253_402_300_800 * 10**9)  # 10000-01-01T00:00:00Z
    assert otel_spans._nanos(str(otel_spans.MAX_UNIX_NANO)) == otel_spans.MAX_UNIX_NANO
    assert otel_spans._nanos(str(otel_spans.MAX_UNIX_NANO + 1)) is None
    # the last nanoseconds of year 9999 are a time, not a crash (a float division rounded them up)
    assert otel_spans.span_time(otel_spans.MAX_UNIX_NANO - 1000) == "9999-12-31T23:59:59.999Z"
    assert otel_spans.span_time(1709539200_000_000_000) == "2024-03-04T08:00:00.000Z"
    chat = {**GENAI_CHAT, "rewrite_monitor.step": "rewrite"}
    good = _line(_span(T2, CHILD, ROOT, "chat", chat), _span(T2, ROOT, None, "POST /chat", {}))
    summary = ingest_bytes(session, _line(bad) + good, origin="far.jsonl")
    assert summary.rejected == {"wrong_type": 1}
    assert summary.stored_by_kind == {"span": 2, "ctx_input": 1, "rewrite": 1}
    row = session.scalars(select(Quarantine)).one()
    assert (row.line_no, row.detail) == (
        1,
        f"resourceSpans[0].scopeSpans[0].spans[0].{field}: expected a positive integer of year 9999 or "
        "before",
    )


def test_model_calls_without_message_text_are_counted_under_their_own_reason(session: Session) -> None:
    """A trace of GenAI instrumentation with content capture off holds model calls and no text: no rewrite
    can be told in it, and the count says why (``no_message_text``), not a quarantine row per trace."""
    bare = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}
    data = _line(_span(T1, ROOT, None, "chat gpt-4o-mini", bare)) + _line(
        _span(T2, ROOT, None, "GET /health", {})
    )
    summary = ingest_bytes(session, data, origin="nocontent.jsonl")
    assert dict(summary.skipped) == {"no_message_text": 1, "not_a_rewrite_trace": 1}
    assert summary.rejected_total == 0
