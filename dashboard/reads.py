"""Cached reads for the pages (``st.cache_data``): lists and statistics, never claims or verdicts.

Each function takes the database URL as its first argument so two stores never share a cache entry,
and returns plain data (dataclasses, DataFrames). Held in memory only (no ``persist``), so nothing
read here reaches the disk. The ttl bounds how stale another reviewer's writes can look; this
session's own writes clear the cache at once (``resources.reads_changed``). Claims are never cached:
``claim_next`` always asks the database, which is what keeps two reviewers off the same item.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import TypedDict

import pandas as pd
import streamlit as st
from resources import engine
from sqlalchemy.orm import Session

from monitor.alerts.store import list_alerts
from monitor.cases.store import CaseRow, count_cases, list_cases
from monitor.checks import current_versions
from monitor.queue.store import FilterOptions, QueueFilters, QueuePage, filter_options, list_open, queue_depth
from monitor.review.store import learned_table, reviewer_throughput
from monitor.severity import SEVERITY_RANK
from monitor.stats.agreement import agreement_table
from monitor.stats.calibration import Calibration
from monitor.stats.store import (
    calibration,
    demoted_controls,
    double_reviews,
    finding_rates_by,
    latest_verdicts,
    precision_by_kind,
    whole_traffic_estimates,
)
from monitor.store.engine import session_factory
from monitor.verdicts import LABELS

QUEUE_TTL = 15
"""Seconds a queue listing may lag other reviewers' claims (claiming itself never uses it)."""
STATS_TTL = 300
"""Seconds the Overview's rates and estimates may lag: they move by the day, not the second."""


def finding_kinds() -> list[str]:
    """Every finding kind a registered check can report (``monitor.checks.checks_by_kind``)."""
    from monitor.checks import checks_by_kind

    return sorted(checks_by_kind())


def current_checks() -> list[tuple[str, int]]:
    """The registered ``(check_id, version)`` pairs: findings of older versions are not shown."""
    return current_versions()


def _session(url: str) -> Session:
    return session_factory(engine(url))()


@st.cache_data(ttl=QUEUE_TTL, show_spinner=False)
def open_items(
    url: str,
    now: datetime,
    min_severity: str,
    kind: str | None,
    stratum: str | None,
    prompt_version: str | None,
    model: str | None,
    day_from: date | None,
    day_to: date | None,
    overdue_only: bool,
    limit: int,
    offset: int,
) -> QueuePage:
    """One page of open queue items with counts (``monitor.queue.store.list_open``).

    ``now`` should be rounded (``bucket``) so reruns within the bucket hit the cache.
    """
    filters = QueueFilters(kind, stratum, prompt_version, model, day_from, day_to, overdue_only)
    with _session(url) as session:
        return list_open(
            session=session,
            now=now,
            checks=current_checks(),
            min_severity=min_severity,
            filters=filters,
            limit=limit,
            offset=offset,
        )


@st.cache_data(ttl=STATS_TTL, show_spinner=False)
def options(url: str) -> FilterOptions:
    """The Queue page's filter choices."""
    with _session(url) as session:
        return filter_options(session=session)


class Overview(TypedDict):
    """What :func:`overview` returns; its docstring gives the columns of each frame."""

    by_day: pd.DataFrame
    by_prompt: pd.DataFrame
    depth: int
    overdue: int
    throughput: pd.DataFrame
    precision: pd.DataFrame
    estimates: pd.DataFrame
    alerts: pd.DataFrame
    learned: pd.DataFrame
    agreement: pd.DataFrame
    disagreements: int


LEARNED_DAYS = 7
"""The Overview's "learned this week": entries whose newest counted verdict is this recent."""


@st.cache_data(ttl=STATS_TTL, show_spinner=False)
def overview(url: str, now: datetime, min_severity: str, since: date | None) -> Overview:
    """Everything the Overview page draws, as DataFrames and numbers.

    Keys: ``by_day`` and ``by_prompt`` (columns group, kind, flagged, checked, per_1000, lo, hi: rates
    per 1,000 checked rewrites with Wilson 95% bounds), ``depth``, ``overdue``, ``throughput`` (day,
    reviewer, verdicts), ``precision`` (kind, verdicts, confirmed, precision, lo, hi), ``estimates``
    (name, value, lo, hi, coverage, verdicts; shares in [0, 1]; the last one, fabricated_among_demoted,
    from the control sample), ``alerts`` and ``learned`` (rewriter, kind, word, dismissed, confirmed,
    reviewers, effect, last verdict: the learned entries with a verdict in the last
    :data:`LEARNED_DAYS` days, those that move a grade first), ``agreement`` (rating, statistic, value, lo,
    hi, raw agreement, items: ``monitor.stats.agreement`` on the items two reviewers judged; empty
    without any) and ``disagreements`` (how many await adjudication).
    """
    since_dt = datetime.combine(since, datetime.min.time()) if since else None
    checks = current_checks()
    rates = finding_rates(url, now, min_severity, since)
    with _session(url) as session:
        depth, overdue = queue_depth(session=session, now=now)
        pairs = latest_verdicts(session=session, since=since)
        precision = precision_by_kind(pairs)
        estimates = whole_traffic_estimates(pairs, session)
        if pairs:
            estimates.append(demoted_controls(pairs, session, checks))
        week = now.replace(tzinfo=None) - timedelta(days=LEARNED_DAYS)
        recent = sorted(
            (
                e
                for e in learned_table(session=session, checks=checks).entries.values()
                if e.last_at and e.last_at >= week
            ),
            key=lambda e: (e.steps == 0, e.rewriter, e.kind, e.lemma),
        )
        throughput = reviewer_throughput(session=session, now=now, days=14)
        doubled = double_reviews(session=session, since=since)
        agree = agreement_table([[(r.label, r.artifact) for r in d.ratings] for d in doubled], LABELS)
        alerts = list_alerts(session=session, since=since_dt, limit=50)
        out: Overview = {
            "by_day": rates["day"],
            "by_prompt": rates["prompt_version"],
            "depth": depth,
            "overdue": overdue,
            "throughput": pd.DataFrame(
                [{"day": t.day, "reviewer": t.reviewer, "verdicts": t.verdicts} for t in throughput],
                columns=["day", "reviewer", "verdicts"],
            ),
            "precision": pd.DataFrame(
                [
                    {
                        "kind": kind,
                        "verdicts": p["verdicts"],
                        "confirmed": p["confirmed"],
                        "precision": p["precision"],
                        "lo": p["ci"][0] if p["ci"] else None,
                        "hi": p["ci"][1] if p["ci"] else None,
                    }
                    for kind, p in precision.items()
                ],
                columns=["kind", "verdicts", "confirmed", "precision", "lo", "hi"],
            ),
            "estimates": pd.DataFrame(
                [
                    {
                        "name": e.name,
                        "value": e.value,
                        "lo": e.ci[0] if e.ci else None,
                        "hi": e.ci[1] if e.ci else None,
                        "coverage": e.coverage,
                        "verdicts": e.verdicts,
                    }
                    for e in estimates
                ],
                columns=["name", "value", "lo", "hi", "coverage", "verdicts"],
            ),
            "alerts": pd.DataFrame(
                [
                    {
                        "raised": a.created_at,
                        "group": a.group_key,
                        "status": a.status,
                        "window": f"{a.window_start:%Y-%m-%d %H:%M} to {a.window_end:%H:%M}",
                        "flagged": a.window_flagged,
                        "rewrites": a.window_rewrites,
                        "rate": a.window_rate,
                        "baseline": a.baseline_rate,
                        "sent to": a.delivered_to,
                    }
                    for a in alerts
                ],
                columns=[
                    "raised",
                    "group",
                    "status",
                    "window",
                    "flagged",
                    "rewrites",
                    "rate",
                    "baseline",
                    "sent to",
                ],
            ),
            "learned": pd.DataFrame(
                [
                    {
                        "rewriter": e.rewriter,
                        "kind": e.kind,
                        "word": e.lemma,
                        "dismissed": e.dismissed,
                        "confirmed": e.confirmed,
                        "reviewers": e.reviewers,
                        "effect": e.effect + (" (pinned)" if e.pinned is not None else ""),
                        "last verdict": e.last_at,
                    }
                    for e in recent
                ],
                columns=[
                    "rewriter",
                    "kind",
                    "word",
                    "dismissed",
                    "confirmed",
                    "reviewers",
                    "effect",
                    "last verdict",
                ],
            ),
            "agreement": pd.DataFrame(
                [
                    {
                        "rating": name,
                        "statistic": fig["statistic"],
                        "value": fig["value"],
                        "lo": fig["ci95"][0] if fig["ci95"] else None,
                        "hi": fig["ci95"][1] if fig["ci95"] else None,
                        "raw agreement": fig["observed_agreement"],
                        "items": fig["items"],
                    }
                    for name, fig in [
                        ("label", agree["label"]),
                        ("first wrong artifact", agree["artifact"]),
                        *((f"{lab} or not", f) for lab, f in agree["per_label"].items()),
                    ]
                ]
                if doubled
                else [],
                columns=["rating", "statistic", "value", "lo", "hi", "raw agreement", "items"],
            ),
            "disagreements": sum(1 for d in doubled if d.disagree and d.adjudication is None),
        }
    return out


@st.cache_resource(ttl=STATS_TTL, show_spinner=False)
def finding_rates(url: str, now: datetime, min_severity: str, since: date | None) -> dict[str, pd.DataFrame]:
    """The finding rates per ``day`` and per ``prompt_version`` (the keys), each a DataFrame with columns
    group, kind, flagged, checked, per_1000, lo, hi (rates per 1,000 checked rewrites at
    ``min_severity`` and above, Wilson 95% bounds), from the rewrites checked since ``since`` (all when
    None); ``now`` is the cache bucket (:func:`bucket`).

    Kept as a resource for :data:`STATS_TTL` seconds: only checking moves these rates, never the
    dashboard's own writes, whose clearing of the cached reads would make an Overview opened again after
    a verdict read every check run again (0.55 s on 100,000 rewrites, most of the page's reading).
    Callers must not modify the frames (a resource is shared, not copied)."""
    since_dt = datetime.combine(since, datetime.min.time()) if since else None
    with _session(url) as session:
        grouped = finding_rates_by(
            session=session,
            checks=current_checks(),
            min_rank=SEVERITY_RANK[min_severity],
            groupings=("day", "prompt_version"),
            since=since_dt,
        )
    columns = ["group", "kind", "flagged", "checked", "per_1000", "lo", "hi"]
    return {
        by: pd.DataFrame(
            [
                {
                    "group": r.group,
                    "kind": r.kind,
                    "flagged": r.flagged,
                    "checked": r.checked,
                    "per_1000": r.per_1000,
                    "lo": r.ci_per_1000[0] if r.ci_per_1000 else None,
                    "hi": r.ci_per_1000[1] if r.ci_per_1000 else None,
                }
                for r in rows
            ],
            columns=columns,
        )
        for by, rows in ((g, grouped[g]) for g in ("day", "prompt_version"))
    }


@st.cache_data(ttl=60, show_spinner=False)
def cases(
    url: str, label: str | None, since: date | None, include_superseded: bool, limit: int, offset: int
) -> tuple[list[CaseRow], int]:
    """One page of regression cases (newest verdict first) and how many match the filters."""
    since_dt = datetime.combine(since, datetime.min.time()) if since else None
    with _session(url) as session:
        rows = list_cases(
            session=session,
            label=label,
            since=since_dt,
            include_superseded=include_superseded,
            limit=limit,
            offset=offset,
        )
        total = count_cases(
            session=session, label=label, since=since_dt, include_superseded=include_superseded
        )
    return rows, total


@st.cache_resource(ttl=60, show_spinner=False)
def step_calibration(url: str) -> Calibration:
    """The calibration of the grading steps from every standing verdict (``monitor.stats.store.
    calibration``), for the estimate beside each finding. It reads every verdict, so it is kept a minute
    as a resource: a resource outlives the cache clearing after this session's own writes, which would
    otherwise read it again for every item (one verdict more barely moves an estimate)."""
    with _session(url) as session:
        return calibration(session=session, checks=current_versions())


def bucket(now: datetime, minutes: int = 1) -> datetime:
    """``now`` cut to a multiple of ``minutes``: the cache key of reads that depend on the time
    (overdue counts), so reruns within the bucket reuse the cached result."""
    return now.replace(minute=now.minute - now.minute % minutes, second=0, microsecond=0)
