"""Check commands: ``check``, ``findings``, ``checks list``, ``rules validate|proposals`` and
``rules learned``."""

from __future__ import annotations

import getpass
import json
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import TextColumn
from rich.table import Table

from monitor.cli.app import (
    State,
    Workers,
    current_checks,
    err,
    kind_choice,
    open_engine,
    out,
    progress_bar,
    say_one_process,
    stop_on_sigterm,
)
from monitor.severity import Severity

if TYPE_CHECKING:
    from monitor.checks.learned import WordEvidence
    from monitor.checks.store import FindingRow
    from monitor.settings import Settings

rules_app = typer.Typer(
    help="Validate the rules (alias groups, neutral words, qualifier kinds), the reviewers' alias proposals "
    "and what their verdicts taught.",
    no_args_is_help=True,
)


checks_app = typer.Typer(
    help="The checks: which are registered (built in or from a plugin), their versions and grading steps, "
    "and which run (the checks setting).",
    no_args_is_help=True,
)


def checks_list(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per check, a line each.")] = False,
) -> None:
    """List every registered check in report order: id and version, family, finding kinds, grading steps,
    where it comes from (built in, or the module a plugin's entry point loaded) and whether it runs.

    A check runs unless the checks setting turns it off ([checks.topic_shift] enabled = false in the
    config file); its min_severity is the lowest severity of its findings that reaches the review queue
    (all are stored, listed and counted). Plugins register checks through the entry-point group
    rewrite_monitor.checks.

    Example: rewrite-monitor checks list --json
    """
    from monitor.checks import REGISTRY
    from monitor.checks.registry import is_builtin, is_enabled

    floors = ctx.obj.settings.queue.check_floors  # loading the settings applies them (unknown id: exit 2)
    table = Table("check", "family", "finding kinds", "steps", "source", "runs (queue floor)")
    off = 0
    for spec in REGISTRY.values():
        floor = floors.get(spec.id, "low")
        source = "built in" if is_builtin(spec) else spec.fn.__module__
        if as_json:
            row = {
                "check": spec.id,
                "version": spec.version,
                "family": spec.family,
                "kinds": list(spec.kinds),
                "steps": [step.id for step in spec.steps],
                "source": source,
                "enabled": is_enabled(spec.id),
                "min_severity": floor,
            }
            out.print(json.dumps(row), markup=False, highlight=False, soft_wrap=True)
            continue
        runs = "yes" if floor == "low" else f"yes ({floor} and above)"
        if not is_enabled(spec.id):
            runs, off = "off", off + 1
        table.add_row(
            spec.versioned_id, spec.family, ", ".join(spec.kinds), str(len(spec.steps)), source, runs
        )
    if not as_json:
        out.print(table)
        n = len(REGISTRY)
        out.print(f"{n} checks, {n - off} run, {off} turned off by the checks setting")


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
        bool,
        typer.Option(
            "--recheck", help="Forget the runs and findings that hold a current check version; check all."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    workers: Workers = None,
) -> None:
    """Run the checks over every rewrite not yet checked at the current checker versions.

    Idempotent: a second run adds nothing. Each finding records its check id, version and rules hash.

    Example: rewrite-monitor check
    """
    from monitor.checks.nlp import use_model
    from monitor.checks.rules import load_rules
    from monitor.store.engine import session_factory
    from monitor.worker.jobs import check_job
    from monitor.worker.pool import CheckPool

    stop_on_sigterm(ctx)  # stopped as at Ctrl+C: the batch in hand rolled back, processes closed
    state: State = ctx.obj
    settings = state.settings.model_copy(update={"check_workers": workers or state.settings.check_workers})
    rules = load_rules(settings.rules_dir)
    use_model(settings.spacy_model)
    engine = open_engine(state, writes=True)
    with (
        progress_bar(
            TextColumn("[bold]check[/]"), TextColumn("{task.completed} rewrites"), quiet=as_json
        ) as progress,
        session_factory(engine)() as session,
        CheckPool.for_settings(settings) as pool,
    ):
        task = progress.add_task("", total=None)
        summary = check_job(
            session=session,
            rules=rules,
            recheck=recheck,
            check_rate=settings.check_rate,
            on_batch=lambda n: progress.advance(task, n),
            learn=settings.learn_from_verdicts,
            pool=pool,
        )
    result = summary.as_dict()
    say_one_process(workers, result["records_checked"], result["processes"])
    if as_json:
        out.print_json(json.dumps(result))
        return
    rate = result["records_per_second"]
    on = f" on {result['processes']} processes" if result["processes"] > 1 else ""
    out.print(f"checked {result['records_checked']} rewrites in {result['seconds']} s{on} ({rate or '-'} /s)")
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


FindingKind = Annotated[
    str | None, typer.Option("--kind", parser=kind_choice, metavar="KIND", help="Only this finding kind.")
]
MinSeverity = Annotated[Severity, typer.Option("--min-severity", help="The lowest severity shown.")]
Limit = Annotated[int | None, typer.Option("--limit", min=1, max=1_000_000, help="At most N findings.")]
Otlp = Annotated[
    bool,
    typer.Option(
        "--otlp",
        help="OpenTelemetry gen_ai.evaluation.result events as OTLP JSON logs (one LogsData per line, "
        "500 records each), for a Collector's otlpjsonfile receiver; no query or transcript text, and "
        "ids as the outbound_ids setting gives them.",
    ),
]
Langfuse = Annotated[
    bool,
    typer.Option(
        "--langfuse",
        help="Post each finding on a traced rewrite as a Langfuse score (langfuse_host, "
        "langfuse_public_key, langfuse_secret_key); no query or transcript text.",
    ),
]


def findings(
    ctx: typer.Context,
    request_id: Annotated[str | None, typer.Option("--request-id", help="Only this request.")] = None,
    kind: FindingKind = None,
    min_severity: MinSeverity = Severity.LOW,
    limit: Limit = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    otlp: Otlp = False,
    langfuse: Langfuse = False,
) -> None:
    """List stored findings of the current checker versions, most severe first.

    With --otlp, write them as OpenTelemetry evaluation events instead; with --langfuse, post them as
    Langfuse scores on the rewrite spans of rewrites ingested from traces (exit 3 when Langfuse refused
    one; posting again updates the same scores).

    \b
    Examples:
      rewrite-monitor findings --kind added_content_word --min-severity high --json
      rewrite-monitor findings --min-severity medium --otlp > findings.otlp.jsonl
      rewrite-monitor findings --min-severity medium --langfuse
    """
    from monitor.checks.store import list_findings
    from monitor.store.engine import session_factory

    if as_json + otlp + langfuse > 1:  # a usage error before any work, store or none
        raise typer.BadParameter(
            "choose one of --json, --otlp and --langfuse", param_hint="--json/--otlp/--langfuse"
        )
    settings = ctx.obj.settings
    missing = [n for n in ("langfuse_public_key", "langfuse_secret_key") if not getattr(settings, n)]
    if langfuse and missing:
        from monitor.errors import ConfigError

        raise ConfigError(f"--langfuse needs {' and '.join(missing)} (settings or environment)")
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
    elif otlp:
        _write_otlp(engine, rows, settings)
    elif langfuse:
        _post_langfuse(engine, rows, settings)
    else:
        _print_findings(rows)


def _write_otlp(engine: Any, rows: list[FindingRow], settings: Settings) -> None:
    """``findings --otlp``: the findings as OTLP JSON evaluation events, a ``LogsData`` a line."""
    from monitor import __version__
    from monitor.checks.store import evaluation_events
    from monitor.otel.evaluations import EVENT_NAME
    from monitor.store.engine import session_factory

    with session_factory(engine)() as session:
        lines = evaluation_events(
            session=session,
            rows=rows,
            ids_mode=settings.outbound_ids,
            version=__version__,
            now=datetime.now(UTC),
        )
        session.commit()
    for line in lines:
        typer.echo(json.dumps(line, separators=(",", ":")))
    err.print(f"{len(rows)} findings as {EVENT_NAME} events")


def _post_langfuse(engine: Any, rows: list[FindingRow], settings: Settings) -> None:
    """``findings --langfuse``: each finding on a traced rewrite posted as a Langfuse score; exit 3 when
    Langfuse refused one."""
    from monitor.checks.store import rewrite_meta
    from monitor.otel.langfuse import STOP_AFTER, post_scores
    from monitor.store.engine import session_factory

    public_key, secret_key = settings.langfuse_public_key, settings.langfuse_secret_key
    assert public_key and secret_key  # findings refuses --langfuse without them, before any work
    with session_factory(engine)() as session:
        meta = rewrite_meta(session=session, keys=[(r.conv_id, r.request_id) for r in rows])
    posted = post_scores(
        rows,
        meta,
        host=settings.langfuse_host,
        public_key=public_key,
        secret_key=secret_key.get_secret_value(),
    )
    said = f"{posted.sent} scores posted to Langfuse at {settings.langfuse_host}, "
    said += f"{posted.skipped} findings skipped (rewrite not from a trace)"
    if posted.failed:
        said += f", {len(posted.failed)} failed ({', '.join(sorted(set(posted.failed)))})"
    if posted.not_tried:
        said += f"; stopped after {STOP_AFTER} failures in a row, {posted.not_tried} not tried"
    err.print(said, markup=False, highlight=False)
    if posted.failed:
        raise typer.Exit(3)


def _print_findings(rows: list[FindingRow]) -> None:
    from monitor.cli.render import safe_text

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


learned_app = typer.Typer()


class LearnedKind(StrEnum):
    """The finding kinds whose words are learned (``monitor.checks.learned.KINDS``)."""

    added_content_word = "added_content_word"
    intent_dropped = "intent_dropped"


class PinStep(StrEnum):
    """The steps an entry can be pinned to (``monitor.review.store.PIN_STEPS``)."""

    two_lower = "-2"
    one_lower = "-1"
    none = "0"
    one_higher = "1"


Rewriter = Annotated[
    str,
    typer.Option(
        "--rewriter",
        help="The prompt version (or model, when none was logged) the entry is for.",
        show_default=False,
    ),
]
Word = Annotated[
    str, typer.Argument(help="The word's lemma, as `rules learned` lists it.", show_default=False)
]
Kind = Annotated[LearnedKind, typer.Option("--kind", help="The finding kind the entry belongs to.")]
Operator = Annotated[
    str | None, typer.Option("--by", help="Who decides; default: reviewer_name, else the login name.")
]


def _learned_rows(entries: list[WordEvidence]) -> Table:
    from monitor.cli.render import safe_text

    table = Table(
        "rewriter",
        "kind",
        "word",
        "dismissed",
        "confirmed",
        "reviewers",
        "p(false alarm)",
        "95% lower",
        "effect",
        "last verdict",
        title="learned from the verdicts",
    )
    for e in entries:
        effect = e.effect + (" (pinned)" if e.pinned is not None else "")
        table.add_row(
            safe_text(e.rewriter or "-"),
            e.kind,
            safe_text(e.lemma),
            str(e.dismissed),
            str(e.confirmed),
            str(e.reviewers),
            f"{e.mean:.2f}",
            f"{e.lower_bound:.2f}",
            effect,
            e.last_at.strftime("%Y-%m-%d %H:%M") if e.last_at is not None else "-",
        )
    return table


OnlyRewriter = Annotated[str | None, typer.Option("--rewriter", help="Only this rewriter's entries.")]
OnlyKind = Annotated[LearnedKind | None, typer.Option("--kind", help="Only this finding kind's entries.")]
Effective = Annotated[bool, typer.Option("--effective", help="Only the entries that move a grade.")]
LearnedJson = Annotated[bool, typer.Option("--json", help="Print the entries as JSON.")]
LearnedYaml = Annotated[
    bool, typer.Option("--yaml", help="Print the demoted words as framing groups for rules/neutral.yaml.")
]


@learned_app.callback(invoke_without_command=True)
def rules_learned(
    ctx: typer.Context,
    rewriter: OnlyRewriter = None,
    kind: OnlyKind = None,
    effective: Effective = False,
    as_json: LearnedJson = False,
    as_yaml: LearnedYaml = False,
) -> None:
    """List what the reviewers' verdicts taught about each rewriter's words, and what it does.

    Per rewriter (prompt version, else model) and word: the items whose newest verdict dismissed it
    (ok, false alarm) or confirmed it (a fabrication or drop naming it), the reviewers, the posterior
    false-alarm rate and its 95% lower bound, and the effect on the word's grade: one step lower once
    the bound passes 0.5, two once it passes 0.75 with two reviewers, one step higher after a
    confirmation; numbers, names and qualifier values never below medium. The check job grades new
    rewrites with it (setting learn_from_verdicts); `check --recheck` grades the old ones again.

    \b
    Examples:
      rewrite-monitor rules learned --effective
      rewrite-monitor rules learned --rewriter support-v3 --json
      rewrite-monitor rules learned --yaml > learned.yaml
      rewrite-monitor rules learned pin career --rewriter support-v3 --step 0
    """
    if ctx.invoked_subcommand is not None:
        return
    if as_json and as_yaml:
        raise typer.BadParameter("--json or --yaml, not both")
    from monitor.review.learned import learned_entries, learned_yaml
    from monitor.review.store import learned_table
    from monitor.store.engine import session_factory

    with session_factory(open_engine(ctx.obj))() as session:
        table = learned_table(session=session, checks=current_checks())
    only_kind = kind.value if kind is not None else None
    entries = learned_entries(table, rewriter=rewriter, kind=only_kind, effective=effective)
    if as_json:
        out.print_json(json.dumps({"hash": table.hash, "entries": [e.as_dict() for e in entries]}))
    elif as_yaml:
        typer.echo(learned_yaml(entries, datetime.now(UTC).date().isoformat()), nl=False)
    elif not entries:
        err.print(
            "nothing learned yet: no verdict on a flagged word" + (" matches" if rewriter or kind else "")
        )
    else:
        _print_learned(entries, table.hash, learning=ctx.obj.settings.learn_from_verdicts)


def _print_learned(entries: list[WordEvidence], table_hash: str, *, learning: bool) -> None:
    out.print(_learned_rows(entries))
    if not learning:
        err.print("learning is off (learn_from_verdicts = false): no check grades with these entries")
    moving = sum(1 for e in entries if e.steps)
    err.print(f"{len(entries)} entries, {moving} moving a grade (learned table hash {table_hash or 'none'})")


def _override(
    ctx: typer.Context, word: str, rewriter: str, kind: LearnedKind, by: str | None, **action: object
) -> None:
    from monitor.review.store import rewriter_known, set_learned_override
    from monitor.store.engine import session_factory

    if not word.strip():
        raise typer.BadParameter("the word must not be empty", param_hint="WORD")
    operator = by or ctx.obj.settings.reviewer_name or getpass.getuser()
    with session_factory(open_engine(ctx.obj, writes=True))() as session:
        set_learned_override(
            session=session,
            kind=kind.value,
            rewriter=rewriter,
            lemma=word,
            operator=operator,
            now=datetime.now(UTC),
            **action,  # type: ignore[arg-type]
        )
        if not rewriter_known(session=session, rewriter=rewriter):
            err.print(
                f"note: no stored rewrite names the rewriter {rewriter!r} (prompt version or model); "
                "the entry applies once one does",
                markup=False,
                highlight=False,
            )


def rules_learned_pin(
    ctx: typer.Context,
    word: Word,
    rewriter: Rewriter,
    step: Annotated[
        PinStep,
        typer.Option("--step", help="The step to fix: -2 or -1 lower, 0 none, 1 higher.", show_default=False),
    ],
    kind: Kind = LearnedKind.added_content_word,
    note: Annotated[str | None, typer.Option("--note", help="Why, for whoever reads the entry next.")] = None,
    by: Operator = None,
) -> None:
    """Fix a learned entry's step whatever the verdicts say (0: never learn this word for the rewriter).

    New rewrites are graded with it; `check --recheck` grades the old ones again.

    Example: rewrite-monitor rules learned pin career --rewriter support-v3 --step 0 --note "a real filter"
    """
    _override(ctx, word, rewriter, kind, by, pin=int(step.value), note=note)
    out.print(f"pinned {kind.value} {word.strip().lower()!r} for {rewriter!r} to {step.value} step(s)")


def rules_learned_unpin(
    ctx: typer.Context,
    word: Word,
    rewriter: Rewriter,
    kind: Kind = LearnedKind.added_content_word,
    by: Operator = None,
) -> None:
    """Remove a pin: the entry follows the verdicts again.

    Example: rewrite-monitor rules learned unpin career --rewriter support-v3
    """
    _override(ctx, word, rewriter, kind, by, pin=None)
    out.print(f"unpinned {kind.value} {word.strip().lower()!r} for {rewriter!r}")


def rules_learned_reset(
    ctx: typer.Context,
    word: Word,
    rewriter: Rewriter,
    kind: Kind = LearnedKind.added_content_word,
    by: Operator = None,
) -> None:
    """Forget the verdicts on a word so far (and any pin): it is learned again from the next verdict on.

    Example: rewrite-monitor rules learned reset biography --rewriter support-v3
    """
    _override(ctx, word, rewriter, kind, by, reset=True)
    out.print(
        f"reset {kind.value} {word.strip().lower()!r} for {rewriter!r}: earlier verdicts no longer count"
    )


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.add_typer(checks_app, name="checks")
    checks_app.command("list")(checks_list)
    app.add_typer(rules_app, name="rules")
    rules_app.command("validate")(rules_validate)
    rules_app.command("proposals")(rules_proposals)
    rules_app.add_typer(learned_app, name="learned")
    learned_app.command("pin")(rules_learned_pin)
    learned_app.command("unpin")(rules_learned_unpin)
    learned_app.command("reset")(rules_learned_reset)
    app.command("check")(check)
    app.command("findings")(findings)
