"""Read positions of the worker's source files (``source_cursors``), as plain data.

A cursor is written inside the transaction that stores the events it covers (see
``monitor.ingest.tail``): callers flush, never commit here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.store.models import SourceCursor
from monitor.store.rows import to_row


@dataclass(frozen=True, slots=True)
class CursorRow:
    """How far one file has been read.

    ``file_id`` is ``"<device>:<inode>"``; ``head_sha`` is the sha256 (hex) of the file's first
    ``min(offset, HEAD_BYTES)`` bytes; ``offset`` is in bytes (decompressed bytes for ``.gz``) just
    after line ``line_no``, the last complete line read; ``size`` is the file's size on disk when it
    was read; ``completed`` marks a ``.gz`` file read to its end.
    """

    path: str
    file_id: str
    head_sha: str | None
    offset: int
    line_no: int
    size: int
    completed: bool
    updated_at: datetime


def _row(c: SourceCursor) -> CursorRow:
    return to_row(CursorRow, c)


def get_cursor(*, session: Session, path: str) -> CursorRow | None:
    """The cursor of ``path``, or ``None`` when the file was never read by the worker."""
    c = session.get(SourceCursor, path, populate_existing=True)
    return _row(c) if c is not None else None


def find_by_file_id(*, session: Session, file_id: str) -> list[CursorRow]:
    """Cursors recorded for the file with this identity (a file renamed by rotation keeps its
    identity, so its old cursor is found under its old path), by path."""
    stmt = select(SourceCursor).where(SourceCursor.file_id == file_id).order_by(SourceCursor.path)
    return [_row(c) for c in session.scalars(stmt)]


def save_cursor(*, session: Session, cursor: CursorRow) -> None:
    """Insert or update the cursor of ``cursor.path``; flushes, the caller commits."""
    row = session.get(SourceCursor, cursor.path)
    if row is None:
        row = SourceCursor(path=cursor.path)
        session.add(row)
    row.file_id = cursor.file_id
    row.head_sha = cursor.head_sha
    row.offset = cursor.offset
    row.line_no = cursor.line_no
    row.size = cursor.size
    row.completed = cursor.completed
    row.updated_at = cursor.updated_at
    session.flush()


def list_cursors(*, session: Session) -> list[CursorRow]:
    """Every cursor, by path."""
    return [_row(c) for c in session.scalars(select(SourceCursor).order_by(SourceCursor.path))]


__all__ = ["CursorRow", "find_by_file_id", "get_cursor", "list_cursors", "save_cursor"]
