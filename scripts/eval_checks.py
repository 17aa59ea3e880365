"""Tuning discipline: leave-one-rewriter-out figures for the constants of the checks fitted on labels.

Four constants were chosen while looking at the labelled development files: ``RARE_ZIPF`` (a rarer
unsupported word is graded high, ``monitor.checks.added_words``), ``STYLE_MIN_OTHERS`` (a word the
rewriter adds in that many other conversations is its style, ``monitor.checks.profile``),
``KEYWORD_RUN`` (that many content words in a row, in a query without a question mark, make a keyword
list whose facets are one step lower, ``monitor.checks.added_words``) and ``GENERIC_ZIPF`` (a noun at
least that common after a received modifier is a general noun, low, ``monitor.checks.added_words``). For each
rewriter family this script picks the constants from a small grid using every *other* family's labels,
then reports the held-out family's figures with them, beside the figures with the shipped constants.
A family whose figures are much worse when it played no part in the choice is one the constants were
fitted to.

Everything goes through the product's own code: the shared logs are ingested into a temporary SQLite
store (``monitor.ingest``), checked by the check job (``monitor.worker.jobs.check_job``, rewriter profile
included) and scored by ``monitor.stats.evaluate`` (right-word figures, Wilson intervals). Usage::

    .venv/bin/python scripts/eval_checks.py [--data ../shared/data] [--json]

Prints one table (Markdown) or, with ``--json``, the figures per family and constant. Takes about a
minute per grid point on two cores (the grid has 36).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monitor.checks import checks_by_kind, current_versions, profile
from monitor.checks.added_words import tuned
from monitor.checks.rules import load_rules
from monitor.ingest.sources import discover
from monitor.ingest.store.batches import ingest_sources
from monitor.stats.evaluate import evaluate
from monitor.store.engine import make_engine, session_factory, upgrade
from monitor.worker.jobs import check_job

FAMILIES: dict[str, tuple[str, ...]] = {
    "organiser/T5 (CAsT)": ("cast_audit_labels.jsonl",),
    "gpt-3.5 (QReCC, LLM4CS)": ("llm_word_labels.jsonl", "qrecc_audit_labels.jsonl"),
    "Mixtral (MTRAG)": ("mtrag_dev_mixtral_labels.jsonl",),
    "Claude 4.5, keyword expansion (MTRAG)": ("mtrag_dev_sonnet45agg_labels.jsonl",),
    "Claude 4, live pipeline (MTRAG)": ("mtrag_dev_sonnet4live_labels.jsonl",),
}
"""Rewriter families and their label files (``../shared/data/README.md``)."""

GRID = {
    "RARE_ZIPF": (4.0, 4.4, 4.8),
    "STYLE_MIN_OTHERS": (3, 5),
    "KEYWORD_RUN": (3, 4),
    "GENERIC_ZIPF": (5.0, 5.5, 6.0),
}
SHIPPED = {
    "RARE_ZIPF": tuned.RARE_ZIPF,
    "STYLE_MIN_OTHERS": profile.STYLE_MIN_OTHERS,
    "KEYWORD_RUN": tuned.KEYWORD_RUN,
    "GENERIC_ZIPF": tuned.GENERIC_ZIPF,
}


@dataclass(frozen=True)
class Figures:
    """Fabrication figures of one label file at one grid point (item counts; rates over items)."""

    positives: int
    caught_medium: int  # right-word
    caught_high: int
    fa_medium: float | None
    fa_high: float | None


def _apply(point: dict[str, float]) -> None:
    tuned.RARE_ZIPF = float(point["RARE_ZIPF"])
    profile.STYLE_MIN_OTHERS = int(point["STYLE_MIN_OTHERS"])
    tuned.KEYWORD_RUN = int(point["KEYWORD_RUN"])
    tuned.GENERIC_ZIPF = float(point["GENERIC_ZIPF"])


def figures_at(point: dict[str, float], logs: Path, labels: list[Path]) -> dict[str, Figures]:
    """Ingest ``logs`` into a fresh store, check it with the constants of ``point`` and score ``labels``."""
    _apply(point)
    rules = load_rules()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/eval.db"
        upgrade(url)
        engine = make_engine(url)
        with session_factory(engine)() as session:
            ingest_sources(session, discover([logs]))
            check_job(session=session, rules=rules)
            kind_to_check = checks_by_kind()
            result = evaluate(
                session=session,
                label_files=labels,
                checks=current_versions(),
                kind_to_check=kind_to_check,
                rules_hash=rules.hash,
            )
        engine.dispose()
    out: dict[str, Figures] = {}
    for name, by_threshold in result.table.items():
        med, high = (
            by_threshold["medium"]["fabricated"].metrics(),
            by_threshold["high"]["fabricated"].metrics(),
        )
        out[name] = Figures(
            med["tp"] + med["fn"],
            med["tp_right_word"],
            high["tp_right_word"],
            med["false_alarm_rate"],
            high["false_alarm_rate"],
        )
    return out


# The acceptance targets of issue 13 ("Done when"), per label file: the highest false-alarm rates at
# medium+ and at high. Recall targets (0.9 at medium+, 0.6 at high) apply to files with at least five
# fabricated items. They are the product's own definition of a usable queue, not fitted figures.
FA_TARGETS: dict[str, tuple[float, float | None]] = {
    "cast_audit_labels.jsonl": (0.02, None),
    "llm_word_labels.jsonl": (0.15, 0.03),
    "qrecc_audit_labels.jsonl": (0.15, 0.03),
    "mtrag_dev_mixtral_labels.jsonl": (0.15, 0.03),
    "mtrag_dev_sonnet4live_labels.jsonl": (0.15, 0.03),
    "mtrag_dev_sonnet45agg_labels.jsonl": (0.20, 0.05),
}
RECALL_TARGETS = (0.9, 0.6)
MIN_POSITIVES = 5


def targets_met(f: Figures, name: str) -> int:
    """How many of ``name``'s acceptance targets (:data:`FA_TARGETS`, :data:`RECALL_TARGETS`) ``f`` meets."""
    met = 0
    fa_med, fa_high = FA_TARGETS.get(name, (None, None))
    for limit, value in ((fa_med, f.fa_medium), (fa_high, f.fa_high)):
        if limit is not None and value is not None and value <= limit:
            met += 1
    if f.positives >= MIN_POSITIVES:
        met += f.caught_medium / f.positives >= RECALL_TARGETS[0]
        met += f.caught_high / f.positives >= RECALL_TARGETS[1]
    return met


def objective(figs: dict[str, Figures], files: list[str]) -> tuple[float, float, float]:
    """What the choice maximises over ``files``, in order: the number of acceptance targets met
    (:func:`targets_met`: recall and false alarms both count, so neither is bought with the other), then
    the negated mean of the false-alarm rates at medium+ and high, then pooled right-word recall at
    medium+. A recall-first objective (used before) picked the rarest-word threshold everywhere and
    doubled the false alarms at high on the files left out."""
    pos = sum(figs[f].positives for f in files)
    caught = sum(figs[f].caught_medium for f in files)
    fas = [x for f in files for x in (figs[f].fa_medium, figs[f].fa_high) if x is not None]
    return (
        float(sum(targets_met(figs[f], f) for f in files)),
        -sum(fas) / len(fas) if fas else 0.0,
        caught / pos if pos else 1.0,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    labels = sorted((args.data / "labels").glob("*_labels.jsonl"))
    if not labels:
        print(f"error: no label files in {args.data / 'labels'}", file=sys.stderr)
        return 2
    points = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    by_point: list[tuple[dict[str, float], dict[str, Figures]]] = []
    try:
        for point in points:
            print(f"checking at {point} ...", file=sys.stderr)
            by_point.append((point, figures_at(point, args.data / "logs", labels)))
    finally:
        _apply(SHIPPED)  # the module constants are the shipped ones again
    shipped = next(figs for point, figs in by_point if point == SHIPPED)
    report: dict[str, Any] = {}
    for family, files in FAMILIES.items():
        present = [f for f in files if f in shipped]
        others = [f for fam, fs in FAMILIES.items() if fam != family for f in fs if f in shipped]
        # ties go to the later grid point: the higher RARE_ZIPF, STYLE_MIN_OTHERS, KEYWORD_RUN and
        # GENERIC_ZIPF, the cautious end
        point, figs = max(enumerate(by_point), key=lambda ip: (objective(ip[1][1], others), ip[0]))[1]
        report[family] = {
            "files": present,
            "chosen_without_it": point,
            "shipped": {f: vars(shipped[f]) for f in present},
            "left_out": {f: vars(figs[f]) for f in present},
        }
    if args.json:
        print(json.dumps({"grid": GRID, "shipped": SHIPPED, "families": report}, indent=2))
        return 0
    print(
        "| family | file | constants chosen without it | medium+: caught, FA (shipped → left out) "
        "| high: caught, FA (shipped → left out) |"
    )
    print("| --- | --- | --- | --- | --- |")
    for family, r in report.items():
        for f in r["files"]:
            s, lo = r["shipped"][f], r["left_out"][f]

            def pct(x: float | None) -> str:
                return "-" if x is None else f"{x:.1%}"

            print(
                f"| {family} | {f} | {r['chosen_without_it']} "
                f"| {s['caught_medium']}/{s['positives']}, {pct(s['fa_medium'])} → "
                f"{lo['caught_medium']}/{lo['positives']}, {pct(lo['fa_medium'])} "
                f"| {s['caught_high']}/{s['positives']}, {pct(s['fa_high'])} → "
                f"{lo['caught_high']}/{lo['positives']}, {pct(lo['fa_high'])} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
