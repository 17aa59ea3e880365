"""The main job, ``run``: ingest, check, admit the day's sample to the review queue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import TextColumn
from rich.table import Table

from monitor.cli.app import (
    State,
    Workers,
    err,
    open_engine,
    out,
    progress_bar,
    say_one_process,
    say_skipped,
    stop_on_sigterm,
)
from monitor.settings import Settings


# -- main job, queue, show, stats ---------------------------------------------------------------
def _sources(paths: list[str] | None, settings: Settings, errors: list[tuple[str, str]]) -> list[Any]:
    """The sources to read; a path that cannot be read goes to ``errors`` (the others are still read)."""

    from monitor.errors import ConfigError
    from monitor.ingest.sources import discover, expand_pattern

    if paths:
        skipped: list[Path] = []
        found = discover(paths, skipped=skipped, errors=errors)
        say_skipped(skipped, "name them (run reads the log names of ingest --help)")
        return found
    if not settings.sources:
        # Nothing to read is a command-line or settings problem (exit 2), not an unreadable file.
        raise ConfigError(
            "no PATH given and no `sources` configured (REWRITE_MONITOR_SOURCES or config file)"
        )
    expanded: list[str] = []
    for pattern in settings.sources:
        matches = expand_pattern(pattern)
        expanded.extend(matches or [pattern])  # a pattern matching nothing is reported by discover
    return discover(expanded, errors=errors)


def run(
    ctx: typer.Context,
    paths: Annotated[
        list[str] | None,
        typer.Argument(metavar="PATH", help="Logs to ingest; default: configured sources."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    workers: Workers = None,
) -> None:
    """The main job: ingest, check, admit the day's sample to the review queue, and report.

    Safe to repeat: a second run on the same files adds no events, findings or queue items.

    Example: rewrite-monitor run logs/*.jsonl
    """
    from monitor.checks.nlp import use_model
    from monitor.checks.rules import load_rules
    from monitor.store.engine import session_factory
    from monitor.worker.jobs import run_job

    stop_on_sigterm(ctx)  # stopped as at Ctrl+C: the batch in hand rolled back, processes closed
    state: State = ctx.obj
    settings = state.settings.model_copy(update={"check_workers": workers or state.settings.check_workers})
    rules = load_rules(settings.rules_dir)
    use_model(settings.spacy_model)
    engine = open_engine(state, writes=True)
    unreadable: list[tuple[str, str]] = []
    sources = _sources(paths, settings, unreadable)
    with (
        progress_bar(
            TextColumn("[bold]{task.description}"), TextColumn("{task.completed:,.0f}"), quiet=as_json
        ) as progress,
        session_factory(engine)() as session,
    ):
        ingest_task = progress.add_task("ingest bytes", total=None)
        check_task = progress.add_task("check rewrites", total=None)
        summary = run_job(
            session=session,
            settings=settings,
            rules=rules,
            sources=sources,
            on_bytes=lambda n: progress.advance(ingest_task, n),
            on_batch=lambda n: progress.advance(check_task, n),
            release_caches=True,
        )
    if summary.ingest is not None:
        # a path that could not be opened is a source that failed, as one that failed mid-read is
        summary.ingest.source_errors[:0] = unreadable
    result = summary.as_dict()
    if as_json:
        out.print_json(json.dumps(result))
    else:
        _print_run_summary(result)
    say_one_process(workers, result["checked"], result["check_processes"])
    if summary.ingest is not None and summary.ingest.source_errors:
        for source, problem in summary.ingest.source_errors:
            err.print("error", style="red", end="")
            err.print(f": {source}: {problem}", markup=False, highlight=False)
        raise typer.Exit(3)


def _print_run_summary(r: dict[str, Any]) -> None:
    ing = r["ingest"]
    if ing:
        rejected = ", ".join(f"{k} {v}" for k, v in ing["rejected"].items()) or "none"
        out.print(
            f"ingest: {ing['lines_read']} lines, {ing['stored']} new events, "
            f"{ing['already_stored']} already stored, {ing['joined']} joined; rejected: {rejected}"
            + "".join(f"; traces skipped ({k}): {v}" for k, v in ing.get("skipped", {}).items())
        )
        if ing["rejected_total"]:
            err.print("see them with: rewrite-monitor quarantine (file, line, reason, detail)")
    on = f" on {r['check_processes']} processes" if r["check_processes"] > 1 else ""
    out.print(f"check: {r['checked']} rewrites checked in {r['check_seconds']} s{on}")
    rates = Table(
        "finding kind",
        "rewrites flagged",
        "of checked",
        "per 1,000",
        "95% CI",
        title=f"finding rates over all checked rewrites (severity {r['rates']['min_severity']} and above)",
    )
    for k in r["rates"]["kinds"]:
        ci = k["ci95_per_1000"]
        rates.add_row(
            k["kind"],
            str(k["rewrites_flagged"]),
            str(k["rewrites_checked"]),
            f"{k['per_1000']:.1f}",
            f"{ci[0]:.1f}–{ci[1]:.1f}" if ci else "-",
        )
    out.print(rates)
    below = [c for c in r["coverage"] if c["rewrites"] and c["ran"] < c["rewrites"]]
    if not below:
        out.print("coverage: every check ran on every rewrite")
    for c in below:
        why = f" (commonest skip reason: {c['top_skip_reason']})" if c["top_skip_reason"] else ""
        out.print(
            f"coverage: {c['check']} ran on {c['ran'] / c['rewrites']:.0%} of rewrites{why}", markup=False
        )
    q = r["queue"]
    added = ", ".join(f"{s} {n}" for s, n in q["added"].items()) or "nothing"
    withdrawn = sum(q.get("withdrawn", {}).values())
    gone = f"; withdrew {withdrawn} displaced by a re-plan of their day" if withdrawn else ""
    out.print(
        f"queue: added {added}{gone}; {q['capped']} passed over by the per-conversation cap; "
        f"depth {q['depth']}, overdue {q['overdue']}"
    )
    if q["subsampled"]:
        per_stratum: dict[str, int] = {}
        for strata in q["subsampled"].values():
            for s in strata:
                per_stratum[s] = per_stratum.get(s, 0) + 1
        days = ", ".join(f"{s} on {n} day{'s' * (n != 1)}" for s, n in per_stratum.items())
        out.print(f"more candidates than the daily budget, sampled uniformly: {days} (details: --json)")
    out.print(f"done in {r['seconds']} s")


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.command("run")(run)
