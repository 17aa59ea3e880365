"""Queue commands: ``queue`` (the review queue) and ``show`` (one request's four artifacts)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.table import Table

from monitor.cli.app import err, kind_choice, open_engine, out

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from monitor.queue.show import Found, Miss
    from monitor.queue.store.listing import QueueListing
    from monitor.stats.calibration import Estimate


class StateFilter(StrEnum):
    """``queue --state``: a queue item's state (``queue_items.state``, set by ``monitor.queue.store``),
    or ``all``. An Enum here rather than there: that module imports sqlalchemy."""

    PENDING = "pending"
    CLAIMED = "claimed"
    DONE = "done"
    SKIPPED = "skipped"
    WITHDRAWN = "withdrawn"
    ALL = "all"


StateOpt = Annotated[StateFilter, typer.Option("--state", help="Only items in this state.")]
KindOpt = Annotated[
    str | None,
    typer.Option("--kind", parser=kind_choice, metavar="KIND", help="Only items with this finding kind."),
]
LimitOpt = Annotated[int, typer.Option("--limit", min=1, max=1_000_000, help="At most N items.")]
QueueJsonOpt = Annotated[
    bool,
    typer.Option("--json", help="One JSON document (schemas/queue.schema.json) instead of the table."),
]
RequestIdArg = Annotated[
    str,
    typer.Argument(help="The rewrite's request id, or the pid_... form an alert carried for it."),
]
ConvOpt = Annotated[
    str | None,
    typer.Option("--conv", help="The conversation, when the request id was logged in several."),
]
ShowJsonOpt = Annotated[
    bool,
    typer.Option("--json", help="One JSON document (schemas/record_view.schema.json) instead of the page."),
]


def queue_cmd(
    ctx: typer.Context,
    state: StateOpt = StateFilter.PENDING,
    kind: KindOpt = None,
    limit: LimitOpt = 50,
    as_json: QueueJsonOpt = False,
) -> None:
    """The review queue in review order (severity, then age), with the flagged words.

    The last line (stderr) counts what is shown, what matches, and the queue depth:
    "showing 20 of 64 pending items; queue depth: 64 open (pending or claimed), 64 overdue".
    With --json, stdout holds one JSON object: the items, the filters, "matching", "depth" and
    "overdue" (the shape is schemas/queue.schema.json).

    Examples:
      rewrite-monitor queue --state pending --kind added_content_word --limit 20
      rewrite-monitor queue --json --limit 500 | jq '.items[] | select(.overdue) | .request_id'
    """
    from datetime import UTC, datetime

    from monitor.queue.store.listing import queue_listing
    from monitor.store.engine import session_factory

    engine = open_engine(ctx.obj)
    now = datetime.now(UTC)
    with session_factory(engine)() as session:
        shown = queue_listing(
            session=session,
            now=now,
            state=None if state == StateFilter.ALL else state.value,
            kind=kind,
            limit=limit,
        )
    if as_json:
        from monitor.review.views import dump, queue_out

        doc = queue_out(
            shown.rows,
            matching=shown.matching,
            depth=shown.depth,
            overdue=shown.overdue,
            state=state.value,
            kind=kind,
        )
        typer.echo(dump(doc))
        return
    _print_queue(shown, state, kind)


def _print_queue(shown: QueueListing, state: StateFilter, kind: str | None) -> None:
    """The queue's table on stdout, then its counts line on stderr."""
    from monitor.cli.render import safe_text

    table = Table("id", "request", "stratum", "kinds", "words", "state", "due", "π")
    for r in shown.rows:
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
        f"showing {len(shown.rows):,} of {shown.matching:,} {which}; "
        f"queue depth: {shown.depth:,} open (pending or claimed), {shown.overdue:,} overdue",
        markup=False,
        highlight=False,
    )


def show(
    ctx: typer.Context,
    request_id: RequestIdArg,
    conv: ConvOpt = None,
    as_json: ShowJsonOpt = False,
) -> None:
    """The four artifacts of one request in review order: state, transcript and rewrite, retrieval,
    answer; then the findings. With --json, stdout holds the same as one JSON object (its shape is
    schemas/record_view.schema.json); an unknown request exits 1 either way.

    An id that holds personal data leaves the machine hashed (the outbound_ids setting): an alert names
    it pid_ and 20 hex characters, and show finds the request it stands for in this store.

    Examples:
      rewrite-monitor show cast2020-90_3
      rewrite-monitor show cast2020-90_3 --json | jq '.rewrite.query, [.findings[].kind]'
      rewrite-monitor show pid_3f9a0c12d4e5b6a7c8d9
    """
    from monitor.cli.render import render_record
    from monitor.queue.show import Miss, find_request
    from monitor.store.engine import session_factory

    engine = open_engine(ctx.obj)
    with session_factory(engine)() as session:
        got = find_request(session=session, request_id=request_id, conv=conv)
        if isinstance(got, Miss):
            _say_miss(got)
        estimates = _estimates(session, got)
    if as_json:
        from monitor.review.views import dump, record_view_out

        typer.echo(dump(record_view_out(got.view, got.findings, estimates)))
        return
    for block in render_record(got.view, got.findings, estimates=estimates):
        out.print(block)


def _estimates(session: Session, got: Found) -> dict[tuple[str, str], Estimate]:
    """What the verdicts taught of the steps of ``got``'s findings (``Calibration.for_findings``)."""
    from monitor.checks import current_versions
    from monitor.stats.store import calibration

    rec = got.view.record
    return calibration(session=session, checks=current_versions()).for_findings(
        rec.prompt_version if rec is not None else None, rec.model if rec is not None else None, got.findings
    )


def _say_miss(miss: Miss) -> NoReturn:
    """Say why ``show`` has nothing to show, and exit: 2 for an id that is no hashed id and for a hashed
    id that stands for several requests (they are listed: pass one with --conv), else 1."""
    import shlex

    if miss.reason == "not_hashed":
        err.print(
            f"{miss.request_id!r} is not a hashed id: pid_ and 20 hex characters (0-9, a-f), as an "
            "alert carries it",
            style="red",
            markup=False,
        )
        raise typer.Exit(2)
    if miss.reason == "ambiguous":
        err.print(
            f"{miss.hashed} stands for {len(miss.found)} requests; show one of them by its id:", markup=False
        )
        for c, r in miss.found[:20]:
            line = f"  rewrite-monitor show {shlex.quote(r)} --conv {shlex.quote(c)}"
            err.print(line, markup=False, highlight=False)
        raise typer.Exit(2)
    if miss.reason == "no_key":
        message = f"this store has no key for hashed ids: {miss.hashed} came from another"
    elif miss.reason == "no_hash":
        message = (
            f"no request or conversation of this store hashes to {miss.hashed} (an id from another store, or "
            "from before its key was made)"
        )
    else:
        where = f" in conversation {miss.conv!r}" if miss.conv is not None else ""
        message = f"no request {miss.request_id!r}{where} in the store"
    err.print(message, style="red", markup=False)
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.command("queue")(queue_cmd)
    app.command("show")(show)
