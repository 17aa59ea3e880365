"""Queue commands: ``queue`` (the review queue) and ``show`` (one request's four artifacts)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from monitor.cli.app import current_checks, err, kind_choice, open_engine, out

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


class StateFilter(StrEnum):
    """``queue --state``: a queue item's state (``queue_items.state``, set by ``monitor.queue.store``),
    or ``all``. An Enum here rather than there: that module imports sqlalchemy."""

    PENDING = "pending"
    CLAIMED = "claimed"
    DONE = "done"
    SKIPPED = "skipped"
    WITHDRAWN = "withdrawn"
    ALL = "all"


def queue_cmd(
    ctx: typer.Context,
    state: Annotated[StateFilter, typer.Option("--state", help="Only items in this state.")] = (
        StateFilter.PENDING
    ),
    kind: Annotated[
        str | None,
        typer.Option("--kind", parser=kind_choice, metavar="KIND", help="Only items with this finding kind."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1_000_000, help="At most N items.")] = 50,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="One JSON document (schemas/queue.schema.json) instead of the table."),
    ] = False,
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

    from monitor.cli.render import safe_text
    from monitor.queue.store import list_queue, queue_depth
    from monitor.store.engine import session_factory

    engine = open_engine(ctx.obj)
    now = datetime.now(UTC)
    with session_factory(engine)() as session:
        # Every match, to say how many --limit left out (list_queue reads them all to filter by kind).
        matching = list_queue(
            session=session,
            now=now,
            state=None if state == StateFilter.ALL else state.value,
            kind=kind,
            limit=None,
        )
        depth, overdue = queue_depth(session=session, now=now)
    rows = matching[:limit]
    if as_json:
        from monitor.review.views import dump, queue_out

        doc = queue_out(
            rows, matching=len(matching), depth=depth, overdue=overdue, state=state.value, kind=kind
        )
        typer.echo(dump(doc))
        return
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


def show(
    ctx: typer.Context,
    request_id: Annotated[
        str,
        typer.Argument(help="The rewrite's request id, or the pid_... form an alert carried for it."),
    ],
    conv: Annotated[
        str | None,
        typer.Option("--conv", help="The conversation, when the request id was logged in several."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="One JSON document (schemas/record_view.schema.json) instead of the page."
        ),
    ] = False,
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
    from monitor.checks.store import list_findings
    from monitor.cli.render import render_record
    from monitor.ingest.store.records import get_record_view
    from monitor.privacy import HASHED_ID_RE
    from monitor.store.engine import session_factory

    engine = open_engine(ctx.obj)
    with session_factory(engine)() as session:
        if conv is not None and HASHED_ID_RE.match(conv.strip().lower()):
            conv = _unhash_conv(session, conv.strip().lower())
        view = get_record_view(session=session, request_id=request_id, conv_id=conv)
        looks_hashed = request_id.strip().lower().startswith("pid_")
        if view is None and looks_hashed:
            hashed = request_id.strip().lower()
            if not HASHED_ID_RE.match(hashed):
                err.print(
                    f"{request_id!r} is not a hashed id: pid_ and 20 hex characters (0-9, a-f), as an "
                    "alert carries it",
                    style="red",
                    markup=False,
                )
                raise typer.Exit(2)
            request_id, conv = _unhash(session, hashed, conv)
            view = get_record_view(session=session, request_id=request_id, conv_id=conv)
        if view is None:
            where = f" in conversation {conv!r}" if conv is not None else ""
            err.print(f"no request {request_id!r}{where} in the store", style="red", markup=False)
            raise typer.Exit(1)
        found = list_findings(
            session=session, checks=current_checks(), request_id=request_id, conv_id=view.conv_id
        )
    if as_json:
        from monitor.review.views import dump, record_view_out

        typer.echo(dump(record_view_out(view, found)))
        return
    for block in render_record(view, found):
        out.print(block)


def _unhash(session: Session, hashed: str, conv: str | None) -> tuple[str, str | None]:
    """The (request id, conversation) a ``pid_...`` id stands for in this store; exits 1 when it stands for
    none, 2 when for several requests (they are listed: pass one with --conv)."""
    import shlex

    from monitor.store.keys import resolve_hashed_id

    found = [(c, r) for c, r in resolve_hashed_id(session=session, hashed=hashed) if conv in (None, c)]
    if not found:
        _no_such_hash(session, hashed)
    if len({r for _c, r in found}) == 1 and len({c for c, _r in found}) == 1:
        return found[0][1], found[0][0]
    err.print(f"{hashed} stands for {len(found)} requests; show one of them by its id:", markup=False)
    for c, r in found[:20]:
        err.print(
            f"  rewrite-monitor show {shlex.quote(r)} --conv {shlex.quote(c)}", markup=False, highlight=False
        )
    raise typer.Exit(2)


def _unhash_conv(session: Session, hashed: str) -> str:
    """The conversation a ``pid_...`` passed to ``--conv`` stands for; exits 1 when none."""
    from monitor.privacy import hashed_id
    from monitor.store.keys import resolve_hashed_id, store_key

    key = store_key(session=session)
    convs = {c for c, _r in resolve_hashed_id(session=session, hashed=hashed) if hashed_id(c, key) == hashed}
    if not convs:
        _no_such_hash(session, hashed)
    return convs.pop()


def _no_such_hash(session: Session, hashed: str) -> None:
    """Say that no id of this store hashes to ``hashed`` (or that it has no key), and exit 1."""
    from monitor.store.keys import has_key

    if not has_key(session=session):
        err.print(
            f"this store has no key for hashed ids: {hashed} came from another", style="red", markup=False
        )
    else:
        err.print(
            f"no request or conversation of this store hashes to {hashed} (an id from another store, or "
            "from before its key was made)",
            style="red",
            markup=False,
        )
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.command("queue")(queue_cmd)
    app.command("show")(show)
