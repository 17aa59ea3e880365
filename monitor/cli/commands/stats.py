"""Measurement commands: ``stats`` (rates, precision, estimates) and ``evaluate`` (against labels)."""

from __future__ import annotations

import json
from datetime import date
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from monitor.cli.app import current_checks, err, lazy_choice, open_engine, out

if TYPE_CHECKING:
    from monitor.stats.evaluate import Detail, Evaluation
    from monitor.stats.figures import Confusion, QueueFigures, StepFigures, StratumFigures


class EvaluateBy(StrEnum):
    """What ``evaluate --by`` splits the figures by: the record field that names the rewriter, or the
    grading step (a table of each step's precision)."""

    MODEL = "model"
    PROMPT_VERSION = "prompt_version"
    STEP = "step"


_Labels = Annotated[
    list[Path], typer.Option("--labels", metavar="FILE", help="Label file (JSON Lines); repeatable.")
]
_Details = Annotated[bool, typer.Option("--details", help="List every miss and false alarm.")]
_EvaluateJson = Annotated[
    bool, typer.Option("--json", help="Print every figure as JSON (with --details: the details too).")
]
_EvaluateSplits = Annotated[
    list[EvaluateBy] | None,
    typer.Option(
        "--by",
        help="Split every figure by the rewriter (model or prompt_version: one of them), and/or print "
        "each grading step's precision (step); repeatable.",
    ),
]


def evaluate_cmd(
    ctx: typer.Context,
    labels: _Labels,
    details: _Details = False,
    as_json: _EvaluateJson = False,
    by: _EvaluateSplits = None,
) -> None:
    """Measure the stored findings against hand labels: precision, recall, false alarms, Wilson 95% CIs.

    Per file (and with --by model or prompt_version, per rewriter): item-level and right-word figures (a
    hit must name a labelled word), stratum-weighted figures, queue precision (the share of queued items
    that carry an error label) and lift (queue precision over the error rate), each sampling stratum's
    queue and fabrication figures, and with --by step each grading step's precision. Recall counts the
    items a check could test; where labelled items had none, a line gives recall over every labelled
    item, and another how many items each check ran on. Only findings of the current check versions and
    rules count: items checked with other rules are reported as stale. Ingest and check the labelled logs
    first (one --labels per file).

    Example: rewrite-monitor evaluate --labels labels/cast_audit_labels.jsonl --by prompt_version --by step
    """
    splits = sorted({b.value for b in by or () if b is not EvaluateBy.STEP})
    if len(splits) > 1:
        # a rewriter is one split: model and prompt_version nest differently per source, so no cross
        raise typer.BadParameter(
            f"one rewriter split at a time (got {' and '.join(splits)}); --by step combines with either",
            param_hint="--by",
        )
    from monitor.checks.rules import load_rules
    from monitor.stats.evaluate import evaluate_labels
    from monitor.store.engine import session_factory
    from monitor.worker.jobs import with_store_learning

    settings = ctx.obj.settings
    rules = load_rules(settings.rules_dir)
    engine = open_engine(ctx.obj)
    with session_factory(engine)() as session:
        result = evaluate_labels(
            session=session,
            rules=rules,
            label_files=labels,
            by=splits[0] if splits else None,
            learn=with_store_learning if settings.learn_from_verdicts else None,
        )
    if as_json:
        out.print_json(json.dumps(result.as_json(details=details)))
        return
    for name in result.table:
        _print_evaluation(result, name, by_step=EvaluateBy.STEP in (by or ()))
    if details:
        _print_details(result.details)


def _print_evaluation(result: Evaluation, name: str, *, by_step: bool) -> None:
    """One group of ``evaluate``'s text output: its table, then the lines beneath it."""
    by_threshold = result.table[name]
    out.print(_evaluation_table(by_threshold, _evaluation_title(result, name)))
    _print_unchecked(by_threshold)
    _print_coverage(result.queue[name].scored, result.coverage[name])
    _print_queue(result.queue[name])
    _print_strata(result.strata[name])
    if by_step:
        _print_steps(name, result.steps[name])


def _evaluation_title(result: Evaluation, name: str) -> str:
    """The table title of group ``name``: its items, and those missing from the store or stale."""
    missing, stale = result.missing[name], result.stale[name]
    title = f"{name}: {result.items[name]} items" + (
        f", {len(missing)} not in the store (ingest and check their logs first: rewrite-monitor run LOGS)"
        if missing
        else ""
    )
    if stale:
        title += (
            f", {stale} checked with other rules or before the reviewers' latest verdicts moved a word"
            " (not scored: run `rewrite-monitor check --recheck`)"
        )
    return title


def _evaluation_table(by_threshold: dict[str, dict[str, Confusion]], title: str) -> Table:
    """The figures of one group, a row per label kind and threshold (one line for a row not measured)."""
    from monitor.cli.render import safe_text
    from monitor.stats.evaluate import THRESHOLDS

    table = Table(
        "label",
        "at",
        "tp",
        "fp",
        "fn",
        "tn",
        "skip",
        "precision",
        "recall",
        "right-word P / R",
        "false alarms",
        "weighted P / R / FA",
        title=safe_text(title),
    )
    for kind in by_threshold[THRESHOLDS[0]]:
        first = by_threshold[THRESHOLDS[0]][kind]
        if not first.measured:
            why = (
                f"not scored: {first.stale} checked with other rules"
                if first.stale and not first.skipped
                else f"not measured: no check ran ({first.skipped} skipped)"
            )
            table.add_row(kind, "-", *("",) * 5, why)
            continue
        for threshold in THRESHOLDS:
            conf = by_threshold[threshold][kind]
            m, ci = conf.metrics(), conf.intervals()
            table.add_row(
                kind if threshold == THRESHOLDS[0] else "",
                f"{threshold}+",
                *(str(m[k]) for k in ("tp", "fp", "fn", "tn")),
                str(m["skipped"]),
                _pct(m["precision"], ci["precision_ci"]),
                _pct(m["recall"], ci["recall_ci"]),
                f"{_pct(m['precision_right_word'], None)} / {_pct(m['recall_right_word'], None)}",
                _pct(m["false_alarm_rate"], ci["false_alarm_ci"]),
                " / ".join(
                    _pct(m[k], None)
                    for k in ("weighted_precision", "weighted_recall", "weighted_false_alarm_rate")
                ),
            )
    return table


def _print_unchecked(by_threshold: dict[str, dict[str, Confusion]]) -> None:
    """A line per measured row whose labelled items include some no check could test: recall over them
    all."""
    from monitor.stats.evaluate import DEFAULT_THRESHOLD

    for kind, conf in by_threshold[DEFAULT_THRESHOLD].items():
        m = conf.metrics()
        if m["measured"] and m["labelled_unchecked"]:
            out.print(
                f"{kind}: {m['labelled_unchecked']} of the {m['tp'] + m['fn'] + m['labelled_unchecked']} "
                f"labelled items had no check that could test them; recall at {DEFAULT_THRESHOLD}+ over "
                f"every labelled item {_pct(m['recall_all_labelled'], None)}",
                markup=False,
                highlight=False,
            )


def _print_coverage(scored: int, coverage: dict[str, Any]) -> None:
    """How many of the ``scored`` items each check that did not run on all of them ran on."""
    shown = [
        f"{check} {n.get('ran', 0)}/{scored}"
        for check, n in sorted(coverage.items())
        if n.get("ran", 0) < scored
    ]
    if shown:
        out.print(
            f"coverage (of the {scored} scored items, each check that did not run on all of them ran "
            "on): " + ", ".join(shown),
            markup=False,
            highlight=False,
        )


def _print_queue(figures: QueueFigures) -> None:
    """The queue line of one group: queued items, queue precision and lift, errors reaching the queue."""
    q = figures.as_dict()
    out.print(
        f"queue (a rewrite finding at medium+): {q['queued']} of {q['scored']} items queued; "
        f"queue precision {_pct(q['queue_precision'], q['queue_precision_ci'])} "
        f"({q['queued_with_error_label']} carry an error label), lift {_times(q['queue_lift'])} over the "
        f"error rate {_pct(q['error_rate'], None)}; "
        f"{_pct(q['errors_reaching_queue'], None)} of the {q['with_error_label']} items with an error "
        "label reach the queue",
        markup=False,
        highlight=False,
    )


def _print_details(details: list[Detail]) -> None:
    """``evaluate --details``: a line per miss and false alarm, with the findings' words and reasons."""
    from monitor.cli.render import safe_text

    for d in details:
        words = ", ".join(w for f in d.findings for w in f["words"]) or "-"
        reasons = " | ".join(f"{f['kind']}/{f['severity']}: {f['reason']}" for f in d.findings) or "-"
        out.print(
            safe_text(
                f"{d.file} {d.kind} {d.threshold}+ {d.outcome}: {d.request_id} "
                f"labelled={d.labelled_words} words={words} {reasons}"
            ),
            markup=False,
            highlight=False,
        )


def _times(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def _print_strata(strata: dict[str, StratumFigures]) -> None:
    """One line per sampling stratum of a group that has several (a natural sample beside an enriched
    one, or the strata of an enriched word sample): its queue precision, lift and fabrication false
    alarms, so an enriched stratum cannot flatter the natural one."""
    from monitor.cli.render import safe_text

    if len(strata) < 2:
        return
    for name, fig in sorted(strata.items()):
        q = fig.queue.as_dict()
        fab = {t: c.metrics() for t, c in fig.fabricated.items()}
        out.print(
            f"  stratum {safe_text(name)}: {q['scored']} items, error rate {_pct(q['error_rate'], None)}, "
            f"{q['queued']} queued, queue precision {_pct(q['queue_precision'], None)}, lift "
            f"{_times(q['queue_lift'])}; fabricated false alarms medium+ "
            f"{_pct(fab.get('medium', {}).get('false_alarm_rate'), None)}, high "
            f"{_pct(fab.get('high', {}).get('false_alarm_rate'), None)}",
            markup=False,
            highlight=False,
        )


def _print_steps(group: str, steps: dict[str, StepFigures]) -> None:
    """The per-step table of one group: items each grading step fired on, queued, and the share whose
    label is the error its finding kind predicts."""
    from monitor.cli.render import safe_text

    table = Table(
        "step",
        "finding kind",
        "fired",
        "right",
        "precision",
        "queued",
        "right",
        "precision",
        title=safe_text(f"{group}: grading steps"),
    )
    for key, fig in sorted(steps.items(), key=lambda kv: (-kv[1].fired, kv[0])):
        m = fig.as_dict()
        table.add_row(
            key,
            fig.kind,
            str(fig.fired),
            str(fig.right),
            _pct(m["precision"], m["precision_ci"]),
            str(fig.queued),
            str(fig.right_queued),
            _pct(m["queued_precision"], None),
        )
    out.print(table)


def _groups() -> tuple[str, ...]:
    from monitor.stats.store import GROUPS

    return tuple(GROUPS)


_StatsBy = Annotated[
    str | None,
    typer.Option("--by", parser=lazy_choice(_groups), metavar="GROUP", help="prompt_version, model or day."),
]
_Since = Annotated[str | None, typer.Option("--since", help="Only rewrites from this date (YYYY-MM-DD).")]
_StatsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
_Agreement = Annotated[
    bool,
    typer.Option(
        "--agreement",
        help="Only the agreement between reviewers on doubly reviewed items (double_review_share): "
        "Cohen's kappa with its 95% interval per label and first wrong artifact, and the "
        "disagreements awaiting adjudication.",
    ),
]
_Calibration = Annotated[
    bool,
    typer.Option(
        "--calibration",
        help="Only the calibrated precision of each (rewriter, finding kind, grading step) the "
        "verdicts speak to: confirmed and dismissed counts, the estimate with its 90% interval, the "
        "prior it started from, and the grade a medium finding of the step would get.",
    ),
]


def stats(
    ctx: typer.Context,
    by: _StatsBy = None,
    since: _Since = None,
    as_json: _StatsJson = False,
    agreement: _Agreement = False,
    calibration: _Calibration = False,
) -> None:
    """Finding rates per group with 95% intervals; with verdicts, the checks' precision per kind and the
    estimated share of bad rewrites in the whole traffic (weighted by inclusion probabilities).

    With --calibration, what the verdicts taught of each rewriter's grading steps instead
    (monitor.stats.calibration): per (rewriter, kind, step), the verdicts that found a real problem
    (confirmed) and the ones that found the rewrite fine (dismissed), the estimate with its 90%
    interval, the pooled prior (the shipped table and the other rewriters) and the grade it implies
    for a finding the rules graded medium.

    With --agreement, how far the reviewers agree instead: on the items a second reviewer judged blind
    (set double_review_share, e.g. 0.2), Cohen's kappa (Krippendorff's alpha when some item has more
    than two reviewers) with its 95% interval, for the label, each label against the rest and the first
    wrong artifact, and each disagreement with the command that adjudicates it.

    The last estimate, fabricated_among_demoted, is the share of fabrications among the control-sample
    rewrites whose flagged words the verdicts demoted (`rules learned`): what the learning may hide.
    Its coverage is the share of the control verdicts it rests on.

    Example: rewrite-monitor stats --by prompt_version --since 2024-03-01
    """
    from monitor.stats.report import stats_report
    from monitor.store.engine import session_factory

    since_day = _since_day(since)
    if calibration and (agreement or by or since_day):
        raise typer.BadParameter(
            "--calibration takes no --agreement, --by or --since: it reads every verdict",
            param_hint="--calibration",
        )
    settings = ctx.obj.settings
    engine = open_engine(ctx.obj)
    if agreement:
        _agreement(engine, since_day, as_json)
        return
    if calibration:
        _calibration(engine, as_json)
        return
    with session_factory(engine)() as session:
        result = stats_report(
            session=session,
            checks=current_checks(),
            min_severity=settings.queue_min_severity,
            by=by,
            since=since_day,
        )
    if as_json:
        out.print_json(json.dumps(result, default=str))
        return
    _print_stats(result, by)


def _since_day(since: str | None) -> date | None:
    """The day of ``--since`` (``None`` without it); ``BadParameter`` for what is no date."""
    try:
        return date.fromisoformat(since) if since else None
    except ValueError:
        raise typer.BadParameter("must be a date like 2024-03-01", param_hint="--since") from None


def _print_stats(result: dict[str, Any], by: str | None) -> None:
    """``stats``'s tables: finding rates, then the checks' precision and the whole-traffic estimates."""
    from monitor.cli.render import safe_text

    table = Table(
        by or "group",
        "finding kind",
        "flagged",
        "checked",
        "per 1,000",
        "95% CI",
        title=f"finding rates (severity {result['min_severity']} and above)",
    )
    for r in result["rates"]:
        ci = r["ci95_per_1000"]
        table.add_row(
            safe_text(r["group"]),
            r["kind"],
            str(r["flagged"]),
            str(r["checked"]),
            f"{r['per_1000']:.1f}",
            f"{ci[0]:.1f}–{ci[1]:.1f}" if ci else "-",
        )
    out.print(table)
    if not result["verdicts"]:
        out.print("no verdicts yet: precision and whole-traffic estimates appear once items are reviewed")
        return
    _print_verdict_figures(result["precision"], result["estimates"])


def _print_verdict_figures(precision: dict[str, Any], estimates: list[dict[str, Any]]) -> None:
    """The checks' precision from verdicts and the whole-traffic estimates, a table each."""
    prec = Table(
        "finding kind", "verdicts", "confirmed", "precision", title="checks' precision from verdicts"
    )
    for kind, p in precision.items():
        prec.add_row(kind, str(p["verdicts"]), str(p["confirmed"]), _pct(p["precision"], p["ci"]))
    out.print(prec)
    est = Table(
        "estimate",
        "share of traffic",
        "95% CI",
        "population covered",
        "verdicts",
        title="whole-traffic estimates (Horvitz–Thompson over the sampled strata)",
    )
    for e in estimates:
        interval = f"{e['ci95'][0]:.1%}–{e['ci95'][1]:.1%}" if e["ci95"] else "-"
        value = f"{e['value']:.1%}" if e["value"] is not None else "-"
        est.add_row(e["name"], value, interval, f"{e['coverage']:.0%}", str(e["verdicts"]))
    out.print(est)


def _agreement(engine: Any, since: Any, as_json: bool) -> None:
    """``stats --agreement``: the agreement table and the disagreements (see :func:`stats`)."""
    from monitor.stats.report import agreement_report
    from monitor.stats.store import double_reviews
    from monitor.store.engine import session_factory

    with session_factory(engine)() as session:
        reviews = double_reviews(session=session, since=since)
    result = agreement_report(reviews)
    if as_json:
        out.print_json(json.dumps(result))
        return
    if not reviews:
        out.print(
            "no item has verdicts from two reviewers yet: set double_review_share (e.g. 0.2) and let a "
            "second reviewer work the queue"
        )
        return
    _print_agreement(result)


def _print_agreement(result: dict[str, Any]) -> None:
    """The agreement table of :func:`monitor.stats.report.agreement_report`, then the disagreements that
    await adjudication and the command that settles them."""
    from monitor.cli.render import safe_text

    agree = Table(
        "rating",
        "statistic",
        "value",
        "95% CI",
        "raw agreement",
        "items",
        title="agreement between reviewers",
    )

    def row(name: str, fig: dict[str, Any]) -> None:
        value = f"{fig['value']:.2f}" if fig["value"] is not None else "- (no variation)"
        ci = f"{fig['ci95'][0]:.2f} to {fig['ci95'][1]:.2f}" if fig["ci95"] else "-"
        raw = f"{fig['observed_agreement']:.0%}" if fig["observed_agreement"] is not None else "-"
        statistic = {"cohen_kappa": "Cohen's kappa", "krippendorff_alpha": "Krippendorff's alpha"}
        agree.add_row(name, statistic[fig["statistic"]], value, ci, raw, str(fig["items"]))

    row("label", result["label"])
    row("first wrong artifact", result["artifact"])
    for label, fig in result["per_label"].items():
        row(f"{label} or not", fig)
    out.print(agree)
    disagreements = result["disagreements"]
    pending = [d for d in disagreements if d["adjudicated"] is None]
    out.print(f"{len(disagreements)} disagreements, {len(pending)} awaiting adjudication")
    for d in pending:
        verdicts = "; ".join(f"{r['reviewer']}: {r['label']} ({r['artifact']})" for r in d["ratings"])
        out.print(
            safe_text(f"  {d['request_id']} [{d['conv_id']}]: {verdicts}"),
        )
    if pending:
        out.print(
            "adjudicate with: rewrite-monitor verdict REQUEST_ID --conv CONV_ID --adjudicate --label LABEL",
            markup=False,
        )


def _pct(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1%}" + (f" [{ci[0]:.0%}-{ci[1]:.0%}]" if ci else "")


def _calibration(engine: Any, as_json: bool) -> None:
    """``stats --calibration``: one row per (rewriter, kind, step) with verdicts, most verdicts first."""
    from monitor.cli.render import safe_text
    from monitor.stats.calibration import learned_grade
    from monitor.stats.store import calibration
    from monitor.store.engine import session_factory

    with session_factory(engine)() as session:
        cal = calibration(session=session, checks=current_checks())
    rows = [cal.estimate(k) for k in cal.keys()]
    rows.sort(key=lambda e: (-e.counts.n, e.key))
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "sources": list(cal.table.sources),
                    "entries": [
                        {**e.as_dict(), "medium_becomes": learned_grade("medium", e.mean)} for e in rows
                    ],
                }
            )
        )
        return
    table = Table(
        "rewriter",
        "kind",
        "step",
        "confirmed",
        "dismissed",
        "estimate (90%)",
        "prior",
        "medium becomes",
        title="calibrated precision per rewriter and grading step (from the verdicts)",
    )
    for e in rows:
        rewriter, kind, step = e.key
        table.add_row(
            safe_text(rewriter or "-"),
            kind,
            step or "-",
            str(e.counts.confirmed),
            str(e.counts.dismissed),
            f"{e.mean:.2f} ({e.low:.2f}–{e.high:.2f})",
            f"{e.prior_mean:.2f} ×{e.prior_weight:g}",
            learned_grade("medium", e.mean),
        )
    out.print(table)
    if not rows:
        err.print("no verdicts yet: review some items (rewrite-monitor review) to calibrate the steps")


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.command("evaluate")(evaluate_cmd)
    app.command("stats")(stats)
