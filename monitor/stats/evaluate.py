"""Measure the checks against hand labels: per label kind, confusion counts, precision, recall and
false-alarm rate with 95% Wilson intervals, at each severity threshold.

Label files (see ``../shared/data/README.md`` for their rules):

- item-level audits (``cast_audit_labels.jsonl``, ``qrecc_audit_labels.jsonl``): ``fabricated`` and
  ``dropped_constraint`` are word lists, ``wrong_antecedent``, ``unresolved``, ``intent_drift`` flags;
- word-level LLM labels (``llm_word_labels.jsonl``): ``candidates[].label`` is ``fabricated`` or
  ``benign``; item flags ``not_a_query``, ``escaped_fabrication``; ``note`` tags such as ``[drift]``;
  ``stratum`` names the sampling stratum (the sample is enriched; see :data:`LLM_STRATUM_POOLS`).

A label kind is predicted positive for an item when a finding of one of its kinds (:data:`PREDICTORS`)
is at or above the threshold. Items whose predicting checks were all skipped count as ``skipped``,
never as negatives. Items not in the store count as ``missing``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from monitor.checks.base import FABRICATION_KINDS
from monitor.checks.store import findings_by_request
from monitor.errors import LabelError, utf8_fault
from monitor.severity import SEVERITY_RANK
from monitor.stats.intervals import wilson

LABEL_KINDS = (
    "fabricated",
    "dropped_constraint",
    "unresolved",
    "wrong_antecedent",
    "not_a_query",
    "intent_drift",
)

PREDICTORS: dict[str, tuple[str, ...]] = {
    # qualifier_conflict is the fabrication the added-word check misses (issue 3, section 2).
    "fabricated": FABRICATION_KINDS,
    "dropped_constraint": ("dropped_qualifier", "intent_dropped"),
    "unresolved": ("unresolved_reference",),
    "wrong_antecedent": ("antecedent_not_in_input",),
    "not_a_query": ("not_a_query",),
    "intent_drift": ("intent_dropped",),
}
"""Finding kinds whose presence predicts each label kind."""

THRESHOLDS = ("low", "medium", "high")
DEFAULT_THRESHOLD = "medium"

LLM_STRATUM_POOLS: dict[str, int] = {
    "qrecc/cand": 857,
    "qrecc/none": 736,
    "cast21/cand": 23,
    "cast21/none": 15,
    "cast19/cand": 10,
    "cast19/none": 419,
}
"""Pool size of each sampling stratum of ``llm_word_labels.jsonl`` (source: ``../shared/data/README.md``,
"Selection"). Weight of an item = pool size / items of its stratum in the file."""


@dataclass(frozen=True, slots=True)
class LabelItem:
    """One labelled rewrite: ``truth[kind]`` is True/False, or absent when the file does not label it."""

    request_id: str
    truth: dict[str, bool]
    stratum: str | None = None
    words: dict[str, list[str]] = field(default_factory=dict)


def _tags(note: str) -> set[str]:
    return {t.strip("[]") for t in note.split() if t.startswith("[") and t.endswith("]")}


ITEM_LABEL_FIELDS = (
    "fabricated",
    "dropped_constraint",
    "wrong_antecedent",
    "unresolved",
    "intent_drift",
    "ok",
)


def parse_label_line(obj: dict[str, Any]) -> LabelItem:
    """Turn one label object (either format) into a :class:`LabelItem`.

    Raises ``KeyError`` when the object carries no label at all (a log event, say): counting it
    as a clean item would make every false-alarm rate look plausible and be wrong.
    """
    if "candidates" not in obj and not any(f in obj for f in ITEM_LABEL_FIELDS):
        raise KeyError(f"no label fields ({', '.join(ITEM_LABEL_FIELDS)} or candidates)")
    truth: dict[str, bool] = {}
    words: dict[str, list[str]] = {}
    if "candidates" in obj:  # word-level LLM labels
        fab = [c["span"] for c in obj["candidates"] if c.get("label") == "fabricated"]
        tags = _tags(obj.get("note", ""))
        truth["fabricated"] = bool(fab)
        words["fabricated"] = fab
        truth["not_a_query"] = bool(obj.get("not_a_query"))
        truth["dropped_constraint"] = "dropped" in tags
        truth["unresolved"] = "unresolved" in tags
        truth["wrong_antecedent"] = "wrong_antecedent" in tags
        truth["intent_drift"] = "drift" in tags
        return LabelItem(obj["request_id"], truth, obj.get("stratum"), words)
    truth["fabricated"] = bool(obj.get("fabricated"))
    words["fabricated"] = list(obj.get("fabricated") or [])
    truth["dropped_constraint"] = bool(obj.get("dropped_constraint"))
    words["dropped_constraint"] = list(obj.get("dropped_constraint") or [])
    truth["unresolved"] = bool(obj.get("unresolved"))
    truth["wrong_antecedent"] = bool(obj.get("wrong_antecedent"))
    truth["intent_drift"] = bool(obj.get("intent_drift"))
    return LabelItem(obj["request_id"], truth, obj.get("selection"), words)


def read_labels(path: Path) -> list[LabelItem]:
    """Read a label file (JSON Lines). Raises :class:`LabelError` naming the file and line (also for
    bytes that are not UTF-8: ``labels.jsonl:3: not UTF-8 text (byte 0xe9 at column 12)``)."""
    try:
        # Decoded whole (not read_text): the error then holds every byte before the bad one, so its line
        # can be named.
        lines = path.read_bytes().decode("utf-8").splitlines()
    except OSError as exc:
        raise LabelError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        line, reason = utf8_fault(exc)
        raise LabelError(f"{path}:{line}: {reason}") from None
    items = []
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
            items.append(parse_label_line(obj))
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise LabelError(f"{path}:{n}: not a label object with a request_id ({exc})") from exc
    return items


@dataclass
class Confusion:
    """Counts for one label kind at one threshold, plus the stratum-weighted false alarms (LLM file)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    skipped: int = 0
    weighted_fp: float = 0.0
    weighted_neg: float = 0.0

    def metrics(self) -> dict[str, Any]:
        pos_pred, pos, neg = self.tp + self.fp, self.tp + self.fn, self.fp + self.tn
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "precision": self.tp / pos_pred if pos_pred else None,
            "recall": self.tp / pos if pos else None,
            "false_alarm_rate": self.fp / neg if neg else None,
        }

    def intervals(self) -> dict[str, Any]:
        return {
            "precision_ci": wilson(self.tp, self.tp + self.fp),
            "recall_ci": wilson(self.tp, self.tp + self.fn),
            "false_alarm_ci": wilson(self.fp, self.fp + self.tn),
            "skipped": self.skipped,
            "weighted_false_alarm_rate": self.weighted_fp / self.weighted_neg if self.weighted_neg else None,
        }


@dataclass(frozen=True, slots=True)
class Detail:
    """A miss or false alarm, for ``--details``."""

    file: str
    kind: str
    threshold: str
    outcome: str  # "miss" | "false_alarm"
    request_id: str
    labelled_words: list[str]
    findings: list[dict[str, Any]]


@dataclass
class Evaluation:
    """Result per file: ``table[file][threshold][label_kind] -> Confusion``; plus details and counts."""

    table: dict[str, dict[str, dict[str, Confusion]]] = field(default_factory=dict)
    details: list[Detail] = field(default_factory=list)
    items: Counter[str] = field(default_factory=Counter)
    missing: dict[str, list[str]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The ``evaluate --json`` object: default threshold, plus ``fabricated_high``."""
        files: dict[str, Any] = {}
        for name, by_threshold in self.table.items():
            kinds = {k: c.metrics() for k, c in by_threshold[DEFAULT_THRESHOLD].items()}
            if "fabricated" in by_threshold["high"]:
                kinds["fabricated_high"] = by_threshold["high"]["fabricated"].metrics()
            files[name] = kinds
        return {"files": files}


def evaluate(
    *,
    session: Session,
    label_files: Sequence[Path],
    checks: Sequence[tuple[str, int]],
    kind_to_check: dict[str, str],
) -> Evaluation:
    """Join each label file to stored findings and count, per label kind and severity threshold.

    ``checks`` are the current ``(check_id, version)`` pairs; ``kind_to_check`` maps a finding kind to
    the check id that emits it (to tell "skipped" from "ran and found nothing").
    """
    result = Evaluation()
    for path in label_files:
        items = read_labels(path)
        name = path.name
        found, statuses, present = findings_by_request(
            session=session, request_ids=[i.request_id for i in items], checks=checks
        )
        per_stratum = Counter(i.stratum for i in items)
        weight_of = {
            s: LLM_STRATUM_POOLS[s] / n for s, n in per_stratum.items() if s in LLM_STRATUM_POOLS and n
        }
        result.table[name] = {t: {} for t in THRESHOLDS}
        result.missing[name] = [i.request_id for i in items if i.request_id not in present]
        result.items[name] = len(items)
        for item in items:
            if item.request_id not in present:
                continue
            weight = weight_of.get(item.stratum or "", 1.0)
            for kind, truth in item.truth.items():
                predictors = PREDICTORS[kind]
                ran = any(statuses[item.request_id].get(kind_to_check.get(p, p)) == "ran" for p in predictors)
                relevant = [f for f in found[item.request_id] if f.kind in predictors]
                for threshold in THRESHOLDS:
                    conf = result.table[name][threshold].setdefault(kind, Confusion())
                    if not ran:
                        conf.skipped += 1
                        continue
                    fired = [f for f in relevant if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[threshold]]
                    if not truth:
                        conf.weighted_neg += weight
                    if truth and fired:
                        conf.tp += 1
                    elif truth:
                        conf.fn += 1
                        outcome = "miss"
                    elif fired:
                        conf.fp += 1
                        conf.weighted_fp += weight
                        outcome = "false_alarm"
                    else:
                        conf.tn += 1
                    if (truth and not fired) or (fired and not truth):
                        result.details.append(
                            Detail(
                                name,
                                kind,
                                threshold,
                                outcome,
                                item.request_id,
                                item.words.get(kind, []),
                                [
                                    {
                                        "kind": f.kind,
                                        "severity": f.severity,
                                        "words": f.words,
                                        "reason": f.reason,
                                    }
                                    for f in (fired or relevant)
                                ],
                            )
                        )
    return result
