"""Issue 38: the check job's learning pass reads the records to check before it claims them, and a half
or a turn that another worker stores in between made it grade the record as it was: a check skipped for
want of the ctx_input stayed skipped (the ingest that completed the record had deleted the skips it could
see), and the split-halves fault scenario on PostgreSQL lost a finding now and then. What changed since a
record was read is found, and the record read again."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.checks.rules import load_rules
from monitor.ingest.store.batches import ingest_bytes
from monitor.ingest.store.records import changed_since_loaded, load_records
from monitor.store.models import CheckRun, CheckSkip, Record
from monitor.worker import jobs
from tests.factories import ctx_input, log, rewrite


def _ids(session: Session) -> dict[str, int]:
    return {r.request_id: r.id for r in session.scalars(select(Record))}


def test_a_half_or_a_turn_stored_after_the_read_marks_the_record_changed(session: Session) -> None:
    ingest_bytes(session, log(ctx_input("c1", "c1_2", 2), rewrite("c1", "c1_2", 2), rewrite("c1", "c1_3", 3)))
    session.commit()
    ids = _ids(session)
    loaded = load_records(session=session, record_ids=sorted(ids.values()))
    assert changed_since_loaded(session=session, loaded=loaded) == set()
    # c1_3's own ctx_input arrives: only c1_3 changed (c1_2's peers are its own turn and none earlier)
    ingest_bytes(session, log(ctx_input("c1", "c1_3", 3)))
    session.commit()
    assert changed_since_loaded(session=session, loaded=loaded) == {ids["c1_3"]}
    # a new request at turn 2 is a peer of both
    loaded = load_records(session=session, record_ids=sorted(ids.values()))
    ingest_bytes(session, log(ctx_input("c1", "c1_2b", 2), rewrite("c1", "c1_2b", 2)))
    session.commit()
    assert changed_since_loaded(session=session, loaded=loaded) == {ids["c1_2"], ids["c1_3"]}


def half_then_the_other_after_learning(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    """Store c1_2's rewrite alone, and make the check job's learning pass store its ctx_input (another
    worker's ingest) once it has read the record."""
    ingest_bytes(session, log(rewrite("c1", "c1_2", 2, query="What is the SLA on the enterprise plan?")))
    session.commit()
    learn = jobs._learn_profile

    def learn_then_complete(**kw: object) -> object:
        got = learn(**kw)  # type: ignore[arg-type]
        ingest_bytes(session, log(ctx_input("c1", "c1_2", 2)))
        session.commit()
        return got

    monkeypatch.setattr(jobs, "_learn_profile", learn_then_complete)


def test_the_check_loop_reads_again_a_record_completed_after_the_learning_pass(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race, replayed in one process: the learning pass reads c1_2 without its ctx_input, the other
    half is stored before the check loop claims it; the check must run on the whole record."""
    half_then_the_other_after_learning(session, monkeypatch)
    jobs.check_job(session=session, rules=load_rules())
    skipped = session.scalars(
        select(CheckSkip.check_id).where(CheckSkip.reason.contains("no ctx_input"))
    ).all()
    assert skipped == []
    run = session.scalars(select(CheckRun)).one()
    assert (
        "added_content_word"
        not in session.scalars(select(CheckSkip.check_id).where(CheckSkip.check_run_id == run.id)).all()
    )
