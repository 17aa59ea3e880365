"""Agreement between reviewers on doubly reviewed items: Cohen's kappa, Krippendorff's alpha (pure).

An item reviewed blind by two reviewers (``double_review_share``, issue 16) gives two ratings of the same
rewrite: a label and a first wrong artifact. How often they agree beyond chance says how far one verdict
can be trusted, which is what every figure built on verdicts (precision from verdicts, whole-traffic
estimates, regression cases) silently assumes.

- Two ratings per item: **Cohen's kappa** (Cohen, "A coefficient of agreement for nominal scales",
  *Educational and Psychological Measurement* 20, 1960), the first reviewer of each item as rater 1 and
  the second as rater 2. κ = (p_o − p_e) / (1 − p_e), with the observed agreement p_o and the chance
  agreement p_e from the two raters' marginal shares. The 95% interval is κ ± 1.96·SE with Cohen's
  large-sample standard error SE = √(p_o(1 − p_o) / (n(1 − p_e)²)), clipped to [−1, 1]:
  an approximation that is rough below about 30 items, which the item count beside it says; when every
  item agrees (or none does) the standard error is 0, and no interval is given rather than one of no
  width.
- More than two ratings on some item: **Krippendorff's alpha** for nominal data (Krippendorff, *Content
  Analysis*, 4th ed., 2019, ch. 12: α = 1 − D_o / D_e from the coincidence matrix), which takes any
  number of reviewers per item. Its interval is a percentile bootstrap over items (1,000 resamples,
  fixed seed, so the figure is reproducible).

Figures are given for the label (all labels at once), for each label against the rest (did both
reviewers call it ``fabricated_constraint`` or not), and for the first wrong artifact. κ (or α) is
``None`` when chance agreement is 1 (every rating the same category): there is nothing to agree beyond
chance, and the raw agreement says all there is.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from monitor.intervals import Z95

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 16


@dataclass(frozen=True, slots=True)
class Agreement:
    """One agreement figure: the ``statistic`` (``cohen_kappa`` or ``krippendorff_alpha``), its
    ``value`` and 95% interval ``ci`` (``None`` when undefined), the raw share of items on which all
    ratings agree (``observed``), and the ``items`` it rests on."""

    statistic: str
    value: float | None
    ci: tuple[float, float] | None
    observed: float | None
    items: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "value": self.value,
            "ci95": list(self.ci) if self.ci else None,
            "observed_agreement": self.observed,
            "items": self.items,
        }


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> Agreement:
    """Cohen's kappa of ``pairs`` (rater 1's category, rater 2's category), one pair per item, with
    Cohen's large-sample 95% interval (module docstring). Empty input gives all ``None``."""
    n = len(pairs)
    if n == 0:
        return Agreement("cohen_kappa", None, None, None, 0)
    p_o = sum(a == b for a, b in pairs) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    p_e = sum(first[c] * second[c] for c in first) / (n * n)
    if p_e >= 1.0:
        return Agreement("cohen_kappa", None, None, p_o, n)
    kappa = (p_o - p_e) / (1 - p_e)
    if p_o in (0.0, 1.0):
        # Cohen's standard error is 0 there, an interval of no width that reads as certainty: none
        return Agreement("cohen_kappa", kappa, None, p_o, n)
    se = math.sqrt(p_o * (1 - p_o) / (n * (1 - p_e) ** 2))
    ci = (max(-1.0, kappa - Z95 * se), min(1.0, kappa + Z95 * se))
    return Agreement("cohen_kappa", kappa, ci, p_o, n)


def _alpha(units: Sequence[Sequence[str]]) -> float | None:
    """Krippendorff's alpha (nominal) of ``units`` (each item's ratings); items with one rating are
    not pairable and drop out. ``None`` when the expected disagreement is 0."""
    coincidence: dict[tuple[str, str], float] = {}
    for values in units:
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        for c, nc in counts.items():
            for k, nk in counts.items():
                pairs = nc * (nk - 1) if c == k else nc * nk
                coincidence[(c, k)] = coincidence.get((c, k), 0.0) + pairs / (m - 1)
    totals: dict[str, float] = {}
    for (c, _k), v in coincidence.items():
        totals[c] = totals.get(c, 0.0) + v
    n = sum(totals.values())
    if n <= 1:
        return None
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k) / (n - 1)
    if expected == 0:
        return None
    return 1.0 - observed / expected


def krippendorff_alpha(units: Sequence[Sequence[str]]) -> Agreement:
    """Krippendorff's alpha (nominal) of ``units`` (each item's ratings, any number per item) with a
    percentile-bootstrap 95% interval over items (:data:`BOOTSTRAP_RESAMPLES`, :data:`BOOTSTRAP_SEED`)."""
    pairable = [list(u) for u in units if len(u) >= 2]
    n = len(pairable)
    if n == 0:
        return Agreement("krippendorff_alpha", None, None, None, 0)
    observed = sum(len(set(u)) == 1 for u in pairable) / n
    value = _alpha(pairable)
    if value is None:
        return Agreement("krippendorff_alpha", None, None, observed, n)
    rng = random.Random(BOOTSTRAP_SEED)
    draws = sorted(
        a
        for a in (_alpha([pairable[rng.randrange(n)] for _ in range(n)]) for _ in range(BOOTSTRAP_RESAMPLES))
        if a is not None
    )
    ci = (
        (draws[int(0.025 * len(draws))], draws[min(len(draws) - 1, int(0.975 * len(draws)))])
        if draws
        else None
    )
    return Agreement("krippendorff_alpha", value, ci, observed, n)


def agreement(units: Sequence[Sequence[str]]) -> Agreement:
    """Cohen's kappa when every item has exactly two ratings (rater 1 first), else Krippendorff's
    alpha. ``units``: each doubly reviewed item's ratings in the order the reviewers gave them."""
    if units and all(len(u) == 2 for u in units):
        return cohen_kappa([(u[0], u[1]) for u in units])
    return krippendorff_alpha(units)


def agreement_table(items: Sequence[Sequence[tuple[str, str]]], labels: Sequence[str]) -> dict[str, Any]:
    """Agreement figures of doubly reviewed items, each given as its reviewers' ``(label, artifact)``
    ratings in review order: ``label`` (all labels), ``artifact`` (first wrong artifact), and
    ``per_label[L]`` (L against the rest, for each label in ``labels`` that any rating used), each an
    :meth:`Agreement.as_dict`."""

    def figure(key: Callable[[tuple[str, str]], str]) -> dict[str, Any]:
        return agreement([[key(r) for r in ratings] for ratings in items]).as_dict()

    used = {label for ratings in items for label, _ in ratings}
    return {
        "items": sum(1 for ratings in items if len(ratings) >= 2),
        "label": figure(lambda r: r[0]),
        "artifact": figure(lambda r: r[1]),
        "per_label": {
            lab: figure(lambda r, lab=lab: "yes" if r[0] == lab else "no")  # type: ignore[misc]
            for lab in labels
            if lab in used
        },
    }
