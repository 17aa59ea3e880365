"""Build :class:`monitor.record.RewriteRecord` objects from stored events.

A record's ``peers`` are the conversation's other requests (ordered by turn) with their
``ctx_input``, so cross-request checks stay pure. Contexts are parsed once per batch and shared.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, aliased

from monitor.errors import AmbiguousRequestError
from monitor.ingest.events import CtxInputEvent, RewriteEvent
from monitor.record import ContextInput, Message, Peer, Resolution, RewriteRecord
from monitor.store.models import Event, Record

_CTX_FIELDS = set(CtxInputEvent.model_fields) | {"event", "message", "msg"}
_REWRITE_FIELDS = set(RewriteEvent.model_fields) | {"event", "message", "msg"}


def context_from_raw(raw: dict[str, Any]) -> ContextInput:
    """A ``ContextInput`` from a stored ``ctx_input`` event (already validated at ingest).

    Unknown fields of the event (e.g. ``transcript_kind``) go to ``ContextInput.context_extra``.
    Raises ``pydantic.ValidationError`` only if the stored event was altered by hand.
    """
    ev = CtxInputEvent.model_validate(raw)
    messages = None
    if ev.messages is not None:
        messages = tuple(Message(m.role, m.content, m.ts) for m in ev.messages)
    return ContextInput(
        request_id=ev.request_id,
        n_messages=ev.n_messages,
        roles={"user": ev.roles.user, "assistant": ev.roles.assistant},
        digest=ev.digest,
        client_turn_count=ev.client_turn_count,
        monotonic=ev.monotonic,
        first_ts=ev.first_ts,
        last_ts=ev.last_ts,
        messages=messages,
        ts=ev.ts,
        context_extra={k: v for k, v in raw.items() if k not in _CTX_FIELDS},
    )


def record_from_raw(
    rewrite_raw: dict[str, Any],
    context: ContextInput | None,
    peers: Sequence[Peer] = (),
) -> RewriteRecord:
    """A ``RewriteRecord`` from a stored ``rewrite`` event, its context and its conversation peers."""
    ev = RewriteEvent.model_validate(rewrite_raw)
    return RewriteRecord(
        conv_id=ev.conv_id,
        request_id=ev.request_id,
        turn=ev.turn,
        latest=ev.latest,
        query=ev.query,
        rewritten=ev.rewritten,
        resolved=tuple(Resolution(r.surface, r.antecedent, r.turn) for r in ev.resolved),
        dropped=tuple(ev.dropped),
        filters=ev.filters,
        model=ev.model,
        prompt_version=ev.prompt_version,
        ts=ev.ts,
        context=context,
        peers=tuple(peers),
        extra={k: v for k, v in rewrite_raw.items() if k not in _REWRITE_FIELDS},
    )


def load_records(*, session: Session, record_ids: Sequence[int]) -> list[tuple[int, RewriteRecord]]:
    """The records with these ids that have a rewrite, as ``(record_id, RewriteRecord)`` by id.

    ``peers`` are the conversation's requests at the same turn and at the nearest earlier turn: what
    the cross-request checks compare with. Loading only those keeps the cost of a record independent of
    how long its conversation is (every ctx_input carries the whole history, so loading all of them
    would be quadratic in the conversation's length).
    """
    if not record_ids:
        return []
    ctx_ev = aliased(Event)
    rw_ev = aliased(Event)
    rows = session.execute(
        select(Record.id, Record.conv_id, Record.turn, rw_ev.raw, Record.ctx_event_id)
        .join(rw_ev, rw_ev.id == Record.rewrite_event_id)
        .outerjoin(ctx_ev, ctx_ev.id == Record.ctx_event_id)
        .where(Record.id.in_(record_ids))
        .order_by(Record.id)
    ).all()
    conv_ids = {r.conv_id for r in rows}
    by_conv: dict[str, list[Any]] = defaultdict(list)
    for start in range(0, len(conv_ids), 500):
        chunk = list(conv_ids)[start : start + 500]
        for p in session.execute(
            select(
                Record.id, Record.conv_id, Record.request_id, Record.turn, Record.ts, Record.ctx_event_id
            ).where(Record.conv_id.in_(chunk))
        ):
            by_conv[p.conv_id].append(p)
    peers_of: dict[int, list[Any]] = {}
    needed_ctx = {r.ctx_event_id for r in rows if r.ctx_event_id is not None}
    for r in rows:
        others = [p for p in by_conv[r.conv_id] if p.id != r.id and p.turn <= r.turn]
        earlier_turn = max((p.turn for p in others if p.turn < r.turn), default=None)
        chosen = sorted((p for p in others if p.turn in (r.turn, earlier_turn)), key=lambda p: (p.turn, p.id))
        peers_of[r.id] = chosen
        needed_ctx.update(p.ctx_event_id for p in chosen if p.ctx_event_id is not None)
    contexts: dict[int, ContextInput] = {}
    needed = list(needed_ctx)
    for start in range(0, len(needed), 500):
        for eid, raw in session.execute(
            select(Event.id, Event.raw).where(Event.id.in_(needed[start : start + 500]))
        ):
            contexts[eid] = context_from_raw(raw)
    out = []
    for r in rows:
        peers = [
            Peer(
                p.request_id,
                p.turn,
                p.ts.replace(tzinfo=UTC) if p.ts is not None else None,  # stored as naive UTC
                contexts.get(p.ctx_event_id) if p.ctx_event_id is not None else None,
            )
            for p in peers_of[r.id]
        ]
        ctx = contexts.get(r.ctx_event_id) if r.ctx_event_id is not None else None
        out.append((r.id, record_from_raw(r.raw, ctx, peers)))
    return out


@dataclass(frozen=True, slots=True)
class RecordView:
    """Everything the review of one request reads, in artifact order (state, rewrite, retrieval, answer).

    ``record`` is ``None`` when only a ctx_input was logged; ``hits`` and ``answer`` come from the
    optional ``retrieve`` / ``answer`` events.
    """

    request_id: str
    conv_id: str
    record: RewriteRecord | None
    context: ContextInput | None
    hits: list[dict[str, Any]]
    answer: dict[str, Any] | None


def get_record_view(*, session: Session, request_id: str, conv_id: str | None = None) -> RecordView | None:
    """The stored artifacts of ``request_id`` (the rewrite's request id) in conversation ``conv_id``,
    or ``None`` if unknown.

    Without ``conv_id`` the request id must name one conversation: raises ``AmbiguousRequestError``
    (listing them) when it names several.
    """
    stmt = select(Record).where(Record.request_id == request_id)
    if conv_id is not None:
        stmt = stmt.where(Record.conv_id == conv_id)
    found = list(session.scalars(stmt.order_by(Record.id)))
    if not found:
        return None
    convs = sorted({r.conv_id for r in found})
    if len(convs) > 1:
        raise AmbiguousRequestError(request_id, convs)
    rec = found[0]
    loaded = load_records(session=session, record_ids=[rec.id]) if rec.rewrite_event_id else []
    record = loaded[0][1] if loaded else None
    context = record.context if record is not None else None
    if context is None and rec.ctx_event_id is not None:
        context = context_from_raw(session.get_one(Event, rec.ctx_event_id).raw)
    extras = {
        e.kind: e.raw
        for e in session.scalars(
            select(Event).where(
                Event.kind.in_(("retrieve", "answer")),
                Event.request_id == request_id,
                or_(Event.conv_id == rec.conv_id, Event.conv_id.is_(None)),
            )
        )
    }
    hits = sorted(extras.get("retrieve", {}).get("hits", []), key=lambda h: h.get("rank", 0))
    return RecordView(request_id, rec.conv_id, record, context, hits, extras.get("answer"))
