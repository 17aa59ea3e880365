"""One check run per record and set of check versions (``monitor.checks.store.runs``, migration 0015).

The checks here are made up (``a``, ``b``, ``c``) so that the sets and versions are the test's own; the
records are the factories' rows."""

from __future__ import annotations

from datetime import datetime

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.checks.base import CheckOutcome, CheckStatus, Finding
from monitor.checks.store import (
    check_set_key,
    clear_runs,
    coverage,
    fully_checked,
    list_findings,
    run_statuses,
    store_outcomes,
    unchecked_record_ids,
)
from monitor.store.models import CheckRun, CheckSkip
from monitor.store.models import Finding as StoredFinding
from tests.factories import check_run_row, record_row

NOW = datetime(2024, 3, 4, 10)


def outcome(
    request_id: str, statuses: list[tuple[str, int, str | None]], found: list[tuple[str, int]]
) -> CheckOutcome:
    """An outcome with ``(check, version, skip reason or None)`` statuses and one finding per ``(check,
    version)`` of ``found``, its word the check id."""
    findings = tuple(
        Finding("k", "high", {"words": [{"text": f"{cid}{ver}"}]}, "r", cid, ver, "s") for cid, ver in found
    )
    return CheckOutcome(
        request_id,
        "h",
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


def test_a_version_bump_stores_a_new_run_and_only_the_new_versions_findings(session: Session) -> None:
    rec = record_row(session).id
    first = store_outcomes(
        session=session,
        outcomes=[(rec, "c_2", outcome("c_2", [("a", 1, None), ("b", 1, None)], [("a", 1), ("b", 1)]))],
        now=NOW,
    )
    assert first == 2
    # b went to v2: the record is checked again; a@1's finding is stored already, on the first run
    again = outcome("c_2", [("a", 1, None), ("b", 2, None)], [("a", 1), ("b", 2)])
    assert store_outcomes(session=session, outcomes=[(rec, "c_2", again)], now=NOW) == 1
    assert store_outcomes(session=session, outcomes=[(rec, "c_2", again)], now=NOW) == 0  # idempotent
    runs = session.execute(select(CheckRun.id, CheckRun.n_findings).order_by(CheckRun.id)).all()
    assert [n for _, n in runs] == [2, 1]
    words = [r.words for r in list_findings(session=session, checks=[("a", 1), ("b", 2)])]
    assert sorted(words) == [["a1"], ["b2"]]
    assert session.scalar(select(func.count()).select_from(StoredFinding)) == 3  # b1's stays, as history
    assert checked(session, [("a", 1), ("b", 2)]) == {rec}


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
