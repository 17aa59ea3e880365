"""What the ``stats`` command reports, as plain data (its ``--json`` shapes): finding rates, the checks'
precision from verdicts and the whole-traffic estimates (:func:`stats_report`), and with ``--agreement``
the reviewers' agreement and their disagreements (:func:`agreement_report`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, time
from typing import Any

from sqlalchemy.orm import Session

from monitor.severity import SEVERITY_RANK
from monitor.stats.agreement import agreement_table
from monitor.stats.store import (
    DoubleReview,
    demoted_controls,
    finding_rates,
    latest_verdicts,
    precision_by_kind,
    whole_traffic_estimates,
)
from monitor.verdicts import LABELS


def stats_report(
    *,
    session: Session,
    checks: Sequence[tuple[str, int]],
    min_severity: str,
    by: str | None = None,
    since: date | None = None,
) -> dict[str, Any]:
    """The ``stats`` command's figures: ``rates`` of the findings of ``checks`` (``(check_id, version)``
    pairs) at or above ``min_severity`` per group of ``by`` (``monitor.stats.store.GROUPS``; ``None``:
    all), from the rewrites of day ``since`` on; ``verdicts`` (how many), the checks' ``precision`` per kind
    from them, and the whole-traffic ``estimates`` with ``fabricated_among_demoted`` last (none without
    verdicts). Intervals are ``[low, high]`` or ``None``. Raises ``ValueError`` for another ``by``."""
    rates = finding_rates(
        session=session,
        checks=checks,
        min_rank=SEVERITY_RANK[min_severity],
        by=by,
        since=datetime.combine(since, time.min) if since else None,
    )
    pairs = latest_verdicts(session=session, since=since)
    precision = precision_by_kind(pairs)
    estimates = whole_traffic_estimates(pairs, session) if pairs else []
    if pairs:
        estimates.append(demoted_controls(pairs, session, checks))
    return {
        "by": by or "all",
        "min_severity": min_severity,
        "rates": [
            {
                "group": r.group,
                "kind": r.kind,
                "flagged": r.flagged,
                "checked": r.checked,
                "per_1000": r.per_1000,
                "ci95_per_1000": r.ci_per_1000,
            }
            for r in rates
        ],
        "verdicts": len(pairs),
        "precision": precision,
        "estimates": [
            {"name": e.name, "value": e.value, "ci95": e.ci, "coverage": e.coverage, "verdicts": e.verdicts}
            for e in estimates
        ],
    }


def agreement_report(reviews: Sequence[DoubleReview]) -> dict[str, Any]:
    """``stats --agreement``'s figures of the doubly reviewed items ``reviews``
    (``monitor.stats.store.double_reviews``): the :func:`~monitor.stats.agreement.agreement_table` of their
    ratings over every verdict label, and ``disagreements``, each item whose reviewers differ with their
    ratings and its adjudication (``None`` while it awaits one)."""
    table = agreement_table([[(r.label, r.artifact) for r in d.ratings] for d in reviews], LABELS)
    disagreements: list[dict[str, Any]] = [
        {
            "queue_item": d.item_id,
            "request_id": d.request_id,
            "conv_id": d.conv_id,
            "day": d.day.isoformat(),
            "ratings": [
                {"reviewer": r.reviewer, "label": r.label, "artifact": r.artifact} for r in d.ratings
            ],
            "adjudicated": (
                {
                    "reviewer": d.adjudication.reviewer,
                    "label": d.adjudication.label,
                    "artifact": d.adjudication.artifact,
                }
                if d.adjudication
                else None
            ),
        }
        for d in reviews
        if d.disagree
    ]
    return {**table, "disagreements": disagreements}
