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
from the list you pass. Then point the worker at the file (``sources``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

MessageLike = Mapping[str, Any] | Sequence[Any]
"""A message as ``{"role": ..., "content": ..., "ts": ...}`` (``ts`` optional) or ``(role, content)``."""


def digest(messages: Iterable[tuple[str, str]]) -> str:
    """The ``digest`` of log format v1: the first 12 hex characters of SHA-256 over the concatenation
    of ``f"{role}:{content}"`` for each ``(role, content)``, UTF-8, with no separator. The one
    definition: ``monitor.record.transcript_digest`` (what the digest check recomputes) calls it."""
    h = hashlib.sha256()
    for role, content in messages:
        h.update(f"{role}:{content}".encode())
    return h.hexdigest()[:12]


def _stamp(ts: datetime | str | None) -> str:
    """``ts`` as ISO-8601 UTC with a ``Z`` (now when ``None``; a naive datetime is taken as UTC; a
    string is kept as given)."""
    if isinstance(ts, str):
        return ts
    when = datetime.now(UTC) if ts is None else ts if ts.tzinfo else ts.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _message(m: MessageLike) -> dict[str, Any]:
    if isinstance(m, Mapping):
        if "role" not in m or "content" not in m:
            raise ValueError("a message needs 'role' and 'content'")
        out: dict[str, Any] = {"role": str(m["role"]), "content": str(m["content"])}
        if m.get("ts") is not None:
            out["ts"] = _stamp(m["ts"])
        return out
    role, content = m[0], m[1]
    return {"role": str(role), "content": str(content)}


def _parsed(ts: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(ts.replace("Z", "+00:00"))
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
    ts: datetime | str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``ctx_input`` event for the message list the rewriter receives (the history, without the
    latest message), with ``n_messages``, ``roles`` (``{"user": n, "assistant": m}``), ``digest``,
    and, when the messages carry ``ts``, ``first_ts``, ``last_ts`` and ``monotonic`` (whether their times
    never go backwards). ``extra`` fields are added as given (unknown fields are kept by ingest).
    Raises ``ValueError`` for a message without role or content, or a negative turn or count."""
    if turn < 0 or (client_turn_count is not None and client_turn_count < 0):
        raise ValueError("turn and client_turn_count must not be negative")
    msgs = [_message(m) for m in messages]
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
        if len(times) == len(stamps):  # every stamp readable: otherwise ingest says which is not
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
    ts: datetime | str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``rewrite`` event: the latest message, the standalone query the rewriter returned,
    ``rewritten`` (whether the query differs from the latest message, ignoring surrounding space), the
    rewriter's own ``resolved`` entries (``{"surface", "antecedent", "turn"}``) and ``dropped``
    qualifiers, and who wrote it (``model``, ``prompt_version``)."""
    event: dict[str, Any] = {
        "event": "rewrite",
        "ts": _stamp(ts),
        "conv_id": conv_id,
        "request_id": request_id,
        "turn": turn,
        "latest": latest,
        "query": query,
        "rewritten": query.strip() != latest.strip(),
        "resolved": [dict(r) for r in resolved],
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
