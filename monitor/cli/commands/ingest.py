"""Ingest commands: ``ingest`` (logs into the store) and ``quarantine`` (the rejected lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import DownloadColumn, TextColumn, TimeRemainingColumn
from rich.table import Table

from monitor.cli.app import (
    State,
    err,
    lazy_choice,
    open_engine,
    out,
    progress_bar,
    say_skipped,
    stop_on_sigterm,
)

# -- ingest --------------------------------------------------------------------------------------
IngestPaths = Annotated[
    list[str], typer.Argument(metavar="PATH", help="Files, .gz files, directories, or - for stdin.")
]
SourceLabel = Annotated[str | None, typer.Option("--source", help="Label stored with each event.")]
Strict = Annotated[bool, typer.Option("--strict", help="Exit 1 when any line was rejected.")]
SummaryJson = Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")]
Globs = Annotated[
    list[str] | None,
    typer.Option(
        "--glob",
        metavar="PATTERN",
        help="In directories, read the files whose name matches this shell pattern (repeatable); "
        "default: *.jsonl, *.ndjson, *.json, *.log and their rotated generations (.1, .2.gz, "
        "-20240304, .2024-03-04), gzipped or not.",
    ),
]


def ingest(
    ctx: typer.Context,
    paths: IngestPaths,
    source: SourceLabel = None,
    strict: Strict = False,
    as_json: SummaryJson = False,
    globs: Globs = None,
) -> None:
    """Store every well-formed event of the given logs; quarantine the rest with a reason.

    Re-ingesting the same file stores nothing new. A directory is read recursively; files whose names
    do not match are counted on stderr, never skipped silently. A line holding an OpenTelemetry
    TracesData (OTLP JSON, as the Collector's file exporter writes it) is a trace: its spans are
    stored and each trace is mapped to its rewrite. Exit code 0 when the run completed; 1 with
    --strict and rejects; 3 when a source could not be read.

    \b
    Examples:
      rewrite-monitor ingest logs/ extra.jsonl.gz --source prod-eu
      rewrite-monitor ingest examples/otel/
    """
    from monitor.ingest.paths import find_sources, ingest_paths
    from monitor.store.engine import session_factory

    stop_on_sigterm(ctx)  # stopped as at Ctrl+C: the batch in hand rolled back, processes closed
    state: State = ctx.obj
    engine = open_engine(state, writes=True)
    found = find_sources(paths, globs=globs)
    say_skipped(found.skipped, "name them, or pass --glob")
    with (
        progress_bar(
            TextColumn("[bold]ingest[/] {task.description}"),
            DownloadColumn(),
            TimeRemainingColumn(),
            quiet=as_json,
        ) as progress,
        session_factory(engine)() as session,
    ):
        task = progress.add_task("", total=found.total_bytes())
        # Progress is counted in decompressed bytes; for .gz the bar is approximate.
        summary = ingest_paths(
            session,
            found,
            settings=state.settings,
            source_name=source,
            on_source=lambda s: progress.update(task, description=_file_name(s.origin)),
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


def _file_name(origin: str) -> str:
    """The file name of ``origin`` for the progress line: a file name is not markup, and "[x]" in it
    would break the line."""
    from rich.markup import escape

    from monitor.text import visible

    return escape(visible(Path(origin).name))


def _stored_origin(origin: str | None) -> str | None:
    """``--origin`` as ingest stores it: ``-`` as is, a path made absolute (``ingest bad.jsonl`` stores
    ``/where/it/was/bad.jsonl``; typing the same relative path here must find it)."""
    if origin is None or origin == "-":
        return origin
    return str(Path(origin).resolve())


def _reasons() -> tuple[str, ...]:
    from monitor.ingest.events import REASONS

    return REASONS


quarantine_app = typer.Typer(
    help="""The rejected log lines, and their resolution.

Without a subcommand: list the open ones (file, line, reason, what exactly was wrong). A line is
resolved when a later ingest stores it (the file was fixed and ingested again, or a truncated last
line was found complete), or when you dismiss it with `quarantine resolve`.

\b
Examples:
  rewrite-monitor quarantine --reason missing_field --limit 20
  rewrite-monitor quarantine resolve --origin /var/log/rag/app.jsonl --reason wrong_type
  rewrite-monitor quarantine clear --older-than-days 30
""",
    invoke_without_command=True,
)

_ORIGIN_OPTION = typer.Option(
    "--origin",
    callback=_stored_origin,
    help="Only lines of this file (a relative path is made absolute, as ingest stores it).",
)
_REASON_OPTION = typer.Option(
    "--reason", parser=lazy_choice(_reasons), metavar="REASON", help="Only this reason (e.g. wrong_type)."
)


@quarantine_app.callback()
def quarantine_cmd(
    ctx: typer.Context,
    reason: Annotated[str | None, _REASON_OPTION] = None,
    origin: Annotated[str | None, _ORIGIN_OPTION] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1_000_000, help="At most N lines.")] = 50,
    excerpt: Annotated[bool, typer.Option("--excerpt", help="Also print the start of each line.")] = False,
    include_resolved: Annotated[
        bool, typer.Option("--resolved", help="Also list resolved lines (with their resolution).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """The open rejected log lines; excerpts can hold personal data, so they are printed only with
    --excerpt."""
    if ctx.invoked_subcommand is not None:
        return
    from monitor.ingest.store.quarantine import list_quarantine
    from monitor.store.engine import session_factory

    engine = open_engine(ctx.obj)
    with session_factory(engine)() as session:
        rows, counts = list_quarantine(
            session=session,
            reason=reason,
            origin=origin,
            limit=limit,
            with_excerpt=excerpt,
            include_resolved=include_resolved,
        )
    if as_json:
        for r in rows:
            item: dict[str, Any] = {
                "origin": r.origin,
                "line": r.line_no,
                "reason": r.reason,
                "detail": r.detail,
            }
            if include_resolved:
                item["resolution"] = r.resolution
            if excerpt:
                item["excerpt"] = r.excerpt
            typer.echo(json.dumps(item, ensure_ascii=False))
        return
    from monitor.cli.render import quarantine_table

    out.print(quarantine_table(rows, excerpt=excerpt, resolution=include_resolved))
    total = ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"
    err.print(f"{len(rows)} shown; open in the store by reason: {total}", markup=False)


@quarantine_app.command("resolve")
def quarantine_resolve(
    ctx: typer.Context,
    reason: Annotated[str | None, _REASON_OPTION] = None,
    origin: Annotated[str | None, _ORIGIN_OPTION] = None,
    line: Annotated[int | None, typer.Option("--line", min=1, help="Only this line number.")] = None,
    everything: Annotated[bool, typer.Option("--all", help="Every open line (no filter needed).")] = False,
) -> None:
    """Dismiss open rejected lines you have read and will not fix: they leave the default listing and
    the counts, and stay in the store (as dismissed) until `quarantine clear`.

    Needs at least one of --reason, --origin, --line, or --all. Prints how many were dismissed.

    Example: rewrite-monitor quarantine resolve --origin /var/log/rag/app.jsonl --line 1042
    """
    from datetime import UTC, datetime

    from monitor.ingest.store.quarantine import resolve
    from monitor.store.engine import session_factory

    if not everything and reason is None and origin is None and line is None:
        err.print("error: name the lines to dismiss (--reason, --origin, --line) or pass --all", markup=False)
        raise typer.Exit(2)
    engine = open_engine(ctx.obj, writes=True)
    with session_factory(engine)() as session:
        n = resolve(session=session, now=datetime.now(UTC), reason=reason, origin=origin, line_no=line)
        session.commit()
    out.print(f"dismissed {n} rejected line{'s' if n != 1 else ''}", markup=False)


@quarantine_app.command("clear")
def quarantine_clear(
    ctx: typer.Context,
    older_than_days: Annotated[
        float | None,
        typer.Option(
            "--older-than-days", min=0, max=36_500, help="Only lines resolved more than N days ago."
        ),
    ] = None,
) -> None:
    """Delete resolved rejected lines (stored later or dismissed) from the store; open ones are kept.

    Example: rewrite-monitor quarantine clear --older-than-days 30
    """
    from datetime import UTC, datetime, timedelta

    from monitor.ingest.store.quarantine import clear_resolved
    from monitor.store.engine import session_factory

    before = datetime.now(UTC) - timedelta(days=older_than_days) if older_than_days is not None else None
    engine = open_engine(ctx.obj, writes=True)
    with session_factory(engine)() as session:
        n = clear_resolved(session=session, before=before)
        session.commit()
    out.print(f"deleted {n} resolved line{'s' if n != 1 else ''}", markup=False)


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
    for reason, n in s.get("skipped", {}).items():
        table.add_row(f"traces skipped: {reason}", str(n))
    table.add_row(
        "unjoined in store", f"ctx_input {s['unjoined_ctx_input']}, rewrite {s['unjoined_rewrite']}"
    )
    out.print(table)
    for e in s["source_errors"]:
        err.print("error", style="red", end="")
        err.print(f": {e['source']}: {e['error']}", markup=False, highlight=False)
    if s["rejected_total"]:
        err.print("see them with: rewrite-monitor quarantine (file, line, reason, detail)")


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.command("ingest")(ingest)
    app.add_typer(quarantine_app, name="quarantine")
