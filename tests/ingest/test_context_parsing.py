"""A stored ``ctx_input``'s messages are built without the model when they validate, and exactly as the
model builds them (``records._messages_from_raw``: the hot path of every check batch)."""

from __future__ import annotations

from datetime import UTC, datetime

import pydantic
import pytest

from monitor.ingest.events import CtxInputEvent
from monitor.ingest.store.records import context_from_raw
from monitor.record import Message
from tests.factories import ctx_input


def _by_model(raw: dict) -> tuple[Message, ...] | None:
    ev = CtxInputEvent.model_validate(raw)
    return None if ev.messages is None else tuple(Message(m.role, m.content, m.ts) for m in ev.messages)


@pytest.mark.parametrize(
    "messages",
    [
        None,
        [],
        [{"role": "user", "content": "Welche Regionen? ü", "ts": "2024-03-04T08:00:00Z"}],
        [{"role": "user", "content": "no time"}, {"role": "assistant", "content": "ok", "ts": None}],
        [{"role": "user", "content": "offset", "ts": "2024-03-04T09:00:00+01:00"}],
        [{"role": "tool", "content": "x", "ts": "2024-03-04T08:00:00Z", "name": "search"}],
    ],
)
def test_messages_are_those_the_model_builds(messages: list | None) -> None:
    raw = ctx_input(messages=messages, n_messages=len(messages or []))
    assert context_from_raw(raw).messages == _by_model(raw)


def test_the_fast_path_reads_times_as_the_model_does() -> None:
    raw = ctx_input(messages=[{"role": "user", "content": "hi", "ts": "2024-03-04T09:00:00+01:00"}])
    (m,) = context_from_raw(raw).messages or ()
    assert m.ts == datetime(2024, 3, 4, 8, 0, tzinfo=UTC) and m.ts.tzinfo is UTC


@pytest.mark.parametrize(
    "message", [{"role": "user", "content": 7}, {"role": "user", "content": "a", "ts": "soon"}]
)
def test_a_message_the_model_refuses_still_raises(message: dict) -> None:
    with pytest.raises(pydantic.ValidationError):
        context_from_raw(ctx_input(messages=[message]))
