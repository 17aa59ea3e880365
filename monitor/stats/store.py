"""Rates and estimates: finding rates per group, the checks' precision from verdicts, and the
whole-traffic rate of bad rewrites estimated from the sampled verdicts.

Estimation: each (day, stratum) is a stratum of a stratified random sample. Its population is
``N = taken / π`` (π from the queue items, which already includes the check rate). With ``v``
verdicts of which ``b`` are bad, the estimated share of bad rewrites is ``Σ N·(b/v) / Σ N`` over the
strata that have verdicts (the Horvitz–Thompson / post-stratified estimator), with variance
``Σ N²·(1 − v/N)·p̃(1−p̃)/v / (Σ N)²`` (Cochran, *Sampling Techniques*, 3rd ed., §5.3) where
``p̃ = (b + z²/2) / (v + z²)`` is the Agresti–Coull centre (Agresti & Coull 1998, "Approximate is
better than exact"): with the plain ``b/v`` a stratum of three fine verdicts would claim a zero-width
interval. The 95% interval is the estimate ± z·√variance, clipped to [0, 1]. ``coverage`` is the
share of the population in strata that have verdicts: the estimate speaks only for them. Withdrawn
queue items (displaced by a later admission of their day) are not part of any sample.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import distinct, func, literal, null, select, tuple_, union_all
from sqlalchemy.orm import Session

from monitor.cases.store import item_ratings, standing_ids
from monitor.checks.learned import KINDS as LEARNED_KINDS
from monitor.checks.learned import learned_steps, rewriter_key
from monitor.checks.store.runs import fully_checked
from monitor.intervals import Z95, agresti_coull_centre, wilson
from monitor.queue.store import WITHDRAWN
from monitor.review.store import standing_reviews
from monitor.stats.calibration import Calibration, PriorTable, outcome, shipped_table
from monitor.stats.evaluate import REWRITE_KINDS
from monitor.store.models import Finding, QueueItem, Record, Verdict
from monitor.verdicts import FINE_LABELS, Rating, first_per_reviewer

GROUPS = ("prompt_version", "model", "day")
Z = Z95
"""The normal quantile of a two-sided 95% interval."""
BAD_ARTIFACTS = ("chat_state", "rewrite")
"""A verdict whose first wrong artifact is the chat state or the rewrite means the rewrite was bad."""


@dataclass(frozen=True, slots=True)
class KindRate:
    """Rewrites with at least one finding of ``kind`` (at or above the threshold) among ``checked``."""

    group: str
    kind: str
    flagged: int
    checked: int

    @property
    def per_1000(self) -> float | None:
        return 1000 * self.flagged / self.checked if self.checked else None

    @property
    def ci_per_1000(self) -> tuple[float, float] | None:
        ci = wilson(self.flagged, self.checked)
        return (1000 * ci[0], 1000 * ci[1]) if ci else None


@dataclass(frozen=True, slots=True)
class Estimate:
    """A whole-traffic share estimated from verdicts: value, 95% interval, and population coverage."""

    name: str
    value: float | None
    ci: tuple[float, float] | None
    coverage: float
    verdicts: int


def _group_column(by: str | None) -> Any:
    if by is None:
        return literal("all")
    if by == "day":
        return func.date(Record.ts)
    if by in ("prompt_version", "model"):
        return func.coalesce(getattr(Record, by), "(none)")
    raise ValueError(f"--by must be one of {', '.join(GROUPS)}")


def finding_rates(
    *,
    session: Session,
    checks: Sequence[tuple[str, int]],
    min_rank: int,
    by: str | None = None,
    since: datetime | None = None,
) -> list[KindRate]:
    """Per group and finding kind: rewrites flagged at ``severity_rank >= min_rank`` among those fully
    checked at the current versions. Kinds with no finding in a group are absent.

    ``by``: ``None`` (one group, ``all``) or one of :data:`GROUPS`; raises ``ValueError`` otherwise.
    """
    one = finding_rates_by(session=session, checks=checks, min_rank=min_rank, groupings=(by,), since=since)
    return one[by]


def finding_rates_by(
    *,
    session: Session,
    checks: Sequence[tuple[str, int]],
    min_rank: int,
    groupings: Sequence[str | None],
    since: datetime | None = None,
) -> dict[str | None, list[KindRate]]:
    """:func:`finding_rates` for several groupings (e.g. ``("day", "prompt_version")``) from one pass.

    Both parts of the one statement group by every requested column at once and the rates of each
    grouping are summed from those cells: a record lies in exactly one cell, so its distinct counts add
    up. The costly part, finding the fully checked records among all check runs, then runs once instead
    of twice per grouping (the Overview page draws two groupings).
    """
    columns = {by: _group_column(by).label(f"g{i}") for i, by in enumerate(groupings)}
    checked = fully_checked(checks, start=since, cte=True)
    keys = list(columns.values())
    base = (
        select(*keys, null().label("kind"), func.count())
        .select_from(Record)
        .join(checked, checked.c.record_id == Record.id)
    )
    flagged_stmt = (
        select(*keys, Finding.kind, func.count(distinct(Finding.record_id)))
        .select_from(Record)
        .join(checked, checked.c.record_id == Record.id)
        .join(Finding, Finding.record_id == Record.id)
        .where(
            Finding.severity_rank >= min_rank,
            tuple_(Finding.check_id, Finding.check_version).in_(checks),
        )
        .group_by(*keys, Finding.kind)
    )
    if since is not None:
        base = base.where(Record.ts >= since)
        flagged_stmt = flagged_stmt.where(Record.ts >= since)
    width = len(keys)
    totals: dict[tuple[int, str], int] = defaultdict(int)
    flagged: dict[tuple[int, str, str], int] = defaultdict(int)
    # One statement, so that the fully checked records (most of the cost: every check run is read) are
    # found once, in a common table expression both parts read (SQLite and PostgreSQL materialise one
    # referenced twice): 0.55 s instead of 1.03 s on 100,000 rewrites (benchmarks.dashboard_load's store).
    # A row without a kind is a cell's count of checked records; with one, its flagged records.
    for row in session.execute(union_all(base.group_by(*keys), flagged_stmt)):
        kind, n = row[width], row[width + 1]
        for i in range(width):
            if kind is None:
                totals[(i, str(row[i]))] += n
            else:
                flagged[(i, str(row[i]), kind)] += n
    out: dict[str | None, list[KindRate]] = {}
    for i, by in enumerate(columns):
        rows = [KindRate(g, kind, n, totals[(i, g)]) for (j, g, kind), n in flagged.items() if j == i]
        out[by] = sorted(rows, key=lambda r: (r.group, r.kind))
    return out


def finding_steps(
    *, session: Session, checks: Sequence[tuple[str, int]]
) -> list[tuple[str, str, str | None, dict[str, Any]]]:
    """``(request_id, check_id, step, evidence)`` of every stored finding of ``checks`` (``(check_id,
    version)`` pairs), in no set order; ``step`` is ``None`` on findings stored before migration 0012."""
    rows = session.execute(
        select(Finding.request_id, Finding.check_id, Finding.step, Finding.evidence).where(
            tuple_(Finding.check_id, Finding.check_version).in_(checks)
        )
    )
    return [(request_id, check_id, step, evidence) for request_id, check_id, step, evidence in rows]


def latest_verdicts(*, session: Session, since: date | None = None) -> list[tuple[QueueItem, Verdict]]:
    """Each reviewed queue item with its standing verdict (``monitor.cases.store.standing_ids``: the
    newest, or on a doubly reviewed item the agreed or adjudicated one); an item that awaits a second
    reviewer or an adjudicator is left out until it is settled."""
    standing = sorted(standing_ids(session).values())
    out: list[tuple[QueueItem, Verdict]] = []
    for start in range(0, len(standing), 500):
        stmt = select(QueueItem, Verdict).join(Verdict, Verdict.queue_item_id == QueueItem.id)
        stmt = stmt.where(Verdict.id.in_(standing[start : start + 500]))
        if since is not None:
            stmt = stmt.where(QueueItem.day >= since)
        out += [(item, verdict) for item, verdict in session.execute(stmt)]
    return out


def precision_by_kind(pairs: Sequence[tuple[QueueItem, Verdict]]) -> dict[str, dict[str, Any]]:
    """Per finding kind: verdicted items carrying it, how many the reviewer confirmed (label not fine),
    precision and its Wilson 95% interval."""
    seen: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item, verdict in pairs:
        for kind in item.kinds:
            seen[kind][0] += 1
            seen[kind][1] += verdict.label not in FINE_LABELS
    return {
        kind: {"verdicts": n, "confirmed": c, "precision": c / n if n else None, "ci": wilson(c, n)}
        for kind, (n, c) in sorted(seen.items())
    }


def whole_traffic_estimates(pairs: Sequence[tuple[QueueItem, Verdict]], session: Session) -> list[Estimate]:
    """Estimated whole-traffic share of bad rewrites, and of each first-wrong artifact (see module doc)."""
    population: dict[tuple[date, str], float] = {}
    for day, stratum, taken, pi in session.execute(
        select(QueueItem.day, QueueItem.stratum, func.count(), func.max(QueueItem.inclusion_prob))
        .where(QueueItem.state != WITHDRAWN)
        .group_by(QueueItem.day, QueueItem.stratum)
    ):
        population[(day, stratum)] = taken / pi if pi else 0.0
    by_stratum: dict[tuple[date, str], list[Verdict]] = defaultdict(list)
    for item, verdict in pairs:
        by_stratum[(item.day, item.stratum)].append(verdict)
    total_n = sum(population.values())

    def estimate(name: str, is_bad: Any) -> Estimate:
        covered = num = var = 0.0
        for key, verdicts in by_stratum.items():
            n_pop, v = population.get(key, 0.0), len(verdicts)
            if not v or not n_pop:
                continue
            bad = sum(1 for x in verdicts if is_bad(x))
            covered += n_pop
            num += n_pop * bad / v
            # The Agresti–Coull centre in place of bad/v: a stratum whose few verdicts are all fine
            # (or all bad), or that has one verdict, is not certain; a fully reviewed one is.
            p_adj = agresti_coull_centre(bad, v, Z)
            var += n_pop * n_pop * max(0.0, 1 - v / n_pop) * p_adj * (1 - p_adj) / v
        if not covered:
            return Estimate(name, None, None, 0.0, 0)
        value = num / covered
        half = Z * math.sqrt(var) / covered
        return Estimate(
            name,
            value,
            (max(0.0, value - half), min(1.0, value + half)),
            covered / total_n if total_n else 0.0,
            sum(len(v) for v in by_stratum.values()),
        )

    out = [estimate("bad_rewrite", lambda v: v.artifact in BAD_ARTIFACTS and v.label not in FINE_LABELS)]
    for artifact in ("chat_state", "rewrite", "retrieval", "generation"):
        out.append(estimate(f"first_wrong:{artifact}", lambda v, a=artifact: v.artifact == a))
    return out


def demoted_controls(
    pairs: Sequence[tuple[QueueItem, Verdict]], session: Session, checks: Sequence[tuple[str, int]]
) -> Estimate:
    """Estimated share of fabrications among the rewrites whose flagged words the verdicts demoted, from
    the control sample (issue 15, part 3): what the learning may be hiding.

    The domain: control items with a verdict whose findings of the learned kinds (current ``checks``)
    carry a word with a learned step down. Demoted words fall below the queue's threshold, so only the
    random control sample still sees them; the estimate is the Horvitz–Thompson ratio
    Σ (b_i / π_i) / Σ (1 / π_i) over the domain (b_i = 1 for a ``fabricated_constraint`` verdict; π_i the
    item's inclusion probability), with a Wilson 95% interval on the unweighted counts (an
    approximation: the weights within a day's control stratum are equal). ``coverage`` is the share of
    the control verdicts in the domain. No domain item: value None.
    """
    controls = [(i, v) for i, v in pairs if i.stratum == "control" and i.inclusion_prob > 0]
    if not controls:
        return Estimate("fabricated_among_demoted", None, None, 0.0, 0)
    demoted: set[int] = set()
    for record_id, evidence in session.execute(
        select(Finding.record_id, Finding.evidence).where(
            Finding.record_id.in_([i.record_id for i, _v in controls]),
            Finding.kind.in_(LEARNED_KINDS),
            tuple_(Finding.check_id, Finding.check_version).in_(list(checks)),
        )
    ):
        if isinstance(evidence, dict) and any(step < 0 for step in learned_steps(evidence)):
            demoted.add(record_id)
    domain = [(i, v) for i, v in controls if i.record_id in demoted]
    if not domain:
        return Estimate("fabricated_among_demoted", None, None, 0.0, 0)
    bad = [v.label == "fabricated_constraint" for _i, v in domain]
    weights = [1 / i.inclusion_prob for i, _v in domain]
    value = sum(w for w, b in zip(weights, bad, strict=True) if b) / sum(weights)
    return Estimate(
        "fabricated_among_demoted",
        value,
        wilson(sum(bad), len(bad)),
        len(domain) / len(controls),
        len(domain),
    )


@dataclass(frozen=True, slots=True)
class DoubleReview:
    """A queue item judged by two or more reviewers: each reviewer's first verdict, the one given blind,
    in the order they gave them (``ratings``), and the newest adjudication, if any."""

    item_id: int
    request_id: str
    conv_id: str
    day: date
    ratings: list[Rating]
    adjudication: Rating | None

    @property
    def disagree(self) -> bool:
        """Whether the reviewers differ on label or first wrong artifact."""
        return len({(r.label, r.artifact) for r in self.ratings}) > 1


def double_reviews(*, session: Session, since: date | None = None) -> list[DoubleReview]:
    """Every queue item with verdicts from two or more distinct reviewers (adjudications aside), oldest
    day first: what agreement is computed on and what awaits adjudication. Two queries (the second
    ``monitor.cases.store.item_ratings``)."""
    multi = (
        select(Verdict.queue_item_id)
        .where(Verdict.adjudication.is_(False))
        .group_by(Verdict.queue_item_id)
        .having(func.count(distinct(Verdict.reviewer)) >= 2)
    )
    stmt = select(QueueItem.id, QueueItem.request_id, QueueItem.conv_id, QueueItem.day).where(
        QueueItem.id.in_(multi)
    )
    if since is not None:
        stmt = stmt.where(QueueItem.day >= since)
    items = {r.id: r for r in session.execute(stmt.order_by(QueueItem.day, QueueItem.id))}
    ratings = item_ratings(session, list(items)) if items else {}
    out = []
    for item_id, item in items.items():
        given = ratings.get(item_id, (2, []))[1]
        adjudications = [r for r in given if r.adjudication]
        out.append(
            DoubleReview(
                item_id=item_id,
                request_id=item.request_id,
                conv_id=item.conv_id,
                day=item.day,
                ratings=first_per_reviewer(given),
                adjudication=adjudications[-1] if adjudications else None,
            )
        )
    return out


def calibration(
    *, session: Session, checks: Sequence[tuple[str, int]], table: PriorTable | None = None
) -> Calibration:
    """The calibrated precision of every (rewriter, finding kind, grading step) the verdicts in the store
    speak to (``monitor.stats.calibration``): per queue item with a standing verdict
    (``monitor.review.store.standing_reviews``), what the verdict says of each (kind, step) of the item's
    findings of the current ``checks`` of a rewrite kind, at any severity, once per item and key. The
    rewriter is the item's prompt version, else its model (``rewriter_key``). ``table`` is the prior
    (default: the shipped one). Reads only."""
    observations: list[tuple[tuple[str, str, str], bool]] = []
    for item, standing, findings in standing_reviews(session=session, checks=checks):
        rewriter = rewriter_key(item.prompt_version, item.model)
        keys = {(rewriter, f.kind, f.step or "") for f in findings if f.kind in REWRITE_KINDS}
        for key in sorted(keys):
            got = outcome(standing.label, key[1])
            if got is not None:
                observations.append((key, got))
    return Calibration.from_observations(observations, table if table is not None else shipped_table())


class HeldCalibration:
    """The store's :func:`calibration` for a walk through the queue, read again at most every ``ttl``
    seconds: it reads every standing verdict, which is too much for each item a reviewer opens, and one
    verdict more barely moves an estimate (the dashboard caches it as long: ``dashboard/reads.py``).
    ``clock`` is ``time.monotonic`` unless a test gives another."""

    def __init__(
        self,
        *,
        session: Session,
        checks: Sequence[tuple[str, int]],
        ttl: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session, self.checks, self.ttl, self.clock = session, checks, ttl, clock
        self._held: tuple[float, Calibration] | None = None

    def get(self) -> Calibration:
        """The calibration, read now when none is held or the one held is older than ``ttl``."""
        now = self.clock()
        if self._held is None or now - self._held[0] > self.ttl:
            self._held = (now, calibration(session=self.session, checks=self.checks))
        return self._held[1]
