"""The rewriter: a word's grade moved by the rewriter's style (``monitor.checks.profile``) and by what
the reviewers' verdicts learned (``monitor.checks.learned``), and a stored finding graded again against a
grown profile (:func:`restyle`)."""

from __future__ import annotations

from typing import Any

from monitor.checks.added_words.findings import assembled, rank
from monitor.checks.added_words.spec import CHECK_ID
from monitor.checks.base import Finding
from monitor.checks.learned import UNADJUSTED_SIGNALS, LearnedTable, rewriter_key, shifted
from monitor.checks.profile import RewriterProfile
from monitor.record import RewriteRecord

# Signals a rewriter's style may lower, and to what: common and rare content words. Never a number, a
# proper name, a name completion or a qualifier value (a constraint is a constraint whoever adds it).
STYLE_SIGNALS = {
    "content_word": "low",
    "rare_term": "low",
    "restricting_noun": "medium",
    "aspect_noun": "low",
}


def learned_for(table: LearnedTable | None, record: RewriteRecord, lemma: str) -> dict[str, Any] | None:
    """The learned entry of ``lemma`` for ``record``'s rewriter as the word's ``learned`` evidence, or
    None when the table has none that moves a grade."""
    if table is None:
        return None
    entry = table.get(CHECK_ID, rewriter_key(record.prompt_version, record.model), lemma)
    if entry is None:
        return None
    keep = ("rewriter", "dismissed", "confirmed", "reviewers", "pinned", "steps")
    return {**{k: v for k, v in entry.as_dict().items() if k in keep}, "why": entry.why}


def adjusted(
    info: dict[str, Any],
    profile: RewriterProfile | None,
    prompt_version: str | None,
    learned: dict[str, Any] | None,
) -> dict[str, Any]:
    """``info`` graded against the rewriter: its style step (:func:`_styled`), then the step the
    reviewers' verdicts learned (``learned``, the word's ``learned`` evidence; ``monitor.checks.learned``).

    A moved word keeps its own grade in ``graded`` {severity, signal, step, why} and the learned entry in
    ``learned``; its ``signal`` stays the style's or its own, so a number stays a number; its ``step`` is
    ``learned``."""
    out = _styled(info, profile, prompt_version)
    if learned is None or out["signal"] in UNADJUSTED_SIGNALS:
        return out
    own = out.get("graded") or out
    new = shifted(out["severity"], int(learned["steps"]), own["signal"])
    if new == out["severity"]:
        return out
    return {
        **out,
        "severity": new,
        "graded": _own(own),
        "step": "learned",
        "learned": learned,
        "why": f"{out['why']}; reviewers: {learned['why']}",
    }


def _styled(
    info: dict[str, Any], profile: RewriterProfile | None, prompt_version: str | None
) -> dict[str, Any]:
    """``info`` graded against ``profile``: one severity step lower when its lemma is the rewriter's style.

    ``info`` may already carry a style or learned step (a stored word graded again): both are undone
    first, so the result depends only on the word's own grade and on ``profile``. A styled word keeps
    that grade in ``graded`` {severity, signal, step, why}; its ``step`` is ``rewriter_style``."""
    base = _unstyled(info)
    if profile is None or base.get("signal") not in STYLE_SIGNALS:
        return base
    style = profile.style(prompt_version, base["lemma"])
    if style is None:
        return base
    return {
        **base,
        "severity": STYLE_SIGNALS[base["signal"]],
        "signal": "rewriter_style",
        "step": "rewriter_style",
        "graded": _own(base),
        "style": {"prompt_version": style.prompt_version, "others": style.others, "of": style.of},
        "why": f"{base['why']}, but {style.why}",
    }


def _own(info: dict[str, Any]) -> dict[str, Any]:
    """The grade ``info`` had before the rewriter's steps: what ``graded`` keeps."""
    return {k: info[k] for k in ("severity", "signal", "step", "why")}


def _unstyled(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` without its style and learned steps (itself when it has none)."""
    graded = info.get("graded")
    if graded is None:
        return info
    out = {k: v for k, v in info.items() if k not in ("graded", "style", "learned")}
    out.update(graded)
    return out


def restyle(finding: Finding, profile: RewriterProfile, prompt_version: str | None) -> Finding | None:
    """``finding`` (an ``added_content_word`` finding of this version) graded again against ``profile``,
    or None when no word's grade changes.

    What queue admission runs over a day's findings before it plans the day
    (``monitor.checks.store.restyle_findings``): the profile grows as rewrites arrive, so a rewrite
    checked early met a smaller profile than one checked late, and with several workers the order is
    the scheduler's. Graded again against the store's profile at admission, every finding of the day
    has the grade it would have had if the whole day had been checked at once. Only the style step is
    redone (the words' own grades need the transcript, which is not read again); a word's learned step
    is kept as it was graded (a new learned table re-grades only through a new check run)."""
    words: list[dict[str, Any]] = []
    for w in finding.evidence["words"]:
        if "parts" in w:
            parts = [adjusted(p, profile, prompt_version, p.get("learned")) for p in w["parts"]]
            best: dict[str, Any] = max(parts, key=rank)
            words.append(
                {
                    **best,
                    "text": w["text"],
                    "start": w["start"],
                    "end": w["end"],
                    "parts": parts,
                }
            )
        else:
            words.append(adjusted(w, profile, prompt_version, w.get("learned")))
    if words == finding.evidence["words"]:
        return None
    return assembled(words, finding.evidence["span"]["text"], finding.evidence["n_messages"])
