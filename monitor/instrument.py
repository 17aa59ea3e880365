"""Log your rewrites in log format v1, standard library only: what a producer imports (issue 17, part 2).

A producer (the RAG service whose rewriter is audited) logs two events per rewrite: ``ctx_input`` (what
the rewriter received) and ``rewrite`` (what it returned). The fields the chat-state checks compare
(``n_messages``, ``roles``, ``first_ts``/``last_ts``, ``monotonic``, ``digest``) are easy to get subtly
wrong by hand; :func:`ctx_input_event` computes them from the message list exactly as the checks
expect, and :func:`log_ctx_input` / :func:`log_rewrite` write the events as one JSON line each through a
standard :mod:`logging` logger. Importing this module loads nothing outside the standard library (a
test asserts it), so a service can use it without installing rewrite-monitor's dependencies: copy the
file, or ``pip install rewrite-monitor --no-deps``.

Example (a plain anthropic-SDK rewriter; any other call works the same)::

    import logging
    from monitor.instrument import log_ctx_input, log_rewrite

    log = logging.getLogger("rag.rewrites")
    handler = logging.FileHandler("/var/log/rag/rewrites.jsonl")
    handler.setFormatter(logging.Formatter("%(message)s"))  # the line is the event, nothing around it
    log.addHandler(handler)
    log.setLevel(logging.INFO)

    history = [{"role": "user", "content": "Which EU regions support CMK?"},
               {"role": "assistant", "content": "Frankfurt and Dublin."}]
    latest = "What's the uptime SLA on the second one?"
    log_ctx_input(log, conv_id="c1", request_id="r7", turn=2, messages=history, client_turn_count=2)
    query = rewrite_with_claude(history, latest)  # your rewriter
    log_rewrite(log, conv_id="c1", request_id="r7", turn=2, latest=latest, query=query,
                model="claude-sonnet-4-5", prompt_version="rewrite-v3")

``client_turn_count`` is what the client showed the user (the number of messages on screen): the
window-truncation check compares it with what the rewriter received, so take it from the client, not
from the list you pass. System and tool messages in the list are left out (:data:`CONVERSATION_ROLES`),
and what ingest would refuse raises ``ValueError`` naming the field. Then point the worker at the file
(``sources``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

MessageLike = Mapping[str, Any] | Sequence[Any]
"""A message as ``{"role": ..., "content": ..., "ts": ...}`` (``ts`` optional) or ``(role, content)``;
content is text or a list of text blocks (``[{"type": "text", "text": ...}]``)."""


def digest(messages: Iterable[tuple[str, str]]) -> str:
    """The ``digest`` of log format v1: the first 12 hex characters of SHA-256 over the concatenation
    of ``f"{role}:{content}"`` for each ``(role, content)``, UTF-8, with no separator. The one
    definition: ``monitor.record.transcript_digest`` (what the digest check recomputes) calls it."""
    # One encode and one update of the joined text: the same bytes as message by message (UTF-8 of a
    # concatenation is the concatenation of the UTF-8s), without a call into the hash per message of a
    # long conversation.
    joined = "".join([f"{role}:{content}" for role, content in messages])
    return hashlib.sha256(joined.encode()).hexdigest()[:12]


EPOCH_MS_THRESHOLD = 1e11
"""An epoch number above this is milliseconds, else seconds (any epoch in seconds before the year 5138
is below it). Log format v1's rule: ingest (``monitor.ingest.events``) reads it from here."""
TS_MIN = datetime(1970, 1, 1, tzinfo=UTC)
TS_MAX = datetime(2100, 1, 1, tzinfo=UTC)
"""The range of event times, ``[TS_MIN, TS_MAX)``: the Unix epoch up to the next century. No
conversational log predates the epoch, and a time near the ends of ``datetime``'s range (year 1 or
9999) overflows the day arithmetic of queue admission and retention (a stored 9999-12-31 stopped every
later admission): ingest quarantines such a value, and this helper refuses to write one. A time merely
in the future (a skewed clock) is kept: the alert window never moves past now plus a small skew
(``monitor.worker.jobs.CLOCK_SKEW``). Defined here, in the standard-library-only module, so producer
and ingest share one definition."""
CONVERSATION_ROLES = ("user", "assistant")
"""The roles of the conversation the checks read. A system prompt or a tool message is an instruction to
the rewriter, not a turn the user saw: :func:`ctx_input_event` leaves them out, so ``n_messages`` and
``roles`` count what the client showed (the window and roles checks compare exactly that)."""


def _bad(field: str, why: str) -> ValueError:
    return ValueError(f"{field}: {why}")


def _stamp(ts: datetime | str | float | None, field: str = "ts") -> str:
    """``ts`` as ISO-8601 UTC with a ``Z`` (now when ``None``; a naive datetime is taken as UTC; epoch
    seconds, or milliseconds above :data:`EPOCH_MS_THRESHOLD`, as log format v1 reads them; an ISO
    string is checked and kept as given). Raises ``ValueError`` naming ``field`` for anything else or
    a time outside :data:`TS_MIN`-:data:`TS_MAX` (which ingest would quarantine)."""
    if isinstance(ts, bool):
        raise _bad(field, "a time, not a boolean")
    if isinstance(ts, str):
        when = _parsed(ts)
        if when is None:
            raise _bad(field, "not an ISO-8601 time")
    elif isinstance(ts, int | float):
        seconds = ts / 1000.0 if abs(ts) > EPOCH_MS_THRESHOLD else float(ts)
        try:
            when = datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise _bad(field, "epoch time out of range") from None
    elif ts is None or isinstance(ts, datetime):
        when = datetime.now(UTC) if ts is None else ts if ts.tzinfo else ts.replace(tzinfo=UTC)
    else:
        raise _bad(field, f"a datetime, ISO-8601 text or epoch number, not {type(ts).__name__}")
    if not TS_MIN <= when < TS_MAX:
        raise _bad(field, f"outside {TS_MIN.year}-{TS_MAX.year - 1}: ingest would quarantine it")
    if isinstance(ts, str):
        return ts
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(value: object, field: str) -> str:
    """``value`` as message text: a string, or the text blocks of a content list (``[{"type": "text",
    "text": ...}]``, the anthropic and OpenAI message form) joined by line breaks. Raises
    ``ValueError`` naming ``field`` otherwise, or for a NUL character (no store can hold one)."""
    if isinstance(value, list):
        parts = []
        for block in value:
            if not isinstance(block, Mapping) or not isinstance(block.get("text"), str):
                raise _bad(
                    field, "a content list holds only text blocks ({'type': 'text', 'text': ...}) here"
                )
            parts.append(block["text"])
        value = "\n".join(parts)
    if not isinstance(value, str):
        raise _bad(field, f"text, not {type(value).__name__}")
    if "\x00" in value:
        raise _bad(field, "holds a NUL character, which no store can hold")
    return value


def _message(m: MessageLike, i: int) -> dict[str, Any]:
    where = f"messages[{i}]"
    if isinstance(m, Mapping):
        if "role" not in m or "content" not in m:
            raise _bad(where, "a message needs 'role' and 'content'")
        role, content, ts = m["role"], m["content"], m.get("ts")
    elif isinstance(m, Sequence) and not isinstance(m, str) and len(m) == 2:
        role, content, ts = m[0], m[1], None
    else:
        raise _bad(where, "a message is a {'role', 'content'} mapping or a (role, content) pair")
    if not isinstance(role, str) or not role:
        raise _bad(f"{where}.role", "a non-empty string")
    out: dict[str, Any] = {"role": role, "content": _text(content, f"{where}.content")}
    if ts is not None:
        out["ts"] = _stamp(ts, f"{where}.ts")
    return out


def _id(value: object, field: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 255:
        raise _bad(field, "a non-empty string of at most 255 characters")
    return value


def _count(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise _bad(field, "a whole number from 0")
    return value


def _parsed(ts: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(ts.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def ctx_input_event(
    *,
    conv_id: str,
    request_id: str,
    turn: int,
    messages: Sequence[MessageLike],
    client_turn_count: int | None,
    ts: datetime | str | float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``ctx_input`` event for the message list the rewriter receives (the history, without the
    latest message), with ``n_messages``, ``roles`` (``{"user": n, "assistant": m}``), ``digest``,
    and, when the messages carry ``ts``, ``first_ts``, ``last_ts`` and ``monotonic`` (whether their times
    never go backwards). Messages of other roles than :data:`CONVERSATION_ROLES` (a system prompt, tool
    results) are left out. ``extra`` fields are added as given (unknown fields are kept by ingest).

    Raises ``ValueError`` naming the field (``messages[2].content``, ``turn``, ``ts`` ...) for what
    ingest would refuse: a message that is no ``{role, content}`` mapping or ``(role, content)`` pair,
    content that is not text (or text blocks), a NUL character, an id that is empty or over 255
    characters, a negative count, a time that is not one or lies outside 1970-2099."""
    _id(conv_id, "conv_id")
    _id(request_id, "request_id")
    _count(turn, "turn")
    if client_turn_count is not None:
        _count(client_turn_count, "client_turn_count")
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise _bad("messages", "a list of messages")
    msgs = [m for m in (_message(m, i) for i, m in enumerate(messages)) if m["role"] in CONVERSATION_ROLES]
    roles = Counter(m["role"] for m in msgs)
    event: dict[str, Any] = {
        "event": "ctx_input",
        "ts": _stamp(ts),
        "conv_id": conv_id,
        "request_id": request_id,
        "turn": turn,
        "n_messages": len(msgs),
        "roles": {"user": roles.get("user", 0), "assistant": roles.get("assistant", 0)},
        "digest": digest((m["role"], m["content"]) for m in msgs),
        "messages": msgs,
    }
    if client_turn_count is not None:
        event["client_turn_count"] = client_turn_count
    stamps = [m["ts"] for m in msgs if "ts" in m]
    if stamps:
        event["first_ts"], event["last_ts"] = stamps[0], stamps[-1]
        times = [t for t in (_parsed(x) for x in stamps) if t is not None]
        event["monotonic"] = all(a <= b for a, b in zip(times, times[1:], strict=False))
    event.update(extra)
    return event


def rewrite_event(
    *,
    conv_id: str,
    request_id: str,
    turn: int,
    latest: str,
    query: str,
    resolved: Sequence[Mapping[str, Any]] = (),
    dropped: Sequence[str] = (),
    model: str | None = None,
    prompt_version: str | None = None,
    latency_ms: float | None = None,
    ts: datetime | str | float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``rewrite`` event: the latest message, the standalone query the rewriter returned,
    ``rewritten`` (whether the query differs from the latest message, ignoring surrounding space), the
    rewriter's own ``resolved`` entries (``{"surface", "antecedent", "turn"}``) and ``dropped``
    qualifiers, and who wrote it (``model``, ``prompt_version``). Raises ``ValueError`` naming the field,
    as :func:`ctx_input_event` does, and for ``dropped`` given as one string, a ``resolved`` entry
    without ``surface`` and ``antecedent`` text, or a latency that is not a finite number."""
    _id(conv_id, "conv_id")
    _id(request_id, "request_id")
    _count(turn, "turn")
    if isinstance(dropped, str) or not all(isinstance(d, str) for d in dropped):
        raise _bad("dropped", "a list of strings (one per dropped qualifier), not one string")
    entries = []
    for i, r in enumerate(resolved):
        if not isinstance(r, Mapping) or not all(
            isinstance(r.get(k), str) for k in ("surface", "antecedent")
        ):
            raise _bad(f"resolved[{i}]", "a {'surface', 'antecedent', 'turn'} mapping of text")
        if r.get("turn") is not None:
            _count(r["turn"], f"resolved[{i}].turn")
        entries.append(dict(r))
    for label, who in (("model", model), ("prompt_version", prompt_version)):
        if who is not None:
            _id(who, label)
    if latency_ms is not None and (
        isinstance(latency_ms, bool)
        or not isinstance(latency_ms, int | float)
        or not math.isfinite(latency_ms)
    ):
        raise _bad("latency_ms", "a finite number of milliseconds")
    event: dict[str, Any] = {
        "event": "rewrite",
        "ts": _stamp(ts),
        "conv_id": conv_id,
        "request_id": request_id,
        "turn": turn,
        "latest": (latest_text := _text(latest, "latest")),
        "query": (query_text := _text(query, "query")),
        "rewritten": query_text.strip() != latest_text.strip(),
        "resolved": entries,
        "dropped": list(dropped),
    }
    for name, value in (("model", model), ("prompt_version", prompt_version), ("latency_ms", latency_ms)):
        if value is not None:
            event[name] = value
    event.update(extra)
    return event


def _emit(logger: logging.Logger, event: dict[str, Any]) -> dict[str, Any]:
    # allow_nan=False: JSON has no NaN, and ingest quarantines a line that holds one
    logger.info(json.dumps(event, ensure_ascii=False, allow_nan=False))
    return event


def log_ctx_input(logger: logging.Logger, **fields: Any) -> dict[str, Any]:
    """Log :func:`ctx_input_event` of ``fields`` as one JSON line at INFO through ``logger`` (whose
    formatter must write the message alone: ``logging.Formatter("%(message)s")``); returns the event."""
    return _emit(logger, ctx_input_event(**fields))


def log_rewrite(logger: logging.Logger, **fields: Any) -> dict[str, Any]:
    """Log :func:`rewrite_event` of ``fields`` as one JSON line at INFO through ``logger``; returns the
    event."""
    return _emit(logger, rewrite_event(**fields))


__all__ = ["ctx_input_event", "digest", "log_ctx_input", "log_rewrite", "rewrite_event"]


def otel_attributes(
    *,
    conv_id: str,
    request_id: str,
    turn: int,
    messages: Sequence[MessageLike],
    latest: str,
    query: str,
    client_turn_count: int | None,
    model: str | None = None,
    prompt_version: str | None = None,
) -> dict[str, str | int]:
    """The attributes to set on the span of the rewrite call when the service is traced with
    OpenTelemetry instead of logging (``span.set_attributes(otel_attributes(...))``): what ingest reads
    from an OTLP trace (``monitor.otel.mapping``) to build the same ``ctx_input`` and ``rewrite`` as
    :func:`ctx_input_event` and :func:`rewrite_event` would.

    The GenAI semantic conventions' ``gen_ai.operation.name`` ("chat"), ``gen_ai.conversation.id``,
    ``gen_ai.input.messages`` (the history and the latest message as ``{role, parts: [{type: "text",
    content}]}``, JSON) and ``gen_ai.output.messages`` (the query), ``gen_ai.request.model``; and, for
    what no convention names, ``rewrite_monitor.step`` ("rewrite": this span is the rewrite),
    ``.request_id``, ``.turn``, ``.client_turn_count``, ``.digest`` (of the history, as the checks
    compute it) and ``.prompt_version``. Values are strings or ints, as OpenTelemetry attributes must be.
    Raises ``ValueError`` naming the field, as :func:`ctx_input_event` and :func:`rewrite_event` do.
    """
    ctx = ctx_input_event(
        conv_id=conv_id,
        request_id=request_id,
        turn=turn,
        messages=messages,
        client_turn_count=client_turn_count,
    )
    rw = rewrite_event(
        conv_id=conv_id,
        request_id=request_id,
        turn=turn,
        latest=latest,
        query=query,
        model=model,
        prompt_version=prompt_version,
    )

    def parts(role: str, text: str) -> dict[str, Any]:
        return {"role": role, "parts": [{"type": "text", "content": text}]}

    inputs = [parts(m["role"], m["content"]) for m in ctx["messages"]] + [parts("user", rw["latest"])]
    attrs: dict[str, str | int] = {
        "rewrite_monitor.step": "rewrite",
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": conv_id,
        "gen_ai.input.messages": json.dumps(inputs, ensure_ascii=False),
        "gen_ai.output.messages": json.dumps([parts("assistant", rw["query"])], ensure_ascii=False),
        "rewrite_monitor.request_id": request_id,
        "rewrite_monitor.turn": turn,
        "rewrite_monitor.digest": ctx["digest"],
    }
    if client_turn_count is not None:
        attrs["rewrite_monitor.client_turn_count"] = client_turn_count
    if model is not None:
        attrs["gen_ai.request.model"] = model
    if prompt_version is not None:
        attrs["rewrite_monitor.prompt_version"] = prompt_version
    return attrs
