"""The one severity scale of findings, shared by the checks, the queue, the stats and the alerts.

Imports only the standard library, so the pure modules of every stage can use it.
"""

from __future__ import annotations

from enum import StrEnum


class Severity(StrEnum):
    """How strongly a finding suggests a real error; only medium and above reach the queue by default.

    Members compare equal to their stored strings (``Severity.HIGH == "high"``) and order by rank
    (``Severity.LOW < Severity.HIGH``, by :data:`SEVERITY_RANK`, not alphabetically).
    """

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        """0 for low, 1 for medium, 2 for high."""
        return SEVERITY_RANK[self.value]

    def __lt__(self, other: object) -> bool:
        if isinstance(other, Severity):
            return self.rank < other.rank
        return NotImplemented

    def __le__(self, other: object) -> bool:
        if isinstance(other, Severity):
            return self.rank <= other.rank
        return NotImplemented

    def __gt__(self, other: object) -> bool:
        if isinstance(other, Severity):
            return self.rank > other.rank
        return NotImplemented

    def __ge__(self, other: object) -> bool:
        if isinstance(other, Severity):
            return self.rank >= other.rank
        return NotImplemented


SEVERITIES: tuple[str, ...] = ("low", "medium", "high")
"""The severities as stored strings, lowest first."""
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}
"""Rank of each stored severity string: ``{"low": 0, "medium": 1, "high": 2}``."""
