"""CLI commands of the worker area (registered on monitor.cli.app.app): ``worker``, ``worker run``,
``worker status`` and ``alerts list``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from monitor.cli.app import State, err, out

if TYPE_CHECKING:
    from monitor.alerts.store import AlertRow, DeliveryRow

worker_app = typer.Typer(
    help=(
        "The scheduled worker: with no sub-command, run it in the foreground (cycle every "
        "worker_interval_minutes, daily job at daily_time) until SIGTERM or Ctrl-C.\n\n"
        "Example: rewrite-monitor worker"
    ),
    invoke_without_command=True,
)
alerts_app = typer.Typer(help="Fabrication-rate alerts raised by the worker.", no_args_is_help=True)


def _configure_logging(state: State) -> None:
    from monitor.observability.logs import configure_logging

    configure_logging(json_output=state.settings.log_json)


@worker_app.callback()
def worker(ctx: typer.Context) -> None:
    """Run the worker in the foreground until SIGTERM or Ctrl-C (finishes the batch in hand).

    Example: REWRITE_MONITOR_SOURCES='["/var/log/rag/*.jsonl"]' rewrite-monitor worker
    """
    if ctx.invoked_subcommand is not None:
        return
    from monitor.worker.runtime import open_worker, run_forever

    state: State = ctx.obj
    _configure_logging(state)
    wctx = open_worker(state.settings)
    try:
        run_forever(wctx)
    finally:
        wctx.close()


@worker_app.command("run")
def worker_run(
    ctx: typer.Context,
    job: Annotated[str, typer.Argument(help="cycle, daily, alerts or retention.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the job's summary as JSON.")] = False,
) -> None:
    """Run one worker job once, now, and print its summary (what the scheduler runs).

    On SQLite this is refused while a worker runs on the same store.

    Example: rewrite-monitor worker run cycle --json
    """
    from monitor.worker.runtime import open_worker, run_job

    state: State = ctx.obj
    _configure_logging(state)
    wctx = open_worker(state.settings)
    try:
        summary = run_job(wctx, job)
    finally:
        wctx.close()
    result = _as_dict(summary)
    if as_json:
        out.print_json(json.dumps(result, default=str))
    else:
        _print_summary(job, result)
    # A source that could not be read is exit 3, as for `ingest` and `run`; the other sources were read.
    failed = getattr(getattr(summary, "ingest", None), "source_errors", None)
    if failed:
        for source, problem in failed:
            err.print("error", style="red", end="")
            err.print(f": {source}: {problem}", markup=False, highlight=False)
        raise typer.Exit(3)


def _compact(value: Any) -> str:
    """One readable line for a summary part: non-empty ``key value`` pairs, nested parts as JSON."""
    if isinstance(value, dict):
        parts = [
            f"{k} {json.dumps(v, default=str) if isinstance(v, dict | list) else v}"
            for k, v in value.items()
            if v not in (None, {}, [], "")
        ]
        text = ", ".join(parts) or "-"
    elif isinstance(value, list):
        text = ", ".join(str(v) for v in value) or "-"
    else:
        text = str(value)
    return text if len(text) <= 300 else text[:297] + "..."


def _print_summary(job: str, result: Any) -> None:
    """A human table of a job's summary (``--json`` prints the full structure)."""
    if isinstance(result, list):
        if not result:
            out.print(f"{job}: no alert or recovery")
            return
        table = Table("group", "action", "reason", title=f"worker job {job}")
        for d in result:
            table.add_row(str(d["group"]), str(d["action"]), str(d["reason"]))
    else:
        table = Table("part", "summary", title=f"worker job {job} (full detail: --json)")
        for key, value in (result or {}).items():
            table.add_row(str(key), _compact(value))
    out.print(table, markup=False, highlight=False)


def _as_dict(summary: Any) -> Any:
    if hasattr(summary, "as_dict"):
        return summary.as_dict()
    if isinstance(summary, list):  # alerts: the decisions
        return [
            {"group": d.group.group_key, "action": d.action, "reason": d.reason} for d in summary if d.action
        ]
    return summary


@worker_app.command("status")
def worker_status(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the workers' leases (who runs, who leads) with their state, and each source file's cursor.

    A lease is EXPIRED when its holder stopped renewing it, and DEAD when the holder ran on this
    machine and its process is gone (a worker killed before its lease ran out); a holder on another
    machine is judged by its lease alone. Exits 1 when any lease is expired or dead.

    Example: rewrite-monitor worker status
    """
    import socket

    from monitor.cli.app import open_engine
    from monitor.store.engine import session_factory
    from monitor.worker.context import utcnow
    from monitor.worker.status import unhealthy, worker_status

    engine = open_engine(ctx.obj)
    now = utcnow()
    host = socket.gethostname()
    with session_factory(engine)() as session:
        data = worker_status(session=session, now=now, host=host)
    if as_json:
        out.print_json(json.dumps(data))
    else:
        _print_status(data)
    if unhealthy(data):
        raise typer.Exit(1)


def _print_status(data: dict[str, list[dict[str, Any]]]) -> None:
    """The leases and the source cursors of ``worker status``, as two tables."""
    lt = Table("lease", "holder", "since", "renew by", "state", title="workers")
    for x in data["leases"]:
        lt.add_row(
            str(x["name"]),
            str(x["holder"]),
            str(x["acquired_at"]),
            str(x["expires_at"]),
            {"ok": "ok", "expired": "EXPIRED", "dead": "DEAD (process gone)"}[str(x["state"])],
        )
    out.print(lt)
    ct = Table("file", "line", "offset", "size", "updated", title="source cursors")
    for c in data["cursors"]:
        ct.add_row(str(c["path"]), str(c["line_no"]), str(c["offset"]), str(c["size"]), str(c["updated_at"]))
    out.print(ct)


FLAGGED_SHOWN = 5
"""Flagged request ids per row in the ``alerts list`` table (``--json`` lists them all)."""


@alerts_app.command("list")
def alerts_list(
    ctx: typer.Context,
    since: Annotated[
        datetime | None, typer.Option("--since", help="Created at or after (UTC).", formats=["%Y-%m-%d"])
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1_000_000, help="Most recent N.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per line.")] = False,
) -> None:
    """Stored alerts and recoveries, newest first: why (spike or ceiling), window and baseline counts and
    rates, where it was sent, and the flagged request ids to open first (`rewrite-monitor show ID`).

    Example: rewrite-monitor alerts list --since 2024-03-01
    """
    from monitor.alerts.listing import alert_as_dict
    from monitor.alerts.store import list_alerts
    from monitor.cli.app import open_engine
    from monitor.store.engine import session_factory

    engine = open_engine(ctx.obj)
    with session_factory(engine)() as session:
        rows = list_alerts(session=session, since=since, limit=limit)
    if as_json:
        for r in rows:
            # typer.echo, not the Rich console: one object per line, never wrapped at the terminal width
            typer.echo(json.dumps(alert_as_dict(r)))
        return
    if not rows:
        err.print("no alerts")
        return
    out.print(_alerts_table(rows))


def _alerts_table(rows: list[AlertRow]) -> Table:
    """The ``alerts list`` table: one row per alert, at most :data:`FLAGGED_SHOWN` flagged ids each."""
    from monitor.cli.render import safe_text

    table = Table(
        "created (UTC)",
        "group",
        "status",
        "reason",
        "window (event time)",
        "flagged",
        "rate",
        "baseline",
        "sent to",
        "flagged requests",
    )
    for r in rows:
        shown = ", ".join(r.flagged_request_ids[:FLAGGED_SHOWN])
        more = len(r.flagged_request_ids) - FLAGGED_SHOWN
        table.add_row(
            r.created_at.strftime("%Y-%m-%d %H:%M"),
            safe_text(r.group_key),
            r.status,
            r.reason or "-",
            f"{r.window_start:%m-%d %H:%M}–{r.window_end:%H:%M}",
            f"{r.window_flagged}/{r.window_rewrites}",
            f"{r.window_rate:.2%}",
            (
                f"{r.baseline_rate:.2%} ({r.baseline_flagged}/{r.baseline_rewrites})"
                if r.baseline_rate is not None
                else "-"
            ),
            ", ".join([r.delivered_to] + [_delivery(d) for d in r.deliveries]),
            safe_text(shown + (f" (+{more} more: --json)" if more > 0 else "")),
        )
    return table


def _delivery(d: DeliveryRow) -> str:
    """ "slack" when sent, "slack pending (2 tries: HTTP 500)" otherwise."""
    if d.status == "sent":
        return d.destination
    tries = (
        f"{d.attempts} {'try' if d.attempts == 1 else 'tries'}: {d.last_error}" if d.attempts else "not tried"
    )
    return f"{d.destination} pending ({tries})"


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.add_typer(worker_app, name="worker")
    app.add_typer(alerts_app, name="alerts")
