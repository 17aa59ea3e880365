"""What ``rules learned`` shows of the learned table (``monitor.checks.learned``, read from the verdicts
by ``monitor.review.store.learned_table``): the entries it lists, and the demoted words as ``framing``
groups to paste into rules/neutral.yaml.
"""

from __future__ import annotations

from monitor.checks.learned import LearnedTable, WordEvidence


def learned_entries(
    table: LearnedTable, *, rewriter: str | None = None, kind: str | None = None, effective: bool = False
) -> list[WordEvidence]:
    """The entries of ``table`` by rewriter, kind and lemma; only ``rewriter``'s and ``kind``'s when
    given, only those that move a grade with ``effective``."""
    return [
        table.entries[k]
        for k in sorted(table.entries, key=lambda k: (k[1], k[0], k[2]))
        if (rewriter is None or k[1] == rewriter)
        and (kind is None or k[0] == kind)
        and (not effective or table.entries[k].steps)
    ]


def learned_yaml(entries: list[WordEvidence], today: str) -> str:
    """The demoted words as ``framing`` groups of rules/neutral.yaml, one group per rewriter."""
    import yaml

    lines = [
        f"# Words the reviewers' verdicts demoted, per rewriter (`rules learned --yaml`, {today}).",
        "# Pasted under `framing:` in rules/neutral.yaml, a word is graded low for EVERY rewriter: paste",
        "# only what holds beyond the rewriter named in its source. Raised and pinned entries are comments.",
    ]
    groups: dict[str, list[str]] = {}
    for e in entries:
        if e.kind == "added_content_word" and e.steps < 0:
            groups.setdefault(e.rewriter, []).append(e.lemma)
        elif e.steps > 0 or e.pinned is not None:
            pinned = " (pinned)" if e.pinned is not None else ""
            lines.append(f"#   {e.kind} {e.rewriter!r} {e.lemma!r}: {e.effect}{pinned}")
    framing = [
        {
            "source": f"the reviewers' verdicts on rewriter {rw or 'unnamed'!r}: dismissed as false alarms",
            "words": sorted(words),
        }
        for rw, words in sorted(groups.items())
    ]
    body = (
        yaml.safe_dump({"framing": framing}, sort_keys=False, allow_unicode=True)
        if framing
        else "framing: []\n"
    )
    return "\n".join(lines) + "\n" + body
