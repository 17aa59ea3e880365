"""Incremental ingest: read each source file from where the last read stopped.

Per file the store keeps a cursor (``source_cursors``: file identity, byte offset after the last
complete line, that line's number, a hash of the file's head). The cursor is written inside the
transaction of the batch of events it covers (``Ingestor.run(before_commit=...)``), so after a crash
at any point the next read starts exactly after the last committed line: nothing lost, nothing stored
twice.

What happens to a file, decided from its cursor and what is on disk now:

- same identity (``device:inode``), same head, size >= offset: read on from the offset;
- a line without its newline at the end of a plain file is left for a later read (the producer is
  still writing it);
- same identity but size < offset, or a different head: truncated or rewritten in place
  (copytruncate); read again from the start;
- a new identity at the path: rotated. The old file is looked for beside it (same directory, same
  identity, e.g. renamed to ``app.log.1``); when found, its unread rest is read first, under its new
  name and with a cursor of its own (a drain cut short resumes from the file's furthest cursor, under
  whichever name it was read: numbered generations shift on), then the rotated generations no
  cursor knows that were written since (two rotations between passes; a copy of the old file,
  compressed or made by copytruncate, read from the old cursor on), then the new file from the start.
  A cursor of another path with this identity and head is the same file renamed: reading continues
  from that cursor. A file is known by identity *and* head: a reused inode is another file. When a
  file takes over a name whose cursor another file holds (numbered generations shifted up), that
  cursor moves with its file first, so every generation stays known;
- a file is read through a handle checked to be the identity decided on (the head hashed from that
  handle too): a rotation between a look at a name and its read leaves the source to the next pass,
  rather than storing another file's lines under this one's identity;
- a known generation that grew after it was drained (the producer wrote on to the renamed file before
  it reopened the path) is read on from its cursor, at any pass;
- ``.gz`` files are read once complete: the stream must decompress to its end-of-stream marker
  (``gzip`` raises ``EOFError`` on a file still being written), then they are read in full, resuming
  at the decompressed offset after a crash, and marked completed.

Event origins are the files' absolute paths and line numbers are those of the whole file, exactly as
``rewrite-monitor ingest`` stores them, so the two commands recognise each other's events.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import logging
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from sqlalchemy.orm import Session

from monitor.errors import IngestError
from monitor.ingest.sources import (
    BACKUP_STAMP,
    GENERATION,
    LIVE_SUFFIXES,
    NOT_REGULAR,
    PatternError,
    Prefixed,
    RawLine,
    expand_pattern,
    read_failure,
    read_lines,
    sniff,
)
from monitor.ingest.store.batches import Ingestor, IngestSummary, unjoined_counts
from monitor.ingest.store.cursors import CursorRow, find_by_file_id, get_cursor, save_cursor
from monitor.otel.mapping import DEFAULT_RULES, MappingRules
from monitor.store.engine import refresh_planner_statistics

log = logging.getLogger("monitor.worker.tail")

HEAD_BYTES = 4096
"""Bytes of a file's head hashed to tell an appended file from a replaced one."""
MTIME_SLACK_S = 2
"""A rotated generation last written up to this many seconds before a cursor was saved still counts as
written since (file times and the clock can disagree by a tick): better read twice than never (a
second copy of an event is quarantined as ``duplicate_event``, the first kept)."""


@dataclass
class TailReport:
    """What one pass over the sources did, per file: ``actions`` maps origin to what was decided
    (``read``, ``unchanged``, ``gzip_incomplete``, ``gzip_done``, ``truncated``, ``rotated``,
    ``renamed``, ``locked``, ``moved``: rotated away between the pass's look at it and its read, left
    to the next pass, ``error``)."""

    ingest: IngestSummary = field(default_factory=IngestSummary)
    actions: dict[str, str] = field(default_factory=dict)


_WARNED_NOT_REGULAR: set[str] = set()
"""Paths already named as skipped by this process: a worker passes over its sources every cycle, and one
warning per path says it."""


def _warn_not_regular(path: Path, pattern: str) -> None:
    """Log once per process that ``path``, matched by ``pattern``, is skipped for being no regular file
    (a FIFO, a socket, a device: a worker cannot keep a cursor in a stream with no stable identity)."""
    try:
        mode = path.stat().st_mode
        real = str(path.resolve())
    except (OSError, RuntimeError):
        return  # gone, a dangling symlink or a loop: nothing to read, nothing to say
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode) or real in _WARNED_NOT_REGULAR:
        return
    _WARNED_NOT_REGULAR.add(real)  # one warning per file, whichever path reached it
    kind = next((name for test, name in NOT_REGULAR if test(mode)), "not a regular file")
    log.warning(
        "source skipped: not a regular file",
        extra={"fields": {"source": pattern, "path": str(path), "kind": kind}},
    )


def resolve_sources(patterns: list[str]) -> tuple[list[Path], list[str]]:
    """Files named by configured paths and globs (absolute, sorted, without duplicates), and the
    patterns that name no log file yet, in configuration order.

    A directory contributes its log files (``LIVE_SUFFIXES``, recursively, hidden entries skipped); a
    path or glob that matches nothing yet is skipped (the worker waits for it to appear) and listed
    as waiting: a typo looks exactly like a source that has not appeared, so the worker says which. A
    pattern :func:`monitor.ingest.sources.expand_pattern` refuses (too many paths) is listed as waiting
    too, with a warning naming it, and the other sources are still read.
    """
    found: set[Path] = set()
    waiting: list[str] = []
    for pattern in patterns:
        named: list[Path] = []
        skipped = False
        try:
            matches = expand_pattern(pattern) or [pattern]
        except PatternError as exc:
            # One pattern over too large a folder must not stop the cycle for the other sources.
            log.warning(
                "source pattern not expanded", extra={"fields": {"source": pattern, "error": str(exc)}}
            )
            waiting.append(pattern)
            continue
        for match in matches:
            p = Path(match)
            if p.is_dir():
                for f in p.rglob("*"):
                    if not f.name.endswith(LIVE_SUFFIXES) or any(
                        x.startswith(".") for x in f.relative_to(p).parts
                    ):
                        continue
                    if f.is_file():
                        named.append(f)
                    else:
                        _warn_not_regular(f, pattern)
            elif p.is_file():
                named.append(p)
            elif p.exists():
                _warn_not_regular(p, pattern)
                skipped = True
        found.update(f.resolve() for f in named)
        if not named and not skipped:
            waiting.append(pattern)  # a pattern naming only a FIFO is skipped, not awaited
    return sorted(found), waiting


def expand_sources(patterns: list[str]) -> list[Path]:
    """The files of :func:`resolve_sources`."""
    return resolve_sources(patterns)[0]


def file_id(st: os.stat_result) -> str:
    """``"<device>:<inode>"``: what stays the same when a file is renamed, and changes on rotation."""
    return f"{st.st_dev}:{st.st_ino}"


def head_sha(path: Path, nbytes: int) -> str | None:
    """sha256 (hex) of the first ``nbytes`` bytes (decompressed for ``.gz``); ``None`` for 0 bytes or
    when the file holds fewer bytes than that (it was truncated)."""
    if nbytes <= 0:
        return None
    with path.open("rb") as fh:
        return _head_sha_of(fh, nbytes, gz=path.name.endswith(".gz"))


def _head_sha_of(fh: IO[bytes], nbytes: int, *, gz: bool) -> str | None:
    """:func:`head_sha` of the open file ``fh`` (raw bytes; decompressed when ``gz``), read from its
    start; moves ``fh``'s position."""
    if nbytes <= 0:
        return None
    fh.seek(0)
    if gz:
        with _gunzip(fh) as z:
            data = z.read(nbytes)
    else:
        data = fh.read(nbytes)
    return hashlib.sha256(data).hexdigest() if len(data) == nbytes else None


def _gunzip(raw: IO[bytes]) -> IO[bytes]:
    """The decompressed stream of the open gzip file ``raw`` (closing it leaves ``raw`` open)."""
    return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]


class _Moved(Exception):
    """The file at a path is no longer the one a pass decided to read there: it was renamed away (a
    rotation) between the decision and the open. The source is left to the next pass, which decides
    again from what is on disk then."""


def _open_as(path: Path, fid: str) -> IO[bytes]:
    """``path`` opened for reading (raw bytes), checked to be the file of identity ``fid``; raises
    :class:`_Moved` when another file holds the name now."""
    fh = path.open("rb")
    if file_id(os.fstat(fh.fileno())) != fid:
        fh.close()
        raise _Moved(str(path))
    return fh


def gzip_complete(path: Path) -> bool:
    """Whether the gzip stream decompresses to its end-of-stream marker (its trailer is written).

    A file still being compressed ends early (``EOFError`` in :mod:`gzip`): ``False``, read on a later
    pass. A file that is not gzip at all, or whose data is corrupt (bad header, CRC or length
    mismatch), cannot become readable by waiting: ``gzip.BadGzipFile`` / ``zlib.error`` propagate, and
    the pass reports the file as a source error every cycle until someone replaces it.
    """
    try:
        with gzip.open(path, "rb") as fh:
            while fh.read(1 << 20):
                pass
    except EOFError:
        return False
    return True


class _Reader:
    """Yields the complete lines of one file from a start offset, tracking the byte offset after
    each line; stops early when ``stop()`` turns true (between lines)."""

    def __init__(self, stream: IO[bytes], start: int, first_line_no: int, max_bytes: int, *, gz: bool):
        self.stream = stream
        self.pos = start
        self.first_line_no = first_line_no
        self.max_bytes = max_bytes
        self.gz = gz
        self.exhausted = False
        self.last_line_no = first_line_no - 1

    def lines(self, stop: Callable[[], bool]) -> Iterator[RawLine]:
        stream: Any = self.stream
        if self.pos == 0:
            # a file's form is told once, from its start: binary input is refused (IngestError), and so is
            # a whole-JSON document, which cannot be followed as it grows
            form, head = sniff(self.stream)
            if form == "document":
                raise IngestError(
                    "a JSON document (it opens with '[' or a lone '{': a span export?), not JSON Lines: the "
                    "worker follows JSON Lines as they grow; read it once with `rewrite-monitor ingest PATH`"
                )
            stream = Prefixed(head, self.stream)
        for line in read_lines(stream, self.max_bytes, first_line_no=self.first_line_no):
            if not line.complete and not self.gz:
                return  # a producer is still writing this line: leave it for a later read
            if stop():
                return
            self.pos += line.size
            self.last_line_no = line.line_no
            yield line
        self.exhausted = True


def _beside(path: Path, fid: str) -> os.DirEntry[str] | None:
    """The file of identity ``fid`` in ``path``'s folder under another name, or None."""
    with os.scandir(path.parent) as entries:
        return next(
            (e for e in entries if e.is_file() and e.path != str(path) and file_id(e.stat()) == fid), None
        )


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Tailer:
    """Reads the configured source files incrementally into the store (one session, one summary).

    ``try_lock(origin)`` is asked before a file is read and must return whether this process may
    read it now (on PostgreSQL: an advisory lock per file; always true on SQLite, where one worker
    runs); ``unlock(origin)`` releases it. ``stop()`` is polled between lines.
    """

    def __init__(
        self,
        session: Session,
        *,
        source_name: str,
        batch_size: int,
        max_line_bytes: int,
        sample_seed: str,
        try_lock: Callable[[str], bool] = lambda origin: True,
        unlock: Callable[[str], None] = lambda origin: None,
        stop: Callable[[], bool] = lambda: False,
        redact_key: bytes | None = None,
        trace_rules: MappingRules = DEFAULT_RULES,
    ):
        self.session = session
        self.max_line_bytes = max_line_bytes
        self.try_lock = try_lock
        self.unlock = unlock
        self.stop = stop
        self.report = TailReport()
        self.ingestor = Ingestor(
            session,
            source_name=source_name,
            summary=self.report.ingest,
            batch_size=batch_size,
            sample_seed=sample_seed,
            redact_key=redact_key,
            trace_rules=trace_rules,
        )

    def run(self, paths: list[Path], *, order_key: str = "") -> TailReport:
        """Read every file of ``paths`` that this process can lock; returns the pass's report.

        ``order_key`` rotates the order files are tried in, so several workers start on different
        files instead of queueing for the same lock.
        """
        if paths and order_key:
            k = int(hashlib.sha256(order_key.encode()).hexdigest()[:8], 16) % len(paths)
            paths = paths[k:] + paths[:k]
        for path in paths:
            if self.stop():
                break
            origin = str(path)
            if not self.try_lock(origin):
                self.report.actions[origin] = "locked"
                continue
            self.report.ingest.sources.append(origin)
            try:
                self.report.actions[origin] = self._file(path)
            except _Moved:
                # Nothing read under a name another file holds now: what was read before the move
                # is committed with its cursors, and the next pass sees the rotation afresh.
                self.session.rollback()
                self.report.actions[origin] = "moved"
                log.info(
                    "source rotated while being read; read on next pass", extra={"fields": {"origin": origin}}
                )
            except IngestError as exc:  # a form the worker does not read (binary, a JSON document)
                self.session.rollback()
                self.report.actions[origin] = "error"
                self.report.ingest.source_errors.append((origin, str(exc)))
                log.warning("source not read", extra={"fields": {"origin": origin, "error": str(exc)}})
            except (OSError, EOFError, zlib.error) as exc:
                self.session.rollback()
                reason = read_failure(exc)
                self.report.actions[origin] = "error"
                self.report.ingest.source_errors.append((origin, f"read failed: {reason}"))
                log.warning("source read failed", extra={"fields": {"origin": origin, "error": reason}})
            finally:
                self.unlock(origin)
        # as ingest_sources does: the check job's scans that follow are planned with statistics
        refresh_planner_statistics(self.session, ("events", "records"), rows=self.report.ingest.stored)
        self.report.ingest.unjoined_ctx, self.report.ingest.unjoined_rewrites = unjoined_counts(self.session)
        self.session.commit()
        return self.report

    # -- one file -----------------------------------------------------------------------------------
    def _file(self, path: Path) -> str:
        origin = str(path)
        st = path.stat()
        fid = file_id(st)
        cur = get_cursor(session=self.session, path=origin)
        gz = path.name.endswith(".gz")
        if gz:
            if cur is not None and cur.file_id == fid and cur.completed:
                return "unchanged"
            if not gzip_complete(path):
                log.info("gzip not complete yet", extra={"fields": {"origin": origin}})
                return "gzip_incomplete"
        action = "read"
        start, line_no = 0, 0
        if cur is not None and cur.file_id == fid:
            if not gz and st.st_size < cur.offset:
                action = "truncated"
            elif head_sha(path, min(cur.offset, HEAD_BYTES)) != cur.head_sha:
                action = "truncated"
            else:
                start, line_no = cur.offset, cur.line_no
                if not gz:
                    # A generation written to after its drain (a late write) is read on every pass.
                    self._read_generations(path, cur, drained=True, unknown=False)
                if not gz and st.st_size == cur.offset:
                    return "unchanged"
        else:
            if cur is not None:
                action = "rotated"
                drained = self._drain_rotated(path, cur)
                self._read_generations(path, cur, drained)
                if self.stop():
                    # Stopped part-way through the old generations: the live cursor still names the
                    # old file, so the next pass sees this rotation again and resumes them.
                    return "rotated"
            prior = self._renamed_from(path, fid)
            if prior is not None:
                action, start, line_no = "renamed", prior.offset, prior.line_no
        copy_bytes = 0
        if action == "truncated" and not gz and cur is not None:
            # copytruncate copied the file to a generation before emptying it: the lines written
            # after the last pass are in the copy (only those written between the copy and the
            # truncation are lost, and nothing can tell how many).
            copy_bytes = self._read_generations(path, cur, drained=False)
        if action in ("truncated", "rotated"):
            assert cur is not None  # both are decided from the path's cursor
            fields: dict[str, object] = {"origin": origin, "previous_offset": cur.offset}
            if action == "truncated":
                # copytruncate's window: what was written between its copy and the truncation is in
                # neither file, and nothing on disk tells how much; the copy read is logged above.
                fields["copy_bytes_read"] = copy_bytes
            log.warning(f"source {action}", extra={"fields": fields})
        self._read(path, fid, st.st_size, start, line_no, gz=gz)
        return action

    def _cursors_of(self, path: Path, fid: str) -> list[CursorRow]:
        """The cursors of the file at ``path`` (identity ``fid``): those with its identity *and* its
        head. An identity alone is not enough: a file system reuses a freed inode (logrotate's
        ``create`` after ``compress`` deleted the old file), and the new file there is another file."""
        return [
            c
            for c in find_by_file_id(session=self.session, file_id=fid)
            if head_sha(path, min(c.offset, HEAD_BYTES)) == c.head_sha
        ]

    def _renamed_from(self, path: Path, fid: str) -> CursorRow | None:
        """A cursor of another path with this file's identity and head: the same file, renamed."""
        return next((c for c in self._cursors_of(path, fid) if c.path != str(path) and not c.completed), None)

    def _drain_rotated(self, path: Path, cur: CursorRow) -> bool:
        """Read the unread rest of the file that used to be at ``path``, if it sits beside it; returns
        whether it was found.

        The drain is cursor-tracked under the old file's new name, so a drain cut short (a crash, a
        stop) resumes at the next pass, which sees the same rotation again, from the furthest cursor of
        the file (by identity and head, under whatever name it was read: it may have been shifted on
        since): the live path's cursor moves to the new file only once the drain is done. A cursor the
        old name holds for another file (the generation rotated there before) is stale and replaced."""
        match = _beside(path, cur.file_id)
        if match is None:
            log.warning(
                "rotated file not found beside the new one; lines written after the cursor may be unread",
                extra={"fields": {"origin": str(path), "offset": cur.offset}},
            )
            return False
        st = match.stat()
        old = Path(match.path).resolve()
        if head_sha(old, min(cur.offset, HEAD_BYTES)) != cur.head_sha:
            return False
        origin = str(old)
        if not self.try_lock(origin):
            return True  # being read by another worker as a source of its own
        try:
            # A drain cut short (or the file read as a source) left a cursor further on, under the name
            # the file had then: a numbered rotation may have shifted it since (app.jsonl.1 on to
            # app.jsonl.2), so it is looked for by identity and head under any name, not by the
            # current name alone, or the drained lines would be read again.
            start, line_no = cur.offset, cur.line_no
            for known in self._cursors_of(old, cur.file_id):
                if known.offset > start:
                    start, line_no = known.offset, known.line_no
            self.report.actions[origin] = "rotated_rest"
            if start < st.st_size:
                self._read(old, cur.file_id, st.st_size, start, line_no, gz=False)
        finally:
            self.unlock(origin)
        return True

    def _vacate(self, path: Path, fid: str, depth: int = 0) -> None:
        """Before the cursor row of ``path`` is given to the file of identity ``fid``: a row that
        another file holds there moves with that file to where it is now (``app.jsonl.1`` shifted on to
        ``app.jsonl.2``), first making room there the same way, so a chain of numbered generations
        shifted by one keeps every file known by its identity and none is taken for an unseen
        generation. A row whose file has left the folder, or whose inode now holds another file, is
        dropped with the overwrite."""
        held = get_cursor(session=self.session, path=str(path))
        if held is None or held.file_id == fid or depth > 64:
            return
        match = _beside(path, held.file_id)
        if match is None:
            return
        moved = Path(match.path).resolve()
        if head_sha(moved, min(held.offset, HEAD_BYTES)) != held.head_sha:
            return
        there = get_cursor(session=self.session, path=str(moved))
        if there is not None and there.file_id == held.file_id and there.offset >= held.offset:
            return
        self._vacate(moved, held.file_id, depth + 1)
        save_cursor(session=self.session, cursor=dataclasses.replace(held, path=str(moved)))

    def _read_generations(self, path: Path, cur: CursorRow, drained: bool, *, unknown: bool = True) -> int:
        """Read what the rotated generations of ``path`` hold that no pass has read, oldest first.

        A generation is ``path``'s name plus a numbered or dated suffix (:data:`GENERATION`), or its stem
        and extension around a backup time (:data:`BACKUP_STAMP`, the Collector's file exporter), plain or
        gzipped; only those written since ``cur`` was last saved are looked at. One a cursor knows (by
        identity and head, under any name) is read on from that cursor when it has grown: the producer
        wrote to it after it was renamed and drained, before it reopened the live path. With ``unknown``,
        the generations no cursor knows are read too: with two rotations between passes the middle file
        (``app.jsonl.1`` when the old file is now ``app.jsonl.2``) holds lines no pass has seen. One whose
        head is that of ``cur``'s file while that file was not found (``drained`` false) is a copy of it:
        compressed after its rotation, or the copy copytruncate makes before it empties the live file. It
        is read from ``cur``'s offset, so the lines written after the last pass are read once and the
        earlier ones not again. A gzip still being written waits. Returns the bytes
        read from such a copy (0 when none was found)."""
        name_re = re.compile(
            f"(?:{re.escape(path.name)}(?:{GENERATION})|{re.escape(path.stem)}{BACKUP_STAMP}{re.escape(path.suffix)})"
            + r"(?:\.gz)?$"
        )
        since = cur.updated_at - timedelta(seconds=MTIME_SLACK_S)
        found: list[tuple[float, Path, os.stat_result, CursorRow | None]] = []
        from_copy = 0
        with os.scandir(path.parent) as entries:
            for e in entries:
                if not e.is_file() or not name_re.match(e.name):
                    continue
                st = e.stat()
                if datetime.fromtimestamp(st.st_mtime, UTC).replace(tzinfo=None) < since:
                    continue  # last written before the cursor: an older generation, read then
                fid = file_id(st)
                known = self._cursors_of(Path(e.path), fid)
                if known:
                    furthest = max(known, key=lambda c: c.offset)
                    if not e.name.endswith(".gz") and st.st_size > furthest.offset:
                        found.append((st.st_mtime, Path(e.path).resolve(), st, furthest))
                    continue  # read (perhaps under another name) before
                if unknown and not (drained and fid == cur.file_id):
                    found.append((st.st_mtime, Path(e.path).resolve(), st, None))
        # Oldest first; file times have the kernel's coarse tick, so two generations written within one
        # tick tie on mtime: the one whose inode changed first (ctime: its last write or its rename)
        # came first, and only then the name.
        order = sorted(found, key=lambda x: (x[2].st_mtime_ns, x[2].st_ctime_ns, str(x[1])))
        for _mtime, gen, st, best in order:
            origin = str(gen)
            gz = gen.name.endswith(".gz")
            if gz and not gzip_complete(gen):
                log.info("rotated generation not compressed yet", extra={"fields": {"origin": origin}})
                continue
            if not self.try_lock(origin):
                continue
            try:
                start, line_no = 0, 0
                if best is not None:
                    start, line_no = best.offset, best.line_no  # a late write to a drained generation
                    self.report.actions[origin] = "late_write"
                else:
                    if (
                        not drained
                        and cur.offset
                        and head_sha(gen, min(cur.offset, HEAD_BYTES)) == cur.head_sha
                    ):
                        start, line_no = cur.offset, cur.line_no  # cur's file, copied or compressed
                        from_copy += max(0, st.st_size - start)
                        log.info(
                            "copy of the rotated file read from the cursor",
                            extra={
                                "fields": {
                                    "origin": origin,
                                    "from_offset": start,
                                    "bytes": st.st_size - start,
                                }
                            },
                        )
                    self.report.actions[origin] = "rotated_generation"
                self._read(gen, file_id(st), st.st_size, start, line_no, gz=gz)
            finally:
                self.unlock(origin)
        return from_copy

    def _read(self, path: Path, fid: str, size: int, start: int, line_no: int, *, gz: bool) -> None:
        """Read ``path`` from byte ``start`` (just after line ``line_no``), storing its lines and its
        cursor under ``path`` with identity ``fid`` and ``size`` bytes; raises :class:`_Moved` when the
        file at ``path`` is no longer ``fid`` (it was decided on from a stat or a scan taken earlier)."""
        origin = str(path)
        # The head hash covers min(offset, HEAD_BYTES) bytes, so it changes only while the offset is
        # below HEAD_BYTES; it is recomputed only then, from a handle of this very file: by its name
        # it would be the head of whatever file a rotation put there meanwhile.
        head_n = -1
        head_digest: str | None = None

        def cursor(done: bool) -> CursorRow:
            nonlocal head_n, head_digest
            n = min(reader.pos, HEAD_BYTES)
            if n != head_n:
                head_n, head_digest = n, _head_sha_of(head_fh, n, gz=gz)
            return CursorRow(origin, fid, head_digest, reader.pos, reader.last_line_no, size, done, _now())

        with ExitStack() as files:
            raw = files.enter_context(_open_as(path, fid))
            head_fh = files.enter_context(_open_as(path, fid))
            stream = files.enter_context(_gunzip(raw)) if gz else raw
            self._vacate(path, fid)
            if start:
                stream.seek(start)  # gzip: decompresses forward to the offset
            reader = _Reader(stream, start, line_no + 1, self.max_line_bytes, gz=gz)
            if start == 0 and line_no == 0:
                # A new or reset file: record its identity now, so a rotation is recognised even
                # before its first complete line.
                save_cursor(session=self.session, cursor=cursor(False))
                self.session.commit()

            def before_commit(last: RawLine) -> None:
                assert last.line_no == reader.last_line_no  # the reader is never ahead of a flush
                save_cursor(session=self.session, cursor=cursor(gz and reader.exhausted))

            self.ingestor.run(
                origin, reader.lines(self.stop), self.max_line_bytes, before_commit=before_commit
            )
            if gz and reader.exhausted:
                save_cursor(session=self.session, cursor=cursor(True))
                self.session.commit()


__all__ = [
    "HEAD_BYTES",
    "TailReport",
    "Tailer",
    "expand_sources",
    "file_id",
    "gzip_complete",
    "head_sha",
    "resolve_sources",
]
