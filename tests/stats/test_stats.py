"""Finding rates per group: one grouping at a time and several from one pass agree, with exact counts."""

from __future__ import annotations

from datetime import datetime

import pytest
from sqlalchemy.orm import Session

from monitor.checks import current_versions
from monitor.severity import SEVERITY_RANK
from monitor.stats.store import finding_rates, finding_rates_by
from tests.factories import ctx_input, ingest_checked, rewrite

INVENTED = (
    "What is the uptime SLA for the Dublin region on the enterprise plan?"  # "enterprise": said by nobody
)


# Four rewrites: two on 4 March (ctx-v1 clean, ctx-v2 invented), two on 5 March (ctx-v1 invented,
# ctx-v1 clean).
FOUR_REWRITES = [
    event
    for conv, day, version, query in (
        ("a", "2024-03-04", "ctx-v1", None),
        ("b", "2024-03-04", "ctx-v2", INVENTED),
        ("c", "2024-03-05", "ctx-v1", INVENTED),
        ("d", "2024-03-05", "ctx-v1", None),
    )
    for event in (
        ctx_input(conv, f"{conv}_2", ts=f"{day}T08:01:31Z"),
        rewrite(
            conv,
            f"{conv}_2",
            ts=f"{day}T08:01:31.420Z",
            prompt_version=version,
            **({"query": query} if query else {}),
        ),
    )
]


def added(rates: list) -> dict[str, tuple[int, int]]:
    return {r.group: (r.flagged, r.checked) for r in rates if r.kind == "added_content_word"}


def test_rates_per_day_and_prompt_version_from_one_pass(session: Session) -> None:
    ingest_checked(session, *FOUR_REWRITES)
    checks = current_versions()
    low = SEVERITY_RANK["low"]
    grouped = finding_rates_by(
        session=session, checks=checks, min_rank=low, groupings=("day", "prompt_version", None)
    )
    assert added(grouped["day"]) == {"2024-03-04": (1, 2), "2024-03-05": (1, 2)}
    assert added(grouped["prompt_version"]) == {"ctx-v1": (1, 3), "ctx-v2": (1, 1)}
    assert added(grouped[None]) == {"all": (2, 4)}
    for by in ("day", "prompt_version", None):
        assert grouped[by] == finding_rates(session=session, checks=checks, min_rank=low, by=by)
    later = finding_rates_by(
        session=session,
        checks=checks,
        min_rank=low,
        groupings=("day", "prompt_version"),
        since=datetime(2024, 3, 5),
    )
    assert added(later["day"]) == {"2024-03-05": (1, 2)}
    assert added(later["prompt_version"]) == {"ctx-v1": (1, 2)}


def test_fabrications_among_demoted_words_are_estimated_from_the_controls(session: Session) -> None:
    """Three control items with verdicts: A (π 1/2, a demoted word, fabricated), B (π 1/4, a demoted
    word, ok), C (π 1/4, nothing demoted, fabricated). The domain is A and B: (1/π_A) / (1/π_A + 1/π_B)
    = 2 / (2 + 4) = 1/3, on 2 of the 3 control verdicts; C is outside it."""
    from datetime import UTC, timedelta

    from monitor.checks import added_words
    from monitor.intervals import wilson
    from monitor.review.store import record_verdict
    from monitor.stats.store import demoted_controls, latest_verdicts
    from tests.factories import check_run_row, finding_row, queue_item_row, record_row

    now = datetime(2024, 3, 5, 9, tzinfo=UTC)
    labels = {
        "A": ("fabricated_constraint", "rewrite"),
        "B": ("ok", "none"),
        "C": ("fabricated_constraint", "rewrite"),
    }
    for name, pi, steps in (("A", 0.5, -1), ("B", 0.25, -2), ("C", 0.25, 1)):
        rec = record_row(session, conv_id=name, request_id=f"{name}_2")
        run = check_run_row(
            session, record_id=rec.id, check_id=added_words.CHECK_ID, check_version=added_words.VERSION
        )
        word = {"text": "plan", "lemma": "plan", "severity": "low", "learned": {"steps": steps}}
        finding_row(
            session,
            check_run_id=run.id,
            record_id=rec.id,
            request_id=rec.request_id,
            kind=added_words.CHECK_ID,
            severity="low",
            evidence={"words": [word]},
            check_id=added_words.CHECK_ID,
            check_version=added_words.VERSION,
        )
        item = queue_item_row(
            session,
            record_id=rec.id,
            request_id=rec.request_id,
            conv_id=name,
            stratum="control",
            inclusion_prob=pi,
            due_at=now - timedelta(hours=1),
            created_at=now - timedelta(hours=1),
        )
        label, artifact = labels[name]
        record_verdict(
            session=session, item_id=item.id, reviewer="kim", label=label, artifact=artifact, now=now
        )
    est = demoted_controls(latest_verdicts(session=session), session, current_versions())
    assert est.name == "fabricated_among_demoted"
    assert est.value == pytest.approx(1 / 3)
    assert (est.verdicts, est.coverage) == (2, pytest.approx(2 / 3))
    assert est.ci == wilson(1, 2)
