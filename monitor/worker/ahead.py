"""Lemmas found ahead (issue 36): while ``run`` ingests, the check processes find the added lemmas of the
records committed so far, so the learning pass after the ingest need not.

Measured on 20,000 rewrites of the non-repeating corpus (``benchmarks/corpus.py``), ``run --workers 2``,
SQLite, this machine (2 cores): the ingest holds one core for about 8 s, during which the other was idle
before the warm-up. With everything handed, the learning pass took 0.4 s instead of 2.0 s (what the
processes found came back to it) and 13.5 s on one process.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, NamedTuple

from monitor.checks.store import unchecked_record_ids
from monitor.errors import PoolError
from monitor.ingest.store.records import load_heads
from monitor.worker.pool import StoredBatch, store_url

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from monitor.checks.rules import Rules
    from monitor.ingest.sources import Source
    from monitor.ingest.store.batches import IngestSummary
    from monitor.worker.pool import Ahead, CheckPool

_worker_log = logging.getLogger("monitor.worker")


BYTES_PER_REWRITE = 2_900
"""Bytes of log a rewrite takes, its ctx_input included, to tell from the sources' sizes how many
rewrites an ingest is about to store (:class:`WarmUp`): 2,911 on the shared logs (9,853,160 bytes,
3,385 rewrites, ``../shared/data/logs``) and 2,948 on the benchmarks' non-repeating corpus made from them
(``benchmarks/corpus.py``). A log whose lines are longer promises fewer rewrites than it holds: the
processes then start at the 5,000th rewrite stored, as without the promise."""


class _Reading(NamedTuple):
    """A source as :class:`WarmUp` saw its reading start: its size on disk (0 when unknown), the bytes read
    before it, and the events stored and found stored already (here or at another place) before it."""

    size: int = 0
    read: int = 0
    new: int = 0
    old: int = 0


def _new_and_old(ingest: IngestSummary) -> tuple[int, int]:
    """The events ``ingest`` stored, and those it found stored already (at their place, or at another:
    quarantined as ``duplicate_event``). Both count events, not lines: a line of a trace log holds many."""
    return ingest.stored, ingest.already_stored + ingest.duplicates


class WarmUp:
    """What ``run`` calls after each committed ingest batch: the records committed since that wait to be
    checked (``check_rate`` applied) are handed to the check processes (:meth:`CheckPool.warm`), which
    find their lemmas while this process ingests; after the ingest, :meth:`found` collects them for the
    learning pass, which stores them for every record whose conversation did not change since (the others
    are analysed again). The processes start once :data:`~monitor.worker.pool.MIN_JOB` rewrites wait
    (``CheckPool.wants``), and take batches once ready (about 2 s later; what was committed until then is
    handed with the first batch after), on a store they can read (``store_url``); up to
    :data:`~monitor.worker.pool.LEMMA_ENTRIES` records in all. Nothing here is written: the store ends as
    without it. A process that dies or cannot start, or a pool refused for the job, stops the handing,
    not the ingest: the check phase starts the processes again.

    ``ingest``: the summary the ingest fills (``ingest_sources``' ``summary``), whose counts say how many
    of a source's events so far were new. At each commit after which rewrites wait to be checked, the
    processes start when those rewrites and what the unread rest of the source being read promises
    (:meth:`expected`) make ``MIN_JOB``: on a large new log, at its first commit (1,000 lines by default),
    ready about 2 s later instead of 2 s after the 5,000th rewrite, so the warm-up covers nearly the whole
    ingest (a compressed one later: its bytes read are its text's). A log read again, or a stored one
    after a small new one, promises nothing: its events so far were not new (before, the sizes of all the
    logs promised, and two processes took 1.3 s of a core each for nothing on 20,000 rewrites read a
    second time). :meth:`source` and :meth:`count` must see the ingest's sources and bytes (``run_job``
    passes them as its ``on_source`` and ``on_bytes``)."""

    def __init__(
        self,
        session: Session,
        rules: Rules,
        check_rate: float,
        pool: CheckPool,
        ingest: IngestSummary | None = None,
    ) -> None:
        from monitor.checks import current_versions

        self.session, self.rules, self.check_rate, self.pool = session, rules, check_rate, pool
        self.checks = current_versions()
        self.after = 0
        self.waiting = 0
        self.handed = 0
        self.held: list[int] = []
        """Ids committed before the processes were ready, to hand once they are."""
        self.stored = self.url = store_url(session) if pool.workers > 1 else None
        self.job = uuid.uuid4().hex
        self.ingest = ingest
        self.read = 0
        """The bytes the ingest has read so far (:meth:`count`)."""
        self.reading = _Reading()
        """The source being read, where its reading started (:meth:`source`)."""

    def source(self, source: Source) -> None:
        """The ingest starts reading ``source`` (an ``on_source`` of ``ingest_sources``)."""
        try:
            size = source.size or 0  # standard input promises nothing
        except OSError:  # its ingest says why it cannot be read
            size = 0
        new, old = _new_and_old(self.ingest) if self.ingest is not None else (0, 0)
        self.reading = _Reading(size, self.read, new, old)

    def count(self, read: int) -> None:
        """Add ``read`` bytes to what the ingest has read (an ``on_bytes`` of ``ingest_sources``)."""
        self.read += read

    def expected(self) -> int:
        """The rewrites this ingest is expected to leave to check: those waiting now, and what the bytes of
        the source being read that are not read yet hold (:data:`BYTES_PER_REWRITE`, ``check_rate``
        applied), at the share of its events so far that were new (a trace log's line holds many; a share
        of lines read would promise tens of times what it holds). A compressed source's bytes read are its
        text's, so it soon promises nothing more; the sources after this one promise nothing yet."""
        at = self.reading
        if self.ingest is None:
            return self.waiting
        new, old = _new_and_old(self.ingest)
        new, old = new - at.new, old - at.old
        if new <= 0:
            return self.waiting
        left = max(0, at.size - (self.read - at.read))
        return self.waiting + int(left / BYTES_PER_REWRITE * new / (new + old) * self.check_rate)

    def __call__(self) -> None:
        from monitor.worker.pool import LEMMA_ENTRIES

        stored = self.stored
        if stored is None or self.handed >= LEMMA_ENTRIES:
            return
        try:
            self._hand(stored)
        except (PoolError, OSError) as exc:
            # By its type alone: a database error's text can quote what it read. A PoolError here is a
            # process that died (the pool's own words, which quote no record).
            why = "a check process died, PoolError" if isinstance(exc, PoolError) else type(exc).__name__
            _worker_log.warning(
                "check phase: no lemmas found during the ingest (%s); the learning pass finds them", why
            )
            self.stored = None
        finally:
            # The queries above opened a transaction, which on a SQLite store opened for writing holds
            # its write lock (BEGIN IMMEDIATE) until the next batch commits: other writers (a verdict,
            # the worker) would wait out the whole ingest.
            self.session.commit()

    def _hand(self, stored: str) -> None:
        from monitor.worker.pool import LEMMA_ENTRIES

        ids = unchecked_record_ids(
            session=self.session,
            checks=self.checks,
            after_id=self.after,
            # an ingest batch commits at most batch_size lines (le 100,000, monitor.settings), each one
            # record at most: the first call may also find what an earlier run left unchecked
            limit=100_000,
            check_rate=self.check_rate,
        )
        if not ids:
            return
        self.after = ids[-1]
        self.waiting += len(ids)
        # Until the processes are ready, what was committed waits here (no more than they may be handed):
        # handed with the first batch after, the first records' lemmas are found during the ingest too.
        self.held = (self.held + ids)[: LEMMA_ENTRIES - self.handed]
        expected = self.expected()
        if not self.pool.wants(expected):
            if expected >= self.pool.min_job:  # refused: no processes for this job
                self.stored = None
            return
        if not self.pool.ready():
            return
        room, self.held = self.held, []
        heads = [(h.id, h.conv_id) for h in load_heads(session=self.session, record_ids=room)]
        if self.pool.warm(self.rules, StoredBatch(stored, self.job, heads)):
            self.handed += len(heads)

    def found(self) -> dict[int, Ahead]:
        """The lemmas the processes found, by record id, once they have finished
        (:meth:`CheckPool.found_ahead`); empty when nothing was handed."""
        return self.pool.found_ahead(self.url, self.rules) if self.url is not None and self.handed else {}
