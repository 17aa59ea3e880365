"""Retention: old transcripts leave the store, except those a queue item, verdict or eval case needs."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.ingest.store.batches import ingest_bytes
from monitor.ingest.store.retention import REMOVED_EXCERPT, apply_retention
from monitor.store.models import Event, Quarantine, Record
from tests.factories import ctx_input, log, queue_item_row, rewrite

CUTOFF = datetime(2024, 3, 10)
NOW = datetime(2024, 4, 9)


def ctx_raw(session: Session, req: str) -> dict:
    return session.scalars(select(Event.raw).where(Event.kind == "ctx_input", Event.request_id == req)).one()


def test_old_transcripts_are_removed_unless_referenced(session: Session) -> None:
    old = "2024-03-04T08:01:31Z"
    new = "2024-03-20T08:01:31Z"
    ingest_bytes(
        session,
        log(
            ctx_input("a", "a_2", ts=old),
            rewrite("a", "a_2", ts=old),
            ctx_input("b", "b_2", ts=old),
            rewrite("b", "b_2", ts=old),
            ctx_input("c", "c_2", ts=new),
            rewrite("c", "c_2", ts=new),
        )
        + b"{not json\n",
        origin="app.jsonl",
    )
    session.execute(
        Quarantine.__table__.update().values(created_at=datetime(2024, 3, 5))  # the reject is old too
    )
    rec_b = session.scalars(select(Record.id).where(Record.request_id == "b_2")).one()
    queue_item_row(session, record_id=rec_b, request_id="b_2", conv_id="b", due_at=NOW, created_at=NOW)
    result = apply_retention(session=session, cutoff=CUTOFF, now=NOW)
    assert (result.transcripts_removed, result.transcripts_kept_referenced, result.excerpts_removed) == (
        1,
        1,
        1,
    )
    a = ctx_raw(session, "a_2")
    assert "messages" not in a and a["retention"] == {"messages_removed_at": "2024-04-09T00:00:00"}
    assert (a["n_messages"], a["roles"], a["digest"]) == (
        2,
        {"user": 1, "assistant": 1},
        ctx_input()["digest"],
    )
    assert len(ctx_raw(session, "b_2")["messages"]) == 2  # in the queue: kept
    assert len(ctx_raw(session, "c_2")["messages"]) == 2  # newer than the cutoff
    assert session.scalars(select(Quarantine.raw_excerpt)).one() == REMOVED_EXCERPT
    # Rewrites are untouched; a second pass changes nothing.
    assert session.scalars(
        select(Event.raw["query"]).where(Event.request_id == "a_2", Event.kind == "rewrite")
    ).one()
    again = apply_retention(session=session, cutoff=CUTOFF, now=NOW)
    assert (again.transcripts_removed, again.excerpts_removed) == (0, 0)


def test_a_view_after_retention_says_the_messages_were_removed_not_unlogged(session: Session) -> None:
    from rich.console import Console

    from monitor.cli.render import render_record
    from monitor.ingest.store.records import get_record_view

    old = "2024-03-04T08:01:31Z"
    ingest_bytes(session, log(ctx_input("a", "a_2", ts=old), rewrite("a", "a_2", ts=old)))
    apply_retention(session=session, cutoff=CUTOFF, now=NOW)
    view = get_record_view(session=session, request_id="a_2")
    assert view is not None and view.context is not None and view.context.messages is None
    reason = "the message list was removed by retention on 2024-04-09 (digest and counts kept)"
    assert view.context.missing_messages() == reason
    console = Console(width=200, record=True)
    for block in render_record(view, []):
        console.print(block)
    text = console.export_text()
    assert reason in text and f"digest {ctx_input()['digest']}: not verifiable ({reason})" in text
    assert "was not logged" not in text


def test_a_record_loaded_before_retention_is_loaded_without_its_messages_after(session: Session) -> None:
    """The parsed contexts are kept by event id across loads: an event retention rewrote in place is
    parsed again, not served from before."""
    from monitor.ingest.store.records import load_records

    old = "2024-03-04T08:01:31Z"
    ingest_bytes(session, log(ctx_input("a", "a_2", ts=old), rewrite("a", "a_2", ts=old)))
    (record_id,) = session.scalars(select(Record.id))
    ((_, before),) = load_records(session=session, record_ids=[record_id])
    assert before.context is not None and before.context.messages is not None
    apply_retention(session=session, cutoff=CUTOFF, now=NOW)
    ((_, after),) = load_records(session=session, record_ids=[record_id])
    assert after.context is not None and after.context.messages is None
    assert after.context.context_extra["retention"] == {"messages_removed_at": "2024-04-09T00:00:00"}


def test_old_spans_lose_their_text_and_keep_their_ids(session: Session) -> None:
    """A traced conversation holds its transcript in its spans too (examples/otel, March 2024): past the
    cutoff their text attributes go, the ids that tie them to the trace stay, and a re-ingest of the
    same file stores nothing twice."""
    from tests.helpers import REPO

    data = (REPO / "examples" / "otel" / "openinference_langchain.jsonl").read_bytes()
    ingest_bytes(session, data, origin="lc.jsonl")
    session.commit()
    result = apply_retention(session=session, cutoff=CUTOFF, now=NOW)
    assert result.transcripts_removed == 1 + 6  # the mapped ctx_input's messages, and the 6 spans
    spans = list(session.scalars(select(Event.raw).where(Event.kind == "span")))
    assert all("Which EU regions" not in str(s) and "uptime SLA" not in str(s) for s in spans)
    by_name = {s["name"]: s for s in spans}
    assert by_name["RunnableSequence"]["attributes"] == {
        "openinference.span.kind": "CHAIN",
        "session.id": "conv-langchain-1",
    }
    assert by_name["ChatAnthropic"]["retention"] == {"text_removed_at": NOW.isoformat()}
    again = ingest_bytes(session, data, origin="lc.jsonl")
    assert (again.stored, again.already_stored, again.rejected_total) == (0, 6, 0)
    assert apply_retention(session=session, cutoff=CUTOFF, now=NOW).transcripts_removed == 0
