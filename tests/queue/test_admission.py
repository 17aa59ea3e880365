"""The admission policy without a store: which items of a re-planned day are kept, pending again,
withdrawn or new, with π and the day plans, computed by hand from a small day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from monitor.queue.admission import MANUAL, WITHDRAWN, day_writes, enqueue_result, plan_day
from monitor.queue.sampling import Candidate
from monitor.setting_groups import QueueSettings
from monitor.settings import Settings

DAY = date(2024, 3, 4)
NOW = datetime(2024, 3, 4, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Item:
    id: int
    record_id: int
    conv_id: str
    stratum: str
    state: str


def settings(**over: object) -> QueueSettings:
    return Settings(**over).queue  # type: ignore[arg-type]


def meta(*ids: int) -> dict[int, dict[str, object]]:
    return {
        i: {
            "request_id": f"r{i}",
            "conv_id": f"C{i}",
            "model": "m",
            "prompt_version": "p1",
            "kinds": ["added_content_word"],
            "words": [f"w{i}"],
        }
        for i in ids
    }


def test_a_replanned_day_repends_withdraws_and_adds() -> None:
    """Budget 3: control places max(2, round(0.15)) = 2, flagged room 1. High r1 (withdrawn before)
    takes the flagged place, so pending medium r2 is withdrawn; clean r5 is a new control item; r4 is
    a manual item, out of the sample although its rewrite is high."""
    candidates = [
        Candidate(1, "C1/r1", "C1", "high"),
        Candidate(2, "C2/r2", "C2", "medium"),
        Candidate(4, "C4/r4", "C4", "high"),
        Candidate(5, "C5/r5", "C5", None),
    ]
    r1 = Item(11, 1, "C1", "high", WITHDRAWN)
    r2 = Item(12, 2, "C2", "medium", "pending")
    r4 = Item(14, 4, "C4", MANUAL, "done")
    s = settings(queue_budget=3, review_sla_hours=24)
    p = plan_day(DAY, candidates, [r1, r2, r4], reviewed=set(), settings=s, planned_at=NOW)

    assert [(a.record_id, a.stratum, a.inclusion_prob) for a in p.plan.admitted] == [
        (1, "high", 1.0),
        (5, "control", 1.0),
    ]
    assert p.undecided == {1: r1, 2: r2}
    assert p.keys == {1: "C1/r1", 5: "C5/r5"}

    w = day_writes(p, meta(1, 5), settings=s, now=NOW, planned={(DAY, "high")})
    assert w.repend == [
        (r1, {"stratum": "high", "priority": 3, "kinds": ["added_content_word"], "words": ["w1"]})
    ]
    assert w.withdraw == [r2]
    assert w.added == {"high": 1, "control": 1}
    assert w.inserts == [
        {
            "record_id": 5,
            "request_id": "r5",
            "conv_id": "C5",
            "day": DAY,
            "inclusion_prob": 1.0,
            "model": "m",
            "prompt_version": "p1",
            "state": "pending",
            "due_at": datetime(2024, 3, 6, 0, 0),
            "created_at": NOW,
            "reviews_needed": 1,
            "stratum": "control",
            "priority": 0,
            "kinds": [],
            "words": [],
        }
    ]
    assert {(r["s"], r["pi"]) for r in w.probs} == {
        ("high", 1.0),
        ("medium", 0.0),
        ("low", 1.0),
        ("control", 1.0),
    }
    assert [r["s"] for r in w.old_days] == ["high"]
    assert sorted(r["stratum"] for r in w.new_days) == ["control", "low", "medium"]

    result = enqueue_result([DAY], [p], [w], {"medium": 1})
    assert (result.added, result.capped, result.subsampled, result.withdrawn) == (
        {"high": 1, "control": 1},
        0,
        {"2024-03-04": ["medium"]},
        {"medium": 1},
    )
