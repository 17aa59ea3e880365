"""OTLP JSON traces decoded into spans (issue 17, part 1; moved here by issue 33).

One line of a Collector ``file`` exporter file is one ``TracesData`` in the OTLP JSON encoding (the
OpenTelemetry protocol specification, "JSON Protobuf Encoding": lowerCamelCase names, 64-bit integers as
decimal strings, hex trace and span ids, attribute values as ``AnyValue`` objects). :func:`spans_of` turns
it into one ``span`` event dict per span, which ingest stores whole, keyed by trace and span id
(:func:`span_key`), so a trace whose spans arrive over several lines or batches is assembled from the
store. Pure: no store, no network.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

SPAN = "span"
"""The event kind of one stored span."""
TRACES_KEY = "resourceSpans"
_HEX_RE = re.compile(r"^[0-9a-fA-F]+$")


def any_value(value: object) -> Any:
    """A Python value from an OTLP JSON ``AnyValue`` (``{"stringValue": ...}``, ``intValue`` as a decimal
    string or number, ``doubleValue``, ``boolValue``, ``arrayValue``, ``kvlistValue``, ``bytesValue`` as
    base64); an empty or unknown one is None."""
    if not isinstance(value, Mapping):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in value:
        v = value["doubleValue"]
        return float(v) if isinstance(v, int | float | str) and str(v) not in ("NaN", "Infinity") else None
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        try:
            return base64.b64decode(value["bytesValue"]).hex()
        except (ValueError, TypeError):
            return None
    return None


def attributes(kvs: object) -> dict[str, Any]:
    """``[{"key": k, "value": AnyValue}, ...]`` as a dict (entries without a string key are skipped)."""
    out: dict[str, Any] = {}
    if isinstance(kvs, list):
        for kv in kvs:
            if isinstance(kv, Mapping) and isinstance(kv.get("key"), str):
                out[kv["key"]] = any_value(kv.get("value"))
    return out


def is_traces(obj: Mapping[str, Any]) -> bool:
    """Whether a decoded log line is an OTLP ``TracesData``."""
    return TRACES_KEY in obj


MAX_UNIX_NANO = 253_402_300_799_999_999_999
"""The last nanosecond of year 9999 UTC: a later time has no ``datetime`` (year 10000 is out of its range),
so a span time past it is refused as a malformed field, as log format v1 refuses such a ``ts``."""


def _nanos(value: object) -> int | None:
    try:
        n = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
    return n if 0 < n <= MAX_UNIX_NANO else None


def _hex_id(value: object, length: int) -> str | None:
    if isinstance(value, str) and len(value) == length and _HEX_RE.match(value) and set(value) != {"0"}:
        return value.lower()
    return None


def spans_of(obj: Mapping[str, Any], errors: list[str] | None = None) -> list[dict[str, Any]]:
    """The spans of one ``TracesData`` line as ``span`` event dicts, in the line's order.

    Each: ``event`` "span", ``trace_id`` (32 hex), ``span_id`` (16 hex), ``parent_span_id`` (or None),
    ``name``, ``kind``, ``start_unix_nano`` / ``end_unix_nano`` (ints), ``attributes``, ``resource``
    (the resource's attributes), ``scope`` ({name, version}), ``status``. A malformed span is described
    by the path of its bad field (``resourceSpans[0].scopeSpans[1].spans[2].traceId: ...``): appended to
    ``errors`` when a list is given, so the line's other spans are kept, else raised as ``ValueError``.
    A malformed ``resourceSpans`` or ``scopeSpans`` list always raises: no span of it can be read.
    """
    out: list[dict[str, Any]] = []
    resource_spans = obj.get(TRACES_KEY)
    if not isinstance(resource_spans, list):
        raise ValueError(f"{TRACES_KEY}: expected a list")
    for ri, rs in enumerate(resource_spans):
        where_r = f"{TRACES_KEY}[{ri}]"
        if not isinstance(rs, Mapping):
            raise ValueError(f"{where_r}: expected an object")
        resource = attributes((rs.get("resource") or {}).get("attributes"))
        scope_spans = rs.get("scopeSpans", [])
        if not isinstance(scope_spans, list):
            raise ValueError(f"{where_r}.scopeSpans: expected a list")
        for si, ss in enumerate(scope_spans):
            where_s = f"{where_r}.scopeSpans[{si}]"
            if not isinstance(ss, Mapping) or not isinstance(ss.get("spans", []), list):
                raise ValueError(f"{where_s}.spans: expected a list")
            scope: Mapping[str, Any] = ss["scope"] if isinstance(ss.get("scope"), Mapping) else {}
            for pi, sp in enumerate(ss.get("spans", [])):
                try:
                    out.append(_span(sp, f"{where_s}.spans[{pi}]", resource, scope))
                except ValueError as exc:
                    if errors is None:
                        raise
                    errors.append(str(exc))
    return out


def _span(sp: object, where: str, resource: dict[str, Any], scope: Mapping[str, Any]) -> dict[str, Any]:
    """One span as a ``span`` event dict; raises ``ValueError`` naming the bad field's path."""
    if not isinstance(sp, Mapping):
        raise ValueError(f"{where}: expected an object")
    trace_id = _hex_id(sp.get("traceId"), 32)
    if trace_id is None:
        raise ValueError(f"{where}.traceId: expected 32 hex digits, not all zero")
    span_id = _hex_id(sp.get("spanId"), 16)
    if span_id is None:
        raise ValueError(f"{where}.spanId: expected 16 hex digits, not all zero")
    parent = sp.get("parentSpanId") or None
    if parent is not None and _hex_id(parent, 16) is None:
        raise ValueError(f"{where}.parentSpanId: expected 16 hex digits")
    if isinstance(parent, str) and parent.lower() == span_id:
        raise ValueError(f"{where}.parentSpanId: the span's own spanId (a span cannot be its own parent)")
    start = _nanos(sp.get("startTimeUnixNano"))
    if start is None:
        raise ValueError(f"{where}.startTimeUnixNano: expected a positive integer of year 9999 or before")
    end = sp.get("endTimeUnixNano")
    if end not in (None, "", 0, "0") and _nanos(end) is None:
        raise ValueError(f"{where}.endTimeUnixNano: expected a positive integer of year 9999 or before")
    return {
        "event": SPAN,
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_span_id": parent.lower() if isinstance(parent, str) else None,
        "name": str(sp.get("name") or ""),
        "kind": sp.get("kind"),
        "start_unix_nano": start,
        "end_unix_nano": _nanos(sp.get("endTimeUnixNano")) or start,
        "attributes": attributes(sp.get("attributes")),
        "resource": resource,
        "scope": {"name": scope.get("name"), "version": scope.get("version")},
        "status": sp.get("status") if isinstance(sp.get("status"), Mapping) else None,
    }


SERVER_KINDS = frozenset({2, 5, "SPAN_KIND_SERVER", "SPAN_KIND_CONSUMER"})
"""OTLP span kinds of a service's entry span (SERVER, CONSUMER), as numbers or enum names."""


def is_root(span: Mapping[str, Any], span_ids: set[str]) -> bool:
    """Whether ``span`` is where this service's part of the trace starts: it has no parent, or it is an
    entry span (SERVER or CONSUMER) whose parent is not among the trace's ``span_ids``: a gateway or a
    frontend passed the trace on (``traceparent``) and its span went to another backend."""
    parent = span.get("parent_span_id")
    return not parent or (span.get("kind") in SERVER_KINDS and parent not in span_ids)


def span_key(trace_id: str, span_id: str) -> str:
    """The event key of a stored span (sha256 of kind, trace and span id)."""
    return hashlib.sha256(f"{SPAN}\x1f{trace_id}\x1f{span_id}".encode()).hexdigest()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def span_time(nanos: int) -> str:
    """ISO-8601 UTC to the millisecond of a span time in nanoseconds, in integer arithmetic: a float
    division rounds the last microseconds of year 9999 up into year 10000, which has no ``datetime``."""
    at = _EPOCH + timedelta(microseconds=nanos // 1000)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- Phoenix span exports ----------------------------------------------------------------------------------


def is_phoenix_span(obj: Mapping[str, Any]) -> bool:
    """Whether a decoded record is one span as Arize Phoenix exports it (``phoenix.trace`` span JSON and
    its REST API: ``name``, ``context: {trace_id, span_id}``, ``parent_id``, ``span_kind``,
    ``start_time`` / ``end_time`` as ISO-8601, ``status_code``, ``attributes`` nested or dotted); a
    record with ``context`` and ``start_time`` and no ``event`` is taken for one, so that a malformed one
    is told as such (:func:`phoenix_traces` names the bad field)."""
    return "context" in obj and "start_time" in obj and "event" not in obj


JSON_VALUED = frozenset(
    {
        "llm.prompt_template.variables",
        "llm.invocation_parameters",
        "metadata",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.retrieval.documents",
    }
)
"""Attributes whose value the conventions write as one JSON string (OpenInference's template variables,
invocation parameters and metadata; GenAI's message lists): an export that decoded one into an object
gets it back as JSON, not split into dotted keys."""


def flat_attributes(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested attributes with dotted keys, as OpenTelemetry writes them: ``{"llm": {"input_messages":
    [{"message": {...}}]}}`` -> ``llm.input_messages.0.message.role``; a list of scalars stays a list, and
    a :data:`JSON_VALUED` attribute is one JSON string."""
    out: dict[str, Any] = {}
    for k, v in value.items():
        key = f"{prefix}{k}"
        if key in JSON_VALUED and isinstance(v, Mapping | list):
            out[key] = json.dumps(v, ensure_ascii=False)
        elif isinstance(v, Mapping):
            out.update(flat_attributes(v, key + "."))
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            for i, x in enumerate(v):
                out.update(flat_attributes(x, f"{key}.{i}."))
        else:
            out[key] = v
    return out


def _iso_nanos(value: object, where: str) -> int:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected an ISO-8601 time")
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{where}: expected an ISO-8601 time") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    delta = at - _EPOCH
    nanos = (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    if nanos <= 0:
        raise ValueError(f"{where}: expected a time after 1970-01-01")
    return nanos


def to_any_value(value: object) -> dict[str, Any]:
    """A Python value as an OTLP JSON ``AnyValue`` (the inverse of :func:`any_value`): booleans, 64-bit
    integers as decimal strings, doubles, lists as arrays, None as the empty value, anything else as its
    string."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [to_any_value(v) for v in value]}}
    if value is None:
        return {}
    return {"stringValue": value if isinstance(value, str) else str(value)}


def phoenix_traces(obj: Mapping[str, Any]) -> dict[str, Any]:
    """One Phoenix span (:func:`is_phoenix_span`) as an OTLP JSON ``TracesData`` of that one span, so it is
    read and stored as a Collector line is. Its OpenInference ``span_kind`` becomes the attribute
    ``openinference.span.kind`` when the attributes lack it. Raises ``ValueError`` naming the bad field
    (``context.trace_id``, ``start_time``, ...)."""
    ctx = obj["context"]
    if not isinstance(ctx, Mapping):
        raise ValueError("context: expected an object with trace_id and span_id")
    for field, length in (("trace_id", 32), ("span_id", 16)):
        if _hex_id(ctx.get(field), length) is None:
            raise ValueError(f"context.{field}: expected {length} hex digits, not all zero")
    if obj.get("parent_id") and _hex_id(obj["parent_id"], 16) is None:
        raise ValueError("parent_id: expected 16 hex digits")
    attrs = obj.get("attributes") or {}
    if not isinstance(attrs, Mapping):
        raise ValueError("attributes: expected an object")
    flat = flat_attributes(attrs)
    if isinstance(obj.get("span_kind"), str):
        flat.setdefault("openinference.span.kind", obj["span_kind"])
    start = _iso_nanos(obj.get("start_time"), "start_time")
    end = _iso_nanos(obj["end_time"], "end_time") if obj.get("end_time") else start
    span: dict[str, Any] = {
        "traceId": ctx.get("trace_id"),
        "spanId": ctx.get("span_id"),
        "name": obj.get("name") or "",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": [{"key": k, "value": to_any_value(v)} for k, v in flat.items()],
    }
    if obj.get("parent_id"):
        span["parentSpanId"] = obj["parent_id"]
    if isinstance(obj.get("status_code"), str):
        span["status"] = {"code": obj["status_code"], "message": obj.get("status_message") or ""}
    return {TRACES_KEY: [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": [span]}]}]}
