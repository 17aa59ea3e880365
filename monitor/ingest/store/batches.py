"""Ingest log sources into the store, losing nothing and counting nothing twice.

Sources are files (plain or ``.gz``), directories (read recursively in sorted path order) and ``-``
for standard input; a path to a pipe or device (``<(zcat f.gz)``, ``/dev/stdin``) is refused, as it has
no identity a re-run could recognise: such a stream goes through ``-``. Every line ends up in exactly
one place:

- stored in ``events`` (and joined into ``records``), or
- already stored (the same event from the same origin and line: a re-ingest adds nothing), or
- in ``quarantine`` with a reason from ``monitor.ingest.events.REASONS`` (a duplicate is a line whose event
  key is already stored from another place), or
- blank (whitespace only), counted and skipped.

Lines are read in bounded chunks (``max_line_bytes``), so a giant line never sits whole in memory,
and are written in transactions of ``batch_size`` lines.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import re
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table, case, delete, func, or_, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from monitor.errors import IngestError
from monitor.ingest.events import LineError, ParsedEvent, ParsedSpans, canonical_sha, parse_line
from monitor.ingest.sources import ProgressFn, RawLine, Source, _noting_last, read_failure, read_input
from monitor.ingest.store import traces as otlp_store
from monitor.ingest.store.quarantine import resolve_stored
from monitor.otel.mapping import DEFAULT_RULES, MappingRules
from monitor.otel.spans import SPAN
from monitor.sampling import DEFAULT_SEED, draw
from monitor.store.engine import (
    dialect_insert,
    insert_ignore,
    insert_ignore_returning,
    insert_many,
    refresh_planner_statistics,
)
from monitor.store.models import CheckRun, CheckSkip, Event, Finding, Quarantine, Record

EXCERPT_CHARS = 2000
JOINABLE = {"ctx_input": "ctx_event_id", "rewrite": "rewrite_event_id"}


@dataclass
class IngestSummary:
    """What one ingest did. Counts are of lines, except ``joined`` (records completed this run).

    ``rejected`` maps a quarantine reason to its count; ``skipped`` maps a reason to the traces counted
    and not stored as a rewrite (``not_a_rewrite_trace``, ``no_message_text``: their spans are stored);
    ``source_errors``
    lists ``(origin, message)`` for sources that could not be read (fully or from some point on).
    """

    lines_read: int = 0
    stored: int = 0
    already_stored: int = 0
    blank: int = 0
    joined: int = 0
    stored_by_kind: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    sources: list[str] = field(default_factory=list)
    source_errors: list[tuple[str, str]] = field(default_factory=list)
    unjoined_ctx: int = 0
    unjoined_rewrites: int = 0

    @property
    def duplicates(self) -> int:
        """Lines rejected because their event was already stored from another place."""
        return self.rejected["duplicate_event"]

    @property
    def rejected_total(self) -> int:
        """All quarantined lines of this run."""
        return sum(self.rejected.values())

    def as_dict(self) -> dict[str, Any]:
        """The summary as plain JSON-ready data."""
        return {
            "sources": self.sources,
            "lines_read": self.lines_read,
            "stored": self.stored,
            "stored_by_kind": dict(sorted(self.stored_by_kind.items())),
            "already_stored": self.already_stored,
            "duplicates": self.duplicates,
            "blank": self.blank,
            "joined": self.joined,
            "rejected": dict(sorted(self.rejected.items())),
            "rejected_total": self.rejected_total,
            "skipped": {k: v for k, v in sorted(self.skipped.items()) if v},
            "unjoined_ctx_input": self.unjoined_ctx,
            "unjoined_rewrite": self.unjoined_rewrites,
            "source_errors": [{"source": o, "error": m} for o, m in self.source_errors],
        }


@dataclass
class _Pending:
    line: RawLine
    result: ParsedEvent | ParsedSpans | LineError
    text: str | None
    trace_line: bool = False  # one of the events of an OTLP line: its quarantine rows differ by detail

    @property
    def line_text(self) -> str:
        """The line as text (undecodable bytes replaced)."""
        return self.text if self.text is not None else self.line.data.decode("utf-8", "replace")


class Ingestor:
    """Writes parsed lines of one source into the store, batch by batch.

    Use :func:`ingest_sources`; this class holds the per-run counters and the open session.
    """

    def __init__(
        self,
        session: Session,
        *,
        source_name: str,
        summary: IngestSummary,
        batch_size: int,
        sample_seed: str = DEFAULT_SEED,
        batch_bytes: int | None = None,
        redact_key: bytes | None = None,
        trace_rules: MappingRules = DEFAULT_RULES,
        on_commit: Callable[[], None] | None = None,
    ):
        self.session = session
        self.on_commit = on_commit
        # how a trace's rewrite span is found (settings otel_rewrite_span_names, otel_condense_templates;
        # monitor.otel.mapping)
        self.trace_rules = trace_rules
        self.sample_seed = sample_seed
        # redact_at_ingest: events and quarantine excerpts are stored with personal details replaced
        # (monitor.privacy.redact_event); the raw line never reaches the store.
        self.redact_key = redact_key
        self.source_name = source_name
        self.summary = summary
        self.batch_size = batch_size
        self.batch_bytes = BATCH_BYTES if batch_bytes is None else batch_bytes

    # -- classification -------------------------------------------------------------------------
    def run(
        self,
        origin: str,
        lines: Iterable[RawLine],
        max_bytes: int,
        *,
        before_commit: Callable[[RawLine], None] | None = None,
    ) -> None:
        """Consume ``lines`` from ``origin``, committing every ``batch_size`` lines, or sooner once the
        batch holds ``batch_bytes`` of line data (:data:`BATCH_BYTES`), so memory is bounded per batch
        and not only per line: 1,000 lines of 1 MiB would otherwise be held at once.

        ``before_commit(last_line)`` runs inside each batch's transaction, just before its commit,
        with the last line the batch covers (blank lines included): the worker stores its read
        cursor there, so the cursor and the events it covers commit together or not at all.
        """
        batch: list[_Pending] = []
        held = 0  # bytes of line data in the batch
        last: RawLine | None = None
        try:
            for line in lines:
                last = line
                self.summary.lines_read += 1
                pending = self._parse(line, max_bytes)
                if pending is not None and self.redact_key is not None:
                    pending = self._redacted(pending)
                if pending is not None and isinstance(pending.result, ParsedSpans):
                    # one OTLP line, many spans: each is an event of the batch, each malformed one a
                    # quarantine row of its own (an empty TracesData stores nothing)
                    got = pending.result
                    batch.extend(_Pending(line, ev, pending.text, trace_line=True) for ev in got.spans)
                    batch.extend(_Pending(line, err, pending.text, trace_line=True) for err in got.errors)
                elif pending is None:
                    self.summary.blank += 1
                    continue
                else:
                    batch.append(pending)
                held += line.size
                if len(batch) >= self.batch_size or held >= self.batch_bytes:
                    self._flush(origin, batch, last, before_commit)
                    batch, last, held = [], None, 0
        except (OSError, EOFError, zlib.error):
            # The stream broke part-way (a corrupt or cut .gz): keep every line decoded before it.
            if batch:
                self._flush(origin, batch, last, before_commit)
            raise
        if batch or (last is not None and before_commit is not None):
            # Trailing blank lines alone still move the cursor past them.
            self._flush(origin, batch, last, before_commit)

    @staticmethod
    def _parse(line: RawLine, max_bytes: int) -> _Pending | None:
        if line.too_long:
            size = line.size - 1 if line.complete else line.size  # the newline is not part of the line
            err = LineError("line_too_long", f"line is {size} bytes, over the {max_bytes}-byte limit")
            return _Pending(line, err, None)
        try:
            text = line.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            err = LineError("invalid_utf8", f"invalid UTF-8 at byte {exc.start}: {exc.reason}")
            return _Pending(line, err, None)
        if not text.strip():
            return None
        return _Pending(line, parse_line(text, complete=line.complete), text)

    def _redacted(self, p: _Pending) -> _Pending:
        """``p`` with its event redacted (``raw``, hence ``content_sha``); its line text is redacted only
        where a quarantine row keeps or compares it (:meth:`_kept_text`)."""
        from monitor.privacy import redact_event

        assert self.redact_key is not None
        if isinstance(p.result, ParsedSpans):
            spans = [otlp_store.redacted_span(ev, self.redact_key, _finder()) for ev in p.result.spans]
            return _Pending(p.line, ParsedSpans(spans, p.result.errors), p.text)
        if not isinstance(p.result, ParsedEvent):
            return p
        raw = redact_event(p.result.raw, self.redact_key, _finder())
        return _Pending(
            p.line, dataclasses.replace(p.result, raw=raw, content_sha=canonical_sha(raw)), p.text
        )

    def _kept_text(self, p: _Pending) -> str:
        """What a quarantine row keeps of a line (a rejected line, a duplicate, a line the store refused),
        and what a completed truncated line is compared with: the line, redacted under
        ``redact_at_ingest``."""
        return p.line_text if self.redact_key is None else self._redact_text(p.line_text)

    def _redact_text(self, text: str) -> str:
        """A raw line redacted as text: names are looked for with JSON's punctuation read as spaces
        (``{"latest":"my name is Bob"}``), then replaced wherever they occur."""
        from monitor.privacy import Redactor

        assert self.redact_key is not None
        r = Redactor(_finder(), key=self.redact_key)
        r.learn_names([_JSON_PUNCT_RE.sub(" ", text)])
        return r.redact(text)

    # -- storage ----------------------------------------------------------------------------------
    def _flush(
        self,
        origin: str,
        batch: list[_Pending],
        last: RawLine | None = None,
        before_commit: Callable[[RawLine], None] | None = None,
    ) -> None:
        saved = self._counts()
        try:
            with self.session.begin_nested():
                self._write(origin, batch)
        except DBAPIError:
            # The store refused something in the batch that validation let through: write it again
            # line by line, so only the line it refuses is quarantined and the rest is stored.
            self._restore(saved)
            for p in batch:
                self._write_alone(origin, p)
        if before_commit is not None and last is not None:
            before_commit(last)
        self.session.commit()
        if self.on_commit is not None:
            self.on_commit()

    def _write_alone(self, origin: str, p: _Pending) -> None:
        """Write one line in its own savepoint; quarantine it as ``store_refused`` (the driver's error
        class and SQLSTATE, never its text, which quotes the values) when the store refuses it."""
        saved = self._counts()
        try:
            with self.session.begin_nested():
                self._write(origin, [p])
        except DBAPIError as exc:
            self._restore(saved)
            orig = exc.orig if exc.orig is not None else exc
            code = getattr(orig, "sqlstate", None)
            detail = f"the store refused the event ({type(orig).__name__}" + (
                f", SQLSTATE {code})" if code else ")"
            )
            with self.session.begin_nested():
                self._quarantine(origin, [(p, LineError("store_refused", detail))], datetime.now(UTC))

    def _counts(self) -> dict[str, Any]:
        """The summary's counters, to put back when a savepoint is rolled back."""
        s = self.summary
        return {
            "stored": s.stored,
            "already_stored": s.already_stored,
            "joined": s.joined,
            "stored_by_kind": Counter(s.stored_by_kind),
            "rejected": Counter(s.rejected),
        }

    def _restore(self, saved: dict[str, Any]) -> None:
        for name, value in saved.items():
            setattr(self.summary, name, value)

    def _write(self, origin: str, batch: list[_Pending]) -> None:
        good = [p for p in batch if isinstance(p.result, ParsedEvent)]
        rejects: list[tuple[_Pending, LineError]] = [
            (p, p.result) for p in batch if isinstance(p.result, LineError)
        ]
        stored_rows: list[tuple[_Pending, ParsedEvent]] = []
        if good:
            keys = list({p.result.event_key for p in good})  # type: ignore[union-attr]
            existing = {
                row.event_key: row
                for row in self.session.execute(
                    select(Event.event_key, Event.content_sha, Event.origin, Event.line_no).where(
                        Event.event_key.in_(keys)
                    )
                )
            }
            seen: dict[str, tuple[str, str, int]] = {
                k: (r.content_sha, r.origin, r.line_no) for k, r in existing.items()
            }
            for p in good:
                ev: ParsedEvent = p.result  # type: ignore[assignment]
                prior = seen.get(ev.event_key)
                if prior is None:
                    seen[ev.event_key] = (ev.content_sha, origin, p.line.line_no)
                    stored_rows.append((p, ev))
                elif prior[1] == origin and prior[2] == p.line.line_no and prior[0] == ev.content_sha:
                    self.summary.already_stored += 1
                else:
                    same = "is identical to" if prior[0] == ev.content_sha else "conflicts with"
                    where = f"{prior[1]}:{prior[2]}"
                    rejects.append(
                        (
                            p,
                            LineError(
                                "duplicate_event",
                                f"{_named(ev)} {same} the event from {where}",
                            ),
                        )
                    )
        now = datetime.now(UTC)
        inserted = self._insert_events(origin, stored_rows, now)
        # A trace whose root span arrived in this batch is mapped to log format v1 events, stored and
        # joined with the rest (monitor.otel.mapping); one that cannot be mapped is quarantined by trace.
        traced = otlp_store.map_new_traces(self.session, stored_rows, inserted, self.trace_rules)
        mapped, unmapped, completed = traced.mapped, traced.failed, traced.completed
        self.summary.skipped.update(reason for _trace, reason in traced.skipped)
        inserted.update(self._insert_events(origin, mapped, now))
        otlp_store.resolve_completed(session=self.session, trace_ids=completed, now=now)
        self._join(inserted)
        self._quarantine(origin, rejects, now)
        if inserted:
            # A line rejected before and stored now (a fixed file, a truncated line found complete).
            by_line = {p.line.line_no: p for p, _ in stored_rows}
            resolve_stored(
                session=self.session,
                origin=origin,
                # an element of a JSON document is numbered by its place, not by a line of the file: it
                # resolves no row of a line that file once held
                lines=[
                    line
                    for line, _ in inserted.values()
                    if not (line in by_line and by_line[line].line.element)
                ],
                text_of=lambda line: self._kept_text(by_line[line]),
                now=now,
            )
        # after the resolution above, which would take a stored line's trace quarantine for a fixed line
        self._quarantine(origin, unmapped, now)

    def _insert_events(
        self, origin: str, rows: list[tuple[_Pending, ParsedEvent]], now: datetime
    ) -> dict[int, tuple[int, ParsedEvent]]:
        """Insert new events; returns ``{event_id: (line_no, parsed)}`` of rows actually inserted."""
        if not rows:
            return {}
        values = [
            {
                "kind": ev.kind,
                "event_key": ev.event_key,
                "content_sha": ev.content_sha,
                "conv_id": getattr(ev.data, "conv_id", None),
                "request_id": ev.data.request_id,
                "turn": getattr(ev.data, "turn", None),
                "ts": getattr(ev.data, "ts", None),
                "source": self.source_name,
                "origin": origin,
                "line_no": p.line.line_no,
                "raw": ev.raw,
                "ingested_at": now,
            }
            for p, ev in rows
        ]
        result = insert_ignore_returning(self.session, Event, ["event_key"], values, ["id", "event_key"])
        by_key = {ev.event_key: (p.line.line_no, ev) for p, ev in rows}
        # by id, which is the rows' order: what reads this reads it in the order of the lines
        inserted = {row.id: by_key[row.event_key] for row in sorted(result, key=lambda r: int(r.id))}
        # Rows skipped by ON CONFLICT were stored by a concurrent ingest of the same event.
        self.summary.already_stored += len(rows) - len(inserted)
        self.summary.stored += len(inserted)
        for _line, ev in inserted.values():
            self.summary.stored_by_kind[ev.kind] += 1
        return inserted

    def _join(self, inserted: dict[int, tuple[int, ParsedEvent]]) -> None:
        """Attach each new ctx_input/rewrite to its other half, or open a record for it."""
        joinable = [(eid, ev) for eid, (_l, ev) in sorted(inserted.items()) if ev.kind in JOINABLE]
        if not joinable:
            return
        conv_ids = list({ev.data.conv_id for _e, ev in joinable})  # type: ignore[attr-defined]
        open_records = list(
            self.session.scalars(
                select(Record).where(
                    Record.conv_id.in_(conv_ids),
                    or_(Record.ctx_event_id.is_(None), Record.rewrite_event_id.is_(None)),
                )
            )
        )
        completed: list[Record] = []
        # New records are built here and written at the end by one upsert statement (one statement per
        # record cost ingest two thirds of its speed); until then they are partners for later halves.
        new: dict[int, Record] = {}
        new_keys: set[tuple[str, str]] = set()
        for eid, ev in joinable:
            data: Any = ev.data
            slot = JOINABLE[ev.kind]
            match = _find_partner(open_records, slot, data.conv_id, data.request_id, data.turn)
            if match is None:
                if (data.conv_id, data.request_id) in new_keys:
                    continue  # this request's record already holds another event of this kind
                rec = Record(conv_id=data.conv_id, request_id=data.request_id, turn=data.turn, ts=data.ts)
                setattr(rec, slot, eid)
                if ev.kind == "rewrite":
                    rec.model, rec.prompt_version = data.model, data.prompt_version
                    rec.check_draw = draw(self.sample_seed, "check", f"{data.conv_id}/{data.request_id}")
                new[id(rec)] = rec
                new_keys.add((data.conv_id, data.request_id))
                open_records.append(rec)
                continue
            rec, method = match
            setattr(rec, slot, eid)
            rec.join_method = method
            if ev.kind == "rewrite":
                if id(rec) in new:  # a turn join renames the new record to the rewrite's request
                    new_keys.discard((rec.conv_id, rec.request_id))
                    new_keys.add((data.conv_id, data.request_id))
                rec.request_id, rec.turn, rec.ts = data.request_id, data.turn, data.ts
                rec.model, rec.prompt_version = data.model, data.prompt_version
                rec.check_draw = draw(self.sample_seed, "check", f"{data.conv_id}/{data.request_id}")
            open_records.remove(rec)
            self.summary.joined += 1
            if id(rec) not in new:
                completed.append(rec)
        self.session.flush()
        completed_ids = [r.id for r in completed] + self._upsert_records(list(new.values()))
        if completed_ids:
            # A record checked as a half (its chat-state checks skipped for want of the other half) is
            # checked again now that it is whole: its runs go with their skips and findings, so no
            # finding made from half a record stands beside the whole record's (as
            # ``monitor.checks.store.delete_runs`` does; ingest reads nothing of the checks stage).
            runs = select(CheckRun.id).where(CheckRun.record_id.in_(completed_ids))
            for table in (Finding, CheckSkip):
                self.session.execute(delete(table).where(table.check_run_id.in_(runs)))
            self.session.execute(delete(CheckRun).where(CheckRun.record_id.in_(completed_ids)))

    def _upsert_records(self, records: list[Record]) -> list[int]:
        """Write new records, each joining the record another transaction opened for its request since
        this batch looked (``INSERT ... ON CONFLICT (conv_id, request_id) DO UPDATE`` on the unique key
        of migration 0008): two workers reading the two halves at once cannot both open one, the second
        insert waits for the first to commit and fills the other slot. One statement, executed for all
        the rows at once (``monitor.store.engine.insert_many``). Returns the ids of the records that such a
        join made whole (each counted in ``joined``). A record whose request already holds an event of
        the same kind (a turn join gave it another request's half) is not written: that event stays
        stored, unjoined."""
        if not records:
            return []
        table: Table = Record.__table__  # type: ignore[assignment]
        cols = (
            "conv_id",
            "request_id",
            "turn",
            "ts",
            "ctx_event_id",
            "rewrite_event_id",
            "join_method",
            "model",
            "prompt_version",
            "check_draw",
        )
        ins = dialect_insert(self.session, table)
        x = ins.excluded
        rewritten = x.rewrite_event_id.is_not(None)
        stmt = ins.on_conflict_do_update(
            index_elements=["conv_id", "request_id"],
            set_={
                "ctx_event_id": func.coalesce(table.c.ctx_event_id, x.ctx_event_id),
                "rewrite_event_id": func.coalesce(table.c.rewrite_event_id, x.rewrite_event_id),
                "join_method": "request_id",
                **{c: case((rewritten, getattr(x, c)), else_=table.c[c]) for c in cols[2:4] + cols[7:]},
            },
            where=or_(table.c.ctx_event_id.is_(None), x.ctx_event_id.is_(None))
            & or_(table.c.rewrite_event_id.is_(None), x.rewrite_event_id.is_(None)),
        ).returning(
            table.c.conv_id, table.c.request_id, table.c.id, table.c.ctx_event_id, table.c.rewrite_event_id
        )
        rows = insert_many(self.session, stmt, [{c: getattr(r, c) for c in cols} for r in records])
        written = {(r.conv_id, r.request_id): r for r in rows}
        joined_now: list[int] = []
        for rec in records:
            row = written.get((rec.conv_id, rec.request_id))
            half = rec.ctx_event_id is None or rec.rewrite_event_id is None
            if row is not None and half and row.ctx_event_id is not None and row.rewrite_event_id is not None:
                joined_now.append(int(row.id))
        self.summary.joined += len(joined_now)
        return joined_now

    def _quarantine(self, origin: str, rejects: list[tuple[_Pending, LineError]], now: datetime) -> None:
        if not rejects:
            return
        values = []
        for p, err in rejects:
            text = self._kept_text(p)
            # the spans and traces of one OTLP line can each fail: their rows differ by their detail
            salt = err.detail.encode() if p.trace_line else b""
            values.append(
                {
                    "source": self.source_name,
                    "origin": origin,
                    "line_no": p.line.line_no,
                    "reason": err.reason,
                    "detail": err.detail[:1000],
                    "raw_excerpt": text[:EXCERPT_CHARS].replace("\x00", "\\u0000"),
                    "raw_sha": hashlib.sha256(p.line.data + salt).hexdigest(),
                    "created_at": now,
                }
            )
            self.summary.rejected[err.reason] += 1
        self.session.execute(
            insert_ignore(self.session, Quarantine, ["origin", "line_no", "raw_sha"]), values
        )


def _named(ev: ParsedEvent) -> str:
    """How a duplicate's detail names an event: its kind and request id, a span by trace and span id."""
    if ev.kind == SPAN:
        return f"span {ev.raw['trace_id']}/{ev.raw['span_id']}"
    return f"{ev.kind} {ev.data.request_id!r}"


def _find_partner(
    open_records: list[Record],
    slot: str,
    conv_id: str,
    request_id: str,
    turn: int,
) -> tuple[Record, str] | None:
    """The open record a new half joins: same (conv_id, request_id) first, else same (conv_id, turn).

    An open record holds exactly one half, and its ``request_id`` is that half's.
    """
    by_turn = None
    for rec in open_records:
        if rec.conv_id != conv_id or getattr(rec, slot) is not None:
            continue
        if rec.request_id == request_id:
            return rec, "request_id"
        if by_turn is None and rec.turn == turn:
            by_turn = rec
    return (by_turn, "turn") if by_turn is not None else None


_JSON_PUNCT_RE = re.compile(r'[{}\[\]":,]')


def _finder() -> Any:
    from monitor.privacy import name_finder

    return name_finder()


BATCH_BYTES = 16 << 20
"""A batch is committed once its lines hold this many bytes (16 MiB), whatever ``batch_size`` says: a
parsed line takes a few times its size in memory, so a batch stays under about 100 MB."""


def ingest_sources(
    session: Session,
    sources: list[Source],
    *,
    source_name: str = "default",
    batch_size: int = 1000,
    max_line_bytes: int = 1 << 20,
    on_source: Callable[[Source], None] | None = None,
    on_bytes: ProgressFn | None = None,
    sample_seed: str = DEFAULT_SEED,
    redact_key: bytes | None = None,
    trace_rules: MappingRules = DEFAULT_RULES,
    on_commit: Callable[[], None] | None = None,
    summary: IngestSummary | None = None,
) -> IngestSummary:
    """Ingest every source in order and return the summary: ``summary`` when given (empty: its counts are
    added to), so an ``on_commit`` can read the counts so far.

    ``on_commit()`` is called after each batch's commit (``run`` hands the records committed so far to
    the check processes: ``monitor.worker.jobs.run_job``).

    A source that cannot be opened or stops decoding part-way (a corrupt gzip stream) is recorded in
    ``summary.source_errors``; the lines read before the fault are kept and the next source is read.
    Bad lines never raise: they are quarantined.
    """
    summary = IngestSummary() if summary is None else summary
    ingestor = Ingestor(
        session,
        source_name=source_name,
        summary=summary,
        batch_size=batch_size,
        sample_seed=sample_seed,
        redact_key=redact_key,
        trace_rules=trace_rules,
        on_commit=on_commit,
    )
    for src in sources:
        summary.sources.append(src.origin)
        if on_source:
            on_source(src)
        try:
            stream = src.open()
        except IngestError as exc:
            summary.source_errors.append((src.origin, str(exc)))
            continue
        last = [0]
        try:
            lines = _noting_last(read_input(stream, max_line_bytes, on_bytes), last)
            ingestor.run(src.origin, lines, max_line_bytes)
        except IngestError as exc:  # a form refused whole (a binary OTLP file, a broken JSON document)
            session.rollback()
            summary.source_errors.append((src.origin, str(exc)))
        except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            session.rollback()
            where = f"part-way, after line {last[0]:,}" if last[0] else "before the first line"
            summary.source_errors.append((src.origin, f"read failed {where}: {read_failure(exc)}"))
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
    refresh_planner_statistics(session, ("events", "records"), rows=summary.stored)
    summary.unjoined_ctx, summary.unjoined_rewrites = unjoined_counts(session)
    return summary


def ingest_bytes(session: Session, data: bytes, *, origin: str = "<bytes>", **kwargs: Any) -> IngestSummary:
    """Ingest an in-memory log (tests, stdin replays). Same rules as :func:`ingest_sources`."""
    summary = IngestSummary(sources=[origin])
    ingestor = Ingestor(
        session,
        source_name=kwargs.get("source_name", "default"),
        summary=summary,
        batch_size=kwargs.get("batch_size", 1000),
        sample_seed=kwargs.get("sample_seed", DEFAULT_SEED),
        batch_bytes=kwargs.get("batch_bytes"),
        redact_key=kwargs.get("redact_key"),
        trace_rules=kwargs.get("trace_rules", DEFAULT_RULES),
    )
    max_bytes = kwargs.get("max_line_bytes", 1 << 20)
    try:
        ingestor.run(origin, read_input(io.BytesIO(data), max_bytes), max_bytes)
    except IngestError as exc:
        session.rollback()
        summary.source_errors.append((origin, str(exc)))
    summary.unjoined_ctx, summary.unjoined_rewrites = unjoined_counts(session)
    return summary


def unjoined_counts(session: Session) -> tuple[int, int]:
    """``(ctx_inputs with no rewrite, rewrites with no ctx_input)`` across the whole store."""
    stmt = select(
        func.count().filter(Record.rewrite_event_id.is_(None)),
        func.count().filter(Record.ctx_event_id.is_(None)),
    ).where(or_(Record.ctx_event_id.is_(None), Record.rewrite_event_id.is_(None)))
    row = session.execute(stmt).one()
    return int(row[0]), int(row[1])


__all__ = ["IngestSummary", "ingest_bytes", "ingest_sources", "unjoined_counts"]
