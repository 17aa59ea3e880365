"""The review queue on a real store: admission with exact counts, claims and leases, verdicts,
weighted estimates, and no double claim under two concurrent claimers on PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from monitor.queue.store import QueueError, claim, claim_next, enqueue_days, list_queue, queue_depth, release
from monitor.review.store import record_verdict, verdict_for_request
from monitor.setting_groups import QueueSettings
from monitor.settings import Settings
from monitor.stats.store import latest_verdicts, precision_by_kind, whole_traffic_estimates
from monitor.store.engine import make_engine, session_factory
from monitor.store.models import QueueDay, QueueItem
from tests.factories import CHECKS, checked_record
from tests.helpers import throwaway_pg_database

DAY = date(2024, 3, 4)
NOW = datetime(2024, 3, 4, 12, 0, tzinfo=UTC)
LEASE = timedelta(minutes=10)


def settings(**over: object) -> QueueSettings:
    return Settings(**over).queue  # type: ignore[arg-type]


def constructed_day(session: Session) -> None:
    # 4 high in conv A (cap 3), 6 medium in 6 conversations, 2 low, 10 clean
    for i in range(4):
        checked_record(session, "A", f"a{i}", severity="high")
    for i in range(6):
        checked_record(session, f"M{i}", f"m{i}", severity="medium")
    for i in range(2):
        checked_record(session, f"L{i}", f"l{i}", severity="low")
    for i in range(10):
        checked_record(session, f"C{i}", f"c{i}", severity=None)


def test_admission_on_a_constructed_day(session: Session) -> None:
    constructed_day(session)
    result = enqueue_days(
        session=session, days=[DAY], checks=CHECKS, settings=settings(queue_budget=8), now=NOW
    )
    # control places max(2, round(0.4)) = 2; flagged room 6: high 3 (cap took 1), medium 3 of 6
    assert result.added == {"high": 3, "medium": 3, "control": 2}
    assert result.capped == 1
    days = {r.stratum: (r.eligible, r.taken, r.capped) for r in session.scalars(select(QueueDay))}
    assert days == {"high": (4, 3, 1), "medium": (6, 3, 0), "control": (12, 2, 0), "low": (0, 0, 0)}
    probs = dict(session.execute(select(QueueItem.stratum, QueueItem.inclusion_prob).distinct()).all())
    assert probs == {"high": 3 / 4, "medium": 3 / 6, "control": 2 / 12}
    # again: nothing new
    again = enqueue_days(
        session=session, days=[DAY], checks=CHECKS, settings=settings(queue_budget=8), now=NOW
    )
    assert again.added == {}
    assert session.scalar(select(func.count()).select_from(QueueItem)) == 8
    rows = list_queue(session=session, now=NOW, state="pending", limit=None)
    assert [r.stratum for r in rows] == ["high"] * 3 + ["medium"] * 3 + ["control"] * 2
    assert rows[0].due_at == datetime(2024, 3, 6, 0, 0) and not rows[0].overdue
    assert queue_depth(session=session, now=datetime(2024, 3, 7, tzinfo=UTC)) == (8, 8)


def medium_and_clean(session: Session, day: date) -> None:
    for i in range(6):
        checked_record(session, f"M{i}", f"m{i}", severity="medium", day=day)
    for i in range(10):
        checked_record(session, f"C{i}", f"c{i}", severity=None, day=day)


def late_highs(session: Session, day: date) -> None:
    for i in range(4):
        checked_record(session, f"H{i}", f"h{i}", severity="high", day=day, hour=20)


def pending_items(session: Session, day: date) -> set[tuple[str, str]]:
    return set(
        session.execute(
            select(QueueItem.request_id, QueueItem.stratum).where(
                QueueItem.day == day, QueueItem.state == "pending"
            )
        ).all()
    )


def test_a_day_arriving_in_parts_is_queued_as_if_it_came_at_once(session: Session) -> None:
    # budget 8: control max(2, round(0.4)) = 2, flagged 6
    budget = settings(queue_budget=8)

    def state() -> tuple[set[tuple[str, str]], dict[str, float], dict[str, tuple[int, int, int]]]:
        probs = dict(
            session.execute(
                select(QueueItem.stratum, QueueItem.inclusion_prob)
                .where(QueueItem.state == "pending")
                .distinct()
            ).all()
        )
        days = {r.stratum: (r.eligible, r.taken, r.capped) for r in session.scalars(select(QueueDay))}
        return pending_items(session, DAY), probs, days

    parts = session.begin_nested()  # the day in two parts, then (rolled back) the same day at once
    medium_and_clean(session, DAY)
    first = enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=budget, now=NOW)
    assert first.added == {"medium": 6, "control": 2} and first.withdrawn == {}
    late_highs(session, DAY)  # four high findings arrive in the evening
    second = enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=budget, now=NOW)
    # high 4 of 4 first; medium keeps the 2 smallest draws of 6, the other 4 are withdrawn
    assert second.added == {"high": 4} and second.withdrawn == {"medium": 4}
    in_parts = state()
    again = enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=budget, now=NOW)
    assert (again.added, again.withdrawn) == ({}, {})
    parts.rollback()

    medium_and_clean(session, DAY)  # the same rewrites (same keys, so the same draws) at once
    late_highs(session, DAY)
    at_once = enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=budget, now=NOW)
    assert at_once.added == {"high": 4, "medium": 2, "control": 2}
    assert state() == in_parts
    pending, probs, days = in_parts
    assert len(pending) == 8
    assert probs == {"high": 1.0, "medium": 2 / 6, "control": 2 / 10}
    assert days["medium"] == (6, 2, 0)


def test_admission_plans_every_day_then_writes_them_together(session: Session) -> None:
    """Six days cost one candidate read each and a fixed number of other statements; the π a re-plan sets
    reaches the items the session already holds (its writes bypass the ORM's own bookkeeping)."""
    days = [DAY + timedelta(days=n) for n in range(6)]
    for n, day in enumerate(days):
        for i in range(6):
            checked_record(session, f"M{n}.{i}", f"m{n}.{i}", severity="medium", day=day)
        for i in range(10):
            checked_record(session, f"C{n}.{i}", f"c{n}.{i}", severity=None, day=day)
    session.flush()
    statements: list[str] = []
    bind = session.connection()

    def count(_conn: object, _cursor: object, sql: str, *_args: object) -> None:
        statements.append(sql)

    event.listen(bind, "before_cursor_execute", count)
    try:
        first = enqueue_days(
            session=session, days=days, checks=CHECKS, settings=settings(queue_budget=8), now=NOW
        )
    finally:
        event.remove(bind, "before_cursor_execute", count)
    assert first.added == {"medium": 36, "control": 12}
    # 3 reads of the queue's state, 6 of candidates, 2 of the admitted records, then 3 writes: items,
    # their π, the day plans
    assert len(statements) == 14
    held = session.scalars(
        select(QueueItem).where(QueueItem.day == days[2], QueueItem.stratum == "medium")
    ).all()
    assert [i.inclusion_prob for i in held] == [1.0] * 6
    late_highs(session, days[2])
    second = enqueue_days(
        session=session, days=[days[2]], checks=CHECKS, settings=settings(queue_budget=8), now=NOW
    )
    assert second.added == {"high": 4} and second.withdrawn == {"medium": 4}
    assert (
        sorted((i.state, i.inclusion_prob) for i in held)
        == [("pending", 2 / 6)] * 2 + [("withdrawn", 1.0)] * 4  # a withdrawn item keeps the π it was drawn at
    )
    plans = {(p.day, p.stratum): (p.eligible, p.taken) for p in session.scalars(select(QueueDay))}
    assert plans[(days[2], "medium")] == (6, 2) and plans[(days[2], "high")] == (4, 4)
    assert plans[(days[1], "medium")] == (6, 6)


def test_a_verdict_on_a_withdrawn_request_makes_it_a_manual_item(session: Session) -> None:
    budget = settings(queue_budget=8)
    medium_and_clean(session, DAY)
    enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=budget, now=NOW)
    late_highs(session, DAY)
    enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=budget, now=NOW)
    gone = session.scalars(select(QueueItem).where(QueueItem.state == "withdrawn")).first()
    assert gone is not None
    verdict_for_request(
        session=session, request_id=gone.request_id, reviewer="ann", label="ok", artifact="none", now=NOW
    )
    session.refresh(gone)
    assert (gone.state, gone.stratum, gone.inclusion_prob) == ("done", "manual", 0.0)
    # the next admission leaves it alone and the sampled strata are as before
    again = enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=budget, now=NOW)
    assert (again.added, again.withdrawn) == ({}, {})
    assert len(pending_items(session, DAY)) == 8


def test_an_item_a_reviewer_holds_keeps_its_place_when_the_day_is_re_planned(session: Session) -> None:
    budget = settings(queue_budget=8)
    medium_and_clean(session, DAY)
    enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=budget, now=NOW)
    held = claim_next(session=session, reviewer="ann", now=NOW, lease=LEASE)
    assert held is not None and held.stratum == "medium"
    late_highs(session, DAY)
    result = enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=budget, now=NOW)
    # the held item counts against the budget: flagged room 6 - 1 = 5 -> high 4, one more medium
    assert result.added == {"high": 4} and result.withdrawn == {"medium": 4}
    states = dict(
        session.execute(
            select(QueueItem.state, func.count())
            .where(QueueItem.stratum == "medium")
            .group_by(QueueItem.state)
        ).all()
    )
    assert states == {"claimed": 1, "pending": 1, "withdrawn": 4}
    item = session.get(QueueItem, held.id)
    assert item is not None and (item.state, item.claimed_by) == ("claimed", "ann")


def test_claims_lease_release_and_verdict_rules(session: Session) -> None:
    constructed_day(session)
    enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=settings(queue_budget=8), now=NOW)
    a = claim_next(session=session, reviewer="ann", now=NOW, lease=LEASE)
    b = claim_next(session=session, reviewer="bob", now=NOW, lease=LEASE)
    assert a is not None and b is not None and a.id != b.id
    assert a.stratum == "high" and a.state == "claimed" and a.claimed_by == "ann"
    # ann asking again gets her own item back, not a new one
    assert claim_next(session=session, reviewer="ann", now=NOW + timedelta(minutes=1), lease=LEASE).id == a.id
    with pytest.raises(QueueError, match="claimed by ann"):
        claim(session=session, item_id=a.id, reviewer="bob", now=NOW + timedelta(minutes=2), lease=LEASE)
    # after the lease (renewed at +1 min, so until +11 min) bob may take it, and ann's verdict is refused
    later = NOW + timedelta(minutes=12)
    assert claim(session=session, item_id=a.id, reviewer="bob", now=later, lease=LEASE).claimed_by == "bob"
    with pytest.raises(QueueError, match="claimed by bob"):
        record_verdict(session=session, item_id=a.id, reviewer="ann", label="ok", artifact="none", now=later)
    with pytest.raises(QueueError, match="unknown label"):
        record_verdict(session=session, item_id=a.id, reviewer="bob", label="meh", artifact="none", now=later)
    with pytest.raises(QueueError, match="does not go with"):
        record_verdict(
            session=session, item_id=a.id, reviewer="bob", label="ok", artifact="rewrite", now=later
        )
    record_verdict(
        session=session,
        item_id=a.id,
        reviewer="bob",
        label="fabricated_constraint",
        artifact="rewrite",
        now=later,
        must_not_include=["w-a0"],
    )
    # bob's own claim on b (taken at NOW) has expired too: he cannot release it, and cy may take it
    with pytest.raises(QueueError, match="bob's claim on queue item .* expired at 12:10:00"):
        release(session=session, item_id=b.id, reviewer="bob", now=later)
    assert claim(session=session, item_id=b.id, reviewer="cy", now=later, lease=LEASE).claimed_by == "cy"
    release(session=session, item_id=b.id, reviewer="cy", now=later)
    assert [
        r.state for r in list_queue(session=session, now=later, state=None, limit=None) if r.id == b.id
    ] == ["pending"]
    done = list_queue(session=session, now=later, state="done")
    assert [(r.id, r.state) for r in done] == [(a.id, "done")]


def test_weighted_estimate_matches_a_hand_computed_example(session: Session) -> None:
    # One day. high: 4 eligible, all 4 admitted and reviewed, 3 bad. control: 20 eligible, 2 admitted,
    # both reviewed as fine. Estimate = (4·3/4 + 20·0/2) / (4 + 20) = 3/24 = 0.125.
    for i in range(4):
        checked_record(session, f"H{i}", f"h{i}", severity="high")
    for i in range(20):
        checked_record(session, f"C{i}", f"c{i}", severity=None)
    enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=settings(queue_budget=40), now=NOW)
    items = list_queue(session=session, now=NOW, state="pending", limit=None)
    assert (
        sorted((r.stratum, r.inclusion_prob) for r in items) == [("control", 0.1)] * 2 + [("high", 1.0)] * 4
    )
    labels = iter(
        [
            ("fabricated_constraint", "rewrite"),
            ("dropped_constraint", "rewrite"),
            ("window_truncated", "chat_state"),
            ("false_alarm_synonym", "none"),
        ]
    )
    for r in items:
        label, artifact = next(labels) if r.stratum == "high" else ("ok", "none")
        record_verdict(session=session, item_id=r.id, reviewer="ann", label=label, artifact=artifact, now=NOW)
    pairs = latest_verdicts(session=session)
    est = {e.name: e for e in whole_traffic_estimates(pairs, session)}
    assert est["bad_rewrite"].value == pytest.approx(3 / 24)
    assert est["first_wrong:rewrite"].value == pytest.approx(2 / 24)
    assert est["first_wrong:chat_state"].value == pytest.approx(1 / 24)
    assert est["bad_rewrite"].coverage == 1.0
    # high stratum fully reviewed: no finite-population variance. Control: N = 2 / 0.1 = 20, v = 2, no bad
    # verdict; Agresti–Coull centre p = (0 + z²/2) / (2 + z²) = 0.32880, variance N²(1 - v/N)p(1-p)/v
    # = 400 · 0.9 · 0.22070 / 2 = 39.725, half-width z · √39.725 / 24 = 0.51472: [0, 0.63972]
    assert est["bad_rewrite"].ci == (0.0, pytest.approx(0.63972, abs=1e-5))
    prec = precision_by_kind(pairs)
    assert (prec["added_content_word"]["verdicts"], prec["added_content_word"]["confirmed"]) == (4, 3)


@pytest.fixture
def fresh_pg() -> Iterator[str]:
    """A migrated PostgreSQL database of its own (this test commits from several connections)."""
    with throwaway_pg_database("rm_claims", migrate=True) as url:
        yield url


def test_two_concurrent_claimers_never_hold_the_same_item_on_postgresql(fresh_pg: str) -> None:
    engine = make_engine(fresh_pg)
    with session_factory(engine)() as s:
        for i in range(30):
            checked_record(s, f"K{i}", f"k{i}", severity="high" if i % 2 else "medium")
        enqueue_days(
            session=s,
            days=[DAY],
            checks=CHECKS,
            settings=settings(queue_budget=40, per_conversation_cap=3),
            now=NOW,
        )
        s.commit()
        total = s.scalar(select(func.count()).select_from(QueueItem))
    got: dict[str, list[int]] = {"ann": [], "bob": []}
    start = threading.Barrier(2)

    def reviewer(name: str) -> None:
        with session_factory(engine)() as s:
            start.wait()
            while True:
                # a distinct reviewer id per claim so "your own claim back" never short-circuits the race
                row = claim_next(session=s, reviewer=f"{name}-{len(got[name])}", now=NOW, lease=LEASE)
                if row is None:
                    return
                got[name].append(row.id)

    threads = [threading.Thread(target=reviewer, args=(n,)) for n in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    engine.dispose()
    claimed = got["ann"] + got["bob"]
    assert len(claimed) == total == 30
    assert len(set(claimed)) == len(claimed)  # no item claimed twice
    assert got["ann"] and got["bob"]  # both really competed


def test_claim_next_keeps_to_the_queue_pages_filters(session: Session) -> None:
    from monitor.queue.store import QueueFilters, reviewable_count

    constructed_day(session)
    enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=settings(queue_budget=8), now=NOW)
    medium = QueueFilters(stratum="medium")
    # 3 high come first in review order; the filter hands out the 3 medium ones, then nothing
    assert reviewable_count(session=session, reviewer="ann", now=NOW, filters=medium, checks=CHECKS) == 3
    got = [
        claim_next(session=session, reviewer=who, now=NOW, lease=LEASE, filters=medium, checks=CHECKS)
        for who in ("ann", "bob", "cyd", "dee")
    ]
    assert [g.stratum if g else None for g in got] == ["medium", "medium", "medium", None]
    assert reviewable_count(session=session, reviewer="dee", now=NOW, filters=medium, checks=CHECKS) == 0
    # a filter nothing matches (a prompt version of no item) claims nothing; none is the whole queue
    nobody = QueueFilters(prompt_version="no-such-version")
    assert claim_next(session=session, reviewer="eve", now=NOW, lease=LEASE, filters=nobody) is None
    first = claim_next(session=session, reviewer="eve", now=NOW, lease=LEASE)
    assert first is not None and first.stratum == "high"
