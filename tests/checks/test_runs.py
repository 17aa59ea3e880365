"""One check run per record and set of check versions (``monitor.checks.store.runs``, migration 0015).

The checks here are made up (``a``, ``b``, ``c``) so that the sets and versions are the test's own; the
records are the factories' rows."""

from __future__ import annotations

import threading
import time
from datetime import datetime

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.checks.base import CheckOutcome, CheckStatus, Finding
from monitor.checks.store import (
    check_set_key,
    clear_runs,
    count_unchecked,
    coverage,
    fully_checked,
    list_findings,
    run_statuses,
    store_outcomes,
    unchecked_record_ids,
)
from monitor.store.engine import make_engine, session_factory
from monitor.store.models import CheckRun, CheckSet, CheckSkip
from monitor.store.models import Finding as StoredFinding
from tests.factories import check_run_row, record_row
from tests.helpers import throwaway_pg_database

NOW = datetime(2024, 3, 4, 10)


def outcome(
    request_id: str,
    statuses: list[tuple[str, int, str | None]],
    found: list[tuple[str, int]],
    rules_hash: str = "h",
) -> CheckOutcome:
    """An outcome with ``(check, version, skip reason or None)`` statuses and one finding per ``(check,
    version)`` of ``found``, its word the check id."""
    findings = tuple(
        Finding("k", "high", {"words": [{"text": f"{cid}{ver}"}]}, "r", cid, ver, "s") for cid, ver in found
    )
    return CheckOutcome(
        request_id,
        rules_hash,
        findings,
        tuple(
            CheckStatus(cid, ver, "skipped" if why else "ran", why, sum(1 for f in found if f == (cid, ver)))
            for cid, ver, why in statuses
        ),
    )


def checked(session: Session, checks: list[tuple[str, int]]) -> set[int]:
    return set(session.scalars(select(fully_checked(checks).c.record_id)))


def test_a_set_key_ignores_order_and_refuses_two_versions_of_a_check() -> None:
    assert check_set_key([("b", 1), ("a", 2)]) == check_set_key([("a", 2), ("b", 1), ("a", 2)])
    assert check_set_key([("a", 1)]) != check_set_key([("a", 2)])
    with pytest.raises(ValueError, match="one version per check"):
        check_set_key([("a", 1), ("a", 2)])


def test_a_record_is_checked_when_one_run_holds_every_current_version(session: Session) -> None:
    one = record_row(session, conv_id="c1", request_id="c1_2").id
    two = record_row(session, conv_id="c2", request_id="c2_2").id
    check_run_row(session, record_id=one, checks=[("a", 1), ("b", 1), ("c", 1)])
    check_run_row(session, record_id=two, checks=[("a", 1)])
    check_run_row(session, record_id=two, checks=[("b", 1)])
    # c turned off: record one's set holds more and still counts; two's versions are split over two runs
    assert checked(session, [("a", 1), ("b", 1)]) == {one}
    assert checked(session, [("a", 1)]) == {one, two}
    assert checked(session, [("a", 2), ("b", 1)]) == set()  # a bumped: nobody
    waiting = unchecked_record_ids(session=session, checks=[("a", 1), ("b", 1)], after_id=0, limit=10)
    assert waiting == [two]


def test_the_walk_down_returns_the_highest_ids_below_the_bound_ascending(session: Session) -> None:
    """Five records, the third checked: from above the fifth, two at a time, the walk takes 4 and 5, then
    1 and 2 below 4 (3 is checked), then nothing below 1."""
    ab = [("a", 1), ("b", 1)]
    ids = [record_row(session, conv_id=f"c{n}", request_id=f"c{n}_2").id for n in range(5)]
    check_run_row(session, record_id=ids[2], checks=ab)
    walk = [ids[4] + 1]
    for want in ([ids[3], ids[4]], [ids[0], ids[1]], []):
        got = unchecked_record_ids(session=session, checks=ab, after_id=0, before_id=walk[-1], limit=2)
        assert got == want
        walk.append(got[0] if got else 0)
    # above a floor: records at or below ``after_id`` are not taken
    assert unchecked_record_ids(session=session, checks=ab, after_id=ids[1], before_id=ids[4], limit=9) == [
        ids[3]
    ]


def test_the_count_of_waiting_records_reads_past_the_first_window_that_holds_any(session: Session) -> None:
    """1,005 records, the oldest 998 checked: one call of unchecked_record_ids reads a window of 1,000
    candidates and returns the 2 unchecked in it (a check job took that for all that waited, and graded
    15,000 rewrites on one process); the count reads on, to the 7 there are, or stops at ``up_to``."""
    ab = [("a", 1), ("b", 1)]
    ids = [record_row(session, conv_id=f"c{n}", request_id=f"c{n}_2").id for n in range(1_005)]
    for record_id in ids[:998]:
        check_run_row(session, record_id=record_id, checks=ab)
    assert unchecked_record_ids(session=session, checks=ab, after_id=0, limit=5) == ids[998:1_000]
    assert count_unchecked(session=session, checks=ab, up_to=100) == 7
    assert count_unchecked(session=session, checks=ab, up_to=5) == 5
    assert count_unchecked(session=session, checks=[("a", 1)], up_to=100) == 7
    assert count_unchecked(session=session, checks=[("a", 2)], up_to=5_000) == 1_005  # a bumped: every one


def test_a_version_bump_moves_the_versions_both_sets_hold_onto_the_new_run(session: Session) -> None:
    """Checked at {a1, b1}, then at {a1, b2}: the new run owns a1 (its finding deleted from the first run
    and stored again with the new run's rules hash), b1's finding stays on the first run as history."""
    rec = record_row(session).id
    first = outcome("c_2", [("a", 1, None), ("b", 1, None)], [("a", 1), ("b", 1)])
    assert store_outcomes(session=session, outcomes=[(rec, "c_2", first)], now=NOW) == 2
    again = outcome("c_2", [("a", 1, None), ("b", 2, None)], [("a", 1), ("b", 2)], rules_hash="h2")
    assert store_outcomes(session=session, outcomes=[(rec, "c_2", again)], now=NOW) == 2
    assert store_outcomes(session=session, outcomes=[(rec, "c_2", again)], now=NOW) == 0  # idempotent
    runs = session.execute(select(CheckRun.id, CheckRun.n_findings).order_by(CheckRun.id)).all()
    assert [n for _, n in runs] == [1, 2]
    stored = session.execute(
        select(
            StoredFinding.check_run_id,
            StoredFinding.check_id,
            StoredFinding.check_version,
            StoredFinding.rules_hash,
        ).order_by(StoredFinding.check_run_id, StoredFinding.ordinal)
    ).all()
    assert [tuple(r) for r in stored] == [
        (runs[0][0], "b", 1, "h"),
        (runs[1][0], "a", 1, "h2"),
        (runs[1][0], "b", 2, "h2"),
    ]
    assert checked(session, [("a", 1), ("b", 2)]) == {rec}
    assert run_statuses(session=session, record_ids=[rec], checks=[("a", 1), ("b", 2)]) == {
        rec: {"a": ("ran", "h2"), "b": ("ran", "h2")}
    }


def test_a_check_skipped_before_and_run_after_a_bump_keeps_its_findings(session: Session) -> None:
    """b1 was skipped on the first run; after a's bump it ran and found something: its finding is stored
    and the skip is gone, so coverage and the finding agree."""
    rec = record_row(session).id
    skipped = outcome("c_2", [("a", 1, None), ("b", 1, "no ctx_input logged")], [])
    store_outcomes(session=session, outcomes=[(rec, "c_2", skipped)], now=NOW)
    ran = outcome("c_2", [("a", 2, None), ("b", 1, None)], [("b", 1)])
    assert store_outcomes(session=session, outcomes=[(rec, "c_2", ran)], now=NOW) == 1
    assert session.scalar(select(func.count()).select_from(CheckSkip)) == 0
    got = {c.check_id: (c.ran, c.skipped) for c in coverage(session=session, checks=[("a", 2), ("b", 1)])}
    assert got == {"a": (1, 0), "b": (1, 0)}
    assert [r.words for r in list_findings(session=session, checks=[("a", 2), ("b", 1)])] == [["b1"]]


def test_skips_are_rows_of_their_run_and_coverage_counts_them(session: Session) -> None:
    one = record_row(session, conv_id="c1", request_id="c1_2").id
    two = record_row(session, conv_id="c2", request_id="c2_2").id
    record_row(session, conv_id="c3", request_id="c3_2")  # never checked
    store_outcomes(
        session=session,
        outcomes=[
            (one, "c1_2", outcome("c1_2", [("a", 1, None), ("b", 1, "no ctx_input logged")], [("a", 1)])),
            (two, "c2_2", outcome("c2_2", [("a", 1, None), ("b", 1, None)], [])),
        ],
        now=NOW,
    )
    assert session.execute(select(CheckSkip.check_id, CheckSkip.reason)).all() == [
        ("b", "no ctx_input logged")
    ]
    got = {
        c.check_id: (c.ran, c.skipped, c.rewrites, c.top_skip_reason)
        for c in coverage(session=session, checks=[("a", 1), ("b", 1)])
    }
    assert got == {"a": (2, 0, 3, None), "b": (1, 1, 3, "no ctx_input logged")}
    statuses = run_statuses(session=session, record_ids=[one, two], checks=[("a", 1), ("b", 1)])
    assert statuses == {
        one: {"a": ("ran", "h"), "b": ("skipped", "h")},
        two: {"a": ("ran", "h"), "b": ("ran", "h")},
    }


def test_clear_runs_deletes_every_run_holding_a_current_version(session: Session) -> None:
    rec = record_row(session).id
    other = record_row(session, conv_id="o", request_id="o_2").id
    store_outcomes(
        session=session,
        outcomes=[(rec, "c_2", outcome("c_2", [("a", 1, None), ("b", 1, "x")], [("a", 1)]))],
        now=NOW,
    )
    check_run_row(session, record_id=other, checks=[("z", 1)])
    assert clear_runs(session=session, checks=[("a", 1), ("b", 1)]) == 1
    assert session.scalars(select(CheckRun.record_id)).all() == [other]
    assert session.scalar(select(func.count()).select_from(StoredFinding)) == 0
    assert session.scalar(select(func.count()).select_from(CheckSkip)) == 0


def test_two_checkers_at_two_sets_store_one_record_one_after_the_other() -> None:
    """On PostgreSQL, checker A stores the record at {a1, b1} and holds its transaction open; checker B
    stores it at {a1, b2} meanwhile. B waits for A's commit (the record's row lock), then moves a1 onto
    its own run: a1's finding is stored once. Without the lock both stored it (a cold read's finding)."""
    with throwaway_pg_database("rm_runs", migrate=True) as url:
        _two_checkers(url)


def _two_checkers(url: str) -> None:
    engine = make_engine(url)
    sessions = session_factory(engine)
    try:
        with sessions() as s:
            rec = record_row(s).id
            s.commit()
        a_stored = threading.Event()

        def checker_a() -> None:
            with sessions() as s:
                one = outcome("c_2", [("a", 1, None), ("b", 1, None)], [("a", 1), ("b", 1)])
                store_outcomes(session=s, outcomes=[(rec, "c_2", one)], now=NOW)
                a_stored.set()
                time.sleep(1.5)  # B runs now, against A's uncommitted run
                s.commit()

        def checker_b() -> None:
            assert a_stored.wait(10)
            with sessions() as s:
                two = outcome("c_2", [("a", 1, None), ("b", 2, None)], [("a", 1), ("b", 2)])
                store_outcomes(session=s, outcomes=[(rec, "c_2", two)], now=NOW)
                s.commit()

        threads = [threading.Thread(target=checker_a), threading.Thread(target=checker_b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        with sessions() as s:
            found = s.execute(select(StoredFinding.check_id, StoredFinding.check_version)).all()
            assert sorted(tuple(f) for f in found) == [("a", 1), ("b", 1), ("b", 2)]
    finally:
        engine.dispose()


def test_a_check_set_turned_back_to_reads_the_skips_of_the_newest_run(session: Session) -> None:
    """Checked with c off ({a1, b1}, b skipped), then with b off ({a1, c1}), then with c off again: the
    record is checked again (no run holds a1 and b1 any more: the second took a1 over), and b is
    skipped on it. A cold read found coverage saying b ran: the first run still held {a1, b1} without
    its skip, which had moved to no one."""
    rec = record_row(session).id
    ab = [("a", 1), ("b", 1)]
    first = outcome("c_2", [("a", 1, None), ("b", 1, "no ctx_input logged")], [])
    store_outcomes(session=session, outcomes=[(rec, "c_2", first)], now=NOW)
    store_outcomes(
        session=session,
        outcomes=[(rec, "c_2", outcome("c_2", [("a", 1, None), ("c", 1, None)], []))],
        now=NOW,
    )
    assert checked(session, ab) == set()
    assert unchecked_record_ids(session=session, checks=ab, after_id=0, limit=10) == [rec]
    store_outcomes(session=session, outcomes=[(rec, "c_2", first)], now=NOW)
    got = {c.check_id: (c.ran, c.skipped, c.top_skip_reason) for c in coverage(session=session, checks=ab)}
    assert got == {"a": (1, 0, None), "b": (0, 1, "no ctx_input logged")}
    # each (record, check version) is held by one run: {a1, b1} now, {c1} left of the second, none of the 1st
    held = session.execute(select(CheckRun.id, CheckRun.check_set_id).order_by(CheckRun.id)).all()
    assert [sid for _, sid in held] == [
        session.scalar(select(CheckSet.id).where(CheckSet.key == check_set_key(pairs)))
        for pairs in ([("c", 1)], ab)
    ]


def test_the_alerts_do_not_count_a_rewrite_whose_fabrication_check_was_skipped_after_a_bump(
    session: Session,
) -> None:
    """added_content_word skipped on the rewrite; another check bumped and the rewrite checked again
    (the skip moves to the new run): the alerts still see no rewrite the fabrication checks ran on."""
    from monitor.alerts.policy import FABRICATION_KINDS
    from monitor.alerts.store import newest_checked_ts
    from monitor.checks import added_words

    acw = (added_words.CHECK_ID, added_words.VERSION)
    rec = record_row(session).id
    for other in (1, 2):
        statuses = [(acw[0], acw[1], "no ctx_input logged"), ("z", other, None)]
        store_outcomes(session=session, outcomes=[(rec, "c_2", outcome("c_2", statuses, []))], now=NOW)
        got = newest_checked_ts(session=session, checks=[acw, ("z", other)], kinds=FABRICATION_KINDS)
        assert got is None
    assert session.scalar(select(func.count()).select_from(CheckRun)) == 2  # {acw} went over, {z1} stays
