"""Deterministic sampling: which rewrites get checked, and which checked rewrites reach the review queue.

Pure functions, no I/O. Every random choice is a *draw* (``monitor.sampling.draw``): a rerun makes the
same choices, and with the same seed a lower rate admits a subset of what a higher rate admits.

Queue admission for one day (:func:`admit`): strata in priority order ``high``, ``medium``, ``low``
(only when the queue threshold admits low), then ``control`` (checked rewrites with no finding at or
above the threshold). The control sample gets ``max(control_min, round(control_share * budget))``
places, the flagged strata share the rest in priority order. Within a stratum that does not fit, the
records with the smallest draws are taken: a simple random sample without replacement, so each
record's inclusion probability is ``n / N`` (taken / eligible in the stratum). At most
``per_conversation_cap`` items per conversation per day; records passed over for that are counted.
Horvitz–Thompson weighting (1/π) of verdicts then estimates whole-traffic rates (see ``stats``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from monitor.sampling import draw
from monitor.severity import SEVERITY_RANK

STRATA = ("high", "medium", "low", "control")
PRIORITY = {"high": 3, "medium": 2, "low": 1, "control": 0}


def reviews_needed(seed: str, key: str, *, per_item: int, double_share: float) -> int:
    """Distinct reviewers the queue item of the record with ``key`` needs: ``per_item``, or at least 2
    when its draw falls below ``double_share`` (the blind second review of issue 16). The draw is its
    own purpose, independent of the admission draw, so the doubled items are a simple random sample of
    every stratum alike (controls and flagged), and agreement measured on them speaks for the queue."""
    if double_share > 0 and draw(seed, "double_review", key) < double_share:
        return max(2, per_item)
    return per_item


@dataclass(frozen=True, slots=True)
class Candidate:
    """A checked rewrite of the day: its record id and key, conversation, and top finding severity.

    ``severity`` is ``None`` for a rewrite with no finding at or above the queue threshold (control).
    """

    record_id: int
    key: str
    conv_id: str
    severity: str | None


@dataclass(frozen=True, slots=True)
class Admission:
    """A record admitted to the queue: its stratum and inclusion probability π (0 < π <= 1)."""

    record_id: int
    stratum: str
    inclusion_prob: float


@dataclass
class AdmissionPlan:
    """The outcome of :func:`admit` for one day.

    ``admitted`` are new queue items; ``eligible[s]`` / ``taken[s]`` count stratum ``s`` (existing
    items included), so π = taken / eligible; ``capped[s]`` counts records of ``s`` passed over for
    the per-conversation cap; ``subsampled`` lists strata that did not fit the budget.
    """

    admitted: list[Admission] = field(default_factory=list)
    eligible: Counter[str] = field(default_factory=Counter)
    taken: Counter[str] = field(default_factory=Counter)
    capped: Counter[str] = field(default_factory=Counter)
    subsampled: list[str] = field(default_factory=list)

    def inclusion_prob(self, stratum: str) -> float:
        """π of stratum ``s``: taken / eligible (1.0 for an empty stratum), at most 1.0: an item kept
        while its rewrite awaits a re-check is taken without being eligible."""
        n, big_n = self.taken[stratum], self.eligible[stratum]
        return min(1.0, n / big_n) if big_n else 1.0


def stratum_of(severity: str | None, min_severity: str) -> str:
    """The stratum of a candidate: its severity when at or above ``min_severity``, else ``control``."""
    if severity is None or SEVERITY_RANK[severity] < SEVERITY_RANK[min_severity]:
        return "control"
    return severity


def control_places(budget: int, control_share: float, control_min: int) -> int:
    """Places reserved for the control sample: ``max(control_min, round(control_share * budget))``,
    never more than the budget."""
    return min(budget, max(control_min, round(control_share * budget)))


def admit(
    candidates: Sequence[Candidate],
    *,
    seed: str,
    budget: int,
    min_severity: str = "medium",
    control_share: float = 0.05,
    control_min: int = 2,
    per_conversation_cap: int = 3,
    existing: Iterable[tuple[int, str, str]] = (),
) -> AdmissionPlan:
    """Choose the day's queue items.

    ``candidates`` are the day's checked rewrites (including those already queued); ``existing`` are
    ``(record_id, conv_id, stratum)`` of the day's items that must keep their place (the queue passes
    the items a reviewer has touched; see ``monitor.queue.store.enqueue_days``): they count against
    the budget and the cap. Deterministic: the same inputs give the same plan.
    """
    plan = AdmissionPlan()
    existing = list(existing)
    queued = {rid for rid, _c, _s in existing}
    per_conv: Counter[str] = Counter(conv for _r, conv, _s in existing)
    by_stratum: dict[str, list[Candidate]] = {s: [] for s in STRATA}
    for c in candidates:
        by_stratum[stratum_of(c.severity, min_severity)].append(c)
    for _rid, _conv, s in existing:
        plan.taken[s] += 1
    for s in STRATA:
        plan.eligible[s] = len(by_stratum[s])
    control_budget = control_places(budget, control_share, control_min)
    flagged_left = budget - control_budget - sum(plan.taken[s] for s in STRATA if s != "control")
    control_left = control_budget - plan.taken["control"]
    for s in STRATA:
        if s == "low" and SEVERITY_RANK[min_severity] > SEVERITY_RANK["low"]:
            continue
        room = control_left if s == "control" else flagged_left
        pool = sorted(
            (c for c in by_stratum[s] if c.record_id not in queued),
            key=lambda c: draw(seed, "queue", c.key),
        )
        if len(pool) > max(room, 0):
            plan.subsampled.append(s)
        for c in pool:
            if room <= 0:
                break
            if per_conv[c.conv_id] >= per_conversation_cap:
                plan.capped[s] += 1
                continue
            per_conv[c.conv_id] += 1
            plan.taken[s] += 1
            room -= 1
            plan.admitted.append(Admission(c.record_id, s, 0.0))
        if s == "control":
            control_left = room
        else:
            flagged_left = room
    plan.admitted = [Admission(a.record_id, a.stratum, plan.inclusion_prob(a.stratum)) for a in plan.admitted]
    return plan
