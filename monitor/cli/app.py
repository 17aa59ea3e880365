"""The ``rewrite-monitor`` command line. Commands are grouped by noun; each help text has an example.

Library errors (``monitor.errors``) become a one-line message on stderr and their exit code;
nothing below prints transcript text except ``show``-like commands that exist to display it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress

from monitor.errors import MonitorError
from monitor.settings import Settings, load_settings

Workers = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        max=256,
        metavar="N",
        help="Processes the check phase grades on when 5,000 rewrites or more wait (default: the "
        "check_workers setting, else the cores the load average leaves free); 1: this process only.",
    ),
]
"""The ``--workers`` option of ``run`` and ``check`` (the ``check_workers`` setting for one command)."""


class _Group(typer.core.TyperGroup):
    """Maps ``MonitorError`` to a one-line message and its exit code, for every command, and disposes
    the engines the command opened when it ends (:meth:`State.close_engines`)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return self._invoke(ctx)
        finally:
            if isinstance(ctx.obj, State):
                ctx.obj.close_engines()

    def _invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except MonitorError as exc:
            fail(str(exc), exc.exit_code)
        except BrokenPipeError:
            _closed_pipe()
        except Stopped:
            interrupted(ctx.invoked_subcommand, "stopped by SIGTERM", 143)
        except KeyboardInterrupt:
            interrupted(ctx.invoked_subcommand)
        except OSError as exc:
            # A path the operator gave cannot be read or written (missing folder, a directory, no
            # permission): one line naming it, exit 3 like an unreadable source, never a traceback.
            where = f": {exc.filename}" if exc.filename else ""
            fail(f"{exc.strerror or exc}{where}", 3)
        except UnicodeDecodeError as exc:
            # Readers of operator files name the file and line themselves (labels, rules, eval sets);
            # this is the net for any other (a --config file, a --prompt): still one line. Exit 5 for
            # replay (its inputs), 2 for every other command (invalid input).
            code = 5 if ctx.invoked_subcommand == "replay" else 2
            fail(f"a file given is not UTF-8 text ({exc.reason} at byte {exc.start})", code)
        except Exception as exc:
            storage = _storage_error(exc, ctx.obj)
            if storage is None:
                raise
            fail(str(storage), storage.exit_code)


RESUMED = {
    "run": "`run` again goes on from there (nothing is stored or checked twice)",
    "ingest": "`ingest` again goes on from there (nothing is stored twice)",
    "check": "`check` again goes on from there (nothing is checked twice; --recheck starts over)",
}
"""Commands that commit their work batch by batch, and how to go on after an interrupt: what they
committed is kept, and their writes are idempotent."""


class Stopped(KeyboardInterrupt):
    """SIGTERM in the main thread (:func:`stop_on_sigterm`). A ``KeyboardInterrupt``, so a command stops as
    at Ctrl+C: its ``with`` blocks close (the check processes shut down, the store's connections closed)."""


def stop_on_sigterm(ctx: typer.Context) -> None:
    """Make SIGTERM raise :class:`Stopped` in this process's main thread until ``ctx`` (a command's)
    closes: what ``run``, ``ingest`` and ``check`` call first. Its default killed the process at once, and
    multiprocessing's resource tracker then reported the check processes' semaphores leaked (two lines of
    a Python warning on stderr). Not for every command: the foreground ``worker`` exits 0 on SIGTERM (its
    own handler, installed once it starts; before that the default still applies), and at a prompt it
    would be click's "Aborted!". Nothing from another thread (only the main thread may set a handler)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def stop(_signum: int, _frame: object) -> None:
        raise Stopped

    before = signal.signal(signal.SIGTERM, stop)
    ctx.call_on_close(lambda: signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL))


def interrupted(command: str | None, what: str = "interrupted", code: int = 130) -> NoReturn:
    """Ctrl+C (SIGINT; or SIGTERM: ``what``, ``code`` 143) during ``command``: one line on stderr saying
    what was kept, and exit ``code``: 128 + the signal's number, what a shell reports (typer exited 130
    without a word; SIGTERM killed the process). Raises ``typer.Exit``."""
    resume = RESUMED.get(command or "")
    kept = f"; the batches it committed are kept, and {resume}" if resume else ""
    err.print(f"{what}{kept}", style="yellow", markup=False, highlight=False)
    raise typer.Exit(code) from None


def fail(message: str, code: int) -> NoReturn:
    err.print(f"error: {message}", style="red", markup=False, highlight=False)
    raise typer.Exit(code) from None


def require_extra(module: str, extra: str, what: str) -> None:
    """Exit 2 naming the install line when ``module`` (a dependency of the ``extra`` of this package) is
    not installed: the server install leaves out the dashboard's and replay's dependencies."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        hint = f"pip install 'rewrite-monitor[{extra}]'"
        fail(f"{what} needs the [{extra}] extra (no module {module!r}): {hint}", 2)


def _storage_error(exc: Exception, state: Any) -> MonitorError | None:
    """A database error escaping any command as the one-line ``StorageError`` (exit 4) naming the URL,
    password hidden (``monitor.store.engine.storage_error``); ``None`` for any other exception."""
    # sqlalchemy is imported lazily by the commands that use it; an exception cannot come from it
    # when it was never imported.
    sa_exc = sys.modules.get("sqlalchemy.exc")
    # DatabaseError, not only OperationalError: a file that is no SQLite database ("file is not a
    # database") raises the wider class on the first PRAGMA.
    if sa_exc is None or not isinstance(exc, sa_exc.DatabaseError):
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


class State:
    """Options given before the command, resolved into settings lazily (once)."""

    def __init__(self, config: Path | None, database_url: str | None):
        self.config = config
        self.database_url = database_url
        self._settings: Settings | None = None
        self.engines: list[Any] = []
        """The engines :func:`open_engine` opened for the command."""

    def close_engines(self) -> None:
        """Dispose the engines the command opened: their idle connections are closed when the command
        ends (on SQLite the last close checkpoints the write-ahead log into the database file), not
        whenever the interpreter's teardown gets to them (see ``monitor.cli.main.main``)."""
        while self.engines:
            self.engines.pop().dispose()

    @property
    def settings(self) -> Settings:
        """The settings, loaded on first use; the ``checks`` setting is applied to the check registry then
        (``ConfigError`` for an unknown check id)."""
        if self._settings is None:
            settings = load_settings(self.config, database_url=self.database_url)
            apply_check_settings(settings)
            self._settings = settings
        return self._settings

    @property
    def url(self) -> str:
        return self.settings.database_url.get_secret_value()


def apply_check_settings(settings: Settings) -> None:
    """Apply ``settings.checks`` to the check registry (``monitor.checks.registry.configure``). With the
    setting empty and the checks not loaded yet there is nothing to undo, so nothing is imported: the
    commands that never run a check do not pay for loading them."""
    if settings.checks or "monitor.checks.registry" in sys.modules:
        from monitor.checks.registry import configure

        configure(settings.checks)


def _print_version(value: bool) -> None:
    """``--version``: the package's version and the schema revision it needs, then exit 0."""
    if not value:
        return
    from monitor import __version__
    from monitor.store.engine import HEAD_REVISION

    typer.echo(f"rewrite-monitor {__version__} (store schema {HEAD_REVISION})")
    raise typer.Exit(0)


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
    _version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    ctx.obj = State(config, database_url)


def say_one_process(asked: int | None, checked: int, processes: int) -> None:
    """Say on stderr why a job given ``--workers`` above 1 (``asked``) graded its ``checked`` rewrites on
    ``processes`` = 1: fewer than ``monitor.worker.pool.MIN_JOB`` waited, so the check processes did not
    grade (``run`` may have started them during its ingest on the promise of a larger job, to find lemmas
    ahead; a refused or failed pool says why itself, as a warning). Nothing otherwise."""
    from monitor.worker.pool import MIN_JOB

    if asked is not None and asked > 1 and processes <= 1 and 0 < checked < MIN_JOB:
        err.print(
            f"checked on this process alone: the check processes grade when {MIN_JOB:,} rewrites or more "
            f"wait, and {checked:,} did",
            markup=False,
            highlight=False,
        )


def say_skipped(skipped: list[Path], hint: str) -> None:
    """Say on stderr how many files of the given directories were passed over for their names (the
    first three named, control characters escaped), and ``hint`` how to read them: none is skipped
    silently. Nothing when ``skipped`` is empty."""
    if not skipped:
        return
    from monitor.text import visible

    names = ", ".join(visible(f.name) for f in skipped[:3]) + (", ..." if len(skipped) > 3 else "")
    err.print(
        f"skipped {len(skipped)} file{'s' if len(skipped) != 1 else ''} in the given directories whose "
        f"names are not log names ({names}); {hint}",
        markup=False,
    )


def progress_bar(label: Any, *columns: Any, quiet: bool) -> Progress:
    """A transient progress bar on stderr: ``label``, a bar, then ``columns``. Shown only on a terminal
    and not with ``--json`` (``quiet``), so pipes and scripts get clean output."""
    return Progress(
        label, BarColumn(), *columns, console=err, disable=quiet or not err.is_terminal, transient=True
    )


# -- choices -------------------------------------------------------------------------------------
# Every option taking one of a fixed set of values fails the same way: click's usage error
# "Invalid value for '--label': Value error, 'okk' is not one of 'ok', ...", exit 2. Where the values are
# an Enum that costs nothing to import (Label, Artifact, Severity) the option is typed with it; where they
# live in a module that is slow to import (the finding kinds need every check family, ~110 ms; formats,
# stats groups and quarantine reasons sit next to sqlalchemy), an Enum would put that import in every
# command's start-up, --help included, so the option gets a ``lazy_choice`` parser instead: it reads the
# values on first use and raises the same ValueError text typer raises for an Enum, giving the same message.
def lazy_choice(values: Callable[[], Iterable[str]]) -> Callable[[str], str]:
    """A typer ``parser=`` accepting only the strings ``values()`` returns (called at parse time)."""

    def parse(value: str) -> str:
        choices = tuple(values())
        if value not in choices:
            raise ValueError(f"{value!r} is not one of {', '.join(map(repr, choices))}.")
        return value

    return parse


def finding_kinds() -> list[str]:
    """Every finding kind a registered check can emit, sorted (imports the checks)."""
    from monitor.checks import REGISTRY

    return sorted({k for spec in REGISTRY.values() for k in spec.kinds})


kind_choice = lazy_choice(finding_kinds)
"""The ``parser`` of every ``--kind`` (finding kind) option."""


# -- checks --------------------------------------------------------------------------------------
def current_checks() -> list[tuple[str, int]]:
    """``(check_id, version)`` of every current check (imports the checks only when a command needs them)."""
    from monitor.checks import current_versions

    return current_versions()


def open_engine(state: State, *, require_schema: bool = True, writes: bool = False) -> Any:
    """The engine of the configured store (``monitor.store.engine.open_store``, which raises
    ``StorageError`` for a missing SQLite file, an unreachable database or an old schema). Every
    command opens its store here, and the engine is disposed when the command ends
    (:meth:`State.close_engines`)."""
    from monitor.store.engine import open_store

    if state.url.startswith("postgresql"):
        require_extra("psycopg", "postgres", "a PostgreSQL database URL")
    engine = open_store(state.url, require_schema=require_schema, writes=writes)
    state.engines.append(engine)
    return engine
