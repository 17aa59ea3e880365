"""Keys the store generates for itself (the ``store_keys`` table, migration 0013), and the lookup of a
hashed id back to the records it names.

Migration 0013 makes the ``outbound_ids`` key when it creates the table, so using it only reads; a key
missing all the same (a row deleted by hand) is made again on first use, in a savepoint, and a process
that loses that race reads the winner's row. Nothing here changes a key that exists: every hash made
with it stays valid for the life of the store.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from monitor.privacy import HASHED_ID_RE, hashed_id, outbound_id
from monitor.store.models import Record, StoreKey

OUTBOUND_IDS_KEY = "outbound_ids"
"""The name of the HMAC key of :func:`monitor.privacy.outbound_id`."""


def store_key(*, session: Session, name: str = OUTBOUND_IDS_KEY) -> bytes:
    """The key ``name`` of this store (32 random bytes as 64 hex characters, made by migration 0013 with
    :func:`secrets.token_hex`, or here when missing), as bytes. A key made here is flushed; the caller
    commits."""
    got = session.get(StoreKey, name)
    if got is None:
        try:
            with session.begin_nested():
                session.add(StoreKey(name=name, value=secrets.token_hex(32)))
        except IntegrityError:
            pass  # another process made it first: read theirs
        got = session.execute(select(StoreKey).where(StoreKey.name == name)).scalar_one()
    return got.value.encode()


def outbound_ids(*, session: Session, mode: str) -> Callable[[str], str]:
    """The function giving each id the form it leaves the machine in under ``mode`` (the ``outbound_ids``
    setting: :func:`monitor.privacy.outbound_id` under this store's key); under ``raw`` the identity,
    and the key is not read. Raises ``ValueError`` for an unknown mode."""
    if mode == "raw":
        return str
    key = store_key(session=session)
    outbound_id("", key, mode)  # an unknown mode fails here, not at the first id
    return lambda value: outbound_id(value, key, mode)


def has_key(*, session: Session, name: str = OUTBOUND_IDS_KEY) -> bool:
    """Whether this store holds the key ``name``."""
    return session.get(StoreKey, name) is not None


def resolve_hashed_id(*, session: Session, hashed: str) -> list[tuple[str, str]]:
    """The ``(conv_id, request_id)`` of every record whose request id or conversation id hashes to
    ``hashed`` (:func:`monitor.privacy.hashed_id` under this store's key), in record order; empty when
    none does or the store has no key. Reads every record's two ids once: a lookup an engineer runs by
    hand, not a query for a loop. Raises ``ValueError`` when ``hashed`` is not of the ``pid_`` form."""
    if not HASHED_ID_RE.match(hashed):
        raise ValueError(f"{hashed!r} is not a hashed id: pid_ and 20 hex characters (0-9, a-f)")
    row = session.get(StoreKey, OUTBOUND_IDS_KEY)
    if row is None:
        return []
    key = row.value.encode()
    found: list[tuple[str, str]] = []
    seen: dict[str, bool] = {}

    def hit(value: str) -> bool:
        got = seen.get(value)
        if got is None:
            got = seen[value] = hashed_id(value, key) == hashed
        return got

    rows = session.execute(select(Record.conv_id, Record.request_id).order_by(Record.id))
    for conv_id, request_id in rows:
        if hit(request_id) or hit(conv_id):
            found.append((conv_id, request_id))
    return found
