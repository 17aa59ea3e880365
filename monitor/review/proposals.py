"""Alias groups proposed by reviewers, and their rendering as YAML ready for rules/aliases.yaml.

A false alarm on a legitimate synonym ("enterprise" for "business tier") is fixed by an alias group,
but rules stay reviewed code: a proposal is only stored here, and ``rewrite-monitor rules proposals``
prints the proposals for a person to paste (and review) into ``rules/aliases.yaml``. Nothing in this
module touches ``rules/``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.errors import ProposalError
from monitor.store.engine import naive_utc
from monitor.store.models import AliasProposal, QueueItem


@dataclass(frozen=True, slots=True)
class ProposalRow:
    """One stored proposal; ``created_at`` is naive UTC."""

    id: int
    queue_item_id: int | None
    request_id: str
    proposer: str
    members: list[str]
    note: str | None
    created_at: datetime


def clean_members(members: Sequence[str]) -> list[str]:
    """Members with surrounding and repeated whitespace removed, empty ones dropped, deduplicated
    ignoring case (the first spelling is kept), in order."""
    out: list[str] = []
    for m in members:
        m = " ".join(m.split())
        if m and m.casefold() not in {o.casefold() for o in out}:
            out.append(m)
    return out


def propose_alias(
    *,
    session: Session,
    queue_item_id: int,
    proposer: str,
    members: Sequence[str],
    now: datetime,
    note: str | None = None,
) -> int:
    """Store a proposed alias group from the review of queue item ``queue_item_id``; returns its id.

    ``members`` are stripped of surrounding and repeated whitespace and deduplicated ignoring case
    (first spelling kept). Raises ``ProposalError`` when fewer than two distinct members remain (the
    alias file's schema needs two) or the queue item does not exist. Commits.
    """
    clean = clean_members(members)
    if len(clean) < 2:
        raise ProposalError(f"an alias group needs at least two distinct members, got {clean!r}")
    item = session.get(QueueItem, queue_item_id)
    if item is None:
        raise ProposalError(f"no queue item {queue_item_id}")
    proposal = AliasProposal(
        queue_item_id=queue_item_id,
        request_id=item.request_id,
        proposer=proposer,
        members=clean,
        note=note or None,
        created_at=naive_utc(now),
    )
    session.add(proposal)
    session.commit()
    return proposal.id


def list_proposals(*, session: Session, since: datetime | None = None) -> list[ProposalRow]:
    """Stored proposals, oldest first (``since``: created at or after, naive UTC)."""
    stmt = select(AliasProposal).order_by(AliasProposal.created_at, AliasProposal.id)
    if since is not None:
        stmt = stmt.where(AliasProposal.created_at >= since)
    return [
        ProposalRow(p.id, p.queue_item_id, p.request_id, p.proposer, list(p.members), p.note, p.created_at)
        for p in session.scalars(stmt)
    ]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-") or "group"


def proposals_yaml(proposals: Sequence[ProposalRow]) -> str:
    """The proposals as alias-group entries to paste under ``groups:`` in ``rules/aliases.yaml``.

    Each entry is indented as the file's entries are (two spaces), named ``proposed-<id>-<first
    member>``, and preceded by a YAML comment naming the proposer, the time (UTC) and the queue item and
    request it came from. Returns a comment saying there are none when ``proposals`` is empty.
    """
    if not proposals:
        return "# no alias proposals\n"
    lines = [
        "# Alias groups proposed by reviewers (rewrite-monitor rules proposals).",
        "# Review each one, then paste it under `groups:` in rules/aliases.yaml.",
    ]
    for p in proposals:
        origin = f"queue item {p.queue_item_id}" if p.queue_item_id is not None else "a deleted queue item"
        lines.append(
            f"  # proposal {p.id} by {p.proposer} on {p.created_at:%Y-%m-%d %H:%M} UTC, "
            f"from {origin} (request {p.request_id})"
        )
        group: dict[str, object] = {"name": f"proposed-{p.id}-{_slug(p.members[0])}", "members": p.members}
        if p.note:
            group["note"] = p.note
        body = yaml.safe_dump(
            [group], sort_keys=False, allow_unicode=True, default_flow_style=None, width=1000
        )
        lines.extend("  " + line for line in body.splitlines())
    return "\n".join(lines) + "\n"
