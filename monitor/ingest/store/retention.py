"""Retention: transcripts older than ``retention_days`` leave the store; what they told us stays.

What is removed (chosen so every stored finding, rate, queue item and verdict keeps its meaning):

- the ``messages`` list of each old ``ctx_input`` event (the transcript the rewriter received). The
  event keeps its signals (``n_messages``, ``roles``, ``digest``, timestamps, counts), so the chat
  state stays auditable; a later re-check finds no message list and records the transcript checks as
  skipped, never as passed. The event's ``raw`` gets ``"retention": {"messages_removed_at": ...}``.
- the text attributes of each old ``span`` event (``monitor.otel.spans``: a trace's messages, prompt
  variables, retrieved passages; counted with the transcripts), of any trace: the ``ctx_input`` and
  ``rewrite`` mapped from it hold what a review needs. Ids stay, so a re-ingest stores nothing twice.
- the ``raw_excerpt`` of ``quarantine`` rows created before the cutoff (the first 2,000 characters
  of a rejected line can hold a transcript); reason, detail and line number stay.
- whatever quarantine details stored by older versions quoted from the rejected line (a wrong-typed
  value, a free-text ``message``), of rows of any age: such a detail is rewritten to name the field
  only (``monitor.ingest.store.quarantine.scrub_detail``). Current details never quote a line.

What is kept: the rewrite events (the query is the artifact under audit, a few words long), and
every transcript of a record attached to a queue item, a verdict or a regression case, however old:
a reviewer or an eval case still needs it. "Old" is by the event's time (``ts``), or by when it was
ingested when it has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select, union, update
from sqlalchemy.orm import Session

from monitor.ingest.store.quarantine import scrub_stored_details
from monitor.store.engine import rowcount
from monitor.store.models import Event, Quarantine, QueueItem, Record, RegressionCase, Verdict

REMOVED_EXCERPT = "[removed by retention]"


@dataclass(frozen=True, slots=True)
class RetentionResult:
    """Transcripts removed, transcripts kept because something refers to them, quarantine excerpts
    removed, old quarantine details scrubbed of quoted values (counts of rows), and the cutoff
    applied (naive UTC)."""

    transcripts_removed: int
    transcripts_kept_referenced: int
    excerpts_removed: int
    cutoff: datetime
    details_scrubbed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "transcripts_removed": self.transcripts_removed,
            "transcripts_kept_referenced": self.transcripts_kept_referenced,
            "excerpts_removed": self.excerpts_removed,
            "details_scrubbed": self.details_scrubbed,
            "cutoff": self.cutoff.isoformat(),
        }


def _has_messages(session: Session) -> Any:
    if session.get_bind().dialect.name == "postgresql":
        # JSONB's key-exists operator (the column's comparator is the generic JSON one).
        return Event.raw.op("?")("messages")
    return func.json_type(Event.raw, "$.messages").is_not(None)


def _referenced_ctx_ids() -> Any:
    record_ids = union(
        select(QueueItem.record_id), select(Verdict.record_id), select(RegressionCase.record_id)
    ).subquery()
    return select(Record.ctx_event_id).where(
        Record.id.in_(select(record_ids.c[0])), Record.ctx_event_id.is_not(None)
    )


def apply_retention(
    *, session: Session, cutoff: datetime, now: datetime, batch_size: int = 500
) -> RetentionResult:
    """Remove transcripts of events older than ``cutoff`` (see the module doc); commits per batch.

    Idempotent: an event whose messages are gone is not touched again.
    """
    old = or_(Event.ts < cutoff, and_(Event.ts.is_(None), Event.ingested_at < cutoff))
    candidates = (Event.kind == "ctx_input", old, _has_messages(session))
    referenced = _referenced_ctx_ids()
    kept = session.scalar(select(func.count()).where(*candidates, Event.id.in_(referenced))) or 0
    removed = 0
    after = 0
    while True:
        rows = session.execute(
            select(Event.id, Event.raw)
            .where(*candidates, Event.id.not_in(referenced), Event.id > after)
            .order_by(Event.id)
            .limit(batch_size)
        ).all()
        if not rows:
            break
        for event_id, raw in rows:
            new_raw = {k: v for k, v in raw.items() if k != "messages"}
            new_raw["retention"] = {"messages_removed_at": now.isoformat()}
            session.execute(update(Event).where(Event.id == event_id).values(raw=new_raw))
        removed += len(rows)
        after = rows[-1][0]
        session.commit()
    removed += _strip_spans(session, old, now, batch_size)
    result = session.execute(
        update(Quarantine)
        .where(Quarantine.created_at < cutoff, Quarantine.raw_excerpt != REMOVED_EXCERPT)
        .values(raw_excerpt=REMOVED_EXCERPT)
    )
    session.commit()
    scrubbed = scrub_stored_details(session=session, batch_size=batch_size)
    return RetentionResult(removed, int(kept), rowcount(result), cutoff, scrubbed)


def _strip_spans(session: Session, old: Any, now: datetime, batch_size: int) -> int:
    """Remove the text attributes of the old ``span`` events (a trace's messages, prompt variables and
    retrieved passages), keeping the ids that tie a span to its trace and conversation
    (``monitor.ingest.store.traces.ID_ATTRIBUTES``) and its key, so a re-ingest stores nothing twice;
    returns how many spans lost text. Commits per batch."""
    from monitor.ingest.store.traces import ID_ATTRIBUTES

    stripped = 0
    after = 0
    while True:
        rows = session.execute(
            select(Event.id, Event.raw)
            .where(Event.kind == "span", old, Event.id > after)
            .order_by(Event.id)
            .limit(batch_size)
        ).all()
        if not rows:
            return stripped
        for event_id, raw in rows:
            attrs = raw.get("attributes") or {}
            kept = {k: v for k, v in attrs.items() if k in ID_ATTRIBUTES}
            if "retention" in raw or kept == attrs:
                continue
            new_raw = {**raw, "attributes": kept, "retention": {"text_removed_at": now.isoformat()}}
            session.execute(update(Event).where(Event.id == event_id).values(raw=new_raw))
            stripped += 1
        after = rows[-1][0]
        session.commit()


__all__ = ["REMOVED_EXCERPT", "RetentionResult", "apply_retention"]
