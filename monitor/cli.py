"""The ``rewrite-monitor`` command line. Commands are grouped by noun; each help text has an example.

Library errors (``monitor.errors``) become a one-line message on stderr and their exit code;
nothing below prints transcript text except ``show``-like commands that exist to display it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from monitor.config import Settings, effective_config, load_settings
from monitor.errors import MonitorError


class _Group(typer.core.TyperGroup):
    """Maps ``MonitorError`` to a one-line message and its exit code, for every command."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except MonitorError as exc:
            err.print(f"error: {exc}", style="red", markup=False, highlight=False)
            raise typer.Exit(exc.exit_code) from None


err = Console(stderr=True, soft_wrap=True)
out = Console()

app = typer.Typer(
    cls=_Group,
    help=(
        "Audit the query rewriter of a conversational RAG system.\n\n"
        "Typical first run:  rewrite-monitor db upgrade && rewrite-monitor ingest logs/"
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
app.add_typer(schema_app, name="schema")


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


def _engine(state: State, *, require_schema: bool = True) -> Any:
    from monitor.db import make_engine, require_current_schema

    engine = make_engine(state.url)
    if require_schema:
        require_current_schema(engine)
    return engine


# -- db ------------------------------------------------------------------------------------------
@db_app.command("upgrade")
def db_upgrade(ctx: typer.Context, revision: str = typer.Argument("head")) -> None:
    """Apply migrations (creates the schema on a new database).

    Example: rewrite-monitor db upgrade
    """
    from monitor.config import masked_url
    from monitor.db import upgrade

    state: State = ctx.obj
    upgrade(state.url, revision)
    err.print(f"database {masked_url(state.url)} is at {revision}")


@db_app.command("downgrade")
def db_downgrade(ctx: typer.Context, revision: str = typer.Argument(..., help="e.g. base, or -1")) -> None:
    """Revert migrations; `base` drops every table (and its data).

    Example: rewrite-monitor db downgrade base
    """
    from monitor.db import downgrade

    downgrade(ctx.obj.url, revision)
    err.print(f"downgraded to {revision}")


@db_app.command("current")
def db_current(ctx: typer.Context) -> None:
    """Print the database's migration revision and the code's head.

    Example: rewrite-monitor db current
    """
    from monitor.db import current_revision, head_revision

    engine = _engine(ctx.obj, require_schema=False)
    out.print(f"current: {current_revision(engine) or '(empty)'}  head: {head_revision()}")


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
    from monitor.events import json_schemas

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
    from monitor.db import session_factory
    from monitor.ingest import discover, ingest_sources

    state: State = ctx.obj
    settings = state.settings
    engine = _engine(state)
    sources = discover(paths)
    sizes = [s.size for s in sources]
    total = sum(s for s in sizes if s is not None) if all(s is not None for s in sizes) else None
    show_progress = err.is_terminal and not as_json
    with (
        Progress(
            TextColumn("[bold]ingest[/] {task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=err,
            disable=not show_progress,
            transient=True,
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
            on_source=lambda s: progress.update(task, description=Path(s.origin).name),
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


def _print_ingest_summary(s: dict[str, Any]) -> None:
    table = Table(title="ingest summary", show_header=False)
    table.add_row("sources", str(len(s["sources"])))
    table.add_row("lines read", str(s["lines_read"]))
    kinds = ", ".join(f"{k} {v}" for k, v in s["stored_by_kind"].items())
    table.add_row("events stored", f"{s['stored']}" + (f"  ({kinds})" if kinds else ""))
    table.add_row("already stored (re-ingest)", str(s["already_stored"]))
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
        err.print(f"[red]error[/]: {e['source']}: {e['error']}")
    if s["rejected_total"]:
        err.print("rejected lines are in the quarantine table with their line number and reason")


def main() -> None:
    """Console-script entry point."""
    app()
