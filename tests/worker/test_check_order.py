"""The check job's order (issue 36): the learning pass oldest first, the check loop newest first, so the
loop starts with the records whose texts the pass analysed last and the analysis cache still holds (and,
on the pool's processes, the newest the ingest handed them)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.checks.rules import load_rules
from monitor.ingest.store.batches import ingest_bytes
from monitor.store.models import AddedLemma, CheckRun, Record
from monitor.worker import jobs
from tests.factories import ctx_input, log, rewrite

WORDS = {1: "invoices", 2: "refunds", 3: "warranty", 4: "shipping", 5: "pricing"}
"""An added word per conversation: each query names one its conversation never wrote."""


def _conversation(n: int) -> bytes:
    return log(ctx_input(f"c{n}", f"c{n}_2", 2), rewrite(f"c{n}", f"c{n}_2", 2, query=f"SLA on {WORDS[n]}"))


def _store(session: Session, *conversations: int) -> None:
    """Conversations ``c{n}`` stored and committed (another worker's ingest, when a test calls it mid-job)."""
    ingest_bytes(session, b"".join(_conversation(n) for n in conversations))
    session.commit()


def _first_call_does(monkeypatch: pytest.MonkeyPatch, name: str, action: Callable[[], object]) -> None:
    """``jobs.<name>`` runs ``action`` before its first call only (another worker's ingest meanwhile)."""
    original = getattr(jobs, name)
    calls: list[int] = []

    def hooked(*args: object, **kw: object) -> object:
        if not calls:
            calls.append(1)
            action()
        return original(*args, **kw)

    monkeypatch.setattr(jobs, name, hooked)


def _learned(session: Session) -> list[str]:
    """The conversations of the profile's rows, in the order they were stored."""
    return list(dict.fromkeys(session.scalars(select(AddedLemma.conv_id).order_by(AddedLemma.id))))


def _graded(session: Session) -> list[str]:
    """Each record's conversation, in the order its check run was written."""
    rows = session.execute(
        select(Record.conv_id).join(CheckRun, CheckRun.record_id == Record.id).order_by(CheckRun.id)
    )
    return [conv for (conv,) in rows]


def test_the_oldest_are_learned_first_and_the_newest_graded_first(session: Session) -> None:
    _store(session, 1, 2, 3, 4, 5)
    summary = jobs.check_job(session=session, rules=load_rules(), batch_size=2)
    assert summary.records == 5
    assert _learned(session) == ["c1", "c2", "c3", "c4", "c5"]
    # two a batch from the top: (4, 5), then (2, 3), then 1; each batch in id order
    assert _graded(session) == ["c4", "c5", "c2", "c3", "c1"]


def test_the_check_loop_walks_down_only_to_the_first_record_the_learning_pass_found_unchecked(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(session, 1, 2, 3)
    jobs.check_job(session=session, rules=load_rules(), batch_size=2)
    _store(session, 4, 5)
    floors: list[int] = []
    walk = jobs.unchecked_newest_first

    def watched(**kw: object) -> object:
        floors.append(kw["floor"])  # type: ignore[arg-type]
        return walk(**kw)  # type: ignore[arg-type]

    monkeypatch.setattr(jobs, "unchecked_newest_first", watched)
    summary = jobs.check_job(session=session, rules=load_rules(), batch_size=2)
    # c1 to c3 were checked by the first job: the second learns from c4 on and walks down to c4
    c4 = session.scalar(select(Record.id).where(Record.conv_id == "c4"))
    assert c4 is not None and (summary.records, floors) == (2, [c4 - 1])
    assert _graded(session) == ["c2", "c3", "c1", "c4", "c5"]


def test_what_is_stored_after_the_learning_pass_began_is_graded_in_the_same_job(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(session, 1, 2, 3)
    learn = jobs._learn_profile

    def learn_then_more(**kw: object) -> object:
        got = learn(**kw)  # type: ignore[arg-type]
        _store(session, 4, 5)
        return got

    monkeypatch.setattr(jobs, "_learn_profile", learn_then_more)
    summary = jobs.check_job(session=session, rules=load_rules(), batch_size=2)
    assert summary.records == 5
    assert _learned(session) == ["c1", "c2", "c3"]  # the two stored since are graded without their lemmas
    # down from the newest (5): (4, 5), (2, 3), 1
    assert _graded(session) == ["c4", "c5", "c2", "c3", "c1"]


def test_what_is_stored_during_the_learning_pass_is_learned_in_the_same_pass(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(session, 1, 2, 3)
    _first_call_does(monkeypatch, "load_records", lambda: _store(session, 4, 5))  # the pass's first batch
    summary = jobs.check_job(session=session, rules=load_rules(), batch_size=2)
    assert summary.records == 5
    assert _learned(session) == ["c1", "c2", "c3", "c4", "c5"]
    assert _graded(session) == ["c4", "c5", "c2", "c3", "c1"]


def test_what_is_stored_during_the_check_loop_is_graded_on_the_way_up(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(session, 1, 2, 3)
    _first_call_does(monkeypatch, "_batch_profile", lambda: _store(session, 4, 5))  # the loop's first batch
    summary = jobs.check_job(session=session, rules=load_rules(), batch_size=2)
    assert summary.records == 5
    # down from where the walk began (3): (2, 3), then 1; then up from there: (4, 5)
    assert _graded(session) == ["c2", "c3", "c1", "c4", "c5"]


def test_a_record_completed_during_the_check_loop_below_where_it_began_waits_for_the_next_job(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """c4 is the newest record but only its ctx_input is stored when the loop starts; its rewrite arrives
    while the loop grades its first batch, after the walk down passed c4: graded by the next job, once."""
    _store(session, 1, 2, 3)
    ingest_bytes(session, log(ctx_input("c4", "c4_2", 2)))
    session.commit()
    profile = jobs._batch_profile

    def complete_c4() -> None:
        ingest_bytes(session, log(rewrite("c4", "c4_2", 2, query=f"SLA on {WORDS[4]}")))
        session.commit()

    _first_call_does(monkeypatch, "_batch_profile", complete_c4)
    assert jobs.check_job(session=session, rules=load_rules(), batch_size=2).records == 3
    monkeypatch.setattr(jobs, "_batch_profile", profile)
    assert jobs.check_job(session=session, rules=load_rules(), batch_size=2).records == 1
    assert _graded(session) == ["c2", "c3", "c1", "c4"]
