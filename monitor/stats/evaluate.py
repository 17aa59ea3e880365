"""Measure the checks against hand labels: per label kind, confusion counts, precision, recall and
false-alarm rate with 95% Wilson intervals, at each severity threshold.

Label files (see ``../shared/data/README.md`` for their rules):

- item-level audits (``cast_audit_labels.jsonl``, ``qrecc_audit_labels.jsonl``): ``fabricated`` and
  ``dropped_constraint`` are word lists, ``wrong_antecedent``, ``unresolved``, ``intent_drift`` flags;
- word-level LLM labels (``llm_word_labels.jsonl``): ``candidates[].label`` is ``fabricated`` or
  ``benign``; item flags ``not_a_query``, ``escaped_fabrication``; ``note`` tags such as ``[drift]``;
  ``stratum`` names the sampling stratum (the sample is enriched; see :data:`LLM_STRATUM_POOLS`).

Each row of the table (:data:`ROWS`) is one label kind and the finding kinds that predict it. An item is
predicted positive when one of those findings is at or above the threshold. Items whose predicting checks
were all skipped count as ``skipped``, never as negatives; items checked with other rules than the current
ones count as ``stale`` and are not scored (run ``check --recheck`` after a rules edit); items not in the
store count as ``missing``. A row no check ran on is reported as "not measured", never as zeros.

Figures, side by side:

- item-level: a positive item with any predicting finding is a true positive;
- right-word (rows about words: ``fabricated``, ``dropped_constraint``): the true positive also needs a
  finding whose words overlap the labelled words (:func:`words_overlap`: same token, an inflection of it,
  or one alias group); a finding on a positive item that names other words counts against precision and
  the item as missed. Items whose label names no words (``escaped_fabrication``) are scored item-level;
- weighted: each item weighs its stratum's pool size over its sample size (:func:`item_weight`), so the
  rates are those of the natural traffic, not of the enriched sample;
- queue precision: of the items with a rewrite finding at the queue threshold, the share that carry any
  error label, and of the items with an error label, the share that would reach the queue; **lift** is
  queue precision over the group's error rate (1.0: the queue is no better than a random draw; its
  ceiling is 1 / error rate);
- per stratum (the label's ``selection`` or ``stratum``, else the rewrite event's ``source.selection``):
  the queue figures and the fabrication false alarms of each sampling stratum on its own;
- per grading step (``monitor.checks.steps``): how many items each step's findings fire on and the share
  whose label is the error the finding's kind predicts (right-word where the row is).

An ``escaped_fabrication`` (a constraint changed with logged words, so no word is labelled) is credited
only to a conflict-type finding (:data:`CONFLICT_KINDS`): an added-word finding on such an item names no
labelled word and counts as a wrong word.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from monitor.checks.base import FABRICATION_KINDS
from monitor.checks.store import FindingRow, StoredRewrite, stored_rewrites
from monitor.errors import LabelError, utf8_fault
from monitor.ingest.events import json_type
from monitor.intervals import wilson
from monitor.severity import SEVERITY_RANK


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the table: the label kind it scores, the finding kinds predicting it, whether the
    labelled words must overlap the finding's words (right-word), and the label kinds whose union is its
    truth (usually just itself)."""

    name: str
    predictors: tuple[str, ...]
    right_word: bool
    truth_from: tuple[str, ...]


CONFLICT_KINDS = ("qualifier_conflict", "replaced_term")
"""The fabrication kinds that name a changed constraint rather than an added word: what an
``escaped_fabrication`` label (no labelled word) is credited to."""

ROWS: tuple[Row, ...] = (
    # qualifier_conflict is the fabrication the added-word check misses (a logged value put in place of
    # the asked one); escaped_fabrication labels are that pattern, so they count as fabricated.
    Row("fabricated", FABRICATION_KINDS, True, ("fabricated",)),
    Row("dropped_constraint", ("dropped_qualifier",), True, ("dropped_constraint",)),
    # intent_dropped fires on a lost request word: a dropped constraint or a drifted intent, so it is
    # scored once against their union rather than as a hit for one and a false alarm for the other.
    Row("intent_dropped", ("intent_dropped",), False, ("dropped_constraint", "intent_drift")),
    Row("unresolved", ("unresolved_reference",), False, ("unresolved",)),
    Row("wrong_antecedent", ("antecedent_not_in_input", "wrong_antecedent"), True, ("wrong_antecedent",)),
    Row("not_a_query", ("not_a_query",), False, ("not_a_query",)),
)
"""The scored rows, in table order."""

LABEL_KINDS = (
    "fabricated",
    "dropped_constraint",
    "unresolved",
    "wrong_antecedent",
    "not_a_query",
    "intent_drift",
)
"""The label kinds a label file can carry (``../shared/data/README.md``)."""

PREDICTORS: dict[str, tuple[str, ...]] = {row.name: row.predictors for row in ROWS}
KIND_ROW: dict[str, str] = {kind: row.name for row in ROWS for kind in row.predictors}
"""The row each finding kind predicts (its per-step precision is counted against that row's label)."""
"""Finding kinds whose presence predicts each row."""
REWRITE_KINDS: tuple[str, ...] = tuple(dict.fromkeys(k for row in ROWS for k in row.predictors))
"""The finding kinds the labels judge (chat-state kinds judge the logging, which no label speaks to)."""

THRESHOLDS = ("low", "medium", "high")
DEFAULT_THRESHOLD = "medium"
QUEUE_THRESHOLD = "medium"
"""The queue's default ``queue_min_severity``: a finding at or above it puts the item in the queue."""

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
ENRICHED = "enriched"
"""The ``selection`` of audit items added to a natural sample because they hold a candidate word: they
speak for no population of their own, so they weigh 0 in the weighted (natural-prevalence) figures."""


@dataclass(frozen=True, slots=True)
class LabelItem:
    """One labelled rewrite: ``truth[kind]`` is True/False, or absent when the file does not label it."""

    request_id: str
    truth: dict[str, bool]
    stratum: str | None = None
    words: dict[str, list[str]] = field(default_factory=dict)
    escaped: bool = False
    """The item is labelled ``escaped_fabrication``: a changed constraint no word of which is labelled."""


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


WORD_FIELDS = ("fabricated", "dropped_constraint")
"""Label fields that list the labelled words (an empty list: none)."""
FLAG_FIELDS = ("wrong_antecedent", "unresolved", "intent_drift", "ok", "not_a_query", "escaped_fabrication")
"""Label fields that are true or false (``shared/data/README.md``)."""


def _check_types(obj: dict[str, Any]) -> None:
    """Raise ``TypeError`` naming the field whose value has the wrong JSON type: a string where a list of
    words belongs (``"fabricated": "Boeing"``) would otherwise be scored as a label."""
    for f in WORD_FIELDS:
        v = obj.get(f)
        if v is None:
            continue
        if not isinstance(v, list):
            raise TypeError(f"field {f!r} must be a list of words (strings), got {json_type(v)}")
        for i, w in enumerate(v):
            if not isinstance(w, str):
                raise TypeError(f"field {f!r} must be a list of words (strings): item {i} is {json_type(w)}")
    for f in FLAG_FIELDS:
        v = obj.get(f)
        if v is not None and not isinstance(v, bool):
            raise TypeError(f"field {f!r} must be true or false, got {json_type(v)}")
    for f in ("selection", "stratum"):
        v = obj.get(f)
        if v is not None and not isinstance(v, str):
            raise TypeError(f"field {f!r} must be a string, got {json_type(v)}")
    if "candidates" in obj:
        cands = obj["candidates"]
        if not isinstance(cands, list):
            raise TypeError("field 'candidates' must be a list")
        for i, c in enumerate(cands):
            if not isinstance(c, dict):
                raise TypeError(f"candidates[{i}] must be an object, got {json_type(c)}")
            for f in ("span", "label"):
                if f in c and not isinstance(c[f], str):
                    raise TypeError(f"candidates[{i}].{f} must be a string, got {json_type(c[f])}")


def parse_label_line(obj: dict[str, Any]) -> LabelItem:
    """Turn one label object (either format) into a :class:`LabelItem`.

    ``escaped_fabrication`` (a changed constraint made of logged words) makes the item ``fabricated``
    with no labelled words; ``not_a_query`` is read where the file has it (the LLM and MTRAG files).

    Raises ``KeyError`` when the object carries no label at all (a log event, say): counting it
    as a clean item would make every false-alarm rate look plausible and be wrong; ``TypeError`` naming
    the field when a value has the wrong JSON type, or when ``obj`` is no object.
    """
    if not isinstance(obj, dict):
        raise TypeError(f"a label line must be a JSON object, got {json_type(obj)}")
    if "request_id" in obj and not isinstance(obj["request_id"], str):
        raise TypeError(f"field 'request_id' must be a string, got {json_type(obj['request_id'])}")
    if "candidates" not in obj and not any(f in obj for f in ITEM_LABEL_FIELDS):
        raise KeyError(f"no label fields ({', '.join(ITEM_LABEL_FIELDS)} or candidates)")
    if "request_id" not in obj:
        raise KeyError("no 'request_id'")
    _check_types(obj)
    truth: dict[str, bool] = {}
    words: dict[str, list[str]] = {}
    if "candidates" in obj:  # word-level LLM labels
        fab = [c["span"] for c in obj["candidates"] if c.get("label") == "fabricated"]
        tags = _tags(obj.get("note", ""))
        truth["fabricated"] = bool(fab) or bool(obj.get("escaped_fabrication"))
        words["fabricated"] = fab
        truth["not_a_query"] = bool(obj.get("not_a_query"))
        truth["dropped_constraint"] = "dropped" in tags
        truth["unresolved"] = "unresolved" in tags
        truth["wrong_antecedent"] = "wrong_antecedent" in tags
        truth["intent_drift"] = "drift" in tags
        return LabelItem(
            obj["request_id"], truth, obj.get("stratum"), words, bool(obj.get("escaped_fabrication"))
        )
    truth["fabricated"] = bool(obj.get("fabricated"))
    words["fabricated"] = list(obj.get("fabricated") or [])
    truth["dropped_constraint"] = bool(obj.get("dropped_constraint"))
    words["dropped_constraint"] = list(obj.get("dropped_constraint") or [])
    truth["unresolved"] = bool(obj.get("unresolved"))
    truth["wrong_antecedent"] = bool(obj.get("wrong_antecedent"))
    truth["intent_drift"] = bool(obj.get("intent_drift"))
    if "not_a_query" in obj:
        truth["not_a_query"] = bool(obj.get("not_a_query"))
    return LabelItem(obj["request_id"], truth, obj.get("selection"), words)


def read_labels(path: Path) -> list[LabelItem]:
    """Read a label file (JSON Lines). Raises :class:`LabelError` naming the file and line (also for
    bytes that are not UTF-8: ``labels.jsonl:3: not UTF-8 text (byte 0xe9 at column 12)``), or the file
    when it holds no label."""
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
    first: dict[str, int] = {}
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
            item = parse_label_line(obj)
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            why = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc  # no repr quotes
            raise LabelError(f"{path}:{n}: not a label object with a request_id ({why})") from exc
        if item.request_id in first:
            # counted twice, an item would double its weight and narrow every interval
            raise LabelError(
                f"{path}:{n}: request_id {item.request_id!r} is labelled again (first at line "
                f"{first[item.request_id]}): keep one label per item"
            )
        first[item.request_id] = n
        items.append(item)
    if not items:
        # Nothing to score: an empty table would read as a measurement.
        raise LabelError(f"{path}: no labels (the file is empty)")
    return items


_TOKEN_RE = re.compile(r"[^\W_]+")
STEM_LETTERS = 4
"""A word of at least this many letters that starts another, which goes on by at most
:data:`ENDING_LETTERS` letters, is one word with it for right-word scoring ("tier"/"tiers",
"beginner"/"beginners"; not "internet"/"international")."""
ENDING_LETTERS = 3
FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be as its it his her their".split()
)
"""Words two phrases share without naming the same thing ("history of art", "department of defense")."""


def _tokens(text: str) -> list[str]:
    return [t for t in _TOKEN_RE.findall(text.lower()) if t not in FUNCTION_WORDS]


def _same_word(x: str, y: str) -> bool:
    short, long = sorted((x, y), key=len)
    return x == y or (
        len(short) >= STEM_LETTERS and long.startswith(short) and len(long) - len(short) <= ENDING_LETTERS
    )


def words_overlap(
    found: Sequence[str], labelled: Sequence[str], same_alias: Callable[[str, str], bool] | None = None
) -> bool:
    """Whether any finding word names a labelled word: a shared content token (case-insensitive, function
    words aside), one word with an inflectional ending of the other (:func:`_same_word`: "stroke"/"strokes",
    "tier"/"tiers"), or two phrases of one alias group (``same_alias``). ``found`` and ``labelled`` are
    phrases ("free tier")."""
    for a in found:
        ta = _tokens(a)
        for b in labelled:
            tb = _tokens(b)
            if any(_same_word(x, y) for x in ta for y in tb):
                return True
            if same_alias is not None and same_alias(a, b):
                return True
    return False


def item_weight(item: LabelItem, per_stratum: Counter[str | None]) -> float:
    """The weight of ``item`` in the weighted figures: pool size / sample size of its stratum for the
    word-level LLM file (:data:`LLM_STRATUM_POOLS`), 0 for an enriched audit item (:data:`ENRICHED`),
    1 otherwise (a natural sample at natural prevalence)."""
    if item.stratum in LLM_STRATUM_POOLS and per_stratum[item.stratum]:
        return LLM_STRATUM_POOLS[item.stratum] / per_stratum[item.stratum]
    return 0.0 if item.stratum == ENRICHED else 1.0


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


@dataclass(frozen=True, slots=True)
class Detail:
    """A miss or false alarm, for ``--details``: ``outcome`` is ``miss``, ``false_alarm`` or
    ``wrong_word`` (fired on a positive item, naming none of its labelled words)."""

    file: str
    kind: str
    threshold: str
    outcome: str
    request_id: str
    labelled_words: list[str]
    findings: list[dict[str, Any]]


@dataclass
class Evaluation:
    """Result per group (a file, or a file's rewriter with ``by``): ``table[group][threshold][row]``,
    queue figures, details and counts."""

    table: dict[str, dict[str, dict[str, Confusion]]] = field(default_factory=dict)
    queue: dict[str, QueueFigures] = field(default_factory=dict)
    details: list[Detail] = field(default_factory=list)
    items: Counter[str] = field(default_factory=Counter)
    missing: dict[str, list[str]] = field(default_factory=dict)
    stale: Counter[str] = field(default_factory=Counter)
    coverage: dict[str, dict[str, Counter[str]]] = field(default_factory=dict)
    """``coverage[group][check_id]``: how many scored items the check ``ran`` on, ``skipped`` (with the
    reason stored in the store), or has no run for (``none``), for every check emitting a scored kind."""
    strata: dict[str, dict[str, StratumFigures]] = field(default_factory=dict)
    """``strata[group][stratum]``: the figures of each sampling stratum (:class:`StratumFigures`)."""
    steps: dict[str, dict[str, StepFigures]] = field(default_factory=dict)
    """``steps[group]["check_id/step"]``: each grading step's record (:class:`StepFigures`)."""

    def open_group(self, name: str) -> None:
        """Start the counts of group ``name`` (a file, or a file's rewriter); a no-op when started."""
        if name not in self.table:
            self.table[name] = {t: {} for t in THRESHOLDS}
            self.queue[name] = QueueFigures()
            self.missing[name] = []
            self.coverage[name] = {}
            self.strata[name] = {}
            self.steps[name] = {}

    def as_json(self, *, details: bool = False) -> dict[str, Any]:
        """The ``evaluate --json`` object: per group, the default threshold's metrics per row (with their
        95% Wilson intervals, ``*_ci``: [low, high] or None) plus ``fabricated_high``, every threshold under
        ``by_threshold``, the queue figures and counts;
        ``details`` (every miss and false alarm) on request."""
        files: dict[str, Any] = {}
        for name, by_threshold in self.table.items():
            kinds: dict[str, Any] = {
                k: c.metrics() | c.intervals() for k, c in by_threshold[DEFAULT_THRESHOLD].items()
            }
            if "fabricated" in by_threshold["high"]:
                high = by_threshold["high"]["fabricated"]
                kinds["fabricated_high"] = high.metrics() | high.intervals()
            for row, metrics in list(kinds.items()):
                if not metrics["measured"]:
                    why = (
                        "checked with other rules"
                        if metrics["stale"] and not metrics["skipped"]
                        else "no check ran"
                    )
                    kinds[row] = {**metrics, "not_measured": why}
            kinds["by_threshold"] = {
                t: {k: c.metrics() | c.intervals() for k, c in rows.items()}
                for t, rows in by_threshold.items()
            }
            kinds["queue"] = self.queue[name].as_dict()
            kinds["items"] = self.items[name]
            kinds["missing"] = len(self.missing.get(name, []))
            kinds["stale"] = self.stale[name]
            kinds["coverage"] = {c: dict(n) for c, n in sorted(self.coverage.get(name, {}).items())}
            kinds["strata"] = {k: v.as_dict() for k, v in sorted(self.strata.get(name, {}).items())}
            kinds["steps"] = {k: v.as_dict() for k, v in sorted(self.steps.get(name, {}).items())}
            files[name] = kinds
        out: dict[str, Any] = {"files": files}
        if details:
            out["details"] = [asdict(d) for d in self.details]
        return out


def _finding_dict(f: FindingRow) -> dict[str, Any]:
    return {"kind": f.kind, "severity": f.severity, "words": f.words, "reason": f.reason}


def evaluate(
    *,
    session: Session,
    label_files: Sequence[Path],
    checks: Sequence[tuple[str, int]],
    kind_to_check: Mapping[str, Sequence[str]],
    rules_hash: str | None = None,
    by: str | None = None,
    same_alias: Callable[[str, str], bool] | None = None,
) -> Evaluation:
    """Join each label file to the stored findings and count, per row and severity threshold.

    ``checks`` are the current ``(check_id, version)`` pairs; ``kind_to_check`` maps a finding kind to
    the ids of the checks that emit it (``monitor.checks.checks_by_kind``; to tell "skipped" from
    "ran and found nothing": a kind was looked for when any of its checks ran); ``rules_hash`` is the
    current rules' hash (``None``: any). ``by`` (``"model"`` or ``"prompt_version"``) splits each file by
    the rewriter that wrote the rewrite: groups are then named ``"<file> [<value>]"``. Raises
    ``LabelError`` for an unreadable label file and ``ValueError`` for another ``by``.
    """
    if by not in (None, "model", "prompt_version"):
        raise ValueError(f"by must be model or prompt_version, not {by!r}")
    result = Evaluation()
    seen: set[Path] = set()
    for path in label_files:
        if path.resolve() in seen:
            raise LabelError(f"{path}: given twice: each label file counts once")
        seen.add(path.resolve())
    for path in label_files:
        items = read_labels(path)
        stored = stored_rewrites(session=session, request_ids=[i.request_id for i in items], checks=checks)
        per_stratum = Counter(i.stratum for i in items)
        if not items:  # an empty label file still says so (0 items), rather than vanishing
            result.open_group(path.name)
        for item in items:
            rec = stored.get(item.request_id)
            group = path.name
            if by is not None and rec is not None:
                group = f"{path.name} [{getattr(rec, by) or 'unknown'}]"
            result.open_group(group)
            result.items[group] += 1
            if rec is None:
                result.missing[group].append(item.request_id)
                continue
            weight = item_weight(item, per_stratum)
            _score(result, group, item, rec, weight, kind_to_check, rules_hash, same_alias)
    return result


def _emitters(kind_to_check: Mapping[str, Sequence[str]], kind: str) -> tuple[str, ...]:
    """The check ids that emit ``kind`` (the kind itself when none is named)."""
    got = kind_to_check.get(kind, kind)
    return (got,) if isinstance(got, str) else tuple(got)


def _score(
    result: Evaluation,
    group: str,
    item: LabelItem,
    rec: StoredRewrite,
    weight: float,
    kind_to_check: Mapping[str, Sequence[str]],
    rules_hash: str | None,
    same_alias: Callable[[str, str], bool] | None,
) -> None:
    runs = [rec.statuses.get(c) for k in REWRITE_KINDS for c in _emitters(kind_to_check, k)]
    if rules_hash is not None and any(r is not None and r[1] != rules_hash for r in runs):
        result.stale[group] += 1
        for rows in result.table[group].values():
            for row in ROWS:
                rows.setdefault(row.name, Confusion()).stale += 1
        return
    has_error = any(item.truth.get(k) for k in LABEL_KINDS)
    queued = any(
        f.kind in REWRITE_KINDS and SEVERITY_RANK[f.severity] >= SEVERITY_RANK[QUEUE_THRESHOLD]
        for f in rec.findings
    )
    coverage = result.coverage.setdefault(group, {})
    for c in dict.fromkeys(c for row in ROWS for p in row.predictors for c in _emitters(kind_to_check, p)):
        status = rec.statuses.get(c)
        coverage.setdefault(c, Counter())[status[0] if status is not None else "none"] += 1
    result.queue[group].add(queued, has_error, weight)
    strata = result.strata.setdefault(group, {})
    stratum = strata.setdefault(item.stratum or rec.selection or "unknown", StratumFigures())
    stratum.queue.add(queued, has_error, weight)
    right_of_row: dict[str, Callable[[FindingRow], bool]] = {}
    for row in ROWS:
        if not any(k in item.truth for k in row.truth_from):
            continue  # this file does not label it
        truth = any(item.truth.get(k) for k in row.truth_from)
        labelled = [w for k in row.truth_from for w in item.words.get(k, [])]
        ran = any(
            (rec.statuses.get(c) or ("", ""))[0] == "ran"
            for p in row.predictors
            for c in _emitters(kind_to_check, p)
        )
        relevant = [f for f in rec.findings if f.kind in row.predictors]

        def names_it(
            f: FindingRow, row: Row = row, truth: bool = truth, labelled: list[str] = labelled
        ) -> bool:
            """Whether finding ``f`` is right about this item for ``row``: the item carries the label and,
            on a word row, ``f`` names a labelled word; an escaped fabrication (no labelled word) is
            named only by a conflict-type finding."""
            if not truth:
                return False
            if row.name == "fabricated" and not labelled and item.escaped:
                return f.kind in CONFLICT_KINDS
            return not row.right_word or not labelled or words_overlap(f.words, labelled, same_alias)

        right_of_row[row.name] = names_it
        for threshold in THRESHOLDS:
            conf = result.table[group][threshold].setdefault(row.name, Confusion())
            strat = (
                stratum.fabricated.setdefault(threshold, Confusion()) if row.name == "fabricated" else None
            )
            if not ran:
                conf.skipped += 1
                conf.pos_skipped += truth
                if strat is not None:
                    strat.skipped += 1
                continue
            fired = [f for f in relevant if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[threshold]]
            right = any(names_it(f) for f in fired)
            outcome = conf.count(truth, bool(fired), right, weight)
            if strat is not None:
                strat.count(truth, bool(fired), right, weight)
            if outcome is not None:
                result.details.append(
                    Detail(
                        group,
                        row.name,
                        threshold,
                        outcome,
                        item.request_id,
                        labelled,
                        [_finding_dict(f) for f in (fired or relevant)],
                    )
                )
    _score_steps(result.steps.setdefault(group, {}), rec, right_of_row)


def _score_steps(
    steps: dict[str, StepFigures],
    rec: StoredRewrite,
    right_of_row: Mapping[str, Callable[[FindingRow], bool]],
) -> None:
    """Count each grading step of ``rec``'s findings once for the item: fired, queued, and right (a
    finding of the step names the item's label for its kind's row, :data:`KIND_ROW`). Findings of rows
    the label file does not speak to, and findings stored before steps were recorded, are not counted."""
    seen: dict[str, tuple[bool, bool]] = {}
    for f in rec.findings:
        names_it = right_of_row.get(KIND_ROW.get(f.kind, ""))
        if names_it is None or not f.step:
            continue
        key = f"{f.check_id}/{f.step}"
        queued = SEVERITY_RANK[f.severity] >= SEVERITY_RANK[QUEUE_THRESHOLD]
        was_right, was_queued = seen.get(key, (False, False))
        seen[key] = (was_right or names_it(f), was_queued or queued)
        steps.setdefault(key, StepFigures(f.kind))
    for key, (right, queued) in seen.items():
        fig = steps[key]
        fig.fired += 1
        fig.right += right
        fig.queued += queued
        fig.right_queued += right and queued
