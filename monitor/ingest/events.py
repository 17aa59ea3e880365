"""Log format v1: the event definitions, and turning one raw log line into a validated event.

The pydantic models below are the single definition of the format: ``schemas/*.schema.json`` are
generated from them (``rewrite-monitor schema export``; a test keeps the files in sync), and
ingest validates every line against the same models. Unknown fields are allowed and kept, so later
producer versions lose nothing.

Timestamps (``ts``, ``first_ts``, ``last_ts``, message ``ts``) accept ISO-8601 strings with or
without a zone (naive means UTC) and epoch numbers, read as milliseconds when above 1e11 (any
epoch in seconds before the year 5138 is below that) and as seconds otherwise. A timestamp before
:data:`~monitor.instrument.TS_MIN` or from :data:`~monitor.instrument.TS_MAX` on is refused
(``wrong_type``, naming the field): log format v1's bounds, defined beside the producers' helper.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import ErrorDetails

from monitor.instrument import EPOCH_MS_THRESHOLD, TS_MAX, TS_MIN
from monitor.otel import spans as otlp

EVENT_NAME_KEYS = ("event", "message", "msg")
"""Where producers put the event name: structlog (``event``), python-json-logger (``message``),
stdlib ``logging`` with ``extra=`` through a JSON formatter (``msg``)."""


class TimestampError(ValueError):
    """A value that is not a log timestamp. The message never quotes the value: it ends up in the
    quarantine detail, which is kept and shown without ``--excerpt``, and a bad ``ts`` can hold text."""


def parse_ts(value: object) -> datetime:
    """Parse a log timestamp into an aware UTC datetime.

    Accepts ISO-8601 text (``2024-03-04T08:00:00Z``, ``...+02:00``, naive = UTC) and epoch
    seconds or milliseconds (int or float; booleans are refused). Raises ``TimestampError`` (a
    ``ValueError``) whose message names the problem, never the value.
    """
    if isinstance(value, bool):
        raise TimestampError("a timestamp must be ISO-8601 text or epoch seconds/milliseconds")
    if isinstance(value, int | float):
        seconds = value / 1000.0 if abs(value) > EPOCH_MS_THRESHOLD else float(value)
        try:
            return _in_range(datetime.fromtimestamp(seconds, tz=UTC))
        except (OverflowError, OSError, ValueError) as exc:
            if isinstance(exc, TimestampError):
                raise
            raise TimestampError("epoch timestamp out of range") from exc
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise TimestampError("not an ISO-8601 timestamp") from exc
        try:
            utc = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
        except OverflowError as exc:  # "0001-01-01T00:00:00+14:00" is before year 1 in UTC
            raise TimestampError("timestamp out of range in UTC") from exc
        return _in_range(utc)
    raise TimestampError("a timestamp must be ISO-8601 text or epoch seconds/milliseconds")


def _in_range(ts: datetime) -> datetime:
    if not TS_MIN <= ts < TS_MAX:
        raise TimestampError(f"timestamp outside {TS_MIN.year}-{TS_MAX.year - 1} (UTC)")
    return ts


Timestamp = Annotated[
    datetime,
    PlainValidator(parse_ts),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "description": "ISO-8601; naive means UTC"},
                {"type": "number", "description": "epoch seconds, or milliseconds when > 1e11"},
            ]
        }
    ),
]
NonEmptyStr = Annotated[StrictStr, Field(min_length=1, max_length=255)]
INT32_MAX = 2**31 - 1
Count = Annotated[StrictInt, Field(ge=0, le=INT32_MAX)]  # stored in 32-bit INTEGER columns


class _Event(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    if TYPE_CHECKING:
        # Every event model declares its own validated ``request_id``; declared here for the type
        # checker only, so code handling any event can read it without a field of the base model.
        request_id: str


class MessageIn(BaseModel):
    """One message the rewriter received: ``{role, content, ts}``."""

    model_config = ConfigDict(extra="allow", frozen=True)
    role: StrictStr
    content: StrictStr
    ts: Timestamp | None = None


class RolesIn(BaseModel):
    """The roles histogram of the messages the rewriter received."""

    model_config = ConfigDict(extra="allow", frozen=True)
    user: Count = 0
    assistant: Count = 0


class ResolvedIn(BaseModel):
    """A reference the rewriter resolved: ``surface`` (in the latest turn) -> ``antecedent``."""

    model_config = ConfigDict(extra="allow", frozen=True)
    surface: StrictStr
    antecedent: StrictStr
    turn: Annotated[StrictInt, Field(ge=-INT32_MAX, le=INT32_MAX)] | None = None


class CtxInputEvent(_Event):
    """``ctx_input``: what the rewriter received for one request."""

    conv_id: NonEmptyStr
    request_id: NonEmptyStr
    turn: Count
    ts: Timestamp
    n_messages: Count
    roles: RolesIn
    first_ts: Timestamp | None = None
    last_ts: Timestamp | None = None
    monotonic: StrictBool | None = None
    digest: StrictStr | None = Field(default=None, description="first 12 hex of sha256 over role:content")
    client_turn_count: Count | None = Field(default=None, description="turns the client rendered")
    messages: list[MessageIn] | None = Field(default=None, description="the message list, when logged")


class RewriteEvent(_Event):
    """``rewrite``: what the rewriter returned for one request."""

    conv_id: NonEmptyStr
    request_id: NonEmptyStr
    turn: Count
    ts: Timestamp
    latest: StrictStr = Field(description="the user's raw follow-up")
    query: StrictStr = Field(description="the standalone query")
    rewritten: StrictBool
    resolved: list[ResolvedIn] = Field(default_factory=list)
    dropped: list[StrictStr] = Field(default_factory=list)
    filters: dict[str, Any] | None = None
    model: Annotated[StrictStr, Field(max_length=255)] | None = None  # stored in 255-character columns
    prompt_version: Annotated[StrictStr, Field(max_length=255)] | None = None
    latency_ms: Annotated[float, Field(ge=0, strict=False)] | None = None


class HitIn(BaseModel):
    """One retrieved passage."""

    model_config = ConfigDict(extra="allow", frozen=True)
    rank: StrictInt
    doc_id: StrictStr
    score: float | None = None
    title: StrictStr | None = None


class RetrieveEvent(_Event):
    """``retrieve`` (optional): the hits retrieval returned for the request's query."""

    request_id: NonEmptyStr
    conv_id: NonEmptyStr | None = None
    ts: Timestamp | None = None
    hits: list[HitIn]


class AnswerEvent(_Event):
    """``answer`` (optional): the generated answer and its citations."""

    request_id: NonEmptyStr
    conv_id: NonEmptyStr | None = None
    ts: Timestamp | None = None
    text: StrictStr
    citations: list[Any] = Field(default_factory=list)


EVENT_MODELS: dict[str, type[_Event]] = {
    "ctx_input": CtxInputEvent,
    "rewrite": RewriteEvent,
    "retrieve": RetrieveEvent,
    "answer": AnswerEvent,
}


class SpanEvent(_Event):
    """``span``: one span of an OpenTelemetry trace (``monitor.otel.spans``), stored whole; never a line
    of log format v1 itself (a JSON Lines ``{"event": "span"}`` is an unknown event)."""

    request_id: NonEmptyStr = Field(description="the trace id")
    conv_id: None = None
    turn: None = None
    ts: Timestamp | None = None


Reason = Literal[
    "invalid_utf8",
    "line_too_long",
    "invalid_json",
    "truncated_line",
    "not_an_object",
    "missing_field",
    "wrong_type",
    "unknown_event",
    "duplicate_event",
    "unsupported_text",
    "non_finite_number",
    "store_refused",
    "no_rewrite_span",
    "ambiguous_rewrite_span",
    "content_not_captured",
]
REASONS: tuple[str, ...] = get_args(Reason)


@dataclass(frozen=True, slots=True)
class ParsedEvent:
    """A validated event ready to store.

    ``event_key`` (64 hex) identifies the event (kind, conv_id, request_id): a second event with the
    same key is a duplicate. ``content_sha`` (64 hex) hashes the canonical JSON of ``raw``.
    """

    kind: str
    data: _Event
    raw: dict[str, Any]
    event_key: str
    content_sha: str


@dataclass(frozen=True, slots=True)
class ParsedSpans:
    """An OTLP ``TracesData`` line: one ``span`` :class:`ParsedEvent` per good span, in the line's order,
    and a ``wrong_type`` :class:`LineError` per malformed one (its path in the detail)."""

    spans: list[ParsedEvent]
    errors: list[LineError] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LineError:
    """Why a line was rejected: a reason code from ``REASONS`` and a one-line detail naming the field."""

    reason: str
    detail: str


# Quarantine details are kept for ever and shown without --excerpt, so they carry no text of the
# line: no values, and only names that look like field or event names. A key or an event name under
# ``message`` is producer-chosen and can be free text (an email address, a sentence); such a name is
# replaced by ``*`` in a field path and described by its length as an event name.
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/-]{0,39}")
"""What an event name quoted in a detail looks like (a free-text ``message`` does not)."""
_KEY_RE = re.compile(r"[^\s@]{1,40}")
_KEY_HAS_LETTER_RE = re.compile(r"[A-Za-z_]")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def json_type(value: object) -> str:
    """The JSON type of a decoded value with its article: ``an object``, ``an array``, ``a string``,
    ``an integer``, ``a number``, ``a boolean`` or ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a value"


def _key_label(key: str | int) -> str:
    """A path component safe to show: list indices and name-like keys as they are, other keys ``*``."""
    if isinstance(key, int):
        return str(key)
    text = _CONTROL_RE.sub(
        lambda m: f"\\u{ord(m.group()):04x}", str(key).encode("utf-8", "backslashreplace").decode()
    )
    if _KEY_RE.fullmatch(text) and _KEY_HAS_LETTER_RE.search(text):
        return text
    return "*"


def field_path(parts: Iterable[str | int]) -> str:
    """A dotted field path (``messages.0.content``) built from keys and indices, with keys that may be
    text rather than names shown as ``*`` (see :func:`_key_label`)."""
    return ".".join(_key_label(p) for p in parts)


def event_name(obj: dict[str, Any]) -> str | LineError:
    """The event name of a decoded line, looked up under ``event``, ``message`` then ``msg``.

    Returns a ``LineError`` (``missing_field`` or ``unknown_event``) when no known name is found; its
    detail quotes a name only when it looks like one (a ``message`` is often a free-text log message).
    """
    seen: list[str] = []
    for key in EVENT_NAME_KEYS:
        value = obj.get(key)
        if isinstance(value, str):
            if value in EVENT_MODELS:
                return value
            if NAME_RE.fullmatch(value):
                seen.append(f"{key}={value!r}")
            else:
                seen.append(f"{key}: a {len(value)}-character text, not shown")
    if seen:
        known = ", ".join(EVENT_MODELS)
        return LineError("unknown_event", f"unknown event name ({'; '.join(seen)}); known: {known}")
    return LineError("missing_field", "no event name: expected a string under 'event', 'message' or 'msg'")


def _problem(err: ErrorDetails) -> str:
    """What is wrong with one field, from a pydantic error, without the value.

    Pydantic's own messages state the expectation only ("Input should be a valid string"); a
    validator's ``ValueError`` may quote its input, so only :class:`TimestampError` messages are used.
    """
    if err["type"] in ("value_error", "assertion_error"):
        cause = (err.get("ctx") or {}).get("error")
        problem = str(cause) if isinstance(cause, TimestampError) else "invalid value"
    else:
        problem = err["msg"]
    return f"{problem}, got {json_type(err.get('input'))}"


def _describe(exc: ValidationError) -> LineError:
    errors = exc.errors(include_url=False)
    missing = [e for e in errors if e["type"] == "missing"]
    first = missing[0] if missing else errors[0]
    reason = "missing_field" if missing else "wrong_type"
    parts = []
    for err in [first, *[e for e in errors if e is not first]][:3]:
        loc = field_path(err["loc"]) or "(event)"
        if err["type"] == "missing":
            parts.append(f"field '{loc}' is required")
        else:
            parts.append(f"field '{loc}': {_problem(err)}")
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return LineError(reason, "; ".join(parts) + more)


def canonical_sha(obj: dict[str, Any]) -> str:
    """sha256 hex of ``obj`` serialised with sorted keys and no whitespace (stable across producers).

    Raises ``UnicodeEncodeError`` when a string holds a lone surrogate (see :func:`unsupported_text`).
    """
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class _NonFinite(Exception):
    """Raised by :func:`parse_line`'s decoder hooks at the first NaN, infinity or overflowing number."""


def _finite_float(literal: str) -> float:
    """``float(literal)`` for the JSON decoder's ``parse_float``, raising :class:`_NonFinite` when the
    number overflows to infinity (``1e400``, or a mantissa of 400 digits)."""
    value = float(literal)
    if not math.isfinite(value):
        raise _NonFinite
    return value


def _no_constant(_name: str) -> float:
    """The JSON decoder's ``parse_constant`` (called for ``NaN``, ``Infinity`` and ``-Infinity`` only)."""
    raise _NonFinite


def _scalars(obj: object, path: str = "") -> Iterator[tuple[str, object]]:
    """Every scalar of decoded JSON ``obj`` with its dotted field path, dict keys included (a key is
    under the path of its value), depth first in document order."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            sub = f"{path}.{_key_label(k)}" if path else _key_label(k)
            yield sub, k
            yield from _scalars(v, sub)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _scalars(v, f"{path}.{i}" if path else str(i))
    else:
        yield path or "(value)", obj


def non_finite_number(obj: object) -> LineError | None:
    """The first number in ``obj`` that is NaN or infinite, as a ``non_finite_number`` error naming its field.

    JSON has no such numbers, but Python's ``json.dumps`` writes ``NaN`` and ``Infinity`` by default and
    ``1e400`` overflows to infinity; PostgreSQL's JSONB refuses them, so one such line would fail its whole
    batch. The line is quarantined instead.
    """
    for where, value in _scalars(obj):
        if isinstance(value, float) and not math.isfinite(value):
            return LineError("non_finite_number", f"field '{where}' is NaN or infinite")
    return None


def unsupported_text(obj: object) -> LineError | None:
    """The first string in ``obj`` that no store or tokenizer can take, as an ``unsupported_text`` error.

    JSON may escape a NUL character (``\\u0000``, which PostgreSQL text and JSONB refuse) or a lone
    UTF-16 surrogate (``\\ud800``, which is not Unicode text and cannot be encoded as UTF-8); such a
    line is quarantined rather than stored, so it can never wedge a later step. Keys count too.
    """
    for where, value in _scalars(obj):
        if not isinstance(value, str):
            continue
        if "\x00" in value:
            return LineError("unsupported_text", f"field '{where}' holds a NUL character (\\u0000)")
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return LineError(
                    "unsupported_text", f"field '{where}' holds a lone surrogate (not Unicode text)"
                )
    return None


def event_key(kind: str, conv_id: str | None, request_id: str) -> str:
    """The identity of an event: sha256 hex of ``kind``, ``conv_id`` and ``request_id``."""
    return hashlib.sha256(f"{kind}\x1f{conv_id or ''}\x1f{request_id}".encode()).hexdigest()


def parse_line(text: str, *, complete: bool = True) -> ParsedEvent | ParsedSpans | LineError:
    """Decode and validate one log line (without its newline).

    ``complete`` is False for a last line with no trailing newline: if that line is not valid JSON it
    is reported as ``truncated_line`` (a producer still writing) rather than ``invalid_json``. A line
    holding an OTLP ``TracesData`` (a ``resourceSpans`` key) gives its spans (:func:`parse_spans`).
    Never raises for bad input; returns a ``LineError`` instead.
    """
    if text.startswith("\ufeff"):  # a byte-order mark at the start of a file is no part of the line
        text = text[1:]
    # The decoder's own hooks tell whether the line holds a non-finite number: exact, and free, as a regex
    # pre-test over the whole line was not (0.11 s on the shared logs' 6,770 lines, more than decoding
    # them, and it matched 663 lines, "e" followed by three digits, each then walked for nothing).
    non_finite = False
    try:
        try:
            obj = json.loads(text, parse_float=_finite_float, parse_constant=_no_constant)
        except _NonFinite:
            # decoded again as Python decodes it, so what follows sees the same object (and the same
            # error, when the line is broken further on)
            non_finite = True
            obj = json.loads(text)
    except json.JSONDecodeError as exc:
        if not complete:
            return LineError(
                "truncated_line", f"last line has no newline and is not complete JSON: {exc.msg}"
            )
        return LineError("invalid_json", f"invalid JSON at column {exc.colno}: {exc.msg}")
    except ValueError:
        # Python refuses integers of more than 4,300 digits (sys.int_info.str_digits_check_threshold).
        return LineError("invalid_json", "invalid JSON: a number has too many digits")
    except RecursionError:
        return LineError("invalid_json", "invalid JSON: nested too deeply")
    if not isinstance(obj, dict):
        return LineError("not_an_object", f"a log line must be a JSON object, got {json_type(obj)}")
    if non_finite:
        bad = non_finite_number(obj)
        if bad is not None:
            return bad
    if otlp.is_phoenix_span(obj):  # a Phoenix span export: read as the OTLP line of that one span
        try:
            obj = otlp.phoenix_traces(obj)
        except (ValueError, OverflowError) as exc:
            return LineError("wrong_type", f"Phoenix span: {exc}")
    if otlp.is_traces(obj):
        return parse_spans(obj)
    name = event_name(obj)
    if isinstance(name, LineError):
        return name
    try:
        model = EVENT_MODELS[name].model_validate(obj)
    except ValidationError as exc:
        return _describe(exc)
    except RecursionError:
        return LineError("wrong_type", "event nested too deeply")
    if "\\u0000" in text or "\\ud" in text.lower():  # cheap pre-test: only escapes can carry these
        found = unsupported_text(obj)
        if found is not None:
            return found
    try:
        sha = canonical_sha(obj)
    except UnicodeEncodeError:
        return unsupported_text(obj) or LineError("unsupported_text", "text that is not valid Unicode")
    except (ValueError, RecursionError) as exc:
        return LineError("invalid_json", f"JSON cannot be stored: {exc}")
    key = event_key(name, getattr(model, "conv_id", None), model.request_id)
    return ParsedEvent(kind=name, data=model, raw=obj, event_key=key, content_sha=sha)


def parse_spans(obj: dict[str, Any]) -> ParsedSpans | LineError:
    """The spans of a decoded ``TracesData`` line as ``span`` events keyed by trace and span id, with a
    ``wrong_type`` error naming the path of each malformed span (the others are kept); a line whose
    span lists cannot be read is one ``wrong_type`` error."""
    malformed: list[str] = []
    try:
        spans = otlp.spans_of(obj, malformed)
    except ValueError as exc:
        return LineError("wrong_type", str(exc))
    except RecursionError:
        return LineError("wrong_type", "trace nested too deeply")
    out = []
    for raw in spans:
        bad = unsupported_text(raw)
        if bad is not None:
            return bad
        try:
            sha = canonical_sha(raw)
        except (ValueError, UnicodeEncodeError, RecursionError) as exc:
            return LineError("invalid_json", f"span cannot be stored: {type(exc).__name__}")
        try:
            start: datetime | None = datetime.fromtimestamp(raw["start_unix_nano"] / 1e9, tz=UTC)
        except (OverflowError, OSError, ValueError):
            start = None
        in_range = start is not None and TS_MIN <= start < TS_MAX
        # built from fields spans_of checked: no second validation
        data = SpanEvent.model_construct(request_id=raw["trace_id"], ts=start if in_range else None)
        key = otlp.span_key(raw["trace_id"], raw["span_id"])
        out.append(ParsedEvent(kind=otlp.SPAN, data=data, raw=raw, event_key=key, content_sha=sha))
    return ParsedSpans(out, [LineError("wrong_type", m) for m in malformed])


def parse_mapped(obj: dict[str, Any]) -> ParsedEvent | LineError:
    """An event of log format v1 mapped from a trace (``monitor.otel.mapping.map_trace``), validated as a
    line would be."""
    name = obj["event"]
    try:
        model = EVENT_MODELS[name].model_validate(obj)
    except ValidationError as exc:
        return _describe(exc)
    key = event_key(name, getattr(model, "conv_id", None), model.request_id)
    return ParsedEvent(kind=name, data=model, raw=obj, event_key=key, content_sha=canonical_sha(obj))


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema (draft 2020-12) of each event, generated from the models above.

    Returns ``{event_name: schema}``; the event-name rule is documented in each schema's description.
    """
    out = {}
    for name, model in EVENT_MODELS.items():
        schema = model.model_json_schema(mode="validation")
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"https://rewrite-monitor.invalid/schemas/{name}.schema.json"
        schema["title"] = name
        schema["description"] = (
            f"{(model.__doc__ or '').strip()} The event name '{name}' sits under 'event', 'message' "
            "or 'msg'. Unknown fields are allowed and kept."
        )
        out[name] = schema
    return out
