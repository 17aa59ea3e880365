"""What ``show --json`` and ``queue --json`` print: one request's artifacts and the review queue as JSON
(issue 33, part 6).

Built from the same :class:`monitor.ingest.store.records.RecordView` the terminal page and the dashboard
render, and the same queue rows (``monitor.queue.store.QueueRow``), so a script reads what a reviewer
sees. The shapes are pydantic models: ``rewrite-monitor schema export`` writes their JSON Schemas
(``schemas/record_view.schema.json``, ``schemas/queue.schema.json``) beside the log format's, and a test
keeps the files and the output in step. Each document names its shape and version in ``schema``.

The logged text is printed as it was logged (JSON escapes it); nothing here renders it. Pure: no store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from monitor.review import evidence

if TYPE_CHECKING:
    from monitor.ingest.store.records import RecordView


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageOut(_Out):
    """One earlier message the rewriter received, by its place in the message list (0-based)."""

    index: int
    role: str
    content: str
    ts: datetime | None = None


class StateOut(_Out):
    """Artifact 1, the chat state: what the rewriter received (the ``ctx_input`` event)."""

    n_messages: int
    roles: dict[str, int]
    client_turn_count: int | None = Field(description="Turns the client rendered, when logged.")
    digest: str | None
    monotonic: bool | None
    messages: list[MessageOut] | None = Field(description="None when the message texts were not logged.")


class ResolutionOut(_Out):
    """A reference the rewriter logged as resolved: the surface form, the antecedent and its turn."""

    surface: str
    antecedent: str
    turn: int | None = None


class RewriteOut(_Out):
    """Artifact 2, the rewrite: the latest message and the standalone query made of it."""

    turn: int
    latest: str
    query: str
    rewritten: bool
    model: str | None
    prompt_version: str | None
    resolved: list[ResolutionOut]
    dropped: list[str]
    ts: datetime | None


class HitOut(BaseModel):
    """One retrieved passage (artifact 3): its rank and id, and what else the log gave."""

    model_config = ConfigDict(extra="allow")
    rank: int | None = None
    doc_id: str | None = None
    score: float | None = None


class EstimateOut(_Out):
    """How often findings of this step were real problems on this rewriter, by the verdicts in the store
    (``monitor.stats.calibration``): the posterior mean and its central 90% interval."""

    rewriter: str = Field(description="The prompt version, else the model, else ''.")
    estimate: float
    low: float
    high: float
    confirmed: int = Field(description="Verdicts on this rewriter that found a real problem on the step.")
    dismissed: int = Field(description="Verdicts on this rewriter that found the rewrite fine.")
    text: str = Field(description="The same in words, as the terminal and the dashboard say it.")


class FindingOut(_Out):
    """A finding of a current check on the rewrite."""

    kind: str
    severity: Literal["low", "medium", "high"]
    check_id: str
    check_version: int
    step: str | None
    words: list[str]
    reason: str
    evidence: dict[str, Any]
    estimate: EstimateOut | None = Field(
        default=None, description="What the verdicts taught of the finding's step; None for other kinds."
    )


class RecordViewOut(_Out):
    """One request in review order: state, rewrite, retrieval, answer; then its findings."""

    schema_: Literal["rewrite-monitor/record-view/1"] = Field(
        default="rewrite-monitor/record-view/1", alias="schema"
    )
    request_id: str
    conv_id: str
    state: StateOut | None = Field(description="None when no ctx_input was logged.")
    rewrite: RewriteOut | None = Field(description="None when only a ctx_input was logged.")
    retrieval: list[HitOut]
    answer: dict[str, Any] | None = Field(description="The logged answer event, when there is one.")
    findings: list[FindingOut]


class QueueItemOut(_Out):
    """One review-queue item: where it stands, why it is there, and its inclusion probability."""

    id: int
    request_id: str
    conv_id: str
    day: date
    stratum: str
    inclusion_prob: float = Field(description="The sampling design's probability of admitting it (π).")
    kinds: list[str]
    words: list[str]
    state: str
    claimed_by: str | None
    lease_expires_at: datetime | None
    due_at: datetime
    overdue: bool
    created_at: datetime
    model: str | None
    prompt_version: str | None
    reviews_needed: int


class QueueOut(_Out):
    """The review queue as ``queue`` lists it: the items shown, how many matched, the queue's depth."""

    schema_: Literal["rewrite-monitor/queue/1"] = Field(default="rewrite-monitor/queue/1", alias="schema")
    state: str = Field(description="The state filter, or 'all'.")
    kind: str | None = Field(description="The finding-kind filter, if any.")
    matching: int = Field(description="Items that match the filters (before --limit).")
    depth: int = Field(description="Open items (pending or claimed) in the whole queue.")
    overdue: int
    items: list[QueueItemOut]


class FindingLike(evidence.FindingLike, Protocol):
    """What the document reads of a finding (``monitor.checks.store.FindingRow`` has it)."""

    @property
    def check_id(self) -> str: ...
    @property
    def check_version(self) -> int: ...
    @property
    def step(self) -> str | None: ...
    @property
    def words(self) -> list[str]: ...
    @property
    def reason(self) -> str: ...


class EstimateLike(Protocol):
    """What the document reads of an estimate (``monitor.stats.calibration.Estimate`` has it)."""

    @property
    def key(self) -> tuple[str, str, str]: ...
    @property
    def mean(self) -> float: ...
    @property
    def low(self) -> float: ...
    @property
    def high(self) -> float: ...
    @property
    def counts(self) -> Any: ...
    def describe(self) -> str: ...


def _estimate_out(est: EstimateLike | None) -> EstimateOut | None:
    if est is None:
        return None
    return EstimateOut(
        rewriter=est.key[0],
        estimate=round(est.mean, 4),
        low=round(est.low, 4),
        high=round(est.high, 4),
        confirmed=est.counts.confirmed,
        dismissed=est.counts.dismissed,
        text=est.describe(),
    )


def record_view_out(
    view: RecordView,
    findings: Sequence[FindingLike],
    estimates: Mapping[tuple[str, str], EstimateLike] | None = None,
) -> RecordViewOut:
    """The JSON document of one request: ``view`` (``get_record_view``), its current findings and, per
    finding, ``estimates[(kind, step)]`` when given (``Calibration.for_findings``)."""
    estimates = estimates or {}
    ctx, rec = view.context, view.record
    state = None
    if ctx is not None:
        state = StateOut(
            n_messages=ctx.n_messages,
            roles=dict(ctx.roles),
            client_turn_count=ctx.client_turn_count,
            digest=ctx.digest,
            monotonic=ctx.monotonic,
            messages=None
            if ctx.messages is None
            else [
                MessageOut(index=i, role=m.role, content=m.content, ts=m.ts)
                for i, m in enumerate(ctx.messages)
            ],
        )
    rewrite = None
    if rec is not None:
        rewrite = RewriteOut(
            turn=rec.turn,
            latest=rec.latest,
            query=rec.query,
            rewritten=rec.rewritten,
            model=rec.model,
            prompt_version=rec.prompt_version,
            resolved=[
                ResolutionOut(surface=r.surface, antecedent=r.antecedent, turn=r.turn) for r in rec.resolved
            ],
            dropped=list(rec.dropped),
            ts=rec.ts,
        )
    return RecordViewOut(
        request_id=view.request_id,
        conv_id=view.conv_id,
        state=state,
        rewrite=rewrite,
        retrieval=[HitOut.model_validate(h) for h in view.hits],
        answer=dict(view.answer) if isinstance(view.answer, Mapping) else None,
        findings=[
            FindingOut(
                kind=f.kind,
                severity=f.severity,  # type: ignore[arg-type]  # a stored severity is one of the three
                check_id=f.check_id,
                check_version=f.check_version,
                step=f.step,
                words=list(f.words),
                reason=f.reason,
                evidence=dict(f.evidence),
                estimate=_estimate_out(estimates.get((f.kind, f.step or ""))),
            )
            for f in findings
        ],
    )


def queue_out(
    rows: Sequence[Any], *, matching: int, depth: int, overdue: int, state: str, kind: str | None
) -> QueueOut:
    """The JSON document of ``queue``: ``rows`` (``QueueRow``, already limited) and the counts."""
    return QueueOut(
        state=state,
        kind=kind,
        matching=matching,
        depth=depth,
        overdue=overdue,
        items=[
            QueueItemOut.model_validate({f: getattr(r, f) for f in QueueItemOut.model_fields}) for r in rows
        ],
    )


READ_MODELS: dict[str, type[BaseModel]] = {"record_view": RecordViewOut, "queue": QueueOut}
"""The documents the read commands print, by schema file name."""


def read_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema (draft 2020-12) of each read document, generated from the models above."""
    out = {}
    for name, model in READ_MODELS.items():
        schema = model.model_json_schema(mode="serialization", by_alias=True)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"https://rewrite-monitor.invalid/schemas/{name}.schema.json"
        schema["title"] = name
        out[name] = schema
    return out


def dump(doc: BaseModel) -> str:
    """A read document as one line of JSON (by alias: ``schema``, not ``schema_``)."""
    return doc.model_dump_json(by_alias=True)
