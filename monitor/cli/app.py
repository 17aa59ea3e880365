"""The ``rewrite-monitor`` command line. Commands are grouped by noun; each help text has an example.

Library errors (``monitor.errors``) become a one-line message on stderr and their exit code;
nothing below prints transcript text except ``show``-like commands that exist to display it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from monitor.errors import MonitorError
from monitor.settings import Settings, effective_config, load_settings


class _Group(typer.core.TyperGroup):
    """Maps ``MonitorError`` to a one-line message and its exit code, for every command."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except MonitorError as exc:
            _fail(str(exc), exc.exit_code)
        except BrokenPipeError:
            _closed_pipe()
        except OSError as exc:
            # A path the operator gave cannot be read or written (missing folder, a directory, no
            # permission): one line naming it, exit 3 like an unreadable source, never a traceback.
            where = f": {exc.filename}" if exc.filename else ""
            _fail(f"{exc.strerror or exc}{where}", 3)
        except UnicodeDecodeError as exc:
            # Readers of operator files name the file and line themselves (labels, rules, eval sets);
            # this is the net for any other (a --config file, a --prompt): still one line. Exit 5 for
            # replay (its inputs), 2 for every other command (invalid input).
            code = 5 if ctx.invoked_subcommand == "replay" else 2
            _fail(f"a file given is not UTF-8 text ({exc.reason} at byte {exc.start})", code)
        except Exception as exc:
            storage = _storage_error(exc, ctx.obj)
            if storage is None:
                raise
            _fail(str(storage), storage.exit_code)


def _fail(message: str, code: int) -> NoReturn:
    err.print(f"error: {message}", style="red", markup=False, highlight=False)
    raise typer.Exit(code) from None


def _storage_error(exc: Exception, state: Any) -> MonitorError | None:
    """A database error escaping any command as the one-line ``StorageError`` (exit 4) naming the URL,
    password hidden (``monitor.store.engine.storage_error``); ``None`` for any other exception."""
    # sqlalchemy is imported lazily by the commands that use it; an exception cannot come from it
    # when it was never imported.
    sa_exc = sys.modules.get("sqlalchemy.exc")
    if sa_exc is None or not isinstance(exc, sa_exc.OperationalError):
        return None
    from monitor.store.engine import storage_error

    try:
        url = state.url
    except Exception:  # settings that fail to load would have failed before any database call
        url = "<unknown URL>"
    return storage_error(exc, url)


def _closed_pipe() -> NoReturn:
    """The reader closed the pipe early (``findings --json | head``): it has what it wanted, so exit 0
    quietly; click and Rich would exit 1, and 1 and 3 mean other things in the exit-code table.
    stdout goes to /dev/null so the flush at exit cannot fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    raise SystemExit(0)


class _Console(Console):
    def on_broken_pipe(self) -> None:
        _closed_pipe()


err = _Console(stderr=True, soft_wrap=True)
# Piped output gets a wide fixed width so tables stay readable in files and CI logs.
out = _Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160)

app = typer.Typer(
    cls=_Group,
    help=(
        "Audit the query rewriter of a conversational RAG system.\n\n"
        "First run:  rewrite-monitor db upgrade && rewrite-monitor run logs/\n\n"
        "Every day:  rewrite-monitor run (or the worker), then review with rewrite-monitor queue / show / "
        "review, or the dashboard. Every command has --help with an example."
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="Create and migrate the store (Alembic).", no_args_is_help=True)
config_app = typer.Typer(help="Inspect the effective configuration.", no_args_is_help=True)
schema_app = typer.Typer(help="The JSON Schemas of log format v1.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(config_app, name="config")
rules_app = typer.Typer(
    help="Validate the rules (alias groups, neutral words, qualifier kinds).", no_args_is_help=True
)
app.add_typer(schema_app, name="schema")
app.add_typer(rules_app, name="rules")


class State:
    """Options given before the command, resolved into settings lazily (once)."""

    def __init__(self, config: Path | None, database_url: str | None):
        self.config = config
        self.database_url = database_url
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config, database_url=self.database_url)
        return self._settings

    @property
    def url(self) -> str:
        return self.settings.database_url.get_secret_value()


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", envvar="REWRITE_MONITOR_CONFIG", help="TOML config file."),
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", help="SQLAlchemy URL; overrides config and environment."),
    ] = None,
) -> None:
    ctx.obj = State(config, database_url)


def _progress(label: Any, *columns: Any, quiet: bool) -> Progress:
    """A transient progress bar on stderr: ``label``, a bar, then ``columns``. Shown only on a terminal
    and not with ``--json`` (``quiet``), so pipes and scripts get clean output."""
    return Progress(
        label, BarColumn(), *columns, console=err, disable=quiet or not err.is_terminal, transient=True
    )


def _sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (``None`` for in-memory SQLite and for PostgreSQL)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def _engine(state: State, *, require_schema: bool = True, writes: bool = False) -> Any:
    """The engine of the configured store; ``writes`` for commands that write (SQLite transactions
    then take the write lock at BEGIN, so a concurrent writer waits instead of failing). Raises
    ``StorageError`` for a missing SQLite file or folder, an unreachable database or an old schema."""
    from monitor.errors import StorageError
    from monitor.store.engine import display_url, make_engine, require_current_schema

    path = _sqlite_file(state.url)
    if require_schema and path is not None:
        # Connecting would create an empty file; a missing store is a mistake worth naming instead.
        if not path.parent.is_dir():
            where = display_url(state.url)
            raise StorageError(f"cannot reach the database {where}: the folder {path.parent} does not exist")
        if not path.exists():
            raise StorageError(f"no database file {path}: run `rewrite-monitor db upgrade` to create it")
    engine = make_engine(state.url, immediate=writes)
    if require_schema:
        require_current_schema(engine)
    return engine


def _interactive() -> bool:
    """Whether a person can answer a question (stdin and stderr are terminals); a test may patch it."""
    return sys.stdin.isatty() and sys.stderr.isatty()


# -- db ------------------------------------------------------------------------------------------
def _migration_error(exc: Exception) -> MonitorError:
    from monitor.errors import ConfigError

    # An unknown or ambiguous revision name: invalid input (exit 2), in alembic's words.
    return ConfigError(f"migration: {exc}")


@db_app.command("upgrade")
def db_upgrade(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision; default: the newest (head).")] = "head",
) -> None:
    """Apply migrations (creates the schema on a new database); says what changed.

    Prints "upgraded URL from none to 0005 (head)" when it migrated, "URL is already at head (0005)"
    otherwise (the password in URL hidden).

    Example: rewrite-monitor db upgrade
    """
    from alembic.util.exc import CommandError

    from monitor.store.engine import display_url, head_revision, upgrade

    state: State = ctx.obj
    try:
        before, after = upgrade(state.url, revision)
    except CommandError as exc:
        raise _migration_error(exc) from exc
    where = display_url(state.url)
    head = head_revision()
    at = f"head ({after})" if after == head else (after or "base")
    if before == after:
        err.print(f"{where} is already at {at}", markup=False, highlight=False)
    else:
        to = f"{after} (head)" if after == head else (after or "base")
        err.print(f"upgraded {where} from {before or 'none'} to {to}", markup=False, highlight=False)


@db_app.command(
    "downgrade",
    # "-1" (one step down) would otherwise be taken for an unknown option; unknown options are
    # handed to REVISION instead (a mistyped --yes is then refused as an unknown revision).
    context_settings={"ignore_unknown_options": True},
)
def db_downgrade(
    ctx: typer.Context,
    revision: Annotated[
        str, typer.Argument(help="Target revision: an id (0003), base (no schema), or -N (N steps down: -1).")
    ],
    yes: Annotated[
        bool, typer.Option("--yes", help="Drop without asking (required when not on a terminal).")
    ] = False,
) -> None:
    """Revert migrations. A downgrade that drops tables or columns (and their rows) first names them
    with their row counts and asks; without a terminal it is refused (exit 2) unless --yes is given.

    Examples: rewrite-monitor db downgrade -1;  rewrite-monitor db downgrade base --yes
    """
    from alembic.util.exc import CommandError

    from monitor.errors import ConfigError
    from monitor.store.engine import display_url, downgrade, downgrade_plan

    url: str = ctx.obj.url
    where = display_url(url)
    plan = downgrade_plan(url, revision)
    if not plan.steps:
        at = plan.current or "base"
        err.print(f"{where} is at {at}: nothing to downgrade", markup=False, highlight=False)
        return
    to = plan.target or "base"
    if plan.drops_data and not yes:
        drops = f"it drops {plan.describe()} of {where} (from {plan.current} to {to})"
        if not _interactive():
            raise ConfigError(f"refusing to downgrade without --yes: {drops}")
        if not typer.confirm(f"downgrade? {drops}", default=False, err=True):
            err.print("not downgraded: nothing was changed", markup=False, highlight=False)
            raise typer.Exit(2)
    try:
        downgrade(url, revision)
    except CommandError as exc:
        raise _migration_error(exc) from exc
    done = f"downgraded {where} from {plan.current} to {to}; dropped {plan.describe()}"
    err.print(done, markup=False, highlight=False)


@db_app.command("current")
def db_current(ctx: typer.Context) -> None:
    """Print the database's migration revision and the code's head.

    Example: rewrite-monitor db current
    """
    from monitor.store.engine import current_revision, head_revision

    path = _sqlite_file(ctx.obj.url)
    if path is not None and path.parent.is_dir() and not path.exists():
        # Asking must not create the store: connecting to a missing SQLite file makes an empty one.
        out.print(f"current: (no database file {path})  head: {head_revision()}", markup=False)
        return
    engine = _engine(ctx.obj, require_schema=False)
    try:
        out.print(f"current: {current_revision(engine) or '(empty)'}  head: {head_revision()}")
    finally:
        engine.dispose()


# -- config / schema -----------------------------------------------------------------------------
@config_app.command("show")
def config_show(
    ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False
) -> None:
    """Print the effective configuration, secrets masked.

    Example: REWRITE_MONITOR_BATCH_SIZE=500 rewrite-monitor config show
    """
    cfg = effective_config(ctx.obj.settings)
    if as_json:
        out.print_json(json.dumps(cfg))
        return
    table = Table("setting", "value", "environment variable")
    for name, value in cfg.items():
        table.add_row(name, json.dumps(value), f"REWRITE_MONITOR_{name.upper()}")
    out.print(table)


@schema_app.command("export")
def schema_export(
    directory: Annotated[Path, typer.Argument(help="Folder to write <event>.schema.json into.")] = Path(
        "schemas"
    ),
) -> None:
    """Write the JSON Schema of each event, generated from the definitions ingest validates with.

    Example: rewrite-monitor schema export schemas/
    """
    from monitor.ingest.events import json_schemas

    directory.mkdir(parents=True, exist_ok=True)
    for name, schema in json_schemas().items():
        (directory / f"{name}.schema.json").write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
        err.print(f"wrote {directory / f'{name}.schema.json'}")


# -- ingest --------------------------------------------------------------------------------------
@app.command("ingest")
def ingest(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(help="Files, .gz files, directories, or - for stdin.")],
    source: Annotated[str | None, typer.Option("--source", help="Label stored with each event.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when any line was rejected.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Store every well-formed event of the given logs; quarantine the rest with a reason.

    Re-ingesting the same file stores nothing new. Exit code 0 when the run completed; 1 with
    --strict and rejects; 3 when a source could not be read.

    Example: rewrite-monitor ingest logs/ extra.jsonl.gz --source prod-eu
    """
    from rich.markup import escape

    from monitor.cli.render import visible
    from monitor.ingest.store import discover, ingest_sources
    from monitor.store.engine import session_factory

    state: State = ctx.obj
    settings = state.settings
    engine = _engine(state, writes=True)
    sources = discover(paths)
    sizes = [s.size for s in sources]
    total = sum(s for s in sizes if s is not None) if all(s is not None for s in sizes) else None
    with (
        _progress(
            TextColumn("[bold]ingest[/] {task.description}"),
            DownloadColumn(),
            TimeRemainingColumn(),
            quiet=as_json,
        ) as progress,
        session_factory(engine)() as session,
    ):
        task = progress.add_task("", total=total)
        # Progress is counted in decompressed bytes; for .gz the bar is approximate.
        summary = ingest_sources(
            session,
            sources,
            source_name=source or settings.source_name,
            batch_size=settings.batch_size,
            max_line_bytes=settings.max_line_bytes,
            # a file name is not markup: "[x]" in it would break the progress line
            on_source=lambda s: progress.update(task, description=escape(visible(Path(s.origin).name))),
            on_bytes=lambda n: progress.advance(task, n),
        )
    result = summary.as_dict()
    if as_json:
        out.print_json(json.dumps(result))
    else:
        _print_ingest_summary(result)
    if summary.source_errors:
        raise typer.Exit(3)
    if strict and summary.rejected_total:
        raise typer.Exit(1)


@app.command("quarantine")
def quarantine_cmd(
    ctx: typer.Context,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Only this reason (e.g. wrong_type).")
    ] = None,
    origin: Annotated[
        str | None, typer.Option("--origin", help="Only lines of this file (as stored).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most N lines.")] = 50,
    excerpt: Annotated[bool, typer.Option("--excerpt", help="Also print the start of each line.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """The rejected log lines: file, line number, reason and what exactly was wrong.

    Excerpts can hold personal data, so they are printed only with --excerpt.

    Example: rewrite-monitor quarantine --reason missing_field --limit 20
    """
    from monitor.ingest.events import REASONS
    from monitor.ingest.quarantine import list_quarantine
    from monitor.store.engine import session_factory

    if reason is not None and reason not in REASONS:
        raise typer.BadParameter(f"must be one of {', '.join(REASONS)}", param_hint="--reason")
    engine = _engine(ctx.obj)
    with session_factory(engine)() as session:
        rows, counts = list_quarantine(
            session=session, reason=reason, origin=origin, limit=limit, with_excerpt=excerpt
        )
    if as_json:
        for r in rows:
            item = {"origin": r.origin, "line": r.line_no, "reason": r.reason, "detail": r.detail}
            if excerpt:
                item["excerpt"] = r.excerpt
            typer.echo(json.dumps(item, ensure_ascii=False))
        return
    from monitor.cli.render import quarantine_table

    out.print(quarantine_table(rows, excerpt=excerpt))
    total = ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"
    err.print(f"{len(rows)} shown; in the store by reason: {total}", markup=False)


def _print_ingest_summary(s: dict[str, Any]) -> None:
    table = Table(title="ingest summary", show_header=False)
    table.add_row("sources", str(len(s["sources"])))
    table.add_row("lines read", str(s["lines_read"]))
    kinds = ", ".join(f"{k} {v}" for k, v in s["stored_by_kind"].items())
    table.add_row("events stored", f"{s['stored']}" + (f"  ({kinds})" if kinds else ""))
    table.add_row("already stored (re-ingest)", str(s["already_stored"]))
    table.add_row("blank lines", str(s["blank"]))
    table.add_row("rewrites joined to ctx_input", str(s["joined"]))
    table.add_row("duplicates", str(s["duplicates"]))
    table.add_row("rejected", str(s["rejected_total"]))
    for reason, n in s["rejected"].items():
        table.add_row(f"  {reason}", str(n))
    table.add_row(
        "unjoined in store", f"ctx_input {s['unjoined_ctx_input']}, rewrite {s['unjoined_rewrite']}"
    )
    out.print(table)
    for e in s["source_errors"]:
        err.print("error", style="red", end="")
        err.print(f": {e['source']}: {e['error']}", markup=False, highlight=False)
    if s["rejected_total"]:
        err.print("see them with: rewrite-monitor quarantine (file, line, reason, detail)")


# -- checks --------------------------------------------------------------------------------------
def known_kind(kind: str | None) -> str | None:
    """``kind`` if a registered check emits it; raises ``typer.BadParameter`` listing the kinds."""
    from monitor.checks import REGISTRY

    kinds = sorted({k for spec in REGISTRY.values() for k in spec.kinds})
    if kind is not None and kind not in kinds:
        raise typer.BadParameter(
            f"unknown finding kind {kind!r}; one of: {', '.join(kinds)}", param_hint="--kind"
        )
    return kind


def _current_checks() -> list[tuple[str, int]]:
    from monitor.checks import current_versions

    return current_versions()


@rules_app.command("validate")
def rules_validate(
    directory: Annotated[
        Path | None, typer.Argument(help="Rules folder; default: the bundled rules/.")
    ] = None,
) -> None:
    """Check every rules file; print file:line: reason for each problem (exit 2 when any).

    Example: rewrite-monitor rules validate rules/
    """
    from monitor.checks.rules import load_rules, validate_rules

    problems = validate_rules(directory)
    for p in problems:
        err.print(p, markup=False, highlight=False)
    if problems:
        raise typer.Exit(2)
    rules = load_rules(directory)
    out.print(f"rules valid (hash {rules.hash})")


@app.command("check")
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
    engine = _engine(state, writes=True)
    with (
        _progress(
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


@app.command("findings")
def findings(
    ctx: typer.Context,
    request_id: Annotated[str | None, typer.Option("--request-id", help="Only this request.")] = None,
    kind: Annotated[str | None, typer.Option("--kind", help="Only this finding kind.")] = None,
    min_severity: Annotated[str, typer.Option("--min-severity", help="low, medium or high.")] = "low",
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N findings.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """List stored findings of the current checker versions, most severe first.

    Example: rewrite-monitor findings --kind added_content_word --min-severity high --json
    """
    from monitor.checks.store import SEVERITY_RANK, list_findings
    from monitor.cli.render import safe_text
    from monitor.store.engine import session_factory

    if min_severity not in SEVERITY_RANK:
        raise typer.BadParameter("must be low, medium or high", param_hint="--min-severity")
    known_kind(kind)
    engine = _engine(ctx.obj)
    with session_factory(engine)() as session:
        rows = list_findings(
            session=session,
            checks=_current_checks(),
            request_id=request_id,
            kind=kind,
            min_severity=min_severity,
            limit=limit,
        )
    if as_json:
        for r in rows:
            typer.echo(json.dumps(r.as_dict(), ensure_ascii=False))
        return
    table = Table("request", "kind", "severity", "words", "reason")
    for r in rows:
        words = ", ".join(r.words)
        table.add_row(safe_text(r.request_id), r.kind, r.severity, safe_text(words), safe_text(r.reason))
    out.print(table)
    err.print(f"{len(rows)} findings")


@app.command("evaluate")
def evaluate_cmd(
    ctx: typer.Context,
    labels: Annotated[list[Path], typer.Option("--labels", help="Label file (JSON Lines); repeatable.")],
    details: Annotated[bool, typer.Option("--details", help="List every miss and false alarm.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the default-threshold table as JSON.")
    ] = False,
) -> None:
    """Measure the stored findings against hand labels: precision, recall, false alarms, Wilson 95% CIs.

    Ingest and check the labelled logs first.

    Example: rewrite-monitor evaluate --labels labels/cast_audit_labels.jsonl --details
    """
    from monitor.checks import REGISTRY
    from monitor.cli.render import safe_text
    from monitor.stats.evaluate import THRESHOLDS, evaluate
    from monitor.store.engine import session_factory

    kind_to_check = {kind: spec.id for spec in REGISTRY.values() for kind in spec.kinds}
    engine = _engine(ctx.obj)
    with session_factory(engine)() as session:
        result = evaluate(
            session=session, label_files=labels, checks=_current_checks(), kind_to_check=kind_to_check
        )
    if as_json:
        out.print_json(json.dumps(result.as_json()))
        return
    for name, by_threshold in result.table.items():
        missing = result.missing[name]
        title = f"{name}: {result.items[name]} items" + (
            f", {len(missing)} not in the store" if missing else ""
        )
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
            "false alarms",
            "weighted FA",
            title=title,
        )
        for kind in by_threshold[THRESHOLDS[0]]:
            for threshold in THRESHOLDS:
                conf = by_threshold[threshold][kind]
                m, ci = conf.metrics(), conf.intervals()
                table.add_row(
                    kind if threshold == THRESHOLDS[0] else "",
                    f"{threshold}+",
                    *(str(m[k]) for k in ("tp", "fp", "fn", "tn")),
                    str(ci["skipped"]),
                    _pct(m["precision"], ci["precision_ci"]),
                    _pct(m["recall"], ci["recall_ci"]),
                    _pct(m["false_alarm_rate"], ci["false_alarm_ci"]),
                    _pct(ci["weighted_false_alarm_rate"], None),
                )
        out.print(table)
    if details:
        for d in result.details:
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


# -- main job, queue, show, stats ---------------------------------------------------------------
def _sources(paths: list[str] | None, settings: Settings) -> list[Any]:
    import glob

    from monitor.errors import ConfigError
    from monitor.ingest.store import discover

    if paths:
        return discover(paths)
    if not settings.sources:
        # Nothing to read is a command-line or settings problem (exit 2), not an unreadable file.
        raise ConfigError(
            "no PATH given and no `sources` configured (REWRITE_MONITOR_SOURCES or config file)"
        )
    expanded: list[str] = []
    for pattern in settings.sources:
        matches = sorted(glob.glob(pattern, recursive=True))
        expanded.extend(matches or [pattern])  # a pattern matching nothing is reported by discover
    return discover(expanded)


@app.command("run")
def run(
    ctx: typer.Context,
    paths: Annotated[
        list[str] | None, typer.Argument(help="Logs to ingest; default: configured sources.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """The main job: ingest, check, admit the day's sample to the review queue, and report.

    Safe to repeat: a second run on the same files adds no events, findings or queue items.

    Example: rewrite-monitor run logs/*.jsonl
    """
    from monitor.checks.nlp import use_model
    from monitor.checks.rules import load_rules
    from monitor.store.engine import session_factory
    from monitor.worker.jobs import run_job

    state: State = ctx.obj
    settings = state.settings
    rules = load_rules(settings.rules_dir)
    use_model(settings.spacy_model)
    engine = _engine(state, writes=True)
    sources = _sources(paths, settings)
    with (
        _progress(
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
        )
    result = summary.as_dict()
    if as_json:
        out.print_json(json.dumps(result))
    else:
        _print_run_summary(result)
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
        )
    out.print(f"check: {r['checked']} rewrites checked in {r['check_seconds']} s")
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


@app.command("queue")
def queue_cmd(
    ctx: typer.Context,
    state: Annotated[
        str | None, typer.Option("--state", help="pending, claimed, done, skipped, withdrawn or all.")
    ] = "pending",
    kind: Annotated[str | None, typer.Option("--kind", help="Only items with this finding kind.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most N items.")] = 50,
) -> None:
    """The review queue in review order (severity, then age), with the flagged words.

    The last line (stderr) counts what is shown, what matches, and the queue depth:
    "showing 20 of 64 pending items; queue depth: 64 open (pending or claimed), 64 overdue".

    Example: rewrite-monitor queue --state pending --kind added_content_word --limit 20
    """
    from datetime import UTC, datetime

    from monitor.cli.render import safe_text
    from monitor.queue.store import list_queue, queue_depth
    from monitor.store.engine import session_factory

    if state not in ("pending", "claimed", "done", "skipped", "withdrawn", "all"):
        raise typer.BadParameter(
            "must be pending, claimed, done, skipped, withdrawn or all", param_hint="--state"
        )
    known_kind(kind)
    engine = _engine(ctx.obj)
    now = datetime.now(UTC)
    with session_factory(engine)() as session:
        # Every match, to say how many --limit left out (list_queue reads them all to filter by kind).
        matching = list_queue(
            session=session, now=now, state=None if state == "all" else state, kind=kind, limit=None
        )
        depth, overdue = queue_depth(session=session, now=now)
    rows = matching[:limit]
    table = Table("id", "request", "stratum", "kinds", "words", "state", "due", "π")
    for r in rows:
        due = r.due_at.strftime("%Y-%m-%d %H:%M") + (" OVERDUE" if r.overdue else "")
        who = f"{r.state} ({r.claimed_by})" if r.claimed_by and r.state == "claimed" else r.state
        table.add_row(
            str(r.id),
            safe_text(r.request_id),
            r.stratum,
            ", ".join(r.kinds) or "-",
            safe_text(", ".join(r.words[:6]) or "-"),
            safe_text(who),
            due,
            f"{r.inclusion_prob:.3f}",
        )
    out.print(table)
    which = "items in any state" if state == "all" else f"{state} items"
    if kind is not None:
        which += f" with {kind}"
    err.print(
        f"showing {len(rows):,} of {len(matching):,} {which}; "
        f"queue depth: {depth:,} open (pending or claimed), {overdue:,} overdue",
        markup=False,
        highlight=False,
    )


@app.command("show")
def show(
    ctx: typer.Context,
    request_id: Annotated[str, typer.Argument(help="The rewrite's request id.")],
    conv: Annotated[
        str | None,
        typer.Option("--conv", help="The conversation, when the request id was logged in several."),
    ] = None,
) -> None:
    """The four artifacts of one request in review order: state, transcript and rewrite, retrieval,
    answer; then the findings.

    Example: rewrite-monitor show cast2020-90_3
    """
    from monitor.checks.store import list_findings
    from monitor.cli.render import render_record
    from monitor.ingest.records import get_record_view
    from monitor.store.engine import session_factory

    engine = _engine(ctx.obj)
    with session_factory(engine)() as session:
        view = get_record_view(session=session, request_id=request_id, conv_id=conv)
        if view is None:
            where = f" in conversation {conv!r}" if conv is not None else ""
            err.print(f"no request {request_id!r}{where} in the store", style="red", markup=False)
            raise typer.Exit(1)
        found = list_findings(
            session=session, checks=_current_checks(), request_id=request_id, conv_id=view.conv_id
        )
    for block in render_record(view, found):
        out.print(block)


@app.command("stats")
def stats(
    ctx: typer.Context,
    by: Annotated[str | None, typer.Option("--by", help="prompt_version, model or day.")] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only rewrites from this date (YYYY-MM-DD).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Finding rates per group with 95% intervals; with verdicts, the checks' precision per kind and the
    estimated share of bad rewrites in the whole traffic (weighted by inclusion probabilities).

    Example: rewrite-monitor stats --by prompt_version --since 2024-03-01
    """
    from datetime import date, datetime, time

    from monitor.cli.render import safe_text
    from monitor.queue.sampling import SEVERITY_RANK
    from monitor.stats.store import (
        GROUPS,
        finding_rates,
        latest_verdicts,
        precision_by_kind,
        whole_traffic_estimates,
    )
    from monitor.store.engine import session_factory

    if by is not None and by not in GROUPS:
        raise typer.BadParameter(f"must be one of {', '.join(GROUPS)}", param_hint="--by")
    try:
        since_day = date.fromisoformat(since) if since else None
    except ValueError:
        raise typer.BadParameter("must be a date like 2024-03-01", param_hint="--since") from None
    settings = ctx.obj.settings
    engine = _engine(ctx.obj)
    with session_factory(engine)() as session:
        rates = finding_rates(
            session=session,
            checks=_current_checks(),
            min_rank=SEVERITY_RANK[settings.queue_min_severity],
            by=by,
            since=datetime.combine(since_day, time.min) if since_day else None,
        )
        pairs = latest_verdicts(session=session, since=since_day)
        precision = precision_by_kind(pairs)
        estimates = whole_traffic_estimates(pairs, session) if pairs else []
    result = {
        "by": by or "all",
        "min_severity": settings.queue_min_severity,
        "rates": [
            {
                "group": r.group,
                "kind": r.kind,
                "flagged": r.flagged,
                "checked": r.checked,
                "per_1000": r.per_1000,
                "ci95_per_1000": r.ci_per_1000,
            }
            for r in rates
        ],
        "verdicts": len(pairs),
        "precision": precision,
        "estimates": [
            {"name": e.name, "value": e.value, "ci95": e.ci, "coverage": e.coverage, "verdicts": e.verdicts}
            for e in estimates
        ],
    }
    if as_json:
        out.print_json(json.dumps(result, default=str))
        return
    table = Table(
        by or "group",
        "finding kind",
        "flagged",
        "checked",
        "per 1,000",
        "95% CI",
        title=f"finding rates (severity {settings.queue_min_severity} and above)",
    )
    for r in rates:
        ci = r.ci_per_1000
        table.add_row(
            safe_text(r.group),
            r.kind,
            str(r.flagged),
            str(r.checked),
            f"{r.per_1000:.1f}",
            f"{ci[0]:.1f}–{ci[1]:.1f}" if ci else "-",
        )
    out.print(table)
    if not pairs:
        out.print("no verdicts yet: precision and whole-traffic estimates appear once items are reviewed")
        return
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
        ci = f"{e.ci[0]:.1%}–{e.ci[1]:.1%}" if e.ci else "-"
        est.add_row(
            e.name, f"{e.value:.1%}" if e.value is not None else "-", ci, f"{e.coverage:.0%}", str(e.verdicts)
        )
    out.print(est)


def _pct(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1%}" + (f" [{ci[0]:.0%}-{ci[1]:.0%}]" if ci else "")


def main() -> None:
    """Console-script entry point."""
    app()


# Commands of other areas register themselves on `app` (see monitor/commands/__init__.py).
from monitor.cli.commands import dashboard, review, worker  # noqa: E402, F401
