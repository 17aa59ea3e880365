"""Shared builders for the check tests: records are built by hand, exactly as a producer would log them."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from monitor.checks import CheckOutcome, run_checks
from monitor.checks.rules import Rules, load_rules
from monitor.record import ContextInput, Message, Resolution, RewriteRecord, transcript_digest

T0 = datetime(2024, 3, 4, 8, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def rules() -> Rules:
    return load_rules()


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


def summary(outcome: CheckOutcome) -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, severity, words) of every finding, in report order."""
    return [(f.kind, f.severity, tuple(f.words)) for f in outcome.findings]


def run(record: RewriteRecord, rules: Rules) -> CheckOutcome:
    return run_checks(record, rules)
