"""Traces in the store: a trace's spans read back once its root span is stored, mapped to log format v1
events (``monitor.otel.mapping.map_trace``), and spans redacted under ``redact_at_ingest``.

The ingest batch (``monitor.ingest.store.batches``) stores every span as a ``span`` event, then calls
:func:`map_new_traces` inside the same transaction: the mapped events are stored and joined in it too,
so a crash leaves either the spans and their events or neither, and the read cursor moves with them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from monitor.ingest.events import LineError, ParsedEvent, canonical_sha, parse_mapped
from monitor.otel.mapping import (
    DEFAULT_RULES,
    SKIP_REASONS,
    STEP_ATTRIBUTE,
    MappingRules,
    TraceError,
    map_trace,
)
from monitor.otel.shapes import span_history
from monitor.otel.spans import SPAN, is_root
from monitor.store.engine import rowcount
from monitor.store.models import Event, Quarantine

if TYPE_CHECKING:
    from monitor.privacy import NameFinder

TRACE_REASONS = frozenset({"no_rewrite_span", "ambiguous_rewrite_span", "content_not_captured"})
"""Quarantine reasons of a whole trace; the detail names the trace id (as does a ``duplicate_event`` of a
trace whose request id another trace holds)."""

P = TypeVar("P")
"""The ingest batch's pending line (``batches._Pending``): carried through to say where an event came
from."""


@dataclass(frozen=True, slots=True)
class TraceOutcome(Generic[P]):
    """:func:`map_new_traces`'s result: ``mapped`` (pending line, event), ``failed`` (pending line,
    error), ``completed`` trace ids and ``skipped`` (trace id, reason of
    :data:`monitor.otel.mapping.SKIP_REASONS`)."""

    mapped: list[tuple[P, ParsedEvent]]
    failed: list[tuple[P, LineError]]
    completed: list[str]
    skipped: list[tuple[str, str]]


def map_new_traces(
    session: Session,
    stored: Sequence[tuple[P, ParsedEvent]],
    inserted: Mapping[int, tuple[int, ParsedEvent]],
    rules: MappingRules = DEFAULT_RULES,
) -> TraceOutcome[P]:
    """What the spans just ``inserted`` make of their traces (:class:`TraceOutcome`): the events mapped
    from each trace whose root span is stored (each with the pending line of that root, or of the span
    that completed the trace), the traces whose root arrived now and that cannot be mapped (with their
    error), the ids of traces mapped now after an earlier failure (their quarantine rows are to be
    resolved), and the ids of traces whose root arrived now that hold no rewrite (a first turn, an answer
    call: counted, not quarantined; a later span that brings the rewrite still maps the trace).

    ``stored``: the batch's (pending line, event) pairs it tried to insert; ``inserted``: what was
    actually inserted (event id -> (line, event)). A trace's other spans are read from the store (they
    may have come in an earlier batch, line or file). A trace is mapped once: events already stored for
    it are not written again, so a span that arrives after a mapped trace changes nothing, and one that
    completes a trace quarantined at its root (its rewrite span came last, across a rotation) maps it
    then. A mapped event that does not validate as log format v1 (an over-long id, say) is reported with
    the validation error.
    """
    new_keys = {ev.event_key for _line, ev in inserted.values() if ev.kind == SPAN}
    roots: dict[str, P] = {}
    touched: dict[str, P] = {}
    new_spans = [(p, ev) for p, ev in stored if ev.kind == SPAN and ev.event_key in new_keys]
    for pending, ev in new_spans:
        touched.setdefault(ev.raw["trace_id"], pending)
    mapped: list[tuple[P, ParsedEvent]] = []
    failed: list[tuple[P, LineError]] = []
    completed: list[str] = []
    skipped: list[tuple[str, str]] = []
    if not touched:
        return TraceOutcome(mapped, failed, completed, skipped)
    spans: dict[str, list[dict[str, Any]]] = {}
    rows = session.execute(
        select(Event.request_id, Event.raw).where(Event.kind == SPAN, Event.request_id.in_(list(touched)))
    )
    for trace_id, raw in rows:
        spans.setdefault(trace_id, []).append(raw)
    for pending, ev in new_spans:
        trace_id = ev.raw["trace_id"]
        if is_root(ev.raw, {s["span_id"] for s in spans.get(trace_id, [])}):
            roots.setdefault(trace_id, pending)
    for trace_id, pending in touched.items():
        got_spans = spans.get(trace_id, [])
        ids = {s["span_id"] for s in got_spans}
        if not any(is_root(s, ids) for s in got_spans):
            continue  # the root has not arrived: the trace may still grow
        try:
            got = map_trace(got_spans, rules)
        except TraceError as exc:
            if trace_id in roots:  # reported once, at its root's line; a later span may still complete it
                if exc.reason in SKIP_REASONS:
                    skipped.append((trace_id, exc.reason))
                else:
                    failed.append((roots[trace_id], LineError(exc.reason, exc.detail)))
            continue
        events: list[ParsedEvent] = []
        for raw in (got.ctx_input, got.rewrite, got.retrieve):
            if raw is None:
                continue
            parsed = parse_mapped(raw)
            if isinstance(parsed, LineError):
                failed.append(
                    (
                        roots.get(trace_id, pending),
                        dataclasses.replace(parsed, detail=f"trace {trace_id}: {parsed.detail}"),
                    )
                )
                events = []
                break
            events.append(parsed)
        known = {
            key: (raw, origin, line)
            for key, raw, origin, line in session.execute(
                select(Event.event_key, Event.raw, Event.origin, Event.line_no).where(
                    Event.event_key.in_([e.event_key for e in events])
                )
            )
        }
        other = next(
            (
                (e, known[e.event_key])
                for e in events
                if e.event_key in known
                and (known[e.event_key][0].get("otel") or {}).get("trace_id") != trace_id
            ),
            None,
        )
        if other is not None:
            # the same request id from another trace (a retry that reused it, say): refused, as a second
            # line with a stored event's key is
            e, (_raw, origin, line) = other
            detail = (
                f"trace {trace_id}: {e.kind} {e.data.request_id!r} is already stored from another trace "
                f"({origin}:{line})"
            )
            failed.append((roots.get(trace_id, pending), LineError("duplicate_event", detail)))
            continue
        fresh = [e for e in events if e.event_key not in known]
        if not fresh:
            continue  # mapped before: a late span changes nothing
        mapped.extend((roots.get(trace_id, pending), e) for e in fresh)
        if trace_id not in roots:
            completed.append(trace_id)
    return TraceOutcome(mapped, failed, completed, skipped)


def resolve_completed(*, session: Session, trace_ids: Sequence[str], now: datetime) -> int:
    """Resolve (``stored``) the open quarantine rows of traces that a later span completed and that are
    now mapped; returns how many. A trace's row names it first in its detail (``trace <id>: ...``)."""
    done = 0
    for trace_id in trace_ids:
        done += rowcount(
            session.execute(
                update(Quarantine)
                .where(
                    Quarantine.resolved_at.is_(None),
                    Quarantine.reason.in_(sorted(TRACE_REASONS)),
                    Quarantine.detail.startswith(f"trace {trace_id}:"),
                )
                .values(resolved_at=now, resolution="stored")
            )
        )
    return done


ID_ATTRIBUTES = frozenset(
    {
        STEP_ATTRIBUTE,
        "rewrite_monitor.request_id",
        "rewrite_monitor.conv_id",
        "rewrite_monitor.turn",
        "rewrite_monitor.client_turn_count",
        "rewrite_monitor.digest",
        "rewrite_monitor.prompt_version",
        "gen_ai.conversation.id",
        "session.id",
        "gen_ai.operation.name",
        "gen_ai.request.model",
        "gen_ai.response.model",
        "llm.model_name",
        "llm.prompt_template.version",
        "openinference.span.kind",
    }
)
"""Span attributes that name things rather than hold text: never redacted (an id redacted to a
placeholder would split a conversation)."""


def redacted_span(ev: ParsedEvent, key: bytes, finder: NameFinder | None) -> ParsedEvent:
    """``ev`` (a ``span`` event) with its free-text attributes redacted as ``redact_at_ingest`` redacts
    an event (``monitor.privacy.redact_event``; ids and the span's own fields kept). A
    ``rewrite_monitor.digest`` that matched the span's message history is replaced by the digest of the
    redacted history, so the digest check judges the stored transcript as it would the logged one."""
    from monitor.instrument import digest
    from monitor.privacy import redact_event

    attrs = ev.raw["attributes"]
    text = {k: v for k, v in attrs.items() if k not in ID_ATTRIBUTES}
    red = {**attrs, **redact_event(text, key, finder)}
    logged = attrs.get("rewrite_monitor.digest")
    if isinstance(logged, str):
        before, after = span_history(attrs), span_history(red)
        if before is not None and after is not None and digest(before) == logged:
            red["rewrite_monitor.digest"] = digest(after)
    raw = {**ev.raw, "attributes": red}
    return dataclasses.replace(ev, raw=raw, content_sha=canonical_sha(raw))
