"""SQLAlchemy 2.x models of the store. The schema itself is created only by Alembic migrations.

Tables:
- ``events``: every accepted log event, its raw JSON kept whole (unknown fields included),
  unique on ``event_key`` so re-ingesting adds nothing.
- ``records``: one row per follow-up turn joining a ``rewrite`` to its ``ctx_input``
  (by ``(conv_id, request_id)``, falling back to ``(conv_id, turn)``); either half may be missing.
- ``check_sets``, ``check_set_members``, ``check_runs``, ``check_skips`` and ``findings``: at which set of
  check versions each record was checked (one run per record and set), which checks were skipped, and what
  they found.
- ``queue_items``, ``queue_days`` and ``verdicts``: the review queue, its per-day sampling counts, and
  what reviewers decided.
- ``leases``, ``source_cursors``, ``alerts``, ``alert_deliveries``: the worker's locks, read positions,
  alerts and their deliveries beyond Sentry.
- ``alias_proposals``, ``regression_cases``: what verdicts produce for the rules and the eval set.
- ``quarantine``: every rejected line with its origin, line number, reason and a truncated excerpt,
  unique on ``(origin, line_no, raw_sha)`` so re-ingesting a bad file adds no new rows.

All timestamps are stored as naive UTC.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from monitor.store.engine import UTCDateTime, normalize_utc_attributes, register_schema

# Deterministic constraint names, so migrations can drop what they created on every backend.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

Id = BigInteger().with_variant(Integer, "sqlite")  # SQLite only auto-increments INTEGER PRIMARY KEY
Json = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    """Declarative base carrying the naming convention."""

    metadata = MetaData(naming_convention=NAMING)


normalize_utc_attributes(Base)  # every datetime column is UTCDateTime: naive UTC in memory as stored


class Event(Base):
    """One accepted log event (``ctx_input``, ``rewrite``, ``retrieve`` or ``answer``)."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    event_key: Mapped[str] = mapped_column(String(64), unique=True)
    content_sha: Mapped[str] = mapped_column(String(64))
    conv_id: Mapped[str | None] = mapped_column(String(255))
    request_id: Mapped[str] = mapped_column(String(255))
    turn: Mapped[int | None] = mapped_column(Integer)
    ts: Mapped[datetime | None] = mapped_column(UTCDateTime)
    source: Mapped[str] = mapped_column(String(128))
    origin: Mapped[str] = mapped_column(String(1024))
    line_no: Mapped[int] = mapped_column(Integer)
    raw: Mapped[dict[str, Any]] = mapped_column(Json)
    ingested_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (
        Index("ix_events_kind_request", "kind", "request_id"),
        Index("ix_events_conv_turn", "conv_id", "turn"),
    )


class Record(Base):
    """A follow-up turn: a rewrite joined to the ctx_input the rewriter received.

    ``join_method`` is ``"request_id"`` or ``"turn"`` once both halves are present, else ``None``.
    ``request_id`` is the rewrite's when there is one (the ctx_input's otherwise). ``check_draw`` is
    the record's draw in [0, 1) for the check rate (``monitor.queue.sampling``), fixed at ingest.
    """

    __tablename__ = "records"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    conv_id: Mapped[str] = mapped_column(String(255))
    request_id: Mapped[str] = mapped_column(String(255))
    turn: Mapped[int] = mapped_column(Integer)
    ts: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ctx_event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id"), unique=True)
    rewrite_event_id: Mapped[int | None] = mapped_column(ForeignKey("events.id"), unique=True)
    join_method: Mapped[str | None] = mapped_column(String(16))
    model: Mapped[str | None] = mapped_column(String(255))
    prompt_version: Mapped[str | None] = mapped_column(String(255))
    check_draw: Mapped[float | None] = mapped_column(Float)

    __table_args__ = (
        # One record per request (migration 0008): the join of two halves read by two workers.
        Index("uq_records_conv_request", "conv_id", "request_id", unique=True),
        Index("ix_records_conv_turn", "conv_id", "turn"),
        Index("ix_records_ts", "ts"),
    )


class Quarantine(Base):
    """A rejected log line: where it was, why, the start of its text, and whether it is resolved."""

    __tablename__ = "quarantine"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    source: Mapped[str] = mapped_column(String(128))
    origin: Mapped[str] = mapped_column(String(1024))
    line_no: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(32), index=True)
    detail: Mapped[str] = mapped_column(Text)
    raw_excerpt: Mapped[str] = mapped_column(Text)
    raw_sha: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True, index=True)
    resolution: Mapped[str | None] = mapped_column(String(16), nullable=True)
    """``stored`` (a later ingest stored the line) or ``dismissed`` (``quarantine resolve``)."""

    __table_args__ = (UniqueConstraint("origin", "line_no", "raw_sha", name="uq_quarantine_line"),)


class CheckSet(Base):
    """A set of check versions a record was checked at: the ``(check_id, check_version)`` pairs of
    :class:`CheckSetMember`, one version per check. ``key`` is :func:`monitor.checks.store.check_set_key`
    of the pairs (unique), so every run of one registry shares a row (issue 36, part 2)."""

    __tablename__ = "check_sets"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class CheckSetMember(Base):
    """One check version of a :class:`CheckSet`."""

    __tablename__ = "check_set_members"

    check_set_id: Mapped[int] = mapped_column(
        ForeignKey("check_sets.id", ondelete="CASCADE"), primary_key=True
    )
    check_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    check_version: Mapped[int] = mapped_column(Integer)

    __table_args__ = (Index("ix_check_set_members_check", "check_id", "check_version"),)


class CheckRun(Base):
    """Every check of one set (:class:`CheckSet`) applied to one record: one row per record and set of
    check versions. A check of the set ran unless a :class:`CheckSkip` of the run names it.

    Unique on ``(record_id, check_set_id)``: checking a record again at the same versions adds nothing,
    and new versions make a new row (the findings of versions already stored stay on the earlier row).
    ``rules_hash`` is the content hash of the rules used; ``n_findings`` counts the findings stored with
    this run. Before migration 0015 there was one row per record and check.
    """

    __tablename__ = "check_runs"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"))
    check_set_id: Mapped[int] = mapped_column(ForeignKey("check_sets.id"))
    rules_hash: Mapped[str] = mapped_column(String(64))
    n_findings: Mapped[int] = mapped_column(Integer)
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (
        UniqueConstraint("record_id", "check_set_id", name="uq_check_runs_record_set"),
        Index("ix_check_runs_set_record", "check_set_id", "record_id"),
        Index("ix_check_runs_checked_at", "checked_at"),
    )


class CheckSkip(Base):
    """A check of a run's set that was skipped on its record, and why (``reason``)."""

    __tablename__ = "check_skips"

    check_run_id: Mapped[int] = mapped_column(
        ForeignKey("check_runs.id", ondelete="CASCADE"), primary_key=True
    )
    check_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    reason: Mapped[str | None] = mapped_column(Text)


class Finding(Base):
    """One finding of one check run (``ordinal``: its place among the run's findings, in the order its
    checks ran). ``severity_rank``: 0 low, 1 medium, 2 high (for filtering).

    ``words`` lists the query words the finding is about; ``evidence`` holds spans, counts, turns.
    """

    __tablename__ = "findings"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    check_run_id: Mapped[int] = mapped_column(ForeignKey("check_runs.id", ondelete="CASCADE"))
    ordinal: Mapped[int] = mapped_column(Integer)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"), index=True)
    request_id: Mapped[str] = mapped_column(String(255), index=True)
    kind: Mapped[str] = mapped_column(String(64))
    severity: Mapped[str] = mapped_column(String(8))
    severity_rank: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    words: Mapped[list[str]] = mapped_column(Json)
    evidence: Mapped[dict[str, Any]] = mapped_column(Json)
    check_id: Mapped[str] = mapped_column(String(64))
    check_version: Mapped[int] = mapped_column(Integer)
    step: Mapped[str | None] = mapped_column(String(64))
    """The grading step that set the severity (``monitor.checks.steps``); None for a finding stored
    before steps were recorded (migration 0012)."""
    rules_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (
        UniqueConstraint("check_run_id", "ordinal", name="uq_findings_run_ordinal"),
        Index("ix_findings_kind_severity", "kind", "severity_rank"),
        Index("ix_findings_check_step", "check_id", "step"),
    )


class QueueItem(Base):
    """A checked rewrite admitted to the review queue (one per record: enqueueing twice does nothing).

    ``stratum`` is ``high``/``medium``/``low``/``control``; ``priority`` orders the queue (higher
    first: 3 high, 2 medium, 1 low, 0 control); ``inclusion_prob`` is π for Horvitz–Thompson weights.
    ``state``: ``pending`` → ``claimed`` (by ``claimed_by`` until ``lease_expires_at``) → ``done`` or
    ``skipped``; a claim past its lease counts as pending again.
    """

    __tablename__ = "queue_items"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"), unique=True)
    request_id: Mapped[str] = mapped_column(String(255), index=True)
    conv_id: Mapped[str] = mapped_column(String(255))
    day: Mapped[date] = mapped_column(Date)
    stratum: Mapped[str] = mapped_column(String(16))
    priority: Mapped[int] = mapped_column(Integer)
    inclusion_prob: Mapped[float] = mapped_column(Float)
    kinds: Mapped[list[str]] = mapped_column(Json)
    words: Mapped[list[str]] = mapped_column(Json)
    model: Mapped[str | None] = mapped_column(String(255))
    prompt_version: Mapped[str | None] = mapped_column(String(255))
    state: Mapped[str] = mapped_column(String(16))
    claimed_by: Mapped[str | None] = mapped_column(String(255))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    due_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Distinct reviewers whose verdicts finish the item: 2 for a blind second review (issue 16).
    reviews_needed: Mapped[int] = mapped_column(Integer, server_default="1", default=1)

    __table_args__ = (
        Index("ix_queue_items_order", "state", "priority", "created_at"),
        Index("ix_queue_items_day", "day", "stratum"),
    )


class QueueDay(Base):
    """Per day and stratum: eligible checked rewrites (N), items taken (n), and those passed over for the
    per-conversation cap. π = n / N; ``stats`` weights verdicts with it."""

    __tablename__ = "queue_days"

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    stratum: Mapped[str] = mapped_column(String(16), primary_key=True)
    eligible: Mapped[int] = mapped_column(Integer)
    taken: Mapped[int] = mapped_column(Integer)
    capped: Mapped[int] = mapped_column(Integer)
    subsampled: Mapped[bool] = mapped_column(Boolean)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Verdict(Base):
    """A reviewer's verdict on a queue item: the first wrong artifact and a label.

    Append-only: a re-review adds a row, and the newest row of an item is its verdict. On an item that
    needs several reviewers (``QueueItem.reviews_needed``) each reviewer's newest row is their verdict,
    and an ``adjudication`` row settles a disagreement.
    """

    __tablename__ = "verdicts"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    queue_item_id: Mapped[int] = mapped_column(ForeignKey("queue_items.id", ondelete="CASCADE"), index=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"), index=True)
    request_id: Mapped[str] = mapped_column(String(255))
    reviewer: Mapped[str] = mapped_column(String(255))
    artifact: Mapped[str] = mapped_column(String(16))
    label: Mapped[str] = mapped_column(String(32))
    corrected_query: Mapped[str | None] = mapped_column(Text)
    must_include: Mapped[list[str]] = mapped_column(Json)
    must_not_include: Mapped[list[str]] = mapped_column(Json)
    note: Mapped[str | None] = mapped_column(Text)
    # {"must_include": [...], "must_not_include": [...]}: the terms above the reviewer accepted from the
    # findings' suggestions (the rest they typed); None on verdicts stored before migration 0014.
    accepted_terms: Mapped[dict[str, list[str]] | None] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Settles a disagreement between the item's reviewers: it makes the regression case, and agreement
    # figures leave it out.
    adjudication: Mapped[bool] = mapped_column(Boolean, server_default=false(), default=False)

    __table_args__ = (Index("ix_verdicts_queue_item_reviewer", "queue_item_id", "reviewer"),)


class Lease(Base):
    """A named, expiring lock held by one worker: ``leader`` for sampling and alerts, ``ingest:<path>``
    for one source file. A holder renews before ``expires_at``; an expired lease may be taken over."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(1100), primary_key=True)
    holder: Mapped[str] = mapped_column(String(255))
    acquired_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class SourceCursor(Base):
    """How far the worker has read one source file, committed with the events it covers.

    ``file_id`` identifies the file (device:inode) to detect rotation; ``head_sha`` hashes its first
    bytes to detect truncation or replacement; ``offset`` is the byte just after the last complete line
    ``line_no``; ``completed`` marks a gzip file read in full.
    """

    __tablename__ = "source_cursors"

    path: Mapped[str] = mapped_column(String(1024), primary_key=True)
    file_id: Mapped[str] = mapped_column(String(128))
    head_sha: Mapped[str | None] = mapped_column(String(64))
    offset: Mapped[int] = mapped_column(BigInteger)
    line_no: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(BigInteger)
    completed: Mapped[bool] = mapped_column(Boolean)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class AddedLemma(Base):
    """A lemma that prompt version ``prompt_version`` added in conversation ``conv_id``: in the query and
    in no received turn (the rewriter profile, ``monitor.checks.profile``). ``prompt_version`` is ``""``
    for rewrites that logged none. One word of a query per row, never transcript text."""

    __tablename__ = "added_lemmas"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    prompt_version: Mapped[str] = mapped_column(String(255))
    lemma: Mapped[str] = mapped_column(String(255))
    conv_id: Mapped[str] = mapped_column(String(255))

    __table_args__ = (
        UniqueConstraint("prompt_version", "lemma", "conv_id", name="uq_added_lemmas"),
        # the lemmas of a batch's conversations (``ProfileReader``), without scanning its prompt versions
        Index("ix_added_lemmas_conv", "conv_id", "prompt_version", "lemma"),
    )


class LearnedOverride(Base):
    """An operator's decision on one learned entry (``monitor.checks.learned``): ``pinned`` fixes its step
    (-2..1) whatever the verdicts say; ``reset_at`` makes the verdicts before it count no more. One row per
    (kind, rewriter, lemma); a lemma is one query word, never transcript text."""

    __tablename__ = "learned_overrides"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    rewriter: Mapped[str] = mapped_column(String(255))
    lemma: Mapped[str] = mapped_column(String(255))
    pinned: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reset_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    set_by: Mapped[str] = mapped_column(String(255))
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (UniqueConstraint("kind", "rewriter", "lemma", name="uq_learned_overrides_entry"),)


class Alert(Base):
    """An alert (or recovery) on the fabrication rate of one group (``overall`` or a prompt version).

    Counts, rates and Wilson bounds of the window and the baseline are stored so the dashboard and the
    cooldown logic need nothing else; ``context`` holds the full payload sent (no transcript text).
    """

    __tablename__ = "alerts"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    group_key: Mapped[str] = mapped_column(String(300), index=True)
    prompt_version: Mapped[str | None] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16))
    window_start: Mapped[datetime] = mapped_column(UTCDateTime)
    window_end: Mapped[datetime] = mapped_column(UTCDateTime)
    window_rewrites: Mapped[int] = mapped_column(Integer)
    window_flagged: Mapped[int] = mapped_column(Integer)
    window_rate: Mapped[float] = mapped_column(Float)
    baseline_rewrites: Mapped[int] = mapped_column(Integer)
    baseline_flagged: Mapped[int] = mapped_column(Integer)
    baseline_rate: Mapped[float | None] = mapped_column(Float)
    delivered_to: Mapped[str] = mapped_column(String(16))
    sentry_event_id: Mapped[str | None] = mapped_column(String(64))
    context: Mapped[dict[str, Any]] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class AlertDelivery(Base):
    """One alert's delivery to one destination besides Sentry (``webhook``, ``slack``, ``pagerduty``).

    ``status`` is ``pending`` until the destination answered 2xx, then ``sent``; a pending delivery is
    tried again at ``next_attempt_at`` (exponential backoff, ``monitor.alerts.deliver``); ``last_error``
    names the HTTP status or error class of the last failure, never a response body.
    """

    __tablename__ = "alert_deliveries"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    alert_id: Mapped[int] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"))
    destination: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(String(200))
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (
        UniqueConstraint("alert_id", "destination", name="uq_alert_deliveries_alert_destination"),
        Index("ix_alert_deliveries_status_next", "status", "next_attempt_at"),
    )


class AliasProposal(Base):
    """A reviewer's proposed alias group (from a false alarm on a legitimate synonym).

    Never applied automatically: ``rewrite-monitor rules proposals`` prints them as YAML for review.
    """

    __tablename__ = "alias_proposals"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    queue_item_id: Mapped[int | None] = mapped_column(ForeignKey("queue_items.id", ondelete="SET NULL"))
    request_id: Mapped[str] = mapped_column(String(255))
    proposer: Mapped[str] = mapped_column(String(255))
    members: Mapped[list[str]] = mapped_column(Json)
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class RegressionCase(Base):
    """A labelled regression case built from a verdict: prefix (messages), follow-up (latest), gold label.

    ``case_key`` (64 hex) = hash of (prefix digest, latest, label): the deduplication key. A re-review
    adds ``version`` + 1 and stamps the older row's ``superseded_at``; nothing is overwritten.
    """

    __tablename__ = "regression_cases"

    id: Mapped[int] = mapped_column(Id, primary_key=True)
    case_key: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    superseded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    verdict_id: Mapped[int] = mapped_column(ForeignKey("verdicts.id", ondelete="CASCADE"))
    record_id: Mapped[int] = mapped_column(ForeignKey("records.id", ondelete="CASCADE"), index=True)
    source_request_id: Mapped[str] = mapped_column(String(255))
    messages: Mapped[list[dict[str, Any]]] = mapped_column(Json)
    latest: Mapped[str] = mapped_column(Text)
    expected_query: Mapped[str | None] = mapped_column(Text)
    must_include: Mapped[list[str]] = mapped_column(Json)
    must_not_include: Mapped[list[str]] = mapped_column(Json)
    accepted_terms: Mapped[dict[str, list[str]] | None] = mapped_column(Json)  # as Verdict.accepted_terms
    label: Mapped[str] = mapped_column(String(32))
    artifact: Mapped[str] = mapped_column(String(16))
    reviewer: Mapped[str] = mapped_column(String(255))
    verdict_at: Mapped[datetime] = mapped_column(UTCDateTime)
    prompt_version: Mapped[str | None] = mapped_column(String(255))
    model: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (UniqueConstraint("case_key", "version", name="uq_regression_cases_key_version"),)


register_schema(Base.metadata)  # the names driver errors may show (monitor.store.engine.value_free)


class StoreKey(Base):
    """A key the store generated for itself (``monitor.store.keys``): ``name`` names its use
    (``outbound_ids``), ``value`` is 64 hex characters from :func:`secrets.token_hex`, written once."""

    __tablename__ = "store_keys"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
