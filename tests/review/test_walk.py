"""The terminal review's walk over the queue (``monitor.review.walk.QueueWalk``), without the terminal:
claim order, "item i of N", a verdict, ``b`` (back) reopening the last verdict, and skips."""

from __future__ import annotations

from datetime import date

from sqlalchemy.orm import Session

from monitor.queue.store import enqueue_days
from monitor.review.evidence import choose_terms
from monitor.review.walk import QueueWalk
from monitor.settings import Settings
from tests.review.test_verdicts import CLEAN, FABRICATED, LEASE, NOW, _checks, seed


def _walk(session: Session) -> QueueWalk:
    flagged, clean = seed(session, FABRICATED, CLEAN)
    assert (flagged, clean) == ("c1_2", "c2_2")
    enqueue_days(
        session=session, days=[date(2024, 3, 4)], checks=_checks(), settings=Settings().queue, now=NOW
    )  # type: ignore[call-arg]
    return QueueWalk(
        session=session, reviewer="alice", lease=LEASE, kind=None, checks=_checks(), now=lambda: NOW
    )


def test_a_verdict_then_back_reopens_it_with_the_earlier_verdict(session: Session) -> None:
    walk = _walk(session)
    first = walk.next_item()
    assert first is not None
    # the flagged rewrite comes first; the clean one (the day's control sample) is still claimable
    assert (first.row.request_id, first.again, first.position, first.total) == ("c1_2", False, 1, 2)
    assert first.view is not None and first.earlier is None
    assert "added_content_word" in {f.kind for f in first.findings}
    typed = choose_terms([], ["Dublin"])
    walk.record(first, "fabricated_constraint", note=None, corrected=None, terms=typed)
    assert (walk.done, walk.history) == ({"verdicts": 1, "skipped": 0}, [first.row.id])

    second = walk.next_item()
    assert second is not None
    # one verdict given, nothing left to claim after this one: item 2 of 2
    assert (second.row.request_id, second.position, second.total) == ("c2_2", 2, 2)

    walk.go_back(second)  # gives c2_2 back, reopens c1_2
    assert walk.history == []
    again = walk.next_item()
    assert again is not None and again.earlier is not None
    # c2_2 is claimable again: item 1 of 2
    assert (again.row.request_id, again.again, again.position, again.total) == ("c1_2", True, 1, 2)
    assert again.earlier.label == "fabricated_constraint"

    walk.skip(again)  # a reopened item keeps its verdict: nothing is skipped
    assert walk.done == {"verdicts": 1, "skipped": 0}
    last = walk.next_item()
    assert last is not None
    assert (last.row.request_id, last.again, last.position, last.total) == ("c2_2", False, 1, 1)
    walk.skip(last)
    assert walk.done == {"verdicts": 1, "skipped": 1}
    assert walk.next_item() is None
