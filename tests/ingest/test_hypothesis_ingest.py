"""Property: whatever garbage surrounds them, every good line is stored and nothing escapes."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.ingest.store.batches import ingest_bytes
from monitor.store.models import Event, Quarantine
from tests.factories import ctx_input, line, rewrite

junk_line = st.one_of(
    st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"") + b"\n"),
    st.text(max_size=120).map(lambda t: t.replace("\n", " ").encode("utf-8", "surrogatepass") + b"\n"),
    st.sampled_from(
        [b"{}\n", b"null\n", b'{"event": "rewrite"}\n', b'{"msg": 5}\n', b"\xff\n", b'"\\ud800"\n']
    ),
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    junk=st.lists(junk_line, max_size=12),
    positions=st.lists(st.integers(min_value=0, max_value=12), min_size=4, max_size=4),
    tail=st.binary(max_size=40),
)
def test_random_lines_never_raise_and_good_lines_are_all_stored(
    session: Session, junk: list[bytes], positions: list[int], tail: bytes
) -> None:
    conv = f"h-{uuid.uuid4().hex}"
    good = [
        line(ctx_input(conv=conv, req=f"{conv}_2", turn=2)),
        line(rewrite(conv=conv, req=f"{conv}_2", turn=2)),
        line(ctx_input(conv=conv, req=f"{conv}_3", turn=3)),
        line(rewrite(conv=conv, req=f"{conv}_3", turn=3)),
    ]
    lines = list(junk)
    for pos, g in zip(positions, good, strict=True):
        lines.insert(min(pos, len(lines)), g)
    origin = f"prop-{conv}"
    summary = ingest_bytes(session, b"".join(lines) + tail.replace(b"\n", b""), origin=origin)
    stored = session.scalar(select(func.count()).select_from(Event).where(Event.conv_id == conv))
    assert stored == 4
    assert summary.joined == 2
    rejected = session.scalar(select(func.count()).select_from(Quarantine).where(Quarantine.origin == origin))
    # every non-blank line is either stored or quarantined (junk never forms a valid event)
    assert summary.stored + summary.rejected_total + summary.blank == summary.lines_read
    assert rejected == summary.rejected_total
