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

from monitor.text import normalise_terms


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
    ignoring case (the first spelling is kept), in order: ``normalise_terms(..., ignore_case=True)``."""
    return normalise_terms(members, ignore_case=True)


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
