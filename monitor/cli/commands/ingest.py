"""Ingest commands: ``ingest`` (logs into the store) and ``quarantine`` (the rejected lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import DownloadColumn, TextColumn, TimeRemainingColumn
from rich.table import Table

from monitor.cli.app import State, err, lazy_choice, open_engine, out, progress_bar


# -- ingest --------------------------------------------------------------------------------------
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

    from monitor.ingest.sources import discover
    from monitor.ingest.store.batches import ingest_sources
    from monitor.store.engine import session_factory
    from monitor.text import visible

    state: State = ctx.obj
    settings = state.settings
    engine = open_engine(state, writes=True)
    sources = discover(paths)
    sizes = [s.size for s in sources]
    total = sum(s for s in sizes if s is not None) if all(s is not None for s in sizes) else None
    with (
        progress_bar(
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


def _reasons() -> tuple[str, ...]:
    from monitor.ingest.events import REASONS

    return REASONS


def quarantine_cmd(
    ctx: typer.Context,
    reason: Annotated[
        str | None,
        typer.Option(
            "--reason",
            parser=lazy_choice(_reasons),
            metavar="REASON",
            help="Only this reason (e.g. wrong_type).",
        ),
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
    from monitor.ingest.store.quarantine import list_quarantine
    from monitor.store.engine import session_factory

    engine = open_engine(ctx.obj)
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


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.command("ingest")(ingest)
    app.command("quarantine")(quarantine_cmd)
