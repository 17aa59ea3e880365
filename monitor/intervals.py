"""Interval maths for proportions: the Wilson score interval and the Agresti–Coull centre.

Pure (standard library only), so the alert policy and the evaluation use them without a database.
"""

from __future__ import annotations

import math

Z95 = 1.959964
"""The two-sided 95% normal quantile."""


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """95% Wilson score interval for a proportion (``None`` when ``n == 0``).

    Source: E. B. Wilson (1927), "Probable inference, the law of succession, and statistical inference".
    """
    if n == 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def agresti_coull_centre(successes: float, n: float, z: float = Z95) -> float:
    """The Agresti–Coull centre ``(successes + z²/2) / (n + z²)`` of a proportion, for ``n >= 0``.

    In place of ``successes / n`` it keeps a variance estimate away from zero when a few trials are all
    successes or all failures. Source: A. Agresti and B. A. Coull (1998), "Approximate is better than
    'exact' for interval estimation of binomial proportions".
    """
    return (successes + z * z / 2) / (n + z * z)
