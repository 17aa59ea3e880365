"""Structured logs of the worker, as JSON lines or ``key=value`` text, with no transcript text.

Code logs an event name as the message and its data under ``extra={"fields": {...}}``::

    log.info("cycle done", extra={"fields": {"stored": 120, "checked": 60}})

Keys that hold text from logged rewrites (:data:`TEXT_KEYS`: the query, the latest message, the
messages, answers, flagged words, ...) are dropped by the formatter, wherever they are nested, so a
careless call cannot leak them; only counts, ids, paths, times and rates are logged. The same key list
drives the Sentry scrubber (``monitor.observability.sentry``).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

TEXT_KEYS = frozenset(
    {
        "query",
        "latest",
        "messages",
        "content",
        "text",
        "answer",
        "raw",
        "raw_excerpt",
        "words",
        "resolved",
        "antecedent",
        "surface",
        "dropped",
        "filters",
        "title",
        "corrected_query",
        "expected_query",
        "must_include",
        "must_not_include",
        "accepted_terms",
        "typed_terms",
        "note",
    }
)
"""Field names that hold text from logged rewrites (log format v1, verdicts and regression cases)."""

SCRUBBED = "[scrubbed]"


def without_text(value: Any) -> Any:
    """``value`` with every mapping key in :data:`TEXT_KEYS` removed, recursively (lists included)."""
    if isinstance(value, dict):
        return {k: without_text(v) for k, v in value.items() if k not in TEXT_KEYS}
    if isinstance(value, list | tuple):
        return [without_text(v) for v in value]
    return value


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    return without_text(fields) if isinstance(fields, dict) else {}


def _ts(record: logging.LogRecord) -> str:
    return (
        datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``event`` and the record's fields.

    An exception adds ``error`` (its type) only: exception messages can quote input values.
    """

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": _ts(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        out.update(_fields(record))
        if record.exc_info and record.exc_info[0] is not None:
            out["error"] = record.exc_info[0].__name__
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``<ts> <LEVEL> <logger>: <event> key=value ...`` for a terminal or journald."""

    def format(self, record: logging.LogRecord) -> str:
        pairs = " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in _fields(record).items())
        line = f"{_ts(record)} {record.levelname} {record.name}: {record.getMessage()}"
        if record.exc_info and record.exc_info[0] is not None:
            pairs += f" error={record.exc_info[0].__name__}"
        return f"{line} {pairs}".rstrip()


def configure_logging(
    *, json_output: bool, level: int = logging.INFO, stream: IO[str] | None = None
) -> logging.Handler:
    """Send the ``monitor`` loggers to ``stream`` (default stderr) in the chosen format.

    Replaces a handler installed by an earlier call (the CLI may configure twice in tests). Returns
    the handler.
    """
    logger = logging.getLogger("monitor")
    for h in list(logger.handlers):
        if getattr(h, "_rewrite_monitor", False):
            logger.removeHandler(h)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if json_output else TextFormatter())
    handler._rewrite_monitor = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return handler


__all__ = ["SCRUBBED", "TEXT_KEYS", "JsonFormatter", "TextFormatter", "configure_logging", "without_text"]
