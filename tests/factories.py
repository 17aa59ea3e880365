"""The one set of test factories: how tests build what they need, with defaults and keyword overrides.

- log-format-v1 events (dicts) and log bytes, one builder per event kind, plus generated traffic;
- the in-memory records the checks read (:func:`make_context`, :func:`make_record`);
- store rows, one factory per model the tests create directly (:func:`event_row`, :func:`record_row`,
  :func:`check_run_row`, :func:`finding_row`, :func:`queue_item_row`, :func:`quarantine_row`), and
  :func:`checked_record`, a record checked at the current versions;
- rows made the way the pipeline makes them: :func:`ingest_checked` (ingest, then the check job) and
  :func:`verdict` (a reviewer's verdict).
"""

from __future__ import annotations

import json
import random
import uuid
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from monitor.checks import REGISTRY, current_versions
from monitor.record import ContextInput, Message, Resolution, RewriteRecord, transcript_digest
from monitor.store.models import CheckRun, CheckSkip, Event, Finding, Quarantine, QueueItem, Record

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from monitor.ingest.store.batches import IngestSummary

# -- log events ------------------------------------------------------------------------------------------


def ctx_input(conv: str = "c1", req: str = "c1_2", turn: int = 2, **over: Any) -> dict[str, Any]:
    """A ``ctx_input`` with two messages (user, assistant) whose digest is correct."""
    ev: dict[str, Any] = {
        "event": "ctx_input",
        "ts": "2024-03-04T08:01:31Z",
        "conv_id": conv,
        "request_id": req,
        "turn": turn,
        "n_messages": 2,
        "roles": {"user": 1, "assistant": 1},
        "first_ts": "2024-03-04T08:00:00Z",
        "last_ts": "2024-03-04T08:00:20Z",
        "monotonic": True,
        "digest": None,  # filled in below from the messages
        "client_turn_count": 2,
        "messages": [
            {"role": "user", "content": "Which EU regions support CMK?", "ts": "2024-03-04T08:00:00Z"},
            {"role": "assistant", "content": "Frankfurt and Dublin.", "ts": "2024-03-04T08:00:20Z"},
        ],
    }
    ev.update(over)
    if ev.get("digest") is None and ev.get("messages") is not None:
        msgs = [Message(m["role"], m["content"]) for m in ev["messages"]]
        ev["digest"] = transcript_digest(msgs)
    return ev


def rewrite(conv: str = "c1", req: str = "c1_2", turn: int = 2, **over: Any) -> dict[str, Any]:
    """A ``rewrite`` event for the request above."""
    ev: dict[str, Any] = {
        "event": "rewrite",
        "ts": "2024-03-04T08:01:31.420Z",
        "conv_id": conv,
        "request_id": req,
        "turn": turn,
        "latest": "What's the uptime SLA on the second one?",
        "query": "What is the uptime SLA for the Dublin region?",
        "rewritten": True,
        "resolved": [{"surface": "the second one", "antecedent": "Dublin", "turn": 1}],
        "dropped": [],
        "model": "m1",
        "prompt_version": "ctx-v1",
        "latency_ms": 212,
    }
    ev.update(over)
    return ev


def line(ev: dict[str, Any]) -> bytes:
    return json.dumps(ev).encode() + b"\n"


def log(*events: dict[str, Any]) -> bytes:
    return b"".join(line(e) for e in events)


def canonical_case_2_without_alias(conv: str = "cmk") -> bytes:
    """Issue 3, canonical case 2 with an invented region code (no alias group names 'eu-west-9')."""
    msgs = [
        {"role": "user", "content": "Which EU regions support customer-managed encryption keys?"},
        {
            "role": "assistant",
            "content": "Frankfurt and Dublin both support customer-managed keys (CMK) for data at rest.",
        },
    ]
    return log(
        ctx_input(conv=conv, req=f"{conv}_2", messages=msgs, n_messages=2, client_turn_count=2),
        rewrite(
            conv=conv,
            req=f"{conv}_2",
            latest="What's the uptime SLA on the second one?",
            query="What is the uptime SLA for the Dublin (eu-west-9) region?",
            resolved=[{"surface": "the second one", "antecedent": "Dublin", "turn": 1}],
            dropped=["customer-managed encryption keys"],
        ),
    )


def dashboard_log() -> bytes:
    """The log of the dashboard's three follow-ups (described in tests/dashboard/test_dashboard.py).

    ``c1_2`` showed 9 turns to the client and adds "enterprise plan", with retrieval and answer
    logged; ``c2_2`` is clean; ``c3_2`` adds "Kubernetes"."""
    return log(
        ctx_input(client_turn_count=9),
        rewrite(query="What is the uptime SLA for the Dublin region on the enterprise plan?"),
        {
            "event": "retrieve",
            "request_id": "c1_2",
            "conv_id": "c1",
            "hits": [
                {"rank": 2, "doc_id": "doc-eu", "score": 0.71, "title": "EU regions"},
                {"rank": 1, "doc_id": "doc-sla", "score": 0.82, "title": "Dublin SLA"},
            ],
        },
        {
            "event": "answer",
            "request_id": "c1_2",
            "conv_id": "c1",
            "text": "99.95% [1]",
            "citations": ["doc-sla"],
        },
        ctx_input(conv="c2", req="c2_2"),
        rewrite(conv="c2", req="c2_2"),
        ctx_input(conv="c3", req="c3_2"),
        rewrite(conv="c3", req="c3_2", query="What is the uptime SLA for Dublin on Kubernetes?"),
    )


# -- generated traffic ---------------------------------------------------------------------------------
TOPICS = [
    ("Which EU regions support customer-managed keys?", "Frankfurt and Dublin.", "uptime SLA", "Dublin"),
    ("What plans include SSO?", "Business and Enterprise.", "price", "Business plan"),
    ("Which Postgres versions are supported?", "14, 15 and 16.", "end of life", "Postgres 14"),
    ("Where can I store backups?", "In S3 or GCS buckets.", "retention limit", "S3 backups"),
]


def stream_lines(
    n_conversations: int, turns: int = 3, *, seed: int = 7, day: str = "2024-03-04"
) -> list[bytes]:
    """``2 * n_conversations * turns`` log lines: per turn a ``ctx_input`` (the messages so far) and its
    ``rewrite``, conversations interleaved in time. About 1 rewrite in 12 adds a word the user never
    said ("on the enterprise plan": a constraint whoever adds it, so however often a rewriter adds it the
    checks find something); versions ctx-v1/ctx-v2 alternate."""
    rng = random.Random(seed)
    start = datetime.fromisoformat(day)
    out: list[bytes] = []
    for t in range(1, turns + 1):
        for c in range(n_conversations):
            q, a, follow, ante = TOPICS[c % len(TOPICS)]
            conv = f"conv{c}"
            ts = start + timedelta(seconds=c * 7 + t * 60)
            stamp = ts.isoformat() + "Z"
            msgs = []
            for k in range(t):
                msgs.append({"role": "user", "content": q if k == 0 else f"And the {follow}?", "ts": stamp})
                msgs.append({"role": "assistant", "content": a, "ts": stamp})
            req = f"{conv}_{t}"
            out.append(
                line(
                    ctx_input(
                        conv,
                        req,
                        t + 1,
                        ts=stamp,
                        n_messages=len(msgs),
                        roles={"user": t, "assistant": t},
                        client_turn_count=len(msgs),
                        first_ts=stamp,
                        last_ts=stamp,
                        messages=msgs,
                    )
                )
            )
            fabricated = rng.random() < 1 / 12
            query = (
                f"What is the {follow} for {ante}" + (" on the enterprise plan" if fabricated else "") + "?"
            )
            out.append(
                line(
                    rewrite(
                        conv,
                        req,
                        t + 1,
                        ts=stamp,
                        latest=f"What's the {follow} on that?",
                        query=query,
                        resolved=[],
                        prompt_version=f"ctx-v{1 + c % 2}",
                    )
                )
            )
    return out


def traces_of(lines: list[bytes]) -> list[bytes]:
    """The ``ctx_input``/``rewrite`` pairs of ``lines`` as OpenTelemetry traces, one per request, in OTLP
    JSON: a GenAI chat span marked ``rewrite_monitor.step = rewrite`` on one line, the trace's root
    span on the next, in the order a batch span processor exports them (children first). Ids, turn,
    client turn count, digest and prompt version travel as attributes, so the mapped events are the
    logged ones without their message times (``monitor.otel.mapping``)."""
    import hashlib

    def attrs(d: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
            for k, v in d.items()
        ]

    def nanos(stamp: str) -> str:
        ts = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        return str(int(ts.timestamp() * 1_000_000) * 1000)

    def one(span: dict[str, Any]) -> bytes:
        return (json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n").encode()

    ctx: dict[str, dict[str, Any]] = {}
    out: list[bytes] = []
    for raw in lines:
        ev = json.loads(raw)
        if ev["event"] == "ctx_input":
            ctx[ev["request_id"]] = ev
            continue
        c = ctx.pop(ev["request_id"])
        trace = hashlib.sha256(ev["request_id"].encode()).hexdigest()[:32]
        messages = [
            {"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]} for m in c["messages"]
        ]
        messages.append({"role": "user", "parts": [{"type": "text", "content": ev["latest"]}]})
        output = [{"role": "assistant", "parts": [{"type": "text", "content": ev["query"]}]}]
        chat = {
            "rewrite_monitor.step": "rewrite",
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": ev["conv_id"],
            "gen_ai.input.messages": json.dumps(messages),
            "gen_ai.output.messages": json.dumps(output),
            "gen_ai.request.model": ev.get("model") or "m1",
            "rewrite_monitor.request_id": ev["request_id"],
            "rewrite_monitor.turn": ev["turn"],
            "rewrite_monitor.client_turn_count": c["client_turn_count"],
            "rewrite_monitor.digest": c["digest"],
            "rewrite_monitor.prompt_version": ev["prompt_version"],
        }
        start, end = nanos(c["ts"]), nanos(ev["ts"])
        base = {"traceId": trace, "startTimeUnixNano": start, "endTimeUnixNano": end}
        out.append(
            one(
                {
                    **base,
                    "spanId": "1" * 16,
                    "parentSpanId": "2" * 16,
                    "name": "chat",
                    "attributes": attrs(chat),
                }
            )
        )
        out.append(one({**base, "spanId": "2" * 16, "name": "POST /chat", "attributes": []}))
    return out


# -- records as the checks read them ---------------------------------------------------------------------
T0 = datetime(2024, 3, 4, 8, 0, tzinfo=UTC)


def make_context(
    messages: list[tuple[str, str]],
    *,
    request_id: str = "c1_3",
    client_turn_count: int | None = -1,
    n_messages: int | None = None,
    roles: dict[str, int] | None = None,
    digest: str | None = "auto",
    monotonic: bool | None = True,
    extra: dict | None = None,
    timestamps: list[datetime] | None = None,
) -> ContextInput:
    """A ctx_input consistent with ``messages`` unless a field is overridden (``-1``/``"auto"`` = derived)."""
    ts = timestamps or [T0 + timedelta(seconds=20 * i) for i in range(len(messages))]
    msgs = tuple(Message(role, content, t) for (role, content), t in zip(messages, ts, strict=True))
    return ContextInput(
        request_id=request_id,
        n_messages=len(msgs) if n_messages is None else n_messages,
        roles=dict(Counter(m.role for m in msgs)) if roles is None else roles,
        digest=transcript_digest(msgs) if digest == "auto" else digest,
        client_turn_count=len(msgs) if client_turn_count == -1 else client_turn_count,
        monotonic=monotonic,
        first_ts=ts[0] if ts else None,
        last_ts=ts[-1] if ts else None,
        messages=msgs,
        context_extra=extra or {},
    )


def make_record(
    messages: list[tuple[str, str]] | None,
    latest: str,
    query: str,
    *,
    resolved: tuple[Resolution, ...] = (),
    dropped: tuple[str, ...] = (),
    context: ContextInput | None = None,
    request_id: str = "c1_3",
    turn: int = 3,
    **ctx_kw,
) -> RewriteRecord:
    if context is None and messages is not None:
        context = make_context(messages, request_id=request_id, **ctx_kw)
    return RewriteRecord(
        conv_id="c1",
        request_id=request_id,
        turn=turn,
        latest=latest,
        query=query,
        rewritten=query.strip() != latest.strip(),
        resolved=resolved,
        dropped=dropped,
        context=context,
    )


# -- store rows, one factory per model -------------------------------------------------------------------
CHECKS = current_versions()
RANK = {"low": 0, "medium": 1, "high": 2}


def _add(session: Session, row: Any) -> Any:
    session.add(row)
    session.flush()
    return row


def event_row(session: Session, **over: Any) -> Event:
    """A stored ``rewrite`` event with a unique key."""
    fields: dict[str, Any] = {
        "kind": "rewrite",
        "event_key": uuid.uuid4().hex,
        "content_sha": "x",
        "conv_id": "c",
        "request_id": "c_2",
        "turn": 2,
        "ts": None,
        "source": "t",
        "origin": "t",
        "line_no": 1,
        "raw": {},
        "ingested_at": datetime(2024, 3, 4),
    }
    fields.update(over)
    return _add(session, Event(**fields))


def record_row(session: Session, **over: Any) -> Record:
    """A joined record of turn 2 at 09:00 on 4 March 2024; its rewrite event is made unless given."""
    fields: dict[str, Any] = {"conv_id": "c", "request_id": "c_2", "turn": 2, "ts": datetime(2024, 3, 4, 9)}
    fields.update(over)
    if "rewrite_event_id" not in fields:
        fields["rewrite_event_id"] = event_row(session, request_id=fields["request_id"]).id
    return _add(session, Record(**fields))


def check_run_row(
    session: Session,
    *,
    record_id: int,
    checks: list[tuple[str, int]] | None = None,
    check_id: str | None = None,
    check_version: int | None = None,
    skipped: dict[str, str | None] | None = None,
    **over: Any,
) -> CheckRun:
    """A run on record ``record_id`` at the check set ``checks`` (or of the one check ``check_id`` at
    ``check_version``), on which every check ran and found nothing but those of ``skipped`` (check id ->
    reason), which were skipped."""
    from monitor.checks.store import check_set_ids, check_set_key

    pairs = checks if checks is not None else [(check_id or "", check_version or 0)]
    ids = check_set_ids(session=session, sets=[pairs], now=datetime(2024, 3, 4, 10))
    fields: dict[str, Any] = {
        "record_id": record_id,
        "check_set_id": ids[check_set_key(pairs)],
        "rules_hash": "h",
        "n_findings": 0,
        "checked_at": datetime(2024, 3, 4, 10),
    }
    fields.update(over)
    run = _add(session, CheckRun(**fields))
    for cid, reason in (skipped or {}).items():
        _add(session, CheckSkip(check_run_id=run.id, check_id=cid, reason=reason))
    return run


def finding_row(session: Session, *, severity: str = "high", **over: Any) -> Finding:
    """A finding of the first ordinal (``check_run_id``, ``record_id``, ``request_id``, ``kind``,
    ``check_id``, ``check_version`` needed); the rank follows ``severity``."""
    fields: dict[str, Any] = {
        "ordinal": 0,
        "severity": severity,
        "severity_rank": RANK[severity],
        "reason": "r",
        "words": [],
        "evidence": {},
        "rules_hash": "h",
        "created_at": datetime(2024, 3, 4, 10),
    }
    fields.update(over)
    return _add(session, Finding(**fields))


def queue_item_row(session: Session, **over: Any) -> QueueItem:
    """A pending high-stratum item of 4 March 2024 (``record_id``, ``request_id``, ``conv_id``,
    ``due_at``, ``created_at`` needed)."""
    fields: dict[str, Any] = {
        "day": date(2024, 3, 4),
        "stratum": "high",
        "priority": 3,
        "inclusion_prob": 1.0,
        "kinds": [],
        "words": [],
        "state": "pending",
    }
    fields.update(over)
    return _add(session, QueueItem(**fields))


def quarantine_row(session: Session, **over: Any) -> Quarantine:
    """A rejected line (``line_no``, ``reason``, ``detail``, ``raw_sha`` needed)."""
    fields: dict[str, Any] = {
        "source": "t",
        "origin": "old.log",
        "raw_excerpt": "{}",
        "created_at": datetime(2024, 3, 5),
    }
    fields.update(over)
    return _add(session, Quarantine(**fields))


def checked_record(
    session: Session,
    conv: str,
    req: str,
    *,
    severity: str | None,
    kind: str = "added_content_word",
    hour: int = 9,
    day: date = date(2024, 3, 4),
) -> int:
    """A record fully checked at the current versions, with one finding of ``severity`` (or none)."""
    rec = record_row(
        session,
        conv_id=conv,
        request_id=req,
        ts=datetime.combine(day, datetime.min.time()).replace(hour=hour),
    )
    run = check_run_row(session, record_id=rec.id, checks=list(CHECKS))
    if severity is not None:
        spec = next(s for s in REGISTRY.values() if kind in s.kinds)
        finding_row(
            session,
            check_run_id=run.id,
            record_id=rec.id,
            request_id=req,
            kind=kind,
            severity=severity,
            words=[f"w-{req}"],
            check_id=spec.id,
            check_version=spec.version,
        )
    session.flush()
    return rec.id


# -- rows made the way the pipeline makes them -----------------------------------------------------------
def ingest_checked(session: Session, *events: dict[str, Any]) -> IngestSummary:
    """Ingest ``events`` as one log, then run the check job with the bundled rules; the ingest summary."""
    from monitor.checks.rules import load_rules
    from monitor.ingest.store.batches import ingest_bytes
    from monitor.worker.jobs import check_job

    summary = ingest_bytes(session, log(*events))
    check_job(session=session, rules=load_rules())
    return summary


VERDICT_AT = datetime(2024, 3, 5, 9, 30, tzinfo=UTC)


def verdict(session: Session, req: str, label: str = "fabricated_constraint", **over: Any) -> int:
    """A verdict on request ``req`` by ``alice`` at :data:`VERDICT_AT`; the artifact follows the label
    (``none`` for ``ok`` and ``false_alarm_synonym``, else ``rewrite``). Its id."""
    from monitor.review.store import verdict_for_request

    fields: dict[str, Any] = {
        "artifact": "none" if label in ("ok", "false_alarm_synonym") else "rewrite",
        "reviewer": "alice",
        "now": VERDICT_AT,
    }
    fields.update(over)
    return verdict_for_request(session=session, request_id=req, label=label, **fields)
