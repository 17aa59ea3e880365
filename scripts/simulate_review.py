"""Proof by simulation that the queue learns the rewriter from its reviewers' verdicts (issue 15).

Replays a labelled file day by day, prequentially: each simulated day's conversations go through the
main job (``monitor.worker.jobs.run_job``: ingest, check with what the verdicts so far taught, admit to
the queue with the daily budget), the day's queue is scored, and only *then* does a simulated reviewer
give each queued labelled item the verdict its label implies, with the labelled words:

========================= ==========================================================================
label                     verdict
========================= ==========================================================================
fabricated                ``fabricated_constraint``, must-not terms: the labelled words
dropped_constraint        ``dropped_constraint``, must terms: the labelled words
intent_drift              ``dropped_constraint``, no terms (the label speaks for the lost words)
wrong_antecedent          ``wrong_antecedent``; unresolved: ``unresolved_reference``; not_a_query: same
none of these             ``ok``
========================= ==========================================================================

Conversations are taken in the order the logs hold them; a day closes once it holds ``--per-day``
labelled rewrites (15 by default), so a conversation is never split across days. Each conversation's
times are moved, all by one offset, onto its simulated day. The reviewers take turns by day
(``--reviewers``, 2 by default: one on-call engineer a day). Queued rewrites without a label get no
verdict and are not scored.

Printed per day: labelled items, queued labelled items (the flagged strata; the control sample is
reviewed but counted apart), queue precision (share of them with any error label), fabrication recall
at medium+ (right word: ``monitor.stats.evaluate``), and the learned entries that move a grade after
the day's verdicts. Then the Done-when figures: precision over the last three days against the first
day's, and fabrication recall over the whole run. Usage::

    .venv/bin/python scripts/simulate_review.py [LABELS ...] [--data ../shared/data] [--per-day 15]
        [--reviewers 2] [--json]
    .venv/bin/python scripts/simulate_review.py LABELS... [--logs FILE...] --cv [--json]

With ``--cv`` it runs instead the cross-validated measure of the calibration (issue 34,
``monitor.stats.calibration``) over one store of ``--logs`` (default: DATA/logs) checked with today's
rules: **steady state**, for each conversation of a file, the estimates learned from the labels of the
file's other conversations (as the verdicts above would give them) over a prior table made from the
*other* files, then that conversation's findings graded (``learned_grade``) and ranked (``queue_order``);
**cold start**, the same with no verdict on the file (the prior alone); **off**, today's grades ranked by
severity; **fitted**, the ceiling of the model on these labels: the estimates learned from every
conversation of the file, the ranked one included (a figure no deployment can reach, printed so that a
bar above it is seen to be out of reach of per-step estimates). Per file and pooled: queue precision at a
budget of the top third of the flagged items, false alarms at high and at medium+ (items without an error
label), fabrication recall at medium+ (right word), the share of labelled errors in that budget, flagged
and items. With ``--json`` it prints ``{"files": {NAME: {"on": FIG, "off": FIG, "cold": FIG, "fitted":
FIG}}, "pooled": {"on": FIG, "off": FIG, "fitted": FIG}}``. About 20 s for the six shared label files.

Without LABELS it runs the four files issue 15 names (``mtrag_dev_*`` and ``llm_word_labels.jsonl``).
About half a minute per file on two cores. Exit status 0 when every file meets the Done-when figures,
1 when one does not, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from monitor.checks import checks_by_kind, current_versions
from monitor.checks.learned import KINDS as LEARNED_KINDS
from monitor.checks.learned import learned_steps
from monitor.checks.rules import load_rules
from monitor.checks.store import list_findings
from monitor.ingest.sources import discover
from monitor.queue.store import list_queue
from monitor.review.store import learned_table, record_verdict
from monitor.settings import Settings
from monitor.stats.calibration import CONFIRMS, Calibration, learned_grade, outcome, queue_order, table_from
from monitor.stats.evaluate import LABEL_KINDS, LabelItem, evaluate, read_labels
from monitor.store.engine import make_engine, session_factory, upgrade
from monitor.verdicts import DEFAULT_ARTIFACT, Label
from monitor.worker.jobs import run_job

DEFAULT_FILES = (
    "mtrag_dev_mixtral_labels.jsonl",
    "mtrag_dev_sonnet45agg_labels.jsonl",
    "mtrag_dev_sonnet4live_labels.jsonl",
    "llm_word_labels.jsonl",
)
FIRST_DAY = datetime(2030, 1, 7)
"""Simulated day 1 (a Monday, far from the logs' own dates)."""
TIME_FIELDS = ("ts", "first_ts", "last_ts")
PRECISION_GAIN = 1.5
PRECISION_ENOUGH = 0.70
RECALL_FLOOR = 0.9


@dataclass
class Conversation:
    key: tuple[str, str]  # (log file, conv_id)
    lines: list[dict[str, Any]] = field(default_factory=list)
    labelled: int = 0


@dataclass
class Day:
    number: int
    labelled: int = 0
    queued: int = 0
    queued_errors: int = 0
    controls: int = 0
    fabricated: int = 0
    fabricated_found: int = 0
    learned: int = 0
    lowered: int = 0
    raised: int = 0

    @property
    def precision(self) -> float | None:
        return self.queued_errors / self.queued if self.queued else None


def conversations(logs: Path, items: dict[str, LabelItem]) -> list[Conversation]:
    """The conversations of ``logs`` holding a labelled rewrite, in log order, with all their lines."""
    convs: dict[tuple[str, str], Conversation] = {}
    for path in sorted(logs.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for raw in fh:
                obj = json.loads(raw)
                key = (path.name, str(obj.get("conv_id")))
                conv = convs.setdefault(key, Conversation(key))
                conv.lines.append(obj)
                if obj.get("event") == "rewrite" and obj.get("request_id") in items:
                    conv.labelled += 1
    return [c for c in convs.values() if c.labelled]


def days_of(convs: list[Conversation], per_day: int) -> Iterator[list[Conversation]]:
    day: list[Conversation] = []
    n = 0
    for c in convs:
        day.append(c)
        n += c.labelled
        if n >= per_day:
            yield day
            day, n = [], 0
    if day:
        yield day


def _parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).astimezone(UTC).replace(tzinfo=None)


def _moved(value: Any, delta: timedelta) -> Any:
    """``value`` with every time field (:data:`TIME_FIELDS`) moved by ``delta``, recursively."""
    if isinstance(value, dict):
        return {
            k: (
                (_parse(v) + delta).isoformat(timespec="milliseconds") + "Z"
                if k in TIME_FIELDS and isinstance(v, str)
                else _moved(v, delta)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_moved(v, delta) for v in value]
    return value


def write_day(path: Path, day: list[Conversation], start: datetime) -> None:
    """The day's lines, each conversation moved to start ``start`` + 20 minutes per conversation before it."""
    with path.open("w", encoding="utf-8") as out:
        for i, conv in enumerate(day):
            first = min(_parse(o["ts"]) for o in conv.lines if isinstance(o.get("ts"), str))
            delta = start + timedelta(minutes=20 * i) - first
            for obj in conv.lines:
                out.write(json.dumps(_moved(obj, delta)) + "\n")


def verdict_of(item: LabelItem) -> tuple[str, list[str], list[str]]:
    """``(label, must_include, must_not_include)`` the item's labels imply (table in the module doc)."""
    t = item.truth
    if t.get("fabricated") or t.get("escaped_fabrication"):
        return Label.FABRICATED_CONSTRAINT.value, [], list(item.words.get("fabricated", []))
    if t.get("dropped_constraint"):
        return Label.DROPPED_CONSTRAINT.value, list(item.words.get("dropped_constraint", [])), []
    if t.get("intent_drift"):
        return Label.DROPPED_CONSTRAINT.value, [], []
    if t.get("wrong_antecedent"):
        return Label.WRONG_ANTECEDENT.value, [], []
    if t.get("unresolved"):
        return Label.UNRESOLVED_REFERENCE.value, [], []
    if t.get("not_a_query"):
        return Label.NOT_A_QUERY.value, [], []
    return Label.OK.value, [], []


def simulate(
    label_file: Path, logs: Path, per_day: int, reviewers: int, keep: Path | None = None, learn: bool = True
) -> list[Day]:
    """Run the simulation of one label file; returns the figures per day. ``keep``: the SQLite file to
    simulate in (replaced when it exists), kept for a look afterwards; default: a temporary one."""
    items = {i.request_id: i for i in read_labels(label_file)}
    raw = {
        json.loads(line)["request_id"]: line.strip()
        for line in label_file.open(encoding="utf-8")
        if line.strip()
    }
    convs = conversations(logs, items)
    rules = load_rules()
    checks = current_versions()
    out: list[Day] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = keep if keep is not None else Path(tmp) / "sim.db"
        db.unlink(missing_ok=True)
        url = f"sqlite:///{db}"
        upgrade(url)
        engine = make_engine(url)
        settings = Settings(database_url=url, learn_from_verdicts=learn)
        for n, day in enumerate(days_of(convs, per_day), start=1):
            start = FIRST_DAY + timedelta(days=n - 1)
            log = Path(tmp) / f"day{n:03d}.jsonl"
            write_day(log, day, start)
            stats = Day(n)
            day_items = [
                items[o["request_id"]]
                for c in day
                for o in c.lines
                if o.get("event") == "rewrite" and o.get("request_id") in items
            ]
            stats.labelled = len(day_items)
            day_labels = Path(tmp) / f"day{n:03d}_labels.jsonl"
            with day_labels.open("w", encoding="utf-8") as fh:
                for it in day_items:
                    fh.write(raw[it.request_id] + "\n")
            end = start + timedelta(hours=23)
            with session_factory(engine)() as session:
                run_job(session=session, settings=settings, rules=rules, sources=discover([log]), now=end)
                fab = (
                    evaluate(
                        session=session,
                        label_files=[day_labels],
                        checks=checks,
                        kind_to_check=checks_by_kind(),
                    )
                    .table[day_labels.name]["medium"]
                    .get("fabricated")
                    if day_items  # an empty label file is an error to evaluate
                    else None
                )
                if fab is not None:
                    stats.fabricated = fab.tp + fab.fn
                    stats.fabricated_found = fab.tp_right
                requests = {it.request_id for it in day_items}
                for f in list_findings(session=session, checks=checks):
                    if f.request_id in requests and f.kind in LEARNED_KINDS:
                        for w in learned_steps(f.evidence):
                            stats.lowered += w < 0
                            stats.raised += w > 0
                reviewer = f"reviewer-{(n - 1) % reviewers + 1}"
                for row in list_queue(session=session, now=end, state="pending", limit=None):
                    if row.day != start.date() or row.request_id not in items:
                        continue
                    item = items[row.request_id]
                    has_error = any(item.truth.get(k) for k in LABEL_KINDS)
                    if row.stratum == "control":
                        stats.controls += 1
                    else:
                        stats.queued += 1
                        stats.queued_errors += has_error
                    label, must, must_not = verdict_of(item)
                    record_verdict(
                        session=session,
                        item_id=row.id,
                        reviewer=reviewer,
                        label=label,
                        artifact=DEFAULT_ARTIFACT[label],
                        now=end,
                        must_include=must,
                        must_not_include=must_not,
                    )
                stats.learned = len(learned_table(session=session, checks=checks).effective)
            out.append(stats)
    return out


def summary(days: list[Day]) -> dict[str, Any]:
    """The Done-when figures of one run."""
    first = days[0].precision if days else None
    last = days[-3:]
    q = sum(d.queued for d in last)
    last_p = sum(d.queued_errors for d in last) / q if q else None
    fab = sum(d.fabricated for d in days)
    found = sum(d.fabricated_found for d in days)
    recall = found / fab if fab else None
    gain_ok = last_p is not None and (
        last_p >= PRECISION_ENOUGH or (first is not None and first > 0 and last_p >= PRECISION_GAIN * first)
    )
    return {
        "days": len(days),
        "first_day_precision": first,
        "last_three_days_precision": last_p,
        "fabrication_recall": recall,
        "fabricated": fab,
        "fabricated_found": found,
        "precision_met": gain_ok,
        "recall_met": recall is None or recall >= RECALL_FLOOR,
    }


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "labels",
        nargs="*",
        help="label files (default: the three mtrag_dev_* files and llm_word_labels.jsonl)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "../shared/data",
        help="the shared data folder, holding logs/ and labels/ (default: ../shared/data)",
    )
    parser.add_argument("--per-day", type=int, default=15, help="labelled rewrites a simulated day")
    parser.add_argument("--reviewers", type=int, default=2, help="reviewers taking turns by day")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--no-learning", action="store_true", help="the same days with learning off (the ablation)"
    )
    parser.add_argument("--keep", type=Path, help="keep the simulated store in this SQLite file")
    parser.add_argument(
        "--cv",
        action="store_true",
        help="the calibration's cross-validated measure (issue 34): steady state by conversation and cold "
        "start with no verdict on the file (a rewriter that also wrote another file is in its prior), "
        "learning on against off, per file and pooled",
    )
    parser.add_argument(
        "--logs",
        type=Path,
        nargs="+",
        help="with --cv: the log files holding the labelled records (default: DATA/logs)",
    )
    args = parser.parse_args(argv)
    if args.per_day < 1 or args.reviewers < 1:
        parser.error("--per-day and --reviewers must be at least 1")
    files = [Path(p) for p in args.labels] or [args.data / "labels" / f for f in DEFAULT_FILES]
    for f in files:
        if not f.is_file():
            parser.error(f"no label file {f}")
    if args.cv:
        names = [f.name for f in files]
        if len(set(names)) != len(names):
            parser.error(
                "--cv names its results by file name: give each label file once, under distinct names"
            )
        for p in args.logs or []:
            if not p.exists():
                parser.error(f"no logs at {p}")
        return cv_main(args, files)
    results: dict[str, Any] = {}
    ok = True
    for f in files:
        keep = args.keep.with_name(f"{args.keep.stem}-{f.stem}{args.keep.suffix}") if args.keep else None
        learn = not args.no_learning
        days = simulate(f, args.data / "logs", args.per_day, args.reviewers, keep, learn=learn)
        s = summary(days)
        ok &= bool(s["precision_met"] and s["recall_met"])
        results[f.name] = {"per_day": [d.__dict__ | {"precision": d.precision} for d in days], "summary": s}
        if args.json:
            continue
        mode = "learning" if not args.no_learning else "learning off"
        print(f"\n{f.name}: {len(days)} days of about {args.per_day} labelled rewrites, ", end="")
        print(f"{args.reviewers} reviewers, {mode}")
        print(
            "| day | labelled | queued | with an error | precision | controls | fab. recall | learned "
            "| words lowered | raised |"
        )
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for d in days:
            rec = f"{d.fabricated_found}/{d.fabricated}" if d.fabricated else "–"
            print(
                f"| {d.number} | {d.labelled} | {d.queued} | {d.queued_errors} | {_pct(d.precision)} | "
                f"{d.controls} | {rec} | {d.learned} | {d.lowered} | {d.raised} |"
            )
        gain = (
            f"{s['last_three_days_precision'] / s['first_day_precision']:.2f}x"
            if s["first_day_precision"] and s["last_three_days_precision"] is not None
            else "–"
        )
        print(
            f"first day {_pct(s['first_day_precision'])}, last three days "
            f"{_pct(s['last_three_days_precision'])} ({gain}); fabrication recall at medium+ "
            f"{s['fabricated_found']}/{s['fabricated']} ({_pct(s['fabrication_recall'])}); "
            f"{'met' if s['precision_met'] and s['recall_met'] else 'NOT met'} (wanted: the last three days' "
            f"precision at least {PRECISION_GAIN}x the first day's or {PRECISION_ENOUGH:.0%}, and recall at "
            f"least {RECALL_FLOOR})"
        )
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    return 0 if ok else 1


# -- the cross-validated measure of the calibration (issue 34) ----------------------------------------------

SEVERITY = {"low": 0, "medium": 1, "high": 2}


@dataclass(frozen=True)
class CvFinding:
    kind: str
    step: str
    severity: str
    words: tuple[str, ...]
    protected: bool


@dataclass(frozen=True)
class CvItem:
    request_id: str
    conv_id: str
    rewriter: str
    verdict: str
    fabricated_words: tuple[str, ...]
    findings: tuple[CvFinding, ...]

    @property
    def error(self) -> bool:
        return self.verdict != Label.OK.value

    def observations(self) -> list[tuple[tuple[str, str, str], bool]]:
        """What the item's verdict says of each (rewriter, kind, step) it holds, once per key: one
        verdict is one observation of a step however many words the step flagged."""
        out = {}
        for f in self.findings:
            got = outcome(self.verdict, f.kind)
            if got is not None:
                out[(self.rewriter, f.kind, f.step)] = got
        return list(out.items())


def collect(label_files: list[Path], logs: list[Path]) -> dict[str, list[CvItem]]:
    """Each label file's items with their findings (rewrite kinds, every severity), from one store of
    ``logs`` checked with today's rules (no learned table)."""
    from monitor.checks.learned import PROTECTED_SIGNALS
    from monitor.checks.learned import rewriter_key as rkey
    from monitor.checks.store import stored_rewrites
    from monitor.ingest.store.batches import ingest_sources
    from monitor.stats.evaluate import REWRITE_KINDS
    from monitor.worker.jobs import check_job

    out: dict[str, list[CvItem]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'cv.db'}"
        upgrade(url)
        engine = make_engine(url)
        with session_factory(engine)() as session:
            ingest_sources(session, [s for p in logs for s in discover([str(p)])])
            session.commit()
            check_job(session=session, rules=load_rules())
            session.commit()
            checks = current_versions()
            for path in label_files:
                labelled = read_labels(path)
                stored = stored_rewrites(
                    session=session, request_ids=[i.request_id for i in labelled], checks=checks
                )
                items = []
                for item in labelled:
                    rec = stored.get(item.request_id)
                    if rec is None:
                        continue
                    findings = []
                    for f in rec.findings:
                        if f.kind not in REWRITE_KINDS:
                            continue
                        signals = {f.evidence.get("severity_signal")} | {
                            w.get("signal") for w in f.evidence.get("words", []) if isinstance(w, dict)
                        }
                        findings.append(
                            CvFinding(
                                f.kind,
                                f.step or "",
                                f.severity,
                                tuple(f.words),
                                bool(signals & PROTECTED_SIGNALS),
                            )
                        )
                    items.append(
                        CvItem(
                            item.request_id,
                            rec.conv_id,
                            rkey(rec.prompt_version, rec.model),
                            verdict_of(item)[0],
                            tuple(item.words.get("fabricated", [])),
                            tuple(findings),
                        )
                    )
                out[path.name] = items
        engine.dispose()
    return out


def warn_missing(files: list[Path], data: dict[str, list[CvItem]]) -> None:
    """Say on stderr how many labelled items of each file have no rewrite in the logs (they are left out)."""
    for f in files:
        labelled = len(read_labels(f))
        found = len(data.get(f.name, []))
        if found < labelled:
            print(
                f"{f.name}: {labelled - found} of {labelled} labelled items have no rewrite in the logs",
                file=sys.stderr,
            )


def learned_severity(f: CvFinding, estimate: float) -> str:
    """The grade learning gives the finding (``monitor.stats.calibration.learned_grade``)."""
    return learned_grade(f.severity, estimate, protected=f.protected)


def figures(items: list[CvItem], graded: dict[str, list[tuple[CvFinding, str, float]]]) -> dict[str, Any]:
    """The issue's figures for ``items``, each flagged item's findings ``graded`` (finding, severity,
    score): the top third of the flagged items by (score, severity) is the day's budget."""
    from monitor.stats.evaluate import words_overlap

    flagged = [i for i in items if graded.get(i.request_id)]

    def rank(i: CvItem) -> tuple[float, int, str]:
        g = graded[i.request_id]
        return queue_order(
            max(s for _f, _g, s in g), max((sev for _f, sev, _s in g), key=SEVERITY.get), i.request_id
        )

    budget = -(-len(flagged) // 3)
    admitted = sorted(flagged, key=rank)[:budget]
    errors = [i for i in items if i.error]
    fine = [i for i in items if not i.error]

    def top(i: CvItem) -> int:
        return max((SEVERITY[sev] for _f, sev, _s in graded.get(i.request_id, [])), default=-1)

    fabricated = [i for i in items if i.verdict == Label.FABRICATED_CONSTRAINT.value and i.fabricated_words]
    found = [
        i
        for i in fabricated
        if any(
            f.kind in CONFIRMS["fabricated_constraint"]
            and SEVERITY[sev] >= 1
            and words_overlap(f.words, i.fabricated_words)
            for f, sev, _s in graded.get(i.request_id, [])
        )
    ]

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    return {
        "queue_precision_third": ratio(sum(i.error for i in admitted), len(admitted)),
        "fa_high": ratio(sum(top(i) >= 2 for i in fine), len(fine)),
        "fa_medium": ratio(sum(top(i) >= 1 for i in fine), len(fine)),
        "fab_recall_medium": ratio(len(found), len(fabricated)),
        "reach": ratio(sum(i.error for i in admitted), len(errors)),
        "flagged": len(flagged),
        "items": len(items),
    }


def graded_off(items: list[CvItem]) -> dict[str, list[tuple[CvFinding, str, float]]]:
    """Today's hand grades: the score is the severity."""
    return {
        i.request_id: [(f, f.severity, float(SEVERITY[f.severity])) for f in i.findings]
        for i in items
        if i.findings
    }


def graded_on(items: list[CvItem], cal: Calibration) -> dict[str, list[tuple[CvFinding, str, float]]]:
    out = {}
    for i in items:
        if i.findings:
            out[i.request_id] = [
                (f, learned_severity(f, est := cal.estimate((i.rewriter, f.kind, f.step)).mean), est)
                for f in i.findings
            ]
    return out


def cross_validate(data: dict[str, list[CvItem]]) -> dict[str, Any]:
    """Steady state (by conversation, the prior without the file) and cold start (no verdict on the file,
    the prior without it) against today's grades, per file and pooled (module doc of issue 34's measure)."""
    result: dict[str, Any] = {"files": {}, "pooled": {}}
    pooled_on: dict[str, list[tuple[CvFinding, str, float]]] = {}
    pooled_off: dict[str, list[tuple[CvFinding, str, float]]] = {}
    pooled_fitted: dict[str, list[tuple[CvFinding, str, float]]] = {}
    every: list[CvItem] = []
    for name, items in data.items():
        prior = table_from(
            (k[1], k[2], ok)
            for other, its in data.items()
            if other != name
            for i in its
            for k, ok in i.observations()
        )
        on: dict[str, list[tuple[CvFinding, str, float]]] = {}
        for conv in dict.fromkeys(i.conv_id for i in items):
            held = [i for i in items if i.conv_id == conv]
            rest = [o for i in items if i.conv_id != conv for o in i.observations()]
            on.update(graded_on(held, Calibration.from_observations(rest, prior)))
        off = graded_off(items)
        cold = graded_on(items, Calibration({}, prior))
        # the ceiling: estimates fitted on every conversation of the file, the ranked one included
        fitted = graded_on(
            items, Calibration.from_observations([o for i in items for o in i.observations()], prior)
        )
        result["files"][name] = {
            "on": figures(items, on),
            "off": figures(items, off),
            "cold": figures(items, cold),
            "fitted": figures(items, fitted),
        }
        # pooled keys are per file: a request id may sit in two files
        pooled_on.update({f"{name}/{k}": v for k, v in on.items()})
        pooled_off.update({f"{name}/{k}": v for k, v in off.items()})
        pooled_fitted.update({f"{name}/{k}": v for k, v in fitted.items()})
        every.extend(
            CvItem(f"{name}/{i.request_id}", i.conv_id, i.rewriter, i.verdict, i.fabricated_words, i.findings)
            for i in items
        )
    result["pooled"] = {
        "on": figures(every, pooled_on),
        "off": figures(every, pooled_off),
        "fitted": figures(every, pooled_fitted),
    }
    return result


def cv_main(args: argparse.Namespace, files: list[Path]) -> int:
    logs = args.logs or [args.data / "logs"]
    data = collect(files, logs)
    warn_missing(files, data)
    result = cross_validate(data)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    cols = ("queue_precision_third", "fa_high", "fa_medium", "fab_recall_medium", "reach", "flagged", "items")
    print("| file | mode | " + " | ".join(cols) + " |")
    print("| --- | --- |" + " ---: |" * len(cols))
    rows = [(n, m, f) for n, figs in result["files"].items() for m, f in figs.items()]
    rows += [("pooled", m, f) for m, f in result["pooled"].items()]
    for name, mode, fig in rows:
        print(f"| {name} | {mode} | " + " | ".join(_cell(fig[c]) for c in cols) + " |")
    return 0


def _cell(v: Any) -> str:
    return "–" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


if __name__ == "__main__":
    sys.exit(main())
