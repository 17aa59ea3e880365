"""The producers' helper (``monitor.instrument``): events it writes ingest with nothing quarantined and
raise no chat-state finding; a dropped assistant turn raises exactly the expected one; it imports
nothing outside the standard library."""

from __future__ import annotations

import io
import json
import logging
import re
import subprocess
import sys
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.checks.rules import load_rules
from monitor.ingest.store.batches import ingest_bytes
from monitor.instrument import ctx_input_event, digest, log_ctx_input, log_rewrite, rewrite_event
from monitor.record import Message, transcript_digest
from monitor.store.models import Finding, Quarantine
from monitor.worker.jobs import check_job
from tests.helpers import REPO

HISTORY = [
    {"role": "user", "content": "Which EU regions support CMK?", "ts": "2024-03-04T08:00:00Z"},
    {"role": "assistant", "content": "Frankfurt and Dublin.", "ts": "2024-03-04T08:00:20Z"},
]
CHAT_STATE = {
    "window_truncated",
    "missing_assistant_turns",
    "non_monotonic",
    "digest_mismatch",
    "roles_mismatch",
    "session_mismatch",
}


def _chat_state_findings(session: Session, buf: io.StringIO) -> set[str]:
    """Ingest what the helper logged into ``buf``, check it, and return the chat-state kinds found."""
    ingest_bytes(session, buf.getvalue().encode())
    session.commit()
    check_job(session=session, rules=load_rules(None))
    return set(session.scalars(select(Finding.kind))) & CHAT_STATE


def _logger() -> tuple[logging.Logger, io.StringIO]:
    buf = io.StringIO()
    log = logging.getLogger(f"test.instrument.{id(buf)}")
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    return log, buf


def test_the_fields_the_checks_compare_are_computed_from_the_messages() -> None:
    ev = ctx_input_event(
        conv_id="c1",
        request_id="r2",
        turn=2,
        messages=HISTORY,
        client_turn_count=2,
        ts=datetime(2024, 3, 4, 8, 1, 31, tzinfo=UTC),
    )
    # sha256("user:Which EU regions support CMK?assistant:Frankfurt and Dublin.")[:12], by hand
    import hashlib

    want = hashlib.sha256(b"user:Which EU regions support CMK?assistant:Frankfurt and Dublin.").hexdigest()[
        :12
    ]
    assert (ev["digest"], ev["n_messages"], ev["roles"]) == (want, 2, {"user": 1, "assistant": 1})
    assert (ev["first_ts"], ev["last_ts"], ev["monotonic"], ev["ts"]) == (
        "2024-03-04T08:00:00Z",
        "2024-03-04T08:00:20Z",
        True,
        "2024-03-04T08:01:31.000Z",
    )
    assert transcript_digest([Message("user", "a"), Message("assistant", "b")]) == digest(
        [("user", "a"), ("assistant", "b")]
    )
    back = ctx_input_event(
        conv_id="c1", request_id="r2", turn=2, messages=list(reversed(HISTORY)), client_turn_count=2
    )
    assert back["monotonic"] is False
    rw = rewrite_event(conv_id="c1", request_id="r2", turn=2, latest=" hi ", query="hi")
    assert rw["rewritten"] is False and rw["resolved"] == [] and "model" not in rw


def test_events_the_helper_logs_ingest_cleanly_and_raise_no_chat_state_finding(session: Session) -> None:
    log, buf = _logger()
    log_ctx_input(log, conv_id="c1", request_id="r2", turn=2, messages=HISTORY, client_turn_count=2)
    log_rewrite(
        log,
        conv_id="c1",
        request_id="r2",
        turn=2,
        latest="What's the uptime SLA on the second one?",
        query="What is the uptime SLA for the Dublin region?",
        resolved=[{"surface": "the second one", "antecedent": "Dublin", "turn": 2}],
        model="m1",
        prompt_version="v1",
    )
    lines = buf.getvalue().splitlines()
    assert [json.loads(x)["event"] for x in lines] == ["ctx_input", "rewrite"]
    summary = ingest_bytes(session, buf.getvalue().encode())
    session.commit()
    assert (summary.stored, summary.joined) == (2, 1)
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0
    check_job(session=session, rules=load_rules(None))
    kinds = set(session.scalars(select(Finding.kind)))
    assert not kinds & CHAT_STATE, kinds


def test_a_dropped_assistant_turn_raises_exactly_the_expected_finding(session: Session) -> None:
    """The client showed four messages; the rewriter got three, the second assistant reply missing."""
    log, buf = _logger()
    msgs = [
        ("user", "Which EU regions support CMK?"),
        ("assistant", "Frankfurt and Dublin."),
        ("user", "And in the US?"),
    ]
    log_ctx_input(log, conv_id="c2", request_id="r3", turn=3, messages=msgs, client_turn_count=3)
    log_rewrite(
        log,
        conv_id="c2",
        request_id="r3",
        turn=3,
        latest="What about its SLA?",
        query="What is the SLA of the US regions?",
    )
    assert _chat_state_findings(session, buf) == {"missing_assistant_turns"}


def test_importing_the_helper_loads_only_the_standard_library() -> None:
    code = (
        "import sys; import monitor.instrument; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'pydantic', 'sqlalchemy', 'spacy', 'typer', 'yaml', 'rich', 'sentry_sdk', 'anthropic'}); print(bad)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "[]"


def test_a_system_prompt_is_not_a_turn_and_text_blocks_are_text(session: Session) -> None:
    """Most rewriters receive a system message: left out, it raises no window or roles finding; content
    given as anthropic-style text blocks is logged as its text, not as a Python repr."""
    log, buf = _logger()
    msgs = [
        {"role": "system", "content": "Rewrite the last question as a standalone search query."},
        {"role": "user", "content": [{"type": "text", "text": "Which EU regions support CMK?"}]},
        {"role": "assistant", "content": "Frankfurt and Dublin."},
    ]
    ev = log_ctx_input(log, conv_id="c3", request_id="r4", turn=2, messages=msgs, client_turn_count=2)
    assert (ev["n_messages"], ev["roles"]) == (2, {"user": 1, "assistant": 1})
    assert ev["messages"][0]["content"] == "Which EU regions support CMK?"
    log_rewrite(
        log,
        conv_id="c3",
        request_id="r4",
        turn=2,
        latest="And the SLA of the second?",
        query="What is the SLA of Dublin?",
    )
    assert not _chat_state_findings(session, buf)


def test_what_ingest_would_refuse_is_refused_naming_the_field() -> None:
    import pytest

    base = {"conv_id": "c1", "request_id": "r1", "turn": 2, "client_turn_count": 2}
    for messages, field in [
        (["hello"], "messages[0]"),
        ([("user",)], "messages[0]"),
        ([{"role": "user", "content": None}], "messages[0].content"),
        ([{"role": "user", "content": "a\x00b"}], "messages[0].content"),
        ([{"role": "user", "content": "hi", "ts": "yesterday"}], "messages[0].ts"),
        ([{"role": "user", "content": "hi", "ts": "1960-01-01T00:00:00Z"}], "messages[0].ts"),
    ]:
        with pytest.raises(ValueError, match=rf"^{re.escape(field)}: "):
            ctx_input_event(messages=messages, **base)
    with pytest.raises(ValueError, match="^conv_id: "):
        ctx_input_event(**{**base, "conv_id": 5}, messages=[])
    rw = {"conv_id": "c1", "request_id": "r1", "turn": 2, "latest": "a", "query": "b"}
    with pytest.raises(ValueError, match="^dropped: "):
        rewrite_event(**rw, dropped="enterprise")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^latency_ms: "):
        rewrite_event(**rw, latency_ms=float("nan"))
    # epoch seconds and milliseconds are times, as log format v1 reads them
    assert rewrite_event(**rw, ts=1709539291)["ts"] == "2024-03-04T08:01:31.000Z"
    assert rewrite_event(**rw, ts=1709539291420)["ts"] == "2024-03-04T08:01:31.420Z"


def test_ingest_reads_the_producers_time_bounds() -> None:
    """One definition of log format v1's time bounds, for the helper and for ingest."""
    from monitor import instrument
    from monitor.ingest import events

    assert (instrument.TS_MIN, instrument.TS_MAX) == (events.TS_MIN, events.TS_MAX)


def test_otel_attributes_map_back_to_the_events_the_helper_logs(session: Session) -> None:
    """A span with ``otel_attributes`` (and its trace's root) ingests to the ``ctx_input`` and ``rewrite``
    that ``ctx_input_event`` and ``rewrite_event`` write, times aside, and raises no chat-state finding."""
    from monitor.instrument import otel_attributes
    from monitor.store.models import Event

    fields = {"conv_id": "c9", "request_id": "r9", "turn": 2}
    history = [(m["role"], m["content"]) for m in HISTORY]
    latest, query = "What's the uptime SLA on the second one?", "What is the uptime SLA for Dublin?"
    attrs = otel_attributes(
        **fields,
        messages=history,
        latest=latest,
        query=query,
        client_turn_count=2,
        model="claude-sonnet-4-5",
        prompt_version="rewrite-v3",
    )
    assert all(isinstance(v, str | int) for v in attrs.values())

    def value(v: str | int) -> dict[str, str]:
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}

    trace, root = "c" * 32, "d" * 16
    start = "1709539200000000000"
    spans = [
        {
            "traceId": trace,
            "spanId": "e" * 16,
            "parentSpanId": root,
            "name": "chat",
            "startTimeUnixNano": start,
            "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
        },
        {"traceId": trace, "spanId": root, "name": "POST /chat", "startTimeUnixNano": start},
    ]
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n"
    buf = io.StringIO(line)
    assert _chat_state_findings(session, buf) == set()
    assert session.scalar(select(func.count()).select_from(Quarantine)) == 0
    stored = {e.kind: e.raw for e in session.scalars(select(Event).where(Event.kind != "span"))}
    want_ctx = ctx_input_event(**fields, messages=history, client_turn_count=2)
    want_rw = rewrite_event(
        **fields, latest=latest, query=query, model="claude-sonnet-4-5", prompt_version="rewrite-v3"
    )
    skip = {"ts", "otel", "latency_ms", "resolved", "dropped"}
    assert {k: v for k, v in stored["ctx_input"].items() if k not in skip} == {
        k: v for k, v in want_ctx.items() if k not in skip
    }
    assert {k: v for k, v in stored["rewrite"].items() if k not in skip} == {
        k: v for k, v in want_rw.items() if k not in skip
    }
