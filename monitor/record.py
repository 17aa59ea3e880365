"""The joined record that every check reads: one rewrite plus what the rewriter received.

These are plain frozen dataclasses with no database or I/O dependency, so ``monitor.checks`` can
import them without pulling in SQLAlchemy. The store builds them from the stored events
(``monitor.ingest.store.records.load_records``); tests build them by hand.

Shapes follow log format v1 (``schemas/*.schema.json``); timestamps are timezone-aware UTC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from monitor.instrument import digest


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the transcript the rewriter received.

    ``role`` is ``"user"`` or ``"assistant"`` (other roles, e.g. ``"system"``, are kept as logged).
    """

    role: str
    content: str
    ts: datetime | None = None


@dataclass(frozen=True, slots=True)
class Resolution:
    """One entry of the rewrite's ``resolved`` array: ``surface`` in the latest turn -> ``antecedent``."""

    surface: str
    antecedent: str
    turn: int | None = None


@dataclass(frozen=True, slots=True)
class ContextInput:
    """What the rewriter received, from the ``ctx_input`` event.

    ``messages`` is ``None`` when the producer did not log the message list (signals only);
    ``client_turn_count`` is ``None`` when the client sent no rendered-turn header.
    ``context_extra`` keeps the ctx_input event's unknown fields (e.g. ``transcript_kind``).
    """

    request_id: str
    n_messages: int
    roles: dict[str, int]
    digest: str | None = None
    client_turn_count: int | None = None
    monotonic: bool | None = None
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    messages: tuple[Message, ...] | None = None
    ts: datetime | None = None
    context_extra: dict[str, Any] = field(default_factory=dict)

    def missing_messages(self) -> str:
        """Why ``messages`` is ``None``, for a reviewer: removed by retention (the marker
        ``monitor.ingest.store.retention`` writes into the event), or never logged by the producer."""
        marker = self.context_extra.get("retention")
        removed = marker.get("messages_removed_at") if isinstance(marker, dict) else None
        if removed:
            day = str(removed)[:10]
            return f"the message list was removed by retention on {day} (digest and counts kept)"
        return "the message list was not logged"


@dataclass(frozen=True, slots=True)
class Peer:
    """Another request of the same conversation, for cross-request checks (session mismatch).

    ``context`` is that request's ``ctx_input``; ``None`` when it was not logged.
    """

    request_id: str
    turn: int
    ts: datetime | None
    context: ContextInput | None


@dataclass(frozen=True, slots=True)
class RewriteRecord:
    """One rewrite joined to its ``ctx_input`` (``context``; ``None`` when none was logged).

    ``peers`` holds the conversation's other requests at the same turn and at the nearest earlier
    turn, ordered by turn (what the cross-request checks compare with), so those checks stay pure.
    ``extra`` keeps the rewrite event's unknown fields.
    """

    conv_id: str
    request_id: str
    turn: int
    latest: str
    query: str
    rewritten: bool
    resolved: tuple[Resolution, ...] = ()
    dropped: tuple[str, ...] = ()
    filters: dict[str, Any] | None = None
    model: str | None = None
    prompt_version: str | None = None
    ts: datetime | None = None
    context: ContextInput | None = None
    peers: tuple[Peer, ...] = field(default=())
    extra: dict[str, Any] = field(default_factory=dict)


def transcript_digest(messages: tuple[Message, ...] | list[Message]) -> str:
    """Digest of a message list as log format v1 defines it.

    Returns the first 12 hex characters of sha256 over the concatenation of ``f"{role}:{content}"``
    for each message, UTF-8 encoded (no separator between messages): :func:`monitor.instrument.digest`,
    the one definition, which producers use too.
    """
    return digest((m.role, m.content) for m in messages)
