"""Fabrication-rate alerts: the windows, the decision rule, and the alert payload. Pure, no I/O.

The fabrication rate of a group (``overall``, or one ``prompt_version``) is the share of checked
rewrites with an ``added_content_word``, ``qualifier_conflict`` or ``replaced_term`` finding at or above
the alert severity (default high). Rewrites whose fabrication checks were skipped are not counted.

Windows are in EVENT time (the rewrites' ``ts``), so a backfill is judged by when the rewrites
happened: the window is the ``alert_window_minutes`` up to the newest checked rewrite, the baseline
the ``alert_baseline_days`` before the window (the window excluded).

Decision for one group (:func:`decide`), with Wilson 95% intervals (``monitor.intervals.wilson``):

- **spike**: the window has at least ``min_rewrites`` rewrites and ``min_flagged`` flagged ones, and
  either its lower bound exceeds ``factor`` x the baseline's upper bound (reason ``spike``; needs a
  baseline with rewrites), or its rate is at or above the absolute ``ceiling`` (reason ``ceiling``).
  A spike alerts unless the group alerted less than ``cooldown`` ago (wall clock), whatever happened
  in between, so a flapping rate cannot page more than once per cooldown.
- **recovered**: the group's latest alert is not yet followed by a recovery, the window has at least
  ``min_rewrites`` rewrites (a quiet hour proves nothing), and the window rate is back at or under
  the baseline's upper bound (or under the ceiling when there is no baseline).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from monitor.checks.base import FABRICATION_KINDS
from monitor.intervals import wilson

if TYPE_CHECKING:
    from monitor.setting_groups import AlertSettings

ALERT_KIND = "fabrication_rate"
OVERALL = "overall"
ALL_VERSIONS = "(all)"
NO_VERSION = "(none)"
ROUND = 6
"""Decimals of rates and bounds in the payload (0.0001 %: finer than any window's resolution)."""


ALERT_SIGNALS = ("number", "proper_name", "qualifier_value")
"""The ``added_content_word`` signals the alert's fabrication rate counts (with every
``qualifier_conflict`` and ``replaced_term`` at the alert severity; ``replaced_term`` is medium, so the
default high alert leaves it out): a number, date or version, a new proper name, a value of a
constraining qualifier kind. A word graded high only for being rare (``rare_term``) is left out: on the
labelled development files (items with a high finding of each signal, December 2026), ``rare_term`` was
37 false alarms to 3 fabrications on the MTRAG rewriters, 3 to 1 on the gpt-3.5 files and 1 to 2 on
CAsT, while a number, a proper name or a qualifier value was 9 fabrications to 5 false alarms across all
files: so counting rarity made the alert track the keyword-expansion style rather than invention. A
finding that names no signal (written by another version) counts."""


@dataclass(frozen=True, slots=True)
class Counts:
    """Checked rewrites and flagged ones in a time range."""

    rewrites: int
    flagged: int

    @property
    def rate(self) -> float | None:
        return self.flagged / self.rewrites if self.rewrites else None

    @property
    def ci(self) -> tuple[float, float] | None:
        """Wilson 95% interval of the rate, ``None`` without rewrites."""
        return wilson(self.flagged, self.rewrites)


@dataclass(frozen=True, slots=True)
class GroupWindow:
    """One group's counts in the window and the baseline, and who was flagged in the window.

    ``group_key`` is ``overall`` or ``prompt_version:<v>``; ``prompt_version`` is ``None`` for overall
    (and :data:`NO_VERSION` for rewrites logged without one). ``models`` counts the window's rewrites
    per model; ``request_ids`` are (some of) the window's flagged requests, newest first.
    """

    group_key: str
    prompt_version: str | None
    window: Counts
    baseline: Counts
    window_start: datetime
    window_end: datetime
    baseline_start: datetime
    models: dict[str, int]
    request_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Policy:
    """The alert settings (see the module doc); ``cooldown`` is wall-clock time."""

    min_rewrites: int = 200
    min_flagged: int = 5
    factor: float = 1.0
    ceiling: float | None = None
    cooldown: timedelta = timedelta(hours=6)
    min_severity: str = "high"

    @classmethod
    def from_settings(cls, alerts: AlertSettings) -> Policy:
        """The policy of the alert settings (``settings.alerts``)."""
        return cls(
            min_rewrites=alerts.min_rewrites,
            min_flagged=alerts.min_flagged,
            factor=alerts.factor,
            ceiling=alerts.ceiling,
            cooldown=timedelta(hours=alerts.cooldown_hours),
            min_severity=alerts.min_severity,
        )


@dataclass(frozen=True, slots=True)
class History:
    """What the group sent last: the time of its latest alert, and whether a recovery followed it."""

    last_alert_at: datetime | None
    recovered: bool


@dataclass(frozen=True, slots=True)
class Decision:
    """``action``: ``alert``, ``recovered``, ``suppressed`` (a spike inside the cooldown) or ``None``;
    ``reason``: ``spike``, ``ceiling`` or ``recovered``."""

    group: GroupWindow
    action: str | None
    reason: str | None


def windows(
    newest: datetime, window_minutes: float, baseline_days: float
) -> tuple[datetime, datetime, datetime]:
    """``(baseline_start, window_start, window_end)`` for the newest rewrite time ``newest``.

    The window is ``[window_start, window_end)`` with ``window_end`` one microsecond after ``newest``
    (so the newest rewrite is in it); the baseline is ``[baseline_start, window_start)``.
    """
    end = newest + timedelta(microseconds=1)
    start = end - timedelta(minutes=window_minutes)
    return start - timedelta(days=baseline_days), start, end


def spike_reason(g: GroupWindow, policy: Policy) -> str | None:
    """``spike`` or ``ceiling`` when the window is a spike under ``policy``, else ``None``."""
    w, b = g.window, g.baseline
    if w.rewrites < policy.min_rewrites or w.flagged < policy.min_flagged:
        return None
    w_ci, b_ci = w.ci, b.ci
    if w_ci is not None and b_ci is not None and w_ci[0] > policy.factor * b_ci[1]:
        return "spike"
    if policy.ceiling is not None and w.rate is not None and w.rate >= policy.ceiling:
        return "ceiling"
    return None


def is_recovered(g: GroupWindow, policy: Policy) -> bool:
    """Whether the window rate is back at or under the baseline's upper bound (see module doc)."""
    w = g.window
    if w.rewrites < policy.min_rewrites or w.rate is None:
        return False
    b_ci = g.baseline.ci
    if b_ci is not None:
        return w.rate <= b_ci[1]
    return policy.ceiling is not None and w.rate < policy.ceiling


def decide(g: GroupWindow, policy: Policy, history: History, now: datetime) -> Decision:
    """The action for one group at wall-clock ``now`` (naive UTC), given what it sent before."""
    reason = spike_reason(g, policy)
    if reason is not None:
        if history.last_alert_at is not None and now - history.last_alert_at < policy.cooldown:
            return Decision(g, "suppressed", reason)
        return Decision(g, "alert", reason)
    if history.last_alert_at is not None and not history.recovered and is_recovered(g, policy):
        return Decision(g, "recovered", "recovered")
    return Decision(g, None, None)


def _r(x: float | None) -> float | None:
    return round(x, ROUND) if x is not None else None


def _ci(c: Counts) -> list[float] | None:
    ci = c.ci
    return [round(ci[0], ROUND), round(ci[1], ROUND)] if ci else None


def version_label(g: GroupWindow) -> str:
    """The prompt version a group is about, ``(all)`` for overall."""
    return g.prompt_version if g.prompt_version is not None else ALL_VERSIONS


def model_label(g: GroupWindow) -> str:
    """The window's one model, ``(mixed)`` for several, ``(none)`` for none logged."""
    return _model_label(g.models)


def _model_label(models: Mapping[str, int]) -> str:
    if len(models) == 1:
        return next(iter(models))
    return "(mixed)" if models else NO_VERSION


def _summary(d: Decision) -> dict[str, Any]:
    """The part of :func:`context` that message, tags and fingerprint read."""
    g = d.group
    return {"group": g.group_key, "prompt_version": version_label(g), "reason": d.reason, "models": g.models}


def message(d: Decision) -> str:
    """The alert's one-line message, e.g. ``fabrication rate spike: prompt_version ctx-v7``."""
    return message_for(_summary(d), recovered=d.action == "recovered")


def fingerprint(d: Decision) -> list[str]:
    """Sentry grouping key: fixed per (alert kind, prompt version), recoveries apart from spikes."""
    return fingerprint_for(_summary(d), recovered=d.action == "recovered")


def tags(d: Decision) -> dict[str, str]:
    """Searchable tags: alert kind, the finding kinds counted, prompt version, model, reason, group."""
    return tags_for(_summary(d))


def message_for(payload: Mapping[str, Any], *, recovered: bool) -> str:
    """:func:`message` from an alert's stored payload (:func:`context`), for a resend."""
    what = "recovered" if recovered else "spike"
    if payload["prompt_version"] == ALL_VERSIONS:
        return f"fabrication rate {what}: all prompt versions"
    return f"fabrication rate {what}: prompt_version {payload['prompt_version']}"


def fingerprint_for(payload: Mapping[str, Any], *, recovered: bool) -> list[str]:
    """:func:`fingerprint` from an alert's stored payload (:func:`context`)."""
    fp = [ALERT_KIND, str(payload["prompt_version"])]
    return fp + ["recovered"] if recovered else fp


def tags_for(payload: Mapping[str, Any]) -> dict[str, str]:
    """:func:`tags` from an alert's stored payload (:func:`context`)."""
    return {
        "alert_kind": ALERT_KIND,
        "check_kind": ",".join(FABRICATION_KINDS),
        "prompt_version": str(payload["prompt_version"]),
        "model": _model_label(payload.get("models") or {}),
        "reason": str(payload.get("reason") or ""),
        "group": str(payload["group"]),
    }


def context(d: Decision, policy: Policy) -> dict[str, Any]:
    """The counts, rates, 95% intervals, window bounds and thresholds; request ids, never text.

    Times are ISO-8601 naive UTC; rates are shares in [0, 1] rounded to :data:`ROUND` decimals.
    """
    g = d.group
    return {
        "group": g.group_key,
        "prompt_version": version_label(g),
        "reason": d.reason,
        "finding_kinds": list(FABRICATION_KINDS),
        "min_severity": policy.min_severity,
        "window_start": g.window_start.isoformat(),
        "window_end": g.window_end.isoformat(),
        "window_rewrites": g.window.rewrites,
        "window_flagged": g.window.flagged,
        "window_rate": _r(g.window.rate),
        "window_ci95": _ci(g.window),
        "baseline_start": g.baseline_start.isoformat(),
        "baseline_rewrites": g.baseline.rewrites,
        "baseline_flagged": g.baseline.flagged,
        "baseline_rate": _r(g.baseline.rate),
        "baseline_ci95": _ci(g.baseline),
        "factor": policy.factor,
        "ceiling": policy.ceiling,
        "models": dict(sorted(g.models.items())),
        "flagged_request_ids": list(g.request_ids),
    }


__all__ = [
    "ALERT_KIND",
    "FABRICATION_KINDS",
    "Counts",
    "Decision",
    "GroupWindow",
    "History",
    "Policy",
    "context",
    "decide",
    "fingerprint",
    "fingerprint_for",
    "is_recovered",
    "message",
    "message_for",
    "spike_reason",
    "tags",
    "tags_for",
    "windows",
]
