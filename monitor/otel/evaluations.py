"""Findings as OpenTelemetry ``gen_ai.evaluation.result`` events, in OTLP JSON (issue 17, part 4).

A team's trace viewer (Langfuse, Phoenix, Jaeger, Grafana through an OpenTelemetry Collector) is where
it looks every day; ``rewrite-monitor findings --otlp`` writes each finding as one log record of the
GenAI semantic conventions' evaluation event, so it can be loaded there beside the rewrite it judges.

Shape: OTLP's ``LogsData`` in its JSON encoding (the OpenTelemetry protocol specification, "JSON Protobuf
Encoding": lowerCamelCase field names, 64-bit integers as decimal strings, attribute values as
``AnyValue`` objects), one ``LogsData`` per line, as the Collector's ``file`` exporter writes and its
``otlpjsonfile`` receiver reads. Each log record has ``eventName`` ``gen_ai.evaluation.result`` and the
attributes the conventions define (``gen_ai.evaluation.name``: the finding kind;
``gen_ai.evaluation.score.value``: the severity rank, 0 low, 1 medium, 2 high;
``gen_ai.evaluation.score.label``: the severity; ``gen_ai.evaluation.explanation``; and, because the
record came from a log rather than a trace, ``gen_ai.response.id``: the request id, which the
conventions name as the link when no span id is known), plus ``gen_ai.conversation.id``, the model and
``rewrite_monitor.*`` attributes (check id and version, prompt version, how many words).

No query or transcript text: the explanation names the finding kind, its severity and the signals that
graded its words ("number", "proper_name"), never the words or a quoted turn. Pure: no store, no
network; the CLI reads the findings and writes the lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from monitor.otel.spans import to_any_value
from monitor.severity import SEVERITY_RANK

EVENT_NAME = "gen_ai.evaluation.result"
SEVERITY_NUMBER = {"low": 9, "medium": 13, "high": 17}
"""OTLP severity numbers: INFO, WARN, ERROR (the logs data model's SeverityNumber ranges)."""
BATCH = 500
"""Log records per ``LogsData`` line."""


class ExportedFinding(Protocol):
    """What the export reads of a finding (``monitor.checks.store.FindingRow`` has it)."""

    @property
    def request_id(self) -> str: ...

    @property
    def conv_id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def severity(self) -> str: ...

    @property
    def words(self) -> list[str]: ...

    @property
    def evidence(self) -> Mapping[str, Any]: ...

    @property
    def check_id(self) -> str: ...

    @property
    def check_version(self) -> int: ...


def _attributes(pairs: Iterable[tuple[str, object]]) -> list[dict[str, Any]]:
    return [{"key": k, "value": to_any_value(v)} for k, v in pairs if v is not None]


def explanation(kind: str, severity: str, evidence: Mapping[str, Any]) -> str:
    """A text-free explanation: the kind, the severity, and the distinct signals that graded the
    finding's words (``added_content_word at high: number, proper_name``)."""
    signals = sorted(
        {str(w["signal"]) for w in evidence.get("words", []) if isinstance(w, Mapping) and w.get("signal")}
    )
    return f"{kind} at {severity}" + (f": {', '.join(signals)}" if signals else "")


def _nanos(ts: datetime | None, now: datetime) -> str:
    when = ts if ts is not None else now
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return str(int(when.timestamp() * 1_000_000) * 1000)


class RewriteMetaLike(Protocol):
    """What the export reads of the rewrite a finding judges (``monitor.checks.store.RewriteMeta``)."""

    @property
    def ts(self) -> datetime | None: ...

    @property
    def model(self) -> str | None: ...

    @property
    def prompt_version(self) -> str | None: ...

    @property
    def trace_id(self) -> str | None: ...

    @property
    def span_id(self) -> str | None: ...


def log_record(
    f: ExportedFinding,
    *,
    ts: datetime | None,
    model: str | None,
    prompt_version: str | None,
    now: datetime,
    trace_id: str | None = None,
    span_id: str | None = None,
    ids: Callable[[str], str] = str,
) -> dict[str, Any]:
    """One finding as an OTLP ``LogRecord`` (JSON): the event time is the rewrite's (``ts``), else
    ``now``. A rewrite that came from a trace gives the record its ``traceId`` and ``spanId`` (hex), so
    the evaluation is parented to the rewrite span in the trace viewer. The request and conversation ids
    go out as ``ids`` gives them (:func:`monitor.privacy.outbound_id` under the ``outbound_ids``
    setting)."""
    parent = {"traceId": trace_id, "spanId": span_id} if trace_id and span_id else {}
    return {
        **parent,
        "timeUnixNano": _nanos(ts, now),
        "observedTimeUnixNano": _nanos(now, now),
        "severityNumber": SEVERITY_NUMBER.get(f.severity, 9),
        "severityText": f.severity.upper(),
        "eventName": EVENT_NAME,
        "attributes": _attributes(
            [
                ("gen_ai.evaluation.name", f.kind),
                ("gen_ai.evaluation.score.value", float(SEVERITY_RANK.get(f.severity, 0))),
                ("gen_ai.evaluation.score.label", f.severity),
                ("gen_ai.evaluation.explanation", explanation(f.kind, f.severity, f.evidence)),
                ("gen_ai.response.id", ids(f.request_id)),
                ("gen_ai.conversation.id", ids(f.conv_id)),
                ("gen_ai.request.model", model),
                ("rewrite_monitor.prompt_version", prompt_version),
                ("rewrite_monitor.check_id", f.check_id),
                ("rewrite_monitor.check_version", f.check_version),
                ("rewrite_monitor.words", len(f.words)),
            ]
        ),
    }


def logs_data(records: Sequence[dict[str, Any]], *, version: str) -> dict[str, Any]:
    """An OTLP ``LogsData`` holding ``records`` under the ``rewrite-monitor`` service and scope."""
    return {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": _attributes(
                        [("service.name", "rewrite-monitor"), ("service.version", version)]
                    )
                },
                "scopeLogs": [
                    {
                        "scope": {"name": "rewrite-monitor.checks", "version": version},
                        "logRecords": list(records),
                    }
                ],
            }
        ]
    }


def evaluation_lines(
    findings: Iterable[ExportedFinding],
    meta: Mapping[tuple[str, str], RewriteMetaLike],
    *,
    version: str,
    now: datetime,
    ids: Callable[[str], str] = str,
) -> Iterator[dict[str, Any]]:
    """``LogsData`` objects of at most :data:`BATCH` records each, in the order of ``findings``;
    ``meta[(conv_id, request_id)]`` gives the rewrite's time, model, prompt version and trace ids;
    ``ids`` maps the ids that go out (:func:`log_record`)."""
    batch: list[dict[str, Any]] = []
    for f in findings:
        m = meta.get((f.conv_id, f.request_id))
        if m is None:
            batch.append(log_record(f, ts=None, model=None, prompt_version=None, now=now, ids=ids))
        else:
            batch.append(
                log_record(
                    f,
                    ts=m.ts,
                    model=m.model,
                    prompt_version=m.prompt_version,
                    now=now,
                    trace_id=m.trace_id,
                    span_id=m.span_id,
                    ids=ids,
                )
            )
        if len(batch) == BATCH:
            yield logs_data(batch, version=version)
            batch = []
    if batch:
        yield logs_data(batch, version=version)


__all__ = ["EVENT_NAME", "evaluation_lines", "explanation", "log_record", "logs_data"]
