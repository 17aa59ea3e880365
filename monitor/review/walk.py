"""A reviewer's walk over the pending queue in one sitting, as the terminal ``review`` takes it.

:class:`QueueWalk` claims the next item (or the one ``b`` reopened), loads what is shown of it, and gives
it back, skips it or records its verdict, counting what was done. It decides and stores; the keys read
and the text shown are the CLI's (``monitor.cli.commands.review.review_loop``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from monitor.checks.store import FindingRow, list_findings
from monitor.ingest.store.records import RecordView, get_record_view
from monitor.queue.store import QueueRow, claim_next, keep_verdict, release, reopen, reviewable_count
from monitor.queue.store import skip as skip_item
from monitor.review.evidence import TermChoice
from monitor.review.store import VerdictRow, latest_verdict, record_verdict
from monitor.verdicts import DEFAULT_ARTIFACT


@dataclass(frozen=True, slots=True)
class WalkItem:
    """One item the walk hands out: ``again`` when ``b`` reopened it (``earlier``: the reviewer's verdict
    on it, when there is one), its place "item ``position`` of ``total``" (what the reviewer has done this
    session plus what the queue can still hand them), and its record and findings (``view`` None when the
    record is gone)."""

    row: QueueRow
    again: bool
    position: int
    total: int
    view: RecordView | None
    findings: list[FindingRow]
    earlier: VerdictRow | None


@dataclass
class QueueWalk:
    """The walk's state: ``done`` counts ``{verdicts, skipped}``; ``history`` holds the items given a
    verdict in this session, newest last (``b`` pops one). ``now`` is read at each store call."""

    session: Session
    reviewer: str
    lease: timedelta
    kind: str | None
    checks: Sequence[tuple[str, int]]
    now: Callable[[], datetime]
    done: dict[str, int] = field(default_factory=lambda: {"verdicts": 0, "skipped": 0})
    history: list[int] = field(default_factory=list)
    back: QueueRow | None = None
    """The item ``b`` reopened, handed out next."""

    def next_item(self) -> WalkItem | None:
        """The item ``b`` reopened, else the next one claimed (the claim commits); None when the queue
        has nothing left for the reviewer."""
        s, who = self.session, self.reviewer
        again = self.back is not None
        row = self.back or claim_next(
            session=s, reviewer=who, now=self.now(), lease=self.lease, kind=self.kind
        )
        self.back = None
        if row is None:
            return None
        position = len(self.history) + self.done["skipped"] + 1
        total = position + reviewable_count(session=s, reviewer=who, now=self.now(), kind=self.kind)
        view = get_record_view(session=s, request_id=row.request_id, conv_id=row.conv_id)
        findings = list_findings(
            session=s, checks=self.checks, request_id=row.request_id, conv_id=row.conv_id
        )
        earlier = latest_verdict(session=s, item_id=row.id, reviewer=who) if again else None
        return WalkItem(row, again, position, total, view, findings, earlier)

    def give_back(self, item: WalkItem) -> None:
        """An item reopened with ``b`` keeps its earlier verdict; any other goes back to the queue."""
        if item.again:
            keep_verdict(session=self.session, item_id=item.row.id, reviewer=self.reviewer, now=self.now())
        else:
            release(session=self.session, item_id=item.row.id, reviewer=self.reviewer, now=self.now())

    def go_back(self, item: WalkItem) -> None:
        """Give ``item`` back and reopen the last item given a verdict, to hand it out next. The history
        must not be empty."""
        self.give_back(item)
        self.back = reopen(
            session=self.session,
            item_id=self.history.pop(),
            reviewer=self.reviewer,
            now=self.now(),
            lease=self.lease,
        )

    def skip(self, item: WalkItem) -> None:
        """Skip ``item``; a reopened one keeps its verdict instead: nothing was skipped."""
        if item.again:
            self.give_back(item)
        else:
            skip_item(session=self.session, item_id=item.row.id, reviewer=self.reviewer, now=self.now())
            self.done["skipped"] += 1

    def record(
        self,
        item: WalkItem,
        label: str,
        *,
        note: str | None,
        corrected: str | None,
        terms: TermChoice,
    ) -> int:
        """Record the reviewer's verdict ``label`` on ``item`` with the artifact the label implies (a new
        version of their verdict on a reopened item) and the ``terms`` accepted and typed; returns the
        verdict id (``monitor.review.store.record_verdict``, whose errors it raises)."""
        vid = record_verdict(
            session=self.session,
            item_id=item.row.id,
            reviewer=self.reviewer,
            label=label,
            artifact=DEFAULT_ARTIFACT[label],
            now=self.now(),
            corrected_query=corrected,
            must_include=terms.must_include,
            must_not_include=terms.must_not_include,
            note=note,
            lease=self.lease,
            again=item.again,
            accepted=terms,
        )
        self.history.append(item.row.id)
        self.done["verdicts"] += 1
        return vid
