"""The counts ``evaluate`` keeps and the rates they give: :class:`Confusion` (one label row at one
severity threshold), :class:`QueueFigures` (queue precision and lift), :class:`StepFigures` (one grading
step) and :class:`StratumFigures` (one sampling stratum), each with its ``--json`` shape and 95% Wilson
intervals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from monitor.intervals import wilson


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


@dataclass
class Confusion:
    """Counts for one row at one threshold.

    ``tp/fp/fn/tn`` are item-level. ``tp_right`` counts the true positives whose finding names a labelled
    word (equal to ``tp`` on rows that are not right-word); ``fp_wrong_word`` the positive items fired on
    with other words only. The ``w_*`` sums are the same counts weighted by :func:`item_weight`
    (right-word where the row is). ``skipped``: no predicting check ran; ``stale``: checked with other rules;
    ``pos_skipped``: the skipped items that carry the label (what recall over checked items leaves out).
    """

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    tp_right: int = 0
    fp_wrong_word: int = 0
    skipped: int = 0
    stale: int = 0
    pos_skipped: int = 0
    w_tp: float = 0.0
    w_fired: float = 0.0
    w_pos: float = 0.0
    w_fp: float = 0.0
    w_neg: float = 0.0

    @property
    def measured(self) -> bool:
        """Whether any item was scored (a row whose checks never ran is not measured, not zero)."""
        return self.tp + self.fp + self.fn + self.tn > 0

    def count(self, truth: bool, fired: bool, right: bool, weight: float) -> str | None:
        """Count one scored item: whether it carries the label (``truth``), whether a predicting finding
        ``fired``, whether one of them names it ``right``; returns the outcome a detail records (``miss``,
        ``false_alarm``, ``wrong_word``) or None for a right hit or a true negative."""
        if truth:
            self.w_pos += weight
            if not fired:
                self.fn += 1
                return "miss"
            self.tp += 1
            self.w_fired += weight
            if right:
                self.tp_right += 1
                self.w_tp += weight
                return None
            self.fp_wrong_word += 1
            return "wrong_word"
        self.w_neg += weight
        if fired:
            self.fp += 1
            self.w_fp += weight
            self.w_fired += weight
            return "false_alarm"
        self.tn += 1
        return None

    def metrics(self) -> dict[str, Any]:
        """Counts and rates as plain data (the ``--json`` shape); rates are ``None`` without a base."""
        fired, pos, neg = self.tp + self.fp, self.tp + self.fn, self.fp + self.tn
        return {
            "measured": self.measured,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "precision": _ratio(self.tp, fired),
            "recall": _ratio(self.tp, pos),
            "false_alarm_rate": _ratio(self.fp, neg),
            "tp_right_word": self.tp_right,
            "precision_right_word": _ratio(self.tp_right, fired),
            "recall_right_word": _ratio(self.tp_right, pos),
            "weighted_precision": _ratio(self.w_tp, self.w_fired),
            "weighted_recall": _ratio(self.w_tp, self.w_pos),
            "weighted_false_alarm_rate": _ratio(self.w_fp, self.w_neg),
            "skipped": self.skipped,
            "stale": self.stale,
            # a check that cannot run on an item cannot find its error: recall over every labelled item
            "labelled_unchecked": self.pos_skipped,
            "recall_all_labelled": _ratio(self.tp, pos + self.pos_skipped),
        }

    def intervals(self) -> dict[str, Any]:
        """95% Wilson intervals of the item-level and right-word rates (``None`` without a base)."""
        return {
            "precision_ci": wilson(self.tp, self.tp + self.fp),
            "recall_ci": wilson(self.tp, self.tp + self.fn),
            "false_alarm_ci": wilson(self.fp, self.fp + self.tn),
            "precision_right_word_ci": wilson(self.tp_right, self.tp + self.fp),
            "recall_right_word_ci": wilson(self.tp_right, self.tp + self.fn),
        }


@dataclass
class QueueFigures:
    """Queue precision of one file (or rewriter): ``queued`` items with a rewrite finding at or above
    :data:`QUEUE_THRESHOLD`, ``errors`` items with any error label, ``both`` items that are both."""

    scored: int = 0
    queued: int = 0
    errors: int = 0
    both: int = 0
    w_queued: float = 0.0
    w_errors: float = 0.0
    w_both: float = 0.0

    def add(self, queued: bool, error: bool, weight: float) -> None:
        """Count one scored item: whether it is ``queued``, whether it carries an ``error`` label."""
        self.scored += 1
        self.queued += queued
        self.errors += error
        self.both += queued and error
        self.w_queued += weight * queued
        self.w_errors += weight * error
        self.w_both += weight * (queued and error)

    @property
    def lift(self) -> float | None:
        """Queue precision over the error rate of the scored items (None without a base)."""
        precision, rate = _ratio(self.both, self.queued), _ratio(self.errors, self.scored)
        return None if precision is None or not rate else precision / rate

    def as_dict(self) -> dict[str, Any]:
        return {
            "scored": self.scored,
            "queued": self.queued,
            "with_error_label": self.errors,
            "queued_with_error_label": self.both,
            "error_rate": _ratio(self.errors, self.scored),
            "queue_precision": _ratio(self.both, self.queued),
            "queue_lift": self.lift,
            "queue_precision_ci": wilson(self.both, self.queued),
            "errors_reaching_queue": _ratio(self.both, self.errors),
            "weighted_queue_precision": _ratio(self.w_both, self.w_queued),
            "weighted_errors_reaching_queue": _ratio(self.w_both, self.w_errors),
        }


@dataclass
class StepFigures:
    """One grading step's record in one group: ``fired`` items with a finding of the step (any
    severity), ``queued`` those where it is at :data:`QUEUE_THRESHOLD` or above, and how many of each
    carry the label the finding's kind predicts (``right``, ``right_queued``: right-word where the row
    is)."""

    kind: str
    fired: int = 0
    right: int = 0
    queued: int = 0
    right_queued: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "fired": self.fired,
            "right": self.right,
            "precision": _ratio(self.right, self.fired),
            "precision_ci": wilson(self.right, self.fired),
            "queued": self.queued,
            "right_queued": self.right_queued,
            "queued_precision": _ratio(self.right_queued, self.queued),
        }


@dataclass
class StratumFigures:
    """One sampling stratum of a group: its queue figures and the fabrication row at each threshold."""

    queue: QueueFigures = field(default_factory=QueueFigures)
    fabricated: dict[str, Confusion] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"queue": self.queue.as_dict()}
        for threshold, conf in self.fabricated.items():
            out[f"fabricated_{threshold}"] = conf.metrics() | conf.intervals()
        return out
