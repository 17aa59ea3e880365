"""The real public logs in ../shared/data/logs ingest completely, join fully, and re-ingest to nothing.

Figures (counted from the files, see ../shared/data/README.md): 5,866 events, 2,933 follow-up turns.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.orm import Session

from monitor.ingest import discover, ingest_sources


def test_all_real_logs_ingest_join_and_reingest_to_nothing(session: Session, shared_logs: Path) -> None:
    sources = discover([shared_logs])
    first = ingest_sources(session, sources)
    assert (first.lines_read, first.stored, first.rejected_total) == (5866, 5866, 0)
    assert dict(first.stored_by_kind) == {"ctx_input": 2933, "rewrite": 2933}
    assert (first.joined, first.unjoined_ctx, first.unjoined_rewrites) == (2933, 0, 0)
    second = ingest_sources(session, sources)
    assert (second.stored, second.already_stored, second.joined, second.rejected_total) == (0, 5866, 0, 0)
