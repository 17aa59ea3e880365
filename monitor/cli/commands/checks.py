"""Check commands: ``check``, ``findings`` and ``rules validate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import TextColumn
from rich.table import Table

from monitor.cli.app import State, current_checks, err, kind_choice, open_engine, out, progress_bar
from monitor.severity import Severity

rules_app = typer.Typer(
    help="Validate the rules (alias groups, neutral words, qualifier kinds).", no_args_is_help=True
)


def rules_validate(
    ctx: typer.Context,
    directory: Annotated[
        Path | None,
        typer.Argument(help="Rules folder; default: the configured rules_dir, else the bundled rules."),
    ] = None,
) -> None:
    """Check every rules file; print file:line: reason for each problem (exit 2 when any).

    Without DIR it checks what run and check would load: the rules_dir setting, else the bundled rules.

    Example: rewrite-monitor rules validate rules/
    """
    from monitor.checks.rules import load_rules, validate_rules

    if directory is None:
        directory = ctx.obj.settings.rules_dir
    problems = validate_rules(directory)
    for p in problems:
        err.print(p, markup=False, highlight=False)
    if problems:
        raise typer.Exit(2)
    rules = load_rules(directory)
    out.print(f"rules valid (hash {rules.hash})")


def check(
    ctx: typer.Context,
    recheck: Annotated[
        bool, typer.Option("--recheck", help="Forget current-version results; check all.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Run the checks over every rewrite not yet checked at the current checker versions.

    Idempotent: a second run adds nothing. Each finding records its check id, version and rules hash.

    Example: rewrite-monitor check
    """
    from monitor.checks.nlp import use_model
    from monitor.checks.rules import load_rules
    from monitor.store.engine import session_factory
    from monitor.worker.jobs import check_job

    state: State = ctx.obj
    rules = load_rules(state.settings.rules_dir)
    use_model(state.settings.spacy_model)
    engine = open_engine(state, writes=True)
    with (
        progress_bar(
            TextColumn("[bold]check[/]"), TextColumn("{task.completed} rewrites"), quiet=as_json
        ) as progress,
        session_factory(engine)() as session,
    ):
        task = progress.add_task("", total=None)
        summary = check_job(
            session=session,
            rules=rules,
            recheck=recheck,
            check_rate=state.settings.check_rate,
            on_batch=lambda n: progress.advance(task, n),
            learn=state.settings.learn_from_verdicts,
        )
    result = summary.as_dict()
    if as_json:
        out.print_json(json.dumps(result))
        return
    rate = result["records_per_second"]
    out.print(f"checked {result['records_checked']} rewrites in {result['seconds']} s ({rate or '-'} /s)")
    table = Table("finding kind", "high", "medium", "low", title="findings of this run")
    for kind, sev in result["findings"].items():
        table.add_row(kind, *(str(sev.get(s, 0)) for s in ("high", "medium", "low")))
    out.print(table)
    cov = Table("check", "ran", "skipped", "not yet", "coverage", title="coverage (all stored rewrites)")
    for c in result["coverage"]:
        pending = c["rewrites"] - c["ran"] - c["skipped"]
        share = f"{c['ran'] / c['rewrites']:.0%}" if c["rewrites"] else "-"
        cov.add_row(f"{c['check']}.v{c['version']}", str(c["ran"]), str(c["skipped"]), str(pending), share)
    out.print(cov)


def findings(
    ctx: typer.Context,
    request_id: Annotated[str | None, typer.Option("--request-id", help="Only this request.")] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", parser=kind_choice, metavar="KIND", help="Only this finding kind.")
    ] = None,
    min_severity: Annotated[Severity, typer.Option("--min-severity", help="The lowest severity shown.")] = (
        Severity.LOW
    ),
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, max=1_000_000, help="At most N findings.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    otlp: Annotated[
        bool,
        typer.Option(
            "--otlp",
            help="OpenTelemetry gen_ai.evaluation.result events as OTLP JSON logs (one LogsData per line, "
            "500 records each), for a Collector's otlpjsonfile receiver; no query or transcript text.",
        ),
    ] = False,
) -> None:
    """List stored findings of the current checker versions, most severe first.

    Example: rewrite-monitor findings --kind added_content_word --min-severity high --json

    Example: rewrite-monitor findings --min-severity medium --otlp > findings.otlp.jsonl
    """
    from monitor.checks.store import list_findings
    from monitor.cli.render import safe_text
    from monitor.store.engine import session_factory

    if as_json and otlp:  # a usage error before any work, store or none
        raise typer.BadParameter("choose one of --json and --otlp", param_hint="--otlp")
    engine = open_engine(ctx.obj)
    with session_factory(engine)() as session:
        rows = list_findings(
            session=session,
            checks=current_checks(),
            request_id=request_id,
            kind=kind,
            min_severity=min_severity,
            limit=limit,
        )
    if as_json:
        for r in rows:
            typer.echo(json.dumps(r.as_dict(), ensure_ascii=False))
        return
    if otlp:
        from datetime import UTC, datetime

        from monitor import __version__
        from monitor.checks.otlp import EVENT_NAME, evaluation_lines
        from monitor.checks.store import rewrite_meta

        with session_factory(engine)() as session:
            meta = rewrite_meta(session=session, keys=[(r.conv_id, r.request_id) for r in rows])
        for line in evaluation_lines(rows, meta, version=__version__, now=datetime.now(UTC)):
            typer.echo(json.dumps(line, separators=(",", ":")))
        err.print(f"{len(rows)} findings as {EVENT_NAME} events")
        return
    table = Table("request", "kind", "severity", "words", "reason")
    for r in rows:
        words = ", ".join(r.words)
        table.add_row(safe_text(r.request_id), r.kind, r.severity, safe_text(words), safe_text(r.reason))
    out.print(table)
    err.print(f"{len(rows)} findings")


def rules_proposals(ctx: typer.Context) -> None:
    """Print the reviewers' proposed alias groups as YAML to paste into rules/aliases.yaml.

    Each group comes with a comment naming who proposed it and the queue item it came from. Rules are
    never edited in place: review the YAML, then add it to the file by hand.

    Example: rewrite-monitor rules proposals >> proposals.yaml
    """
    from monitor.review.proposals import proposals_yaml
    from monitor.review.store import list_proposals
    from monitor.store.engine import session_factory

    with session_factory(open_engine(ctx.obj))() as session:
        rows = list_proposals(session=session)
    typer.echo(proposals_yaml(rows), nl=False)


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.add_typer(rules_app, name="rules")
    rules_app.command("validate")(rules_validate)
    rules_app.command("proposals")(rules_proposals)
    app.command("check")(check)
    app.command("findings")(findings)
