"""Traces in the store: a trace's spans read back once its root span is stored, mapped to log format v1
events (``monitor.ingest.otlp.map_trace``), and spans redacted under ``redact_at_ingest``.

The ingest batch (``monitor.ingest.store.batches``) stores every span as a ``span`` event, then calls
:func:`map_new_traces` inside the same transaction: the mapped events are stored and joined in it too,
so a crash leaves either the spans and their events or neither, and the read cursor moves with them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.ingest import otlp
from monitor.ingest.events import LineError, ParsedEvent, canonical_sha, parse_mapped
from monitor.store.models import Event

if TYPE_CHECKING:
    from monitor.cases.redact import NameFinder

TRACE_REASONS = frozenset({"no_rewrite_span", "ambiguous_rewrite_span", "content_not_captured"})
"""Quarantine reasons of a whole trace; the detail names the trace id."""

P = TypeVar("P")
"""The ingest batch's pending line (``batches._Pending``): carried through to say where an event came
from."""


def map_new_traces(
    session: Session,
    stored: Sequence[tuple[P, ParsedEvent]],
    inserted: Mapping[int, tuple[int, ParsedEvent]],
    names: Sequence[str] = otlp.REWRITE_SPAN_NAMES,
) -> tuple[list[tuple[P, ParsedEvent]], list[tuple[P, LineError]]]:
    """The events mapped from each trace whose root span is among the spans just ``inserted``, each
    with the pending line of its root, and the traces that could not be mapped with their error.

    ``stored``: the batch's (pending line, event) pairs it tried to insert; ``inserted``: what was
    actually inserted (event id -> (line, event)). A trace's other spans are read from the store (they
    may have come in an earlier batch or line). A mapped event that does not validate as log format v1
    (an over-long id, say) is reported with the validation error.
    """
    new_keys = {ev.event_key for _line, ev in inserted.values() if ev.kind == otlp.SPAN}
    roots: dict[str, P] = {}
    for pending, ev in stored:
        if ev.kind == otlp.SPAN and ev.event_key in new_keys and not ev.raw.get("parent_span_id"):
            roots.setdefault(ev.raw["trace_id"], pending)
    mapped: list[tuple[P, ParsedEvent]] = []
    failed: list[tuple[P, LineError]] = []
    if not roots:
        return mapped, failed
    spans: dict[str, list[dict[str, Any]]] = {}
    rows = session.execute(
        select(Event.request_id, Event.raw).where(Event.kind == otlp.SPAN, Event.request_id.in_(list(roots)))
    )
    for trace_id, raw in rows:
        spans.setdefault(trace_id, []).append(raw)
    for trace_id, pending in roots.items():
        try:
            got = otlp.map_trace(spans.get(trace_id, []), names)
        except otlp.TraceError as exc:
            failed.append((pending, LineError(exc.reason, exc.detail)))
            continue
        for raw in (got.ctx_input, got.rewrite, got.retrieve):
            if raw is None:
                continue
            parsed = parse_mapped(raw)
            if isinstance(parsed, LineError):
                failed.append(
                    (pending, dataclasses.replace(parsed, detail=f"trace {trace_id}: {parsed.detail}"))
                )
            else:
                mapped.append((pending, parsed))
    return mapped, failed


ID_ATTRIBUTES = frozenset(
    {
        otlp.STEP_ATTRIBUTE,
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
    an event (``monitor.cases.redact.redact_event``; ids and the span's own fields kept). A
    ``rewrite_monitor.digest`` that matched the span's message history is replaced by the digest of the
    redacted history, so the digest check judges the stored transcript as it would the logged one."""
    from monitor.cases.redact import redact_event
    from monitor.instrument import digest

    attrs = ev.raw["attributes"]
    text = {k: v for k, v in attrs.items() if k not in ID_ATTRIBUTES}
    red = {**attrs, **redact_event(text, key, finder)}
    logged = attrs.get("rewrite_monitor.digest")
    if isinstance(logged, str):
        before, after = otlp.span_history(attrs), otlp.span_history(red)
        if before is not None and after is not None and digest(before) == logged:
            red["rewrite_monitor.digest"] = digest(after)
    raw = {**ev.raw, "attributes": red}
    return dataclasses.replace(ev, raw=raw, content_sha=canonical_sha(raw))
