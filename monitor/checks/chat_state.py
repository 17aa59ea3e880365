"""Chat-state faults, read from ``ctx_input`` (issue 3, section 3).

The rewriter can only be as right as the history it was handed; these checks say when that history was
truncated, one-sided, out of order, altered in transit, or another session's. Each is its own
registered check so that coverage is reported per signal (a producer may log a digest but no
timestamps).

Severity choices (documented here because they are policy, not measurement):
- ``window_truncated``: medium; the verdict hint in the evidence says the fault is chat state.
- ``missing_assistant_turns``: medium; **low** when the ctx_input declares ``transcript_kind:
  user_only`` (CAsT 2019/2020: the source has no assistant turns by design, a property of the data
  rather than a logging fault, so it must not flood the queue).
- ``non_monotonic``, ``roles_mismatch``: medium (logging/ordering defects). ``digest_mismatch``,
  ``session_mismatch``: high (the rewriter's input is not what was logged, or is another session's).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from monitor.checks.base import Finding, SkipCheck
from monitor.checks.references import ELLIPSIS_RE, ORDINAL_RE, PRONOUN_RE
from monitor.checks.registry import register
from monitor.checks.rules import Rules
from monitor.checks.steps import Step
from monitor.record import ContextInput, Message, RewriteRecord, transcript_digest

VERSION = 1
CHAT_STATE_HINT = "chat_state"
# The source of every chat-state step: the background chapter on chat-state faults (../shared/seeds,
# 001: a truncated window, missing assistant turns, another session's state, the ctx_input signals).
SEEDS = "background chapter on chat-state faults (seeds 001): the ctx_input signals"
WINDOW_STEPS = (
    Step("unseen_turns", "medium", SEEDS, "the rewriter received fewer turns than the client rendered"),
)
ASSISTANT_STEPS = (
    Step("assistant_turns_missing", "medium", SEEDS, "fewer assistant turns than user turns in the input"),
    Step(
        "user_only_by_design",
        "low",
        "the producer's own transcript_kind: user_only (a property of the source, not a fault)",
        "fewer assistant turns, but the producer declares a user-only transcript",
    ),
)
MONOTONIC_STEPS = (
    Step(
        "out_of_order", "medium", SEEDS, "message times out of order, or the producer logged monotonic=false"
    ),
)
DIGEST_STEPS = (
    Step("digest_differs", "high", SEEDS, "the logged digest is not the digest of the logged messages"),
)
ROLES_STEPS = (
    Step("counts_differ", "medium", SEEDS, "n_messages or the roles histogram disagree with the messages"),
)
SESSION_STEPS = (
    Step("turns_never_shown", "high", SEEDS, "the rewriter received more turns than the client rendered"),
    Step("digest_changed", "high", SEEDS, "the digest changed with no user turn in between"),
    Step(
        "history_not_continued",
        "high",
        SEEDS,
        "the messages do not continue the conversation's previous request (a sliding window allowed)",
    ),
)


def _ctx(record: RewriteRecord) -> ContextInput:
    if record.context is None:
        raise SkipCheck("no ctx_input logged for this request")
    return record.context


def _messages(ctx: ContextInput) -> tuple[Message, ...]:
    if ctx.messages is None:
        raise SkipCheck("ctx_input has no message list (signals only)")
    return ctx.messages


def _f(kind: str, severity: str, evidence: dict[str, Any], reason: str, step: str) -> Finding:
    return Finding(
        kind=kind,
        severity=severity,
        evidence=evidence,
        reason=reason,
        check_id=kind,
        check_version=VERSION,
        step=step,
    )


@register(
    "window_truncated",
    family="chat_state",
    version=VERSION,
    kinds=("window_truncated",),
    steps=WINDOW_STEPS,
    summary="the rewriter received fewer turns than the client rendered",
)
def check_window(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``n_messages < client_turn_count``: the rewriter never saw turns the user saw.

    Evidence: ``unseen_turns``, both counts, and ``verdict_hint: "chat_state"`` when ``resolved`` is
    empty and the latest message has a referring expression (the rewriter could not have resolved it).
    Skips when no ctx_input or no ``client_turn_count``.
    """
    ctx = _ctx(record)
    if ctx.client_turn_count is None:
        raise SkipCheck("no client_turn_count logged")
    if ctx.n_messages >= ctx.client_turn_count:
        return []
    unseen = ctx.client_turn_count - ctx.n_messages
    ev: dict[str, Any] = {
        "n_messages": ctx.n_messages,
        "client_turn_count": ctx.client_turn_count,
        "unseen_turns": unseen,
        "resolved_logged": len(record.resolved),
    }
    reason = f"the rewriter saw {ctx.n_messages} of {ctx.client_turn_count} turns ({unseen} never seen)"
    refers = bool(
        ELLIPSIS_RE.search(record.latest)
        or ORDINAL_RE.search(record.latest)
        or PRONOUN_RE.search(record.latest)
    )
    if not record.resolved:
        ev["verdict_hint"] = CHAT_STATE_HINT
        ev["note"] = (
            "empty resolved after a truncated window: the antecedent may be in the unseen turns; "
            "blame chat state, not the rewriter"
        )
        ev["latest_has_reference"] = refers
        reason += "; resolved is empty, verdict hint: chat state"
    return [_f("window_truncated", "medium", ev, reason, "unseen_turns")]


@register(
    "missing_assistant_turns",
    family="chat_state",
    version=VERSION,
    kinds=("missing_assistant_turns",),
    steps=ASSISTANT_STEPS,
    summary="the rewriter's input has fewer assistant turns than user turns",
)
def check_missing_assistant(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """The roles histogram has fewer assistant turns than user turns: in an alternating chat every
    earlier user turn was answered. Fires when ``assistant < user``. Severity low when the producer
    declares ``transcript_kind: user_only``, else medium. Skips without ctx_input."""
    ctx = _ctx(record)
    users = ctx.roles.get("user", 0)
    assistants = ctx.roles.get("assistant", 0)
    if users == 0 or assistants >= users:
        return []
    kind = ctx.context_extra.get("transcript_kind")
    by_design = kind == "user_only"
    ev = {
        "user_turns": users,
        "assistant_turns": assistants,
        "expected_assistant_turns": users,
        "missing": users - assistants,
        "transcript_kind": kind,
        "by_design": by_design,
    }
    reason = f"{users} user turns but {assistants} assistant turns in the rewriter's input"
    if by_design:
        reason += " (source declares user_only transcripts)"
    step = "user_only_by_design" if by_design else "assistant_turns_missing"
    return [_f("missing_assistant_turns", "low" if by_design else "medium", ev, reason, step)]


@register(
    "non_monotonic",
    family="chat_state",
    version=VERSION,
    kinds=("non_monotonic",),
    steps=MONOTONIC_STEPS,
    summary="the message times of the input are out of order",
)
def check_monotonic(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """Message timestamps out of order, ``first_ts > last_ts``, or the producer logged ``monotonic: false``.
    Skips when neither the flag nor two timestamped messages are available."""
    ctx = _ctx(record)
    stamped = [(i, m.ts) for i, m in enumerate(ctx.messages or ()) if m.ts is not None]
    if ctx.monotonic is None and len(stamped) < 2 and (ctx.first_ts is None or ctx.last_ts is None):
        raise SkipCheck("no monotonic flag and no message timestamps logged")
    out_of_order = [
        {"message_index": i, "previous_index": j}
        for (j, a), (i, b) in zip(stamped, stamped[1:], strict=False)
        if b < a
    ]
    bad_bounds = ctx.first_ts is not None and ctx.last_ts is not None and ctx.first_ts > ctx.last_ts
    if ctx.monotonic is not False and not out_of_order and not bad_bounds:
        return []
    ev = {"monotonic_flag": ctx.monotonic, "out_of_order": out_of_order, "first_after_last": bad_bounds}
    parts = []
    if ctx.monotonic is False:
        parts.append("producer logged monotonic=false")
    if out_of_order:
        parts.append(f"{len(out_of_order)} message(s) earlier than the one before")
    if bad_bounds:
        parts.append("first_ts is after last_ts")
    why = "timestamps out of order: " + "; ".join(parts)
    return [_f("non_monotonic", "medium", ev, why, "out_of_order")]


@register(
    "digest_mismatch",
    family="chat_state",
    version=VERSION,
    kinds=("digest_mismatch",),
    steps=DIGEST_STEPS,
    summary="the logged digest is not the digest of the logged messages",
)
def check_digest(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """The logged digest differs from :func:`monitor.record.transcript_digest` over the logged messages.
    Skips when no digest or no message list was logged."""
    ctx = _ctx(record)
    if ctx.digest is None:
        raise SkipCheck("no digest logged")
    msgs = _messages(ctx)
    got = transcript_digest(msgs)
    if got == ctx.digest:
        return []
    return [
        _f(
            "digest_mismatch",
            "high",
            {"logged": ctx.digest, "recomputed": got, "n_messages": len(msgs)},
            f"logged digest {ctx.digest} != {got} recomputed over the {len(msgs)} logged messages",
            "digest_differs",
        )
    ]


@register(
    "roles_mismatch",
    family="chat_state",
    version=VERSION,
    kinds=("roles_mismatch",),
    steps=ROLES_STEPS,
    summary="n_messages or the roles histogram disagree with the logged messages",
)
def check_roles(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``n_messages`` or the roles histogram disagree with the logged messages. Skips without messages."""
    ctx = _ctx(record)
    msgs = _messages(ctx)
    counted = Counter(m.role for m in msgs)
    logged = {k: v for k, v in ctx.roles.items() if v}
    problems = []
    if ctx.n_messages != len(msgs):
        problems.append(f"n_messages {ctx.n_messages} but {len(msgs)} messages logged")
    if dict(counted) != logged:
        problems.append(f"roles {logged} but messages have {dict(counted)}")
    if not problems:
        return []
    return [
        _f(
            "roles_mismatch",
            "medium",
            {
                "n_messages": ctx.n_messages,
                "messages_logged": len(msgs),
                "roles_logged": logged,
                "roles_counted": dict(counted),
            },
            "; ".join(problems),
            "counts_differ",
        )
    ]


def _continues(earlier: tuple[Message, ...], later: tuple[Message, ...], turn_gap: int) -> bool:
    """Is ``later`` = ``earlier`` (possibly with its oldest messages slid out of the window) plus at most
    two new messages (assistant reply + next user turn) per turn in between?"""
    key_e = [(m.role, m.content) for m in earlier]
    key_l = [(m.role, m.content) for m in later]
    allowed = 2 * max(turn_gap, 0)
    # The overlap must be non-empty: a later list sharing nothing with the earlier one is another
    # conversation's, whatever its length.
    for drop in range(max(len(key_e), 1)):
        kept = key_e[drop:]
        if key_l[: len(kept)] == kept and len(key_l) - len(kept) <= allowed:
            return True
    return False


@register(
    "session_mismatch",
    family="chat_state",
    version=VERSION,
    kinds=("session_mismatch",),
    steps=SESSION_STEPS,
    summary="the input is another session's chat state",
)
def check_session(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """Another session's state: ``n_messages > client_turn_count`` (the rewriter saw turns the user never
    saw), or the message list does not continue the previous request of the conversation (window
    sliding allowed), or the digest changed with no user turn in between (same turn number).
    Evidence names both request ids. Skips when neither signal can be computed.
    Not implemented: "an entity of the input appears in no other request" (needs per-request NER).
    """
    ctx = _ctx(record)
    out: list[Finding] = []
    ran = False
    if ctx.client_turn_count is not None:
        ran = True
        if ctx.n_messages > ctx.client_turn_count:
            extra = ctx.n_messages - ctx.client_turn_count
            out.append(
                _f(
                    "session_mismatch",
                    "high",
                    {
                        "request_id": record.request_id,
                        "n_messages": ctx.n_messages,
                        "client_turn_count": ctx.client_turn_count,
                        "extra_turns": extra,
                    },
                    f"the rewriter saw {extra} turn(s) the user never saw "
                    f"({ctx.n_messages} messages, client rendered {ctx.client_turn_count})",
                    "turns_never_shown",
                )
            )
    earlier = [
        p
        for p in record.peers
        if p.turn <= record.turn and p.context is not None and p.context.messages is not None
    ]
    if ctx.messages is not None and earlier:
        ran = True
        prev = max(earlier, key=lambda p: (p.turn, p.ts is not None, p.ts))
        assert prev.context is not None and prev.context.messages is not None
        gap = record.turn - prev.turn
        if gap == 0 and prev.context.digest and ctx.digest and prev.context.digest != ctx.digest:
            out.append(
                _f(
                    "session_mismatch",
                    "high",
                    {
                        "request_id": record.request_id,
                        "other_request_id": prev.request_id,
                        "turn": record.turn,
                        "digests": [prev.context.digest, ctx.digest],
                    },
                    f"digest changed between {prev.request_id} and {record.request_id} "
                    f"with no user turn in between",
                    "digest_changed",
                )
            )
        elif gap > 0 and not _continues(prev.context.messages, ctx.messages, gap):
            out.append(
                _f(
                    "session_mismatch",
                    "high",
                    {
                        "request_id": record.request_id,
                        "other_request_id": prev.request_id,
                        "other_turn": prev.turn,
                        "turn": record.turn,
                        "other_n_messages": len(prev.context.messages),
                        "n_messages": len(ctx.messages),
                    },
                    f"messages of {record.request_id} do not continue those of {prev.request_id} "
                    f"(turn {prev.turn} -> {record.turn})",
                    "history_not_continued",
                )
            )
    if not ran:
        raise SkipCheck("no client_turn_count and no earlier request with logged messages")
    return out


def check(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """All chat-state findings of ``record`` (skipped sub-checks contribute nothing)."""
    from monitor.checks.registry import run_family

    return run_family(record, rules, "chat_state")
