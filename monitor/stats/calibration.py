"""A calibrated precision per (rewriter, finding kind, grading step), learned from the verdicts (issue 34).

Hand rules reach a ceiling on rewriters nobody read; what they miss is the rewriter's own style, and a
deployment has it in its reviewers' verdicts. A grading step ("keyword facet", "content word in the
question's frame") recurs on every rewriter every day, where a single word does not: so the estimate is
kept per step, not per word.

For each key (rewriter, kind, step) the probability *p* that a finding of that step is a real problem on
that rewriter gets a Beta posterior (the Beta-Binomial model; Gelman et al., "Bayesian Data Analysis",
3rd ed., sections 2.4 and 5.3). What counts (:func:`outcome`):

- **for**: an error label of the rewrite or of the chat state: one that confirms the finding's kind
  (:data:`CONFIRMS`: ``fabricated_constraint`` for the fabrication kinds, ``dropped_constraint`` for
  ``dropped_qualifier`` and ``intent_dropped``, ...) and one of another kind alike: the finding brought
  a real problem to the reviewer, which is what the queue is for. Counted against, the other errors
  demoted real fabrications of rewriters whose wrong rewrites often hold two errors (on the shared
  labelled files, ``scripts/simulate_review.py --cv``: fabrication recall at medium+ 0.72 of today's
  pooled, against 1.0 when they count for);
- **against**: ``ok``, ``false_alarm_synonym``, and a label whose first wrong artifact comes after the
  rewrite (``ranking``, ``generation``: the rewrite was fine).

Only the rewrite kinds are calibrated (``monitor.stats.evaluate.REWRITE_KINDS``): the chat-state kinds
judge the logging, which no verdict label speaks to.

The prior is partial pooling in two levels (Gelman, ch. 5):

1. the **table** shipped with the package (:data:`TABLE_FILE`, made by ``scripts/calibrate_steps.py``
   from the labelled files it names): the step's precision over other rewriters, at the weight of
   :data:`TABLE_WEIGHT` verdicts (a prior, never a rule: a handful of verdicts outweighs it);
2. the **other rewriters** of the deployment: their verdicts on the same (kind, step) move the prior's
   mean, and its weight grows with them up to :data:`POOL_WEIGHT` verdicts, so a rewriter's own verdicts
   soon speak louder than the pool.

Posterior: Beta(m·w + for, (1 − m)·w + against), m the pooled mean and w its weight; the table's figure
is Laplace-smoothed, (confirmed + 1) / (n + 2). The estimate is the
posterior mean; its interval the central 90% (5% and 95% quantiles). A step the table does not know
takes its kind's pooled figure, else 1/2. Pure: standard library only.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from monitor.checks.learned import beta_quantile

TABLE_FILE = Path(__file__).resolve().parent.parent / "data" / "step_calibration.json"
"""The shipped prior table (``scripts/calibrate_steps.py`` writes it; the file names its sources)."""
TABLE_WEIGHT = 4.0
"""Verdicts' worth of the shipped table's figure for a step: weak, a prior from other rewriters."""
POOL_WEIGHT = 8.0
"""The most the pooled prior (table plus the deployment's other rewriters) weighs, in verdicts: eight
verdicts of the rewriter's own weigh as much as everything known of the step elsewhere."""
INTERVAL = (0.05, 0.95)
"""The quantiles of the interval shown with an estimate (a central 90% credible interval)."""

FINE = frozenset({"ok", "false_alarm_synonym"})
"""Verdict labels that mean the rewrite was fine: against every finding on it."""
CONFIRMS: dict[str, frozenset[str]] = {
    "fabricated_constraint": frozenset({"added_content_word", "qualifier_conflict", "replaced_term"}),
    "dropped_constraint": frozenset({"dropped_qualifier", "intent_dropped"}),
    "wrong_antecedent": frozenset({"wrong_antecedent", "antecedent_not_in_input"}),
    "unresolved_reference": frozenset({"unresolved_reference"}),
    "not_a_query": frozenset({"not_a_query"}),
    "window_truncated": frozenset({"window_truncated"}),
    "missing_assistant_turns": frozenset({"missing_assistant_turns"}),
    "foreign_session": frozenset({"session_mismatch"}),
}
"""The finding kinds each error label confirms (``monitor.verdicts.Label``)."""


AFTER_THE_REWRITE = frozenset({"ranking", "generation"})
"""Error labels whose first wrong artifact is the retrieval or the answer: the rewrite was fine."""


def outcome(label: str, kind: str) -> bool | None:
    """What a verdict ``label`` says of a finding of ``kind`` (module doc): False when the rewrite was
    fine (:data:`FINE`, :data:`AFTER_THE_REWRITE`), else True. None is reserved for a label that says
    nothing of the rewrite (none today)."""
    return label not in FINE and label not in AFTER_THE_REWRITE


Key = tuple[str, str, str]
"""(rewriter, kind, step): the rewriter is the prompt version when logged, else the model, else ""."""


@dataclass(frozen=True, slots=True)
class Counts:
    """Verdicts for (``confirmed``: any error, :func:`outcome`) and against (``dismissed``) findings of
    one key."""

    confirmed: int = 0
    dismissed: int = 0

    @property
    def n(self) -> int:
        return self.confirmed + self.dismissed


@dataclass(frozen=True, slots=True)
class Estimate:
    """The calibrated precision of one key: posterior ``mean``, interval ``low``-``high``, the key's own
    ``counts`` and the pooled prior's mean and weight it started from."""

    key: Key
    mean: float
    low: float
    high: float
    counts: Counts
    prior_mean: float
    prior_weight: float

    def describe(self) -> str:
        """One line such as "0.18 (0.08–0.33) from 27 verdicts on mtrag-aggressive-v1", or "... prior only
        (no verdict on this step for mtrag-aggressive-v1)": what ``show``, ``review`` and the Item page
        print beside a finding."""
        who = self.key[0] or "an unnamed rewriter"
        n = self.counts.n
        basis = (
            f"from {n} verdict{'s' if n != 1 else ''} on {who}"
            if n
            else f"prior only (no verdict on this step for {who})"
        )
        return f"{self.mean:.2f} ({self.low:.2f}–{self.high:.2f}) {basis}"

    def as_dict(self) -> dict[str, Any]:
        rewriter, kind, step = self.key
        return {
            "rewriter": rewriter,
            "kind": kind,
            "step": step,
            "confirmed": self.counts.confirmed,
            "dismissed": self.counts.dismissed,
            "estimate": round(self.mean, 4),
            "low": round(self.low, 4),
            "high": round(self.high, 4),
            "prior_mean": round(self.prior_mean, 4),
            "prior_weight": round(self.prior_weight, 2),
        }


@dataclass(frozen=True, slots=True)
class PriorTable:
    """The shipped prior: ``steps[(kind, step)]`` and ``kinds[kind]`` as (confirmed, dismissed) counts
    over the labelled files in ``sources``."""

    steps: Mapping[tuple[str, str], Counts]
    kinds: Mapping[str, Counts]
    sources: tuple[str, ...] = ()

    def mean(self, kind: str, step: str) -> float:
        """The table's Laplace-smoothed precision of the step, else of its kind, else 1/2."""
        c = self.steps.get((kind, step)) or self.kinds.get(kind) or Counts()
        return (c.confirmed + 1) / (c.n + 2)

    def as_json(self) -> dict[str, Any]:
        return {
            "sources": list(self.sources),
            "steps": [
                {"kind": k, "step": s, "confirmed": c.confirmed, "dismissed": c.dismissed}
                for (k, s), c in sorted(self.steps.items())
            ],
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> PriorTable:
        steps = {
            (e["kind"], e["step"]): Counts(int(e["confirmed"]), int(e["dismissed"])) for e in obj["steps"]
        }
        return PriorTable(steps, _kind_totals(steps), tuple(obj.get("sources", ())))


def _kind_totals(steps: Mapping[tuple[str, str], Counts]) -> dict[str, Counts]:
    kinds: dict[str, Counter[str]] = {}
    for (kind, _step), c in steps.items():
        tally = kinds.setdefault(kind, Counter())
        tally["c"] += c.confirmed
        tally["d"] += c.dismissed
    return {k: Counts(t["c"], t["d"]) for k, t in kinds.items()}


EMPTY_TABLE = PriorTable({}, {})


@cache
def shipped_table() -> PriorTable:
    """The table shipped with the package (:data:`TABLE_FILE`); empty when the file is absent."""
    if not TABLE_FILE.exists():
        return EMPTY_TABLE
    return PriorTable.from_json(json.loads(TABLE_FILE.read_text(encoding="utf-8")))


def table_from(observations: Iterable[tuple[str, str, bool]], sources: Iterable[str] = ()) -> PriorTable:
    """A prior table from (kind, step, confirmed) observations."""
    tally: dict[tuple[str, str], Counter[bool]] = {}
    for kind, step, confirmed in observations:
        tally.setdefault((kind, step), Counter())[confirmed] += 1
    steps = {k: Counts(t[True], t[False]) for k, t in tally.items()}
    return PriorTable(steps, _kind_totals(steps), tuple(sources))


HIGH_AT = 0.5
"""Estimate from which learning lets a finding stand at high: more likely a real problem than not."""
LOW_BELOW = 0.2
"""Estimate below which learning takes a finding one grade lower: fewer than one in five real, the share
below which a reviewer's day spent on such items trains them to click ``ok``. Neither threshold was
fitted to the labelled files."""
LEVELS = ("low", "medium", "high")


def learned_grade(severity: str, estimate: float, *, protected: bool = False) -> str:
    """The grade of a finding the rules graded ``severity`` once its step's estimate is known: one level
    lower below :data:`LOW_BELOW`, except that a protected finding (a number, a date, a version, a new
    name, a constraining qualifier value: ``monitor.checks.learned.PROTECTED_SIGNALS``) graded medium or
    above stays at medium or above; a high finding stays high only at :data:`HIGH_AT` or above (else
    medium). Learning never raises a grade: the reviewers' verdicts rank what the rules found, they do
    not find more."""
    rank = LEVELS.index(severity)
    if estimate < LOW_BELOW:
        rank = max(rank - 1, 1 if protected and rank >= 1 else 0)
    elif rank == 2 and estimate < HIGH_AT:
        rank = 1
    return LEVELS[rank]


def queue_order(estimate: float, severity: str, key: str) -> tuple[float, int, str]:
    """The sort key of a flagged item by the estimate: that of its likeliest finding first, its (learned)
    severity as the tie-break, then ``key`` for a stable order. What ``scripts/simulate_review.py --cv``
    ranks by; the queue's admission does not use it yet."""
    return (-estimate, -LEVELS.index(severity), key)


class Calibration:
    """Estimates for every key from the verdict counts of all rewriters and a prior table.

    ``counts`` maps each key to its verdicts; estimates are computed on demand and kept.
    """

    def __init__(self, counts: Mapping[Key, Counts], table: PriorTable = EMPTY_TABLE) -> None:
        self.counts = dict(counts)
        self.table = table
        self._by_step: dict[tuple[str, str], Counts] = {}
        for (_r, kind, step), c in self.counts.items():
            t = self._by_step.get((kind, step), Counts())
            self._by_step[(kind, step)] = Counts(t.confirmed + c.confirmed, t.dismissed + c.dismissed)
        self._memo: dict[Key, Estimate] = {}

    @staticmethod
    def from_observations(
        observations: Iterable[tuple[Key, bool]], table: PriorTable = EMPTY_TABLE
    ) -> Calibration:
        """From (key, confirmed) pairs: one per finding a verdict judged (:func:`outcome` not None)."""
        tally: dict[Key, Counter[bool]] = {}
        for key, confirmed in observations:
            tally.setdefault(key, Counter())[confirmed] += 1
        return Calibration({k: Counts(t[True], t[False]) for k, t in tally.items()}, table)

    def prior(self, key: Key) -> tuple[float, float]:
        """(mean, weight) of the pooled prior of ``key``: the table's figure for its step at
        :data:`TABLE_WEIGHT`, moved by the other rewriters' verdicts on the step, weight capped at
        :data:`POOL_WEIGHT`."""
        _rewriter, kind, step = key
        own = self.counts.get(key, Counts())
        every = self._by_step.get((kind, step), Counts())
        others_c, others_d = every.confirmed - own.confirmed, every.dismissed - own.dismissed
        table_mean = self.table.mean(kind, step)
        mean = (table_mean * TABLE_WEIGHT + others_c) / (TABLE_WEIGHT + others_c + others_d)
        return mean, min(TABLE_WEIGHT + others_c + others_d, POOL_WEIGHT)

    def estimate(self, key: Key) -> Estimate:
        """The posterior of ``key`` (module doc)."""
        got = self._memo.get(key)
        if got is not None:
            return got
        own = self.counts.get(key, Counts())
        mean, weight = self.prior(key)
        a, b = mean * weight + own.confirmed, (1 - mean) * weight + own.dismissed
        got = Estimate(
            key,
            a / (a + b),
            beta_quantile(INTERVAL[0], a, b),
            beta_quantile(INTERVAL[1], a, b),
            own,
            mean,
            weight,
        )
        self._memo[key] = got
        return got

    def keys(self) -> list[Key]:
        """Every key with verdicts, sorted."""
        return sorted(self.counts)

    def for_findings(
        self, prompt_version: str | None, model: str | None, findings: Iterable[Any]
    ) -> dict[tuple[str, str], Estimate]:
        """``{(kind, step): Estimate}`` for one rewrite's ``findings`` (objects with ``kind`` and
        ``step``) of a rewrite kind, on the rewriter ``rewriter_key(prompt_version, model)``: what
        ``show``, ``review`` and the Item page print beside a finding ("0.18 (0.08–0.33) from 27
        verdicts on mtrag-aggressive-v1"). Informative only: the queue's admission and the grades do not
        read it (issue 34's measure found no gain in them on the shared labelled files)."""
        from monitor.checks.learned import rewriter_key
        from monitor.stats.evaluate import REWRITE_KINDS

        rewriter = rewriter_key(prompt_version, model)
        keys = sorted({(f.kind, f.step or "") for f in findings if f.kind in REWRITE_KINDS})
        return {(kind, step): self.estimate((rewriter, kind, step)) for kind, step in keys}
