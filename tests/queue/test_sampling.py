"""Sampling: determinism, the subset property, and the day's budget and cap with exact counts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from monitor.queue.sampling import Candidate, admit, control_places, stratum_of
from monitor.sampling import draw, sampled_for_check


@given(seed=st.text(max_size=8), key=st.text(max_size=20))
def test_draw_is_deterministic_and_in_unit_interval(seed: str, key: str) -> None:
    d = draw(seed, "queue", key)
    assert 0.0 <= d < 1.0
    assert d == draw(seed, "queue", key)


@given(
    keys=st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=60),
    low=st.floats(min_value=0, max_value=1),
    high=st.floats(min_value=0, max_value=1),
)
def test_lower_check_rate_admits_a_subset(keys: list[str], low: float, high: float) -> None:
    low, high = min(low, high), max(low, high)
    at_low = {k for k in keys if sampled_for_check("s", k, low)}
    at_high = {k for k in keys if sampled_for_check("s", k, high)}
    assert at_low <= at_high
    assert {k for k in keys if sampled_for_check("s", k, 1.0)} == set(keys)


severities = st.sampled_from([None, "low", "medium", "high"])


@given(
    sev=st.lists(st.tuples(severities, st.integers(0, 6)), max_size=80),
    budget=st.integers(1, 30),
    small=st.integers(1, 30),
)
def test_admission_is_deterministic_and_a_smaller_budget_never_admits_a_higher_stratum_less(
    sev: list[tuple[str | None, int]], budget: int, small: int
) -> None:
    cands = [Candidate(i, f"k{i}", f"conv{c}", s) for i, (s, c) in enumerate(sev)]
    plan = admit(cands, seed="x", budget=budget)
    assert plan.admitted == admit(list(cands), seed="x", budget=budget).admitted
    assert len(plan.admitted) <= budget
    per_conv: dict[str, int] = {}
    by_id = {c.record_id: c for c in cands}
    for a in plan.admitted:
        per_conv[by_id[a.record_id].conv_id] = per_conv.get(by_id[a.record_id].conv_id, 0) + 1
        assert 0 < a.inclusion_prob <= 1
    assert max(per_conv.values(), default=0) <= 3
    # without a cap, a stratum that was subsampled is entirely below the strata above it in priority
    uncapped = admit(cands, seed="x", budget=budget, per_conversation_cap=10**6)
    high = [c for c in cands if c.severity == "high"]
    flagged_room = budget - control_places(budget, 0.05, 2)
    assert uncapped.taken["high"] == min(len(high), max(flagged_room, 0))


def test_a_constructed_day_with_budget_cap_and_control() -> None:
    # 6 high in conv A (cap 3 applies), 2 high in B, 30 medium spread over 15 conversations,
    # 5 low (below the default threshold, so control), 100 clean rewrites in 100 conversations.
    cands = [Candidate(i, f"h{i}", "A", "high") for i in range(6)]
    cands += [Candidate(10 + i, f"hb{i}", "B", "high") for i in range(2)]
    cands += [Candidate(100 + i, f"m{i}", f"M{i % 15}", "medium") for i in range(30)]
    cands += [Candidate(200 + i, f"l{i}", f"L{i}", "low") for i in range(5)]
    cands += [Candidate(1000 + i, f"c{i}", f"C{i}", None) for i in range(100)]
    plan = admit(cands, seed="day", budget=20)
    # control places: max(2, round(0.05 * 20)) = 2; flagged room: 18
    # high: 3 of conv A (cap) + 2 of B = 5 taken, 3 capped; medium: 13 of 30 (subsampled)
    assert +plan.taken == {"high": 5, "medium": 13, "control": 2}
    assert +plan.eligible == {"high": 8, "medium": 30, "control": 105}  # unary + drops zero counts
    assert plan.capped == {"high": 3}
    assert plan.subsampled == ["medium", "control"]  # high fitted the budget; it lost 3 to the cap only
    probs = {a.stratum: a.inclusion_prob for a in plan.admitted}
    assert probs == {"high": 5 / 8, "medium": 13 / 30, "control": 2 / 105}
    assert sum(1 for a in plan.admitted if a.record_id < 6) == 3


def test_existing_items_keep_their_place_and_count_against_budget_and_cap() -> None:
    cands = [Candidate(i, f"k{i}", "A", "high") for i in range(5)] + [Candidate(9, "k9", "B", None)]
    plan = admit(cands, seed="s", budget=5, existing=[(0, "A", "high"), (1, "A", "high")])
    # flagged room 5 - 2 control places - 2 existing = 1; cap leaves conv A one more item
    assert [a.stratum for a in plan.admitted] == ["high", "control"]
    assert +plan.taken == {"high": 3, "control": 1}
    assert +plan.capped == {}


def test_stratum_follows_the_queue_threshold() -> None:
    assert stratum_of("low", "medium") == "control"
    assert stratum_of("low", "low") == "low"
    assert stratum_of(None, "low") == "control"
    assert stratum_of("high", "high") == "high"
    assert (
        control_places(40, 0.05, 2) == 2
        and control_places(100, 0.05, 2) == 5
        and control_places(1, 0.05, 2) == 1
    )
