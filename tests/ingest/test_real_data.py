"""The real public logs in ../shared/data/logs ingest completely, join fully, and re-ingest to nothing.

The expected figures are counted from the files themselves (one event a line, ``ctx_input`` and ``rewrite``
alternating, see ../shared/data/README.md), so the test holds as the shared data grows: with the nine files
of December 2026 that is 6,770 events and 3,385 follow-up turns.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from monitor.ingest.sources import discover
from monitor.ingest.store.batches import ingest_sources


@pytest.mark.slow
def test_all_real_logs_ingest_join_and_reingest_to_nothing(session: Session, shared_logs: Path) -> None:
    kinds: Counter[str] = Counter()
    for f in sorted(shared_logs.glob("*.jsonl")):
        kinds.update(json.loads(line)["event"] for line in f.read_text(encoding="utf-8").splitlines() if line)
    events, turns = sum(kinds.values()), kinds["rewrite"]
    assert kinds["ctx_input"] == turns and events >= 6770  # every turn logs both events; no file lost
    sources = discover([shared_logs])
    first = ingest_sources(session, sources)
    assert (first.lines_read, first.stored, first.rejected_total) == (events, events, 0)
    assert dict(first.stored_by_kind) == {"ctx_input": turns, "rewrite": turns}
    assert (first.joined, first.unjoined_ctx, first.unjoined_rewrites) == (turns, 0, 0)
    second = ingest_sources(session, sources)
    assert (second.stored, second.already_stored, second.joined, second.rejected_total) == (0, events, 0, 0)
