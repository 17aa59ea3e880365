"""What ``rewrite-monitor show`` finds for a request id: the request's stored view with its findings, or
why there is none (:class:`Miss`, which the command line words and maps to an exit code).

An id that holds personal data leaves the machine hashed (the outbound_ids setting): an alert names it
``pid_`` and 20 hex characters, and :func:`find_request` resolves it to the request it stands for in
this store, as it resolves a hashed conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from monitor.privacy import HASHED_ID_RE

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from monitor.checks.store import FindingRow
    from monitor.ingest.store.records import RecordView


@dataclass(frozen=True, slots=True)
class Miss:
    """Why ``show`` has nothing to show. ``reason``: ``not_hashed`` (``request_id`` starts as a hashed
    id does but is not one), ``no_key`` (this store has no key for hashed ids, so ``hashed`` came from
    another), ``no_hash`` (no id of this store hashes to ``hashed``), ``ambiguous`` (``hashed`` stands
    for several requests: ``found``, ``(conv_id, request_id)``), ``unknown`` (no request ``request_id``,
    in conversation ``conv`` when given)."""

    reason: Literal["not_hashed", "no_key", "no_hash", "ambiguous", "unknown"]
    request_id: str = ""
    conv: str | None = None
    hashed: str = ""
    found: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Found:
    """The request ``show`` shows: its stored artifacts and its findings of the current checks."""

    view: RecordView
    findings: list[FindingRow]


def find_request(*, session: Session, request_id: str, conv: str | None = None) -> Found | Miss:
    """The request ``request_id`` (in conversation ``conv``), either of them possibly a hashed ``pid_``
    id, with its findings of the current check versions; a :class:`Miss` when there is none to show.
    Raises ``AmbiguousRequestError`` when a plain request id names several conversations and ``conv``
    is not given (``monitor.ingest.store.records.get_record_view``)."""
    from monitor.checks import current_versions
    from monitor.checks.store import list_findings
    from monitor.ingest.store.records import get_record_view

    if conv is not None and HASHED_ID_RE.match(conv.strip().lower()):
        hashed_conv = _unhash_conv(session, conv.strip().lower())
        if isinstance(hashed_conv, Miss):
            return hashed_conv
        conv = hashed_conv
    view = get_record_view(session=session, request_id=request_id, conv_id=conv)
    looks_hashed = request_id.strip().lower().startswith("pid_")
    if view is None and looks_hashed:
        hashed = request_id.strip().lower()
        if not HASHED_ID_RE.match(hashed):
            return Miss("not_hashed", request_id=request_id, conv=conv)
        unhashed = _unhash(session, hashed, conv)
        if isinstance(unhashed, Miss):
            return unhashed
        request_id, conv = unhashed
        view = get_record_view(session=session, request_id=request_id, conv_id=conv)
    if view is None:
        return Miss("unknown", request_id=request_id, conv=conv)
    found = list_findings(
        session=session, checks=current_versions(), request_id=request_id, conv_id=view.conv_id
    )
    return Found(view, found)


def _unhash(session: Session, hashed: str, conv: str | None) -> tuple[str, str | None] | Miss:
    """The (request id, conversation) a ``pid_...`` id stands for in this store; a :class:`Miss` when it
    stands for none or for several requests."""
    from monitor.store.keys import resolve_hashed_id

    found = [(c, r) for c, r in resolve_hashed_id(session=session, hashed=hashed) if conv in (None, c)]
    if not found:
        return _no_such_hash(session, hashed)
    if len({r for _c, r in found}) == 1 and len({c for c, _r in found}) == 1:
        return found[0][1], found[0][0]
    return Miss("ambiguous", hashed=hashed, found=found)


def _unhash_conv(session: Session, hashed: str) -> str | Miss:
    """The conversation a ``pid_...`` passed as the conversation stands for; a :class:`Miss` when none."""
    from monitor.privacy import hashed_id
    from monitor.store.keys import resolve_hashed_id, store_key

    key = store_key(session=session)
    convs = {c for c, _r in resolve_hashed_id(session=session, hashed=hashed) if hashed_id(c, key) == hashed}
    if not convs:
        return _no_such_hash(session, hashed)
    return convs.pop()


def _no_such_hash(session: Session, hashed: str) -> Miss:
    """No id of this store hashes to ``hashed``, or the store has no key for hashed ids."""
    from monitor.store.keys import has_key

    return Miss("no_key" if not has_key(session=session) else "no_hash", hashed=hashed)
