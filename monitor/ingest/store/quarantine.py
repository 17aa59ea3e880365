"""Rejected log lines, as plain data for the CLI, and the scrubbing of details stored by old versions.

Details name the line's problem, never its content (``monitor.ingest.events``). Versions before that
quoted up to 60 characters of a wrong-typed value (``(got {"text": "My SSN is ..."})``), an unknown
event name taken from a free-text ``message``, and raw keys in field paths; :func:`scrub_detail`
rewrites such a detail and :func:`scrub_stored_details` (run by retention) stores the rewrite.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session

from monitor.ingest.events import NAME_RE, field_path
from monitor.store.engine import rowcount
from monitor.store.models import Quarantine
from monitor.text import visible


@dataclass(frozen=True, slots=True)
class QuarantineRow:
    """One rejected line: where it was, why, (only when asked for) the start of its text, and its
    resolution (``None`` while open; ``stored`` or ``dismissed``, see :class:`Quarantine`)."""

    origin: str
    line_no: int
    reason: str
    detail: str
    excerpt: str | None
    created_at: datetime
    resolution: str | None = None


STDIN_ORIGIN = "-"
"""The origin of lines read from standard input: every run numbers its lines from 1 again, so a line
number there says nothing about which line it was."""


def resolve_stored(
    *, session: Session, origin: str, lines: Collection[int], text_of: Callable[[int], str], now: datetime
) -> int:
    """Resolve (``stored``) the open quarantine rows of the ``lines`` of ``origin`` a batch has just
    stored; ``text_of(line_no)`` is a stored line's text as a quarantine excerpt keeps it, asked only for
    the rows that need comparing. Returns how many. Flushes, does not commit.

    A row of a file's line is resolved when that line number now holds a stored event: the file was
    fixed and ingested again, or a truncated last line was found complete. On standard input (or for
    a truncated line anywhere) the stored line must also start with the rejected line's excerpt, as a
    completed truncated line does: numbers alone would pair unrelated lines of two runs."""
    if not lines:
        return 0
    rows = session.execute(
        select(Quarantine.id, Quarantine.line_no, Quarantine.reason, Quarantine.raw_excerpt).where(
            Quarantine.origin == origin,
            Quarantine.resolved_at.is_(None),
            Quarantine.line_no.in_(sorted(lines)),
        )
    ).all()
    ids = [
        r.id
        for r in rows
        if (origin != STDIN_ORIGIN and r.reason != "truncated_line")
        or text_of(r.line_no).startswith(r.raw_excerpt)
    ]
    if ids:
        session.execute(
            update(Quarantine).where(Quarantine.id.in_(ids)).values(resolved_at=now, resolution="stored")
        )
    return len(ids)


def resolve(
    *,
    session: Session,
    now: datetime,
    reason: str | None = None,
    origin: str | None = None,
    line_no: int | None = None,
) -> int:
    """Mark the open rows matching every given filter ``dismissed`` (what an operator has looked at and
    will not fix); returns how many. With no filter, every open row. Flushes, does not commit."""
    stmt = update(Quarantine).where(Quarantine.resolved_at.is_(None))
    if reason is not None:
        stmt = stmt.where(Quarantine.reason == reason)
    if origin is not None:
        stmt = stmt.where(Quarantine.origin == origin)
    if line_no is not None:
        stmt = stmt.where(Quarantine.line_no == line_no)
    return rowcount(session.execute(stmt.values(resolved_at=now, resolution="dismissed")))


def clear_resolved(*, session: Session, before: datetime | None = None) -> int:
    """Delete resolved rows (resolved before ``before`` when given); returns how many. Open rows are
    never deleted here. Flushes, does not commit."""
    stmt = delete(Quarantine).where(Quarantine.resolved_at.is_not(None))
    if before is not None:
        stmt = stmt.where(Quarantine.resolved_at < before)
    return rowcount(session.execute(stmt))


def list_quarantine(
    *,
    session: Session,
    reason: str | None = None,
    origin: str | None = None,
    limit: int = 50,
    with_excerpt: bool = False,
    include_resolved: bool = False,
) -> tuple[list[QuarantineRow], dict[str, int]]:
    """Open rejected lines (newest first, at most ``limit``; resolved ones too with ``include_resolved``)
    and the count of every reason among the open rows.

    The excerpt is the raw line's start, which may hold personal data: returned only with
    ``with_excerpt``. Detail and excerpt come with control characters escaped
    (:func:`monitor.text.visible`), as they are printed as they are, also as JSON: a raw ESC byte in
    a rejected line must not reach the terminal. A detail stored before details stopped quoting
    values is returned scrubbed (:func:`scrub_detail`).
    """
    stmt = select(Quarantine).order_by(Quarantine.created_at.desc(), Quarantine.origin, Quarantine.line_no)
    if reason is not None:
        stmt = stmt.where(Quarantine.reason == reason)
    if origin is not None:
        stmt = stmt.where(Quarantine.origin == origin)
    if not include_resolved:
        stmt = stmt.where(Quarantine.resolved_at.is_(None))
    rows = [
        QuarantineRow(
            visible(q.origin),
            q.line_no,
            q.reason,
            visible(scrub_detail(q.reason, q.detail)),
            visible(q.raw_excerpt) if with_excerpt else None,
            q.created_at,
            q.resolution,
        )
        for q in session.scalars(stmt.limit(limit))
    ]
    stmt_counts = (
        select(Quarantine.reason, func.count())
        .where(Quarantine.resolved_at.is_(None))
        .group_by(Quarantine.reason)
    )
    counts = {r: n for r, n in session.execute(stmt_counts)}
    return rows, {k: counts[k] for k in sorted(counts)}


# What old details looked like: `field 'turn': <message> (got <value, cut at 60>)` parts joined by
# "; "; `unknown event name (message='<value>'); known: ...`; `field '<path with raw keys>' holds ...`.
# A field path of a type error is made of model field names and list indices only.
_REMOVED = "wrong type (value removed)"
_OLD_PART_RE = re.compile(r"field '([A-Za-z0-9_.]+)'( is required|:)")
_OLD_MORE_RE = re.compile(r" \(\+\d+ more\)$")
_QUOTED_NAME_RE = re.compile(r"""\b(event|message|msg)=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")
_HOLDS_RE = re.compile(r"field '(.*)' (holds (?:a NUL character|a lone surrogate) .*)", re.DOTALL)


def _unquoted_name(match: re.Match[str]) -> str:
    key, quoted = match.group(1), match.group(2)
    try:
        name = ast.literal_eval(quoted)
    except (ValueError, SyntaxError):
        name = None
    if isinstance(name, str) and NAME_RE.fullmatch(name):
        return match.group()
    return f"{key}: a text, not shown"


def scrub_detail(reason: str, detail: str) -> str:
    """``detail`` without the value text an older version quoted; a current detail is returned as is.

    A type error keeps its field names (``field 'query': wrong type (value removed)``), an unknown
    event keeps the names that look like event names, a field path keeps its name-like keys (others
    become ``*``).
    """
    if reason in ("wrong_type", "missing_field") and "(got " in detail:
        parts = [
            f"field '{loc}' is required" if how == " is required" else f"field '{loc}': {_REMOVED}"
            for loc, how in _OLD_PART_RE.findall(detail)
        ]
        more = _OLD_MORE_RE.search(detail)
        return ("; ".join(parts) or _REMOVED) + (more.group() if more else "")
    if reason == "unknown_event":
        return _QUOTED_NAME_RE.sub(_unquoted_name, detail)
    if reason == "unsupported_text":
        found = _HOLDS_RE.fullmatch(detail)
        if found is not None and found.group(1) != "(value)":
            parts = found.group(1).split(".")
            labels = [p if p.isdigit() else field_path([p]) for p in parts]
            if labels != parts:
                # A raw key may itself hold dots ("jane.doe@corp.com"): its name-like fragments would
                # still tell, so everything below the top-level field becomes one `*`.
                labels = labels[:1] + ["*"] if len(labels) > 1 else labels
            return f"field '{'.'.join(labels)}' {found.group(2)}"
    return detail


def scrub_stored_details(*, session: Session, batch_size: int = 500) -> int:
    """Rewrite every stored detail that quotes the rejected line (see :func:`scrub_detail`); commits
    per batch and returns how many rows changed. Idempotent: a scrubbed detail is left alone."""
    suspects = or_(
        Quarantine.reason.in_(("wrong_type", "missing_field")) & Quarantine.detail.contains("(got "),
        (Quarantine.reason == "unknown_event") & Quarantine.detail.contains("="),
        Quarantine.reason == "unsupported_text",
    )
    changed = 0
    after = 0
    while True:
        rows = session.execute(
            select(Quarantine.id, Quarantine.reason, Quarantine.detail)
            .where(suspects, Quarantine.id > after)
            .order_by(Quarantine.id)
            .limit(batch_size)
        ).all()
        if not rows:
            return changed
        for row_id, reason, detail in rows:
            clean = scrub_detail(reason, detail)
            if clean != detail:
                session.execute(update(Quarantine).where(Quarantine.id == row_id).values(detail=clean))
                changed += 1
        after = rows[-1][0]
        session.commit()
