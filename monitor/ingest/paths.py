"""Ingest of the paths an operator names (``rewrite-monitor ingest``): the sources found under them, then
their events stored with the settings' limits, the paths that gave no source reported as failed sources.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.orm import Session

from monitor.ingest.sources import Source, discover
from monitor.ingest.store.batches import IngestSummary, ingest_sources

if TYPE_CHECKING:
    from monitor.settings import Settings


@dataclass(frozen=True, slots=True)
class FoundSources:
    """What :func:`find_sources` found: the ``sources`` to read, the files of walked directories passed
    over because their names did not match (``skipped``), and the paths that gave no source, as
    ``(path, reason)`` (``unreadable``)."""

    sources: list[Source]
    skipped: list[Path]
    unreadable: list[tuple[str, str]]

    def total_bytes(self) -> int | None:
        """The sources' size on disk (compressed for ``.gz``), or ``None`` when one has none (stdin)."""
        sizes = [s.size for s in self.sources]
        return sum(s for s in sizes if s is not None) if all(s is not None for s in sizes) else None


def find_sources(paths: Sequence[str], *, globs: Sequence[str] | None = None) -> FoundSources:
    """The sources under ``paths`` (``monitor.ingest.sources.discover``, whose errors it raises: only
    when no path is left to read, or for ``-`` given twice)."""
    skipped: list[Path] = []
    unreadable: list[tuple[str, str]] = []
    sources = discover(paths, globs=globs, skipped=skipped, errors=unreadable)
    return FoundSources(sources, skipped, unreadable)


def ingest_paths(
    session: Session,
    found: FoundSources,
    *,
    settings: Settings,
    source_name: str | None = None,
    on_source: Callable[[Source], None] | None = None,
    on_bytes: Callable[[int], None] | None = None,
) -> IngestSummary:
    """Ingest ``found``'s sources (``monitor.ingest.store.batches.ingest_sources``), each event labelled
    ``source_name``, else the source_name setting; the paths that gave no source come first in the
    summary's ``source_errors``. ``on_bytes`` counts decompressed bytes."""
    summary = ingest_sources(
        session,
        found.sources,
        source_name=source_name or settings.source_name,
        batch_size=settings.batch_size,
        max_line_bytes=settings.max_line_bytes,
        sample_seed=settings.sample_seed,  # the check draw is fixed here, as by `run` and the worker
        redact_key=settings.ingest_redact_key,
        trace_rules=settings.trace_rules,
        on_source=on_source,
        on_bytes=on_bytes,
    )
    # a path that could not be opened is a source that failed, as one that failed mid-read is
    summary.source_errors[:0] = found.unreadable
    return summary
