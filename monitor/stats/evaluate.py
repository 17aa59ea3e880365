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

The label files are read by ``monitor.stats.label_files``; the counts and their rates are
``monitor.stats.figures``; :func:`evaluate_labels` is the ``evaluate`` command.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.orm import Session

from monitor.checks.base import FABRICATION_KINDS
from monitor.checks.store import FindingRow, StoredRewrite, stored_rewrites
from monitor.errors import LabelError
from monitor.severity import SEVERITY_RANK
from monitor.stats.figures import Confusion, QueueFigures, StepFigures, StratumFigures
from monitor.stats.label_files import LabelItem, read_labels

if TYPE_CHECKING:
    from monitor.checks.rules import Rules


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


class Learning(Protocol):
    """What gives the rules the store's learned word evidence, as the check job grades with them
    (``monitor.worker.jobs.with_store_learning``; the command passes it in, the worker being a later
    stage)."""

    def __call__(self, *, session: Session, rules: Rules) -> Rules: ...


def alias_matcher(rules: Rules) -> Callable[[str, str], bool]:
    """The ``same_alias`` of right-word scoring: whether two phrases are members of one alias group of
    ``rules`` (case-insensitive)."""
    group_of = {m.lower(): g.name for g in rules.aliases.groups for m in g.members}

    def same_alias(a: str, b: str) -> bool:
        ga = group_of.get(a.lower())
        return ga is not None and ga == group_of.get(b.lower())

    return same_alias


def evaluate_labels(
    *,
    session: Session,
    rules: Rules,
    label_files: Sequence[Path],
    by: str | None = None,
    learn: Learning | None = None,
) -> Evaluation:
    """The ``evaluate`` command: :func:`evaluate` of ``label_files`` against the stored findings of the
    current check versions and rules, words matched through the alias groups of ``rules``. With
    ``learn`` (``learn_from_verdicts``), the current rules are ``rules`` with the store's learned evidence,
    as the check job grades. Raises like :func:`evaluate`."""
    from monitor.checks import checks_by_kind, current_versions

    same_alias = alias_matcher(rules)
    kind_to_check = checks_by_kind()
    if learn is not None:
        rules = learn(session=session, rules=rules)
    return evaluate(
        session=session,
        label_files=label_files,
        checks=current_versions(),
        kind_to_check=kind_to_check,
        rules_hash=rules.hash,
        by=by,
        same_alias=same_alias,
    )


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
