"""Build :class:`monitor.record.RewriteRecord` objects from stored events.

A record's ``peers`` are the conversation's other requests (ordered by turn) with their
``ctx_input``, so cross-request checks stay pure. Contexts are parsed once per batch and shared.
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy import Text, cast, func, or_, select, tuple_
from sqlalchemy.orm import Session, aliased

from monitor.errors import AmbiguousRequestError
from monitor.ingest.events import CtxInputEvent, RewriteEvent, parse_ts
from monitor.record import ContextInput, Message, Peer, Resolution, RewriteRecord
from monitor.store.models import Event, Record

_CTX_FIELDS = set(CtxInputEvent.model_fields) | {"event", "message", "msg"}
_REWRITE_FIELDS = set(RewriteEvent.model_fields) | {"event", "message", "msg"}


def context_from_raw(raw: dict[str, Any]) -> ContextInput:
    """A ``ContextInput`` from a stored ``ctx_input`` event (already validated at ingest).

    Unknown fields of the event (e.g. ``transcript_kind``) go to ``ContextInput.context_extra``.
    Raises ``pydantic.ValidationError`` only if the stored event was altered by hand.
    """
    messages = _messages_from_raw(raw.get("messages"))
    if messages is None:
        ev = CtxInputEvent.model_validate(raw)
        if ev.messages is not None:
            messages = tuple(Message(m.role, m.content, m.ts) for m in ev.messages)
    else:
        ev = CtxInputEvent.model_validate({**raw, "messages": None})
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


def _messages_from_raw(items: object) -> tuple[Message, ...] | None:
    """The messages of a stored ``ctx_input`` built as ``MessageIn`` would validate them (text role and
    content, ``ts`` by :func:`parse_ts`), or None when there are none or one would not validate, for the
    caller to validate the event through the model (and raise as it does). Why not the model: a message
    list holds the whole history, and validating it message by message was half of parsing a context."""
    if not isinstance(items, list):
        return None
    out = []
    for m in items:
        if type(m) is not dict or type(m.get("role")) is not str or type(m.get("content")) is not str:
            return None
        ts = m.get("ts")
        try:
            when = None if ts is None else _text_ts(ts) if type(ts) is str else parse_ts(ts)
            out.append(Message(m["role"], m["content"], when))
        except ValueError:
            return None
    return tuple(out)


@functools.lru_cache(maxsize=16384)
def _text_ts(value: str) -> datetime:
    """:func:`parse_ts` of a message's ISO-8601 ``ts``, memoised: every ``ctx_input`` carries the
    conversation's whole history, so each message's timestamp is parsed again in every later context (a
    quarter of loading a batch of the shared logs' records, issue 18). A datetime is immutable, so
    sharing it is safe; 16,384 entries hold about 3 MB. Raises what :func:`parse_ts` raises (an exception
    is never cached)."""
    return parse_ts(value)


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


CONTEXT_CACHE_BYTES = 16 * 2**20
"""The budget of the parsed-context cache (:func:`cached_context`), estimated by
:data:`CONTEXT_BYTES_PER_CHAR`: about 8 M characters of JSON, the newest context of a hundred
conversations of 128 messages or of some 3,000 of the shared logs' (2.5 K characters on average). A
backfill cycles through it, least recently used conversation first, and its peak memory grows by this
much at most."""
CONTEXT_BYTES_PER_CHAR = 2
"""Estimated memory of a parsed context per character of its stored JSON (the contents, a ``Message``
and a string header each): 1.62 measured with tracemalloc over 110 contexts of the benchmark's long
conversations (2.6 M characters, 7,222 messages), rounded up for contents that are not ASCII (the
store's JSON escapes them, so they are fewer characters than their escapes)."""
CONTEXT_BYTES_FIXED = 1024
"""What a cached context holds whatever its length (the ``ContextInput``, its dicts, the cache entry)."""


@dataclass(frozen=True, slots=True)
class _Cached:
    event_id: int
    turn: int
    seen: tuple[int, int]
    """Length and hash of the JSON text the context was parsed from."""
    context: ContextInput
    nbytes: int


class _ContextCache:
    """The newest parsed ``ctx_input`` of each conversation, least recently used conversation first out.

    Why this one: every ``ctx_input`` carries the conversation's whole history, and besides its own
    request it is read by the next request of its conversation, as that one's previous request (a
    ``peer``), so keeping the newest of each conversation spares the second parse of every context at
    little memory. The length and hash of the JSON text are compared on every hit: retention rewrites an
    event in place (``monitor.ingest.store.retention`` drops its messages), and another store in the
    same process reuses ids; hashing a string costs a third of a digest, and keeping the text would cost
    as much memory again as the parsed context."""

    def __init__(self, budget: int) -> None:
        self._items: OrderedDict[str, _Cached] = OrderedDict()
        self.budget = budget
        self.bytes = 0
        """The estimated bytes the cached contexts hold now."""

    def get(self, conv_id: str, turn: int, event_id: int, raw_json: str) -> ContextInput:
        seen = (len(raw_json), hash(raw_json))
        got = self._items.get(conv_id)
        if got is not None and got.event_id == event_id and got.seen == seen:
            self._items.move_to_end(conv_id)
            return got.context
        ctx = context_from_raw(json.loads(raw_json))
        if got is not None and turn < got.turn:
            return ctx  # an older context than the one kept: no later request reads it
        if got is not None:
            self.bytes -= got.nbytes
        size = CONTEXT_BYTES_FIXED + CONTEXT_BYTES_PER_CHAR * len(raw_json)
        self._items[conv_id] = _Cached(event_id, turn, seen, ctx, size)
        self._items.move_to_end(conv_id)
        self.bytes += size
        self.resize(self.budget)
        return ctx

    def resize(self, budget: int) -> None:
        """Hold at most ``budget`` estimated bytes from now on (the newest context always), letting the
        least recently used conversations go."""
        self.budget = budget
        while self.bytes > budget and len(self._items) > 1:
            _, old = self._items.popitem(last=False)
            self.bytes -= old.nbytes


_CONTEXTS = _ContextCache(CONTEXT_CACHE_BYTES)


def context_cache_budget(nbytes: int | None = None) -> int:
    """The parsed-context cache's budget in estimated bytes (:data:`CONTEXT_CACHE_BYTES` unless set);
    with ``nbytes``, set it first, letting the least recently used contexts go down to it. A check process
    of ``monitor.worker.pool`` keeps its share: it is handed one conversation in N."""
    if nbytes is not None:
        _CONTEXTS.resize(nbytes)
    return _CONTEXTS.budget


def cached_context(conv_id: str, turn: int, event_id: int, raw_json: str) -> ContextInput:
    """:func:`context_from_raw` of the stored ``ctx_input`` event ``event_id`` (turn ``turn`` of
    ``conv_id``) whose JSON text is ``raw_json``, parsed again unless it is its conversation's newest
    context read so far in this process and still in a cache of :data:`CONTEXT_CACHE_BYTES` (estimated
    bytes). Contexts are shared between callers: treat them as read-only. Raises what ``json.loads`` and
    :func:`context_from_raw` raise."""
    return _CONTEXTS.get(conv_id, turn, event_id, raw_json)


def load_records(*, session: Session, record_ids: Sequence[int]) -> list[tuple[int, RewriteRecord]]:
    """The records with these ids that have a rewrite, as ``(record_id, RewriteRecord)`` by id.

    ``peers`` are the conversation's requests at the same turn and at the nearest earlier turn: what
    the cross-request checks compare with. Loading only those keeps the cost of a record independent of
    how long its conversation is (every ctx_input carries the whole history, so loading all of them
    would be quadratic in the conversation's length); the nearest earlier turn is found through the
    ``(conv_id, turn)`` index. Contexts come from :func:`cached_context`.
    """
    if not record_ids:
        return []
    ctx_ev = aliased(Event)
    rw_ev = aliased(Event)
    earlier = aliased(Record)
    earlier_turn = (
        select(func.max(earlier.turn))
        .where(earlier.conv_id == Record.conv_id, earlier.turn < Record.turn)
        .scalar_subquery()
        .label("earlier_turn")
    )
    rows = session.execute(
        select(Record.id, Record.conv_id, Record.turn, rw_ev.raw, Record.ctx_event_id, earlier_turn)
        .join(rw_ev, rw_ev.id == Record.rewrite_event_id)
        .outerjoin(ctx_ev, ctx_ev.id == Record.ctx_event_id)
        .where(Record.id.in_(record_ids))
        .order_by(Record.id)
    ).all()
    wanted = sorted({(r.conv_id, t) for r in rows for t in (r.turn, r.earlier_turn) if t is not None})
    at_turn: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for start in range(0, len(wanted), 500):
        for p in session.execute(
            select(Record.id, Record.conv_id, Record.request_id, Record.turn, Record.ts, Record.ctx_event_id)
            .where(tuple_(Record.conv_id, Record.turn).in_(wanted[start : start + 500]))
            .order_by(Record.id)
        ):
            at_turn[(p.conv_id, p.turn)].append(p)
    peers_of: dict[int, list[Any]] = {}
    for r in rows:
        turns = (r.earlier_turn, r.turn) if r.earlier_turn is not None else (r.turn,)
        peers_of[r.id] = [p for t in turns for p in at_turn[(r.conv_id, t)] if p.id != r.id]
    # ctx_input event id -> (conversation, turn) of its request
    needed = {r.ctx_event_id: (r.conv_id, r.turn) for r in rows if r.ctx_event_id is not None}
    for ps in peers_of.values():
        for p in ps:
            if p.ctx_event_id is not None:
                needed[p.ctx_event_id] = (p.conv_id, p.turn)
    contexts: dict[int, ContextInput] = {}
    # in turn order, so each conversation's newest context is the one the cache keeps
    ordered = sorted(needed, key=lambda eid: needed[eid][1])
    for start in range(0, len(ordered), 500):
        raws = dict(
            session.execute(
                select(Event.id, cast(Event.raw, Text)).where(Event.id.in_(ordered[start : start + 500]))
            ).all()
        )
        for eid in ordered[start : start + 500]:
            if eid in raws:
                contexts[eid] = cached_context(*needed[eid], eid, raws[eid])
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


class RecordHead(NamedTuple):
    """What the check job reads of a record it does not grade itself (a worker process reads the rest):
    its id, conversation and prompt version (the batch's profile, the process it goes to), and its
    request id (what the graded record must carry back)."""

    id: int
    conv_id: str
    prompt_version: str | None
    request_id: str


def newest_record_id(*, session: Session) -> int | None:
    """The highest record id in the store (None when it holds none)."""
    return session.scalar(select(func.max(Record.id)))


def load_heads(*, session: Session, record_ids: Sequence[int]) -> list[RecordHead]:
    """:class:`RecordHead` of the records with these ids that have a rewrite (those :func:`load_records`
    returns), by id; no event is read."""
    if not record_ids:
        return []
    rows = session.execute(
        select(Record.id, Record.conv_id, Record.prompt_version, Record.request_id)
        .where(Record.id.in_(record_ids), Record.rewrite_event_id.is_not(None))
        .order_by(Record.id)
    )
    return [RecordHead(*row) for row in rows]


class LoadedShape(NamedTuple):
    """What :func:`changed_shapes` compares of a record as :func:`load_records` read it: its conversation
    and turn, the nearest earlier turn it was given (``None``: none), for that turn and its own how many
    requests there were and how many of them had their ctx_input (``(turn, requests, with ctx_input)``,
    by turn), and whether the record had its own ctx_input. A few dozen bytes, where the record holds its
    conversation's history."""

    conv_id: str
    turn: int
    earlier: int | None
    counts: tuple[tuple[int, int, int], ...]
    own_ctx: bool


def loaded_shape(record: RewriteRecord) -> LoadedShape:
    """``record``'s :class:`LoadedShape` (``record`` as :func:`load_records` returned it)."""
    counts: dict[int, list[int]] = {record.turn: [1, int(record.context is not None)]}
    for p in record.peers:
        n = counts.setdefault(p.turn, [0, 0])
        n[0] += 1
        n[1] += p.context is not None
    return LoadedShape(
        record.conv_id,
        record.turn,
        max((t for t in counts if t < record.turn), default=None),
        tuple((t, n, c) for t, (n, c) in sorted(counts.items())),
        record.context is not None,
    )


def changed_since_loaded(*, session: Session, loaded: Sequence[tuple[int, RewriteRecord]]) -> set[int]:
    """The ids of ``loaded`` records (:func:`load_records`' output, read earlier) whose conversation
    changed in the store since (:func:`changed_shapes` of their :func:`loaded_shape`). What the check job
    asks of the records its learning pass read before it claimed them: a half or a turn that another
    worker's ingest stored in between must be read again."""
    return changed_shapes(session=session, shapes=[(i, loaded_shape(r)) for i, r in loaded])


def changed_shapes(*, session: Session, shapes: Sequence[tuple[int, LoadedShape]]) -> set[int]:
    """The ids of ``shapes`` (record id, shape when read) whose record or conversation changed in the
    store since they were read: the record got its ctx_input, moved to another turn or is gone; or its
    own turn or the nearest earlier one holds another number of requests, or of requests with their
    ctx_input; or the nearest earlier turn is another. Two reads: the records, and their conversations'
    requests grouped by turn.

    What it cannot see, none of which changes a record's lemmas (they depend on the record's own
    ctx_input, query and latest message alone): one request leaving a turn as another with the same
    ctx_input state arrives (possible only when a request's halves name different turns), and a peer
    whose rewrite arrives, which changes that peer's time and, joined by turn, its request id. A record
    the check loop grades as kept (``KeptRecords.read``) can then compare with its peers as they were:
    only when an ingest stores such halves during the check job."""
    if not shapes:
        return set()
    ids = [i for i, _ in shapes]
    own: dict[int, tuple[int, bool]] = {}
    for start in range(0, len(ids), 500):
        for record_id, turn, has_ctx in session.execute(
            select(Record.id, Record.turn, Record.ctx_event_id.is_not(None)).where(
                Record.id.in_(ids[start : start + 500])
            )
        ):
            own[record_id] = (turn, bool(has_ctx))
    convs = sorted({shape.conv_id for _, shape in shapes})
    now: dict[tuple[str, int], tuple[int, int]] = {}
    for conv_id, turn, n, with_ctx in session.execute(
        select(Record.conv_id, Record.turn, func.count(), func.count(Record.ctx_event_id))
        .where(Record.conv_id.in_(convs))
        .group_by(Record.conv_id, Record.turn)
    ):
        now[(conv_id, turn)] = (int(n), int(with_ctx))
    turns_of: dict[str, list[int]] = defaultdict(list)
    for c, t in now:
        turns_of[c].append(t)
    stale = set()
    for record_id, shape in shapes:
        earlier = max((t for t in turns_of[shape.conv_id] if t < shape.turn), default=None)
        if (
            own.get(record_id) != (shape.turn, shape.own_ctx)
            or earlier != shape.earlier
            or any(now.get((shape.conv_id, t), (0, 0)) != (n, c) for t, n, c in shape.counts)
        ):
            stale.add(record_id)
    return stale


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
