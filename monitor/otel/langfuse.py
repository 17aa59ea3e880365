"""Findings as Langfuse scores, posted through its public API (issue 17, part 4).

A team that reads its traces in Langfuse sees each finding on the rewrite it judges: one score per
finding, ``POST {host}/api/public/scores`` with HTTP Basic auth (the project's public key as user name,
its secret key as password; Langfuse's API reference, "Scores"). The score's ``traceId`` and
``observationId`` are the OpenTelemetry trace id and rewrite span id of the rewrite
(``monitor.otel.mapping``: Langfuse keeps both as they come from an OTLP exporter), so only findings on
rewrites that came from a trace can be posted; the others are counted as skipped.

Body: ``name`` ``rewrite_monitor.<kind>``, ``value`` the severity rank (0 low, 1 medium, 2 high,
``dataType`` NUMERIC), ``comment`` the text-free explanation of the OTLP export
(``monitor.otel.evaluations.explanation``: the kind, severity and signals, never a word of the query or the
transcript), and an ``id`` derived from the trace, span, kind, check version and the finding's place, so
posting again updates the same score instead of adding one (Langfuse upserts a score by id).
"""

from __future__ import annotations

import base64
import hashlib
import json
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from monitor.otel.evaluations import ExportedFinding, RewriteMetaLike, explanation
from monitor.severity import SEVERITY_RANK

SCORES_PATH = "/api/public/scores"
NAME_PREFIX = "rewrite_monitor."
STOP_AFTER = 3
"""Failures in a row after which the export stops: a wrong key or an unreachable host fails every score
the same way, and each try may wait the whole timeout."""


@dataclass
class Posted:
    """What one export did: scores accepted, findings skipped (no trace), the failures (``HTTP 401`` or an
    error class, never a response body or the URL), and the findings not tried once it stopped after
    :data:`STOP_AFTER` failures in a row."""

    sent: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)
    not_tried: int = 0


def score_body(f: ExportedFinding, meta: RewriteMetaLike, place: int) -> dict[str, Any] | None:
    """The score of finding ``f`` (the ``place``-th of its kind on its rewrite), or None when the rewrite
    carries no trace and span id."""
    if not meta.trace_id or not meta.span_id:
        return None
    key = f"{meta.trace_id}:{meta.span_id}:{f.kind}:{f.check_id}:{f.check_version}:{place}"
    return {
        "id": hashlib.sha256(key.encode()).hexdigest()[:32],
        "traceId": meta.trace_id,
        "observationId": meta.span_id,
        "name": NAME_PREFIX + f.kind,
        "value": float(SEVERITY_RANK.get(f.severity, 0)),
        "dataType": "NUMERIC",
        "comment": explanation(f.kind, f.severity, f.evidence),
    }


def post_scores(
    findings: Iterable[ExportedFinding],
    meta: Mapping[tuple[str, str], RewriteMetaLike],
    *,
    host: str,
    public_key: str,
    secret_key: str,
    timeout: float = 10.0,
) -> Posted:
    """Post one score per finding on a traced rewrite (:func:`score_body`) to the Langfuse at ``host``."""
    from monitor.http import post

    out = Posted()
    auth = base64.b64encode(f"{public_key}:{secret_key}".encode()).decode()
    seen: dict[tuple[str, str, str], int] = {}
    url = host.rstrip("/") + SCORES_PATH
    in_a_row = 0
    for f in findings:
        if in_a_row >= STOP_AFTER:
            out.not_tried += 1
            continue
        m = meta.get((f.conv_id, f.request_id))
        place = seen.get((f.conv_id, f.request_id, f.kind), 0)
        seen[(f.conv_id, f.request_id, f.kind)] = place + 1
        body = score_body(f, m, place) if m is not None else None
        if body is None:
            out.skipped += 1
            continue
        request = urllib.request.Request(  # noqa: S310 (http(s) only: the setting is validated)
            url,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Basic {auth}"},
            method="POST",
        )
        failure = post(request, timeout=timeout)
        if failure is None:
            out.sent += 1
            in_a_row = 0
        else:
            out.failed.append(failure)
            in_a_row += 1
    return out
