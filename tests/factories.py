"""Builders of log-format-v1 events (dicts) and log bytes, one per event kind."""

from __future__ import annotations

import json
from typing import Any

from monitor.record import Message, transcript_digest


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
