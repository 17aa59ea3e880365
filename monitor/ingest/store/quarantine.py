"""Rejected log lines, as plain data for the CLI, and the scrubbing of details stored by old versions.

Details name the line's problem, never its content (``monitor.ingest.events``). Versions before that
quoted up to 60 characters of a wrong-typed value (``(got {"text": "My SSN is ..."})``), an unknown
event name taken from a free-text ``message``, and raw keys in field paths; :func:`scrub_detail`
rewrites such a detail and :func:`scrub_stored_details` (run by retention) stores the rewrite.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from monitor.ingest.events import NAME_RE, field_path
from monitor.store.models import Quarantine
from monitor.text import visible


@dataclass(frozen=True, slots=True)
class QuarantineRow:
    """One rejected line: where it was, why, and (only when asked for) the start of its text."""

    origin: str
    line_no: int
    reason: str
    detail: str
    excerpt: str | None
    created_at: datetime


def list_quarantine(
    *,
    session: Session,
    reason: str | None = None,
    origin: str | None = None,
    limit: int = 50,
    with_excerpt: bool = False,
) -> tuple[list[QuarantineRow], dict[str, int]]:
    """Rejected lines (newest first, at most ``limit``) and the count of every reason in the store.

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
    rows = [
        QuarantineRow(
            visible(q.origin),
            q.line_no,
            q.reason,
            visible(scrub_detail(q.reason, q.detail)),
            visible(q.raw_excerpt) if with_excerpt else None,
            q.created_at,
        )
        for q in session.scalars(stmt.limit(limit))
    ]
    stmt_counts = select(Quarantine.reason, func.count()).group_by(Quarantine.reason)
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
