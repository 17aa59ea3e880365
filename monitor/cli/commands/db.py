"""Store and configuration commands: ``db upgrade|downgrade|current``, ``config show``, ``schema export``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from monitor.cli.app import State, err, open_engine, out
from monitor.errors import MonitorError
from monitor.settings import effective_config

db_app = typer.Typer(help="Create and migrate the store (Alembic).", no_args_is_help=True)
config_app = typer.Typer(help="Inspect the effective configuration.", no_args_is_help=True)
schema_app = typer.Typer(help="The JSON Schemas of log format v1.", no_args_is_help=True)


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

    Prints "upgraded URL from none to 0016 (head)" when it migrated, "URL is already at head (0016)"
    otherwise (the password in URL hidden); `rewrite-monitor db current` prints the head.

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

    from monitor.errors import ConfigError, StorageError
    from monitor.store.engine import display_url, downgrade, downgrade_plan, sqlite_file

    url: str = ctx.obj.url
    where = display_url(url)
    path = sqlite_file(url)
    if path is not None and not path.parent.is_dir():
        raise StorageError(f"cannot reach the database {where}: the folder {path.parent} does not exist")
    if path is not None and not path.exists():
        # Connecting would create an empty file; there is nothing to downgrade in a store that is not there.
        raise StorageError(f"no database file {path}: nothing to downgrade")
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
    from monitor.store.engine import current_revision, head_revision, sqlite_file

    path = sqlite_file(ctx.obj.url)
    if path is not None and path.parent.is_dir() and not path.exists():
        # Asking must not create the store: connecting to a missing SQLite file makes an empty one.
        out.print(f"current: (no database file {path})  head: {head_revision()}", markup=False)
        return
    engine = open_engine(ctx.obj, require_schema=False)
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
    directory: Annotated[Path, typer.Argument(help="Folder to write <name>.schema.json into.")] = Path(
        "schemas"
    ),
) -> None:
    """Write the JSON Schema of each event, generated from the definitions ingest validates with, and of
    the documents `show --json` and `queue --json` print.

    Example: rewrite-monitor schema export schemas/
    """
    from monitor.ingest.events import json_schemas
    from monitor.review.views import read_schemas

    directory.mkdir(parents=True, exist_ok=True)
    for name, schema in {**json_schemas(), **read_schemas()}.items():
        (directory / f"{name}.schema.json").write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")
        err.print(f"wrote {directory / f'{name}.schema.json'}")


def _interactive() -> bool:
    """Whether a person can answer a question (stdin and stderr are terminals); a test may patch it."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.add_typer(db_app, name="db")
    app.add_typer(config_app, name="config")
    app.add_typer(schema_app, name="schema")
