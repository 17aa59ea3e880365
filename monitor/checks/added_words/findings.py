"""The finding of one span of graded words: its top word (:func:`rank`) and its evidence
(:func:`assembled`)."""

from __future__ import annotations

from typing import Any

from monitor.checks.added_words.spec import CHECK_ID, VERSION
from monitor.checks.base import Finding
from monitor.severity import SEVERITY_RANK

# Signals of a constraint (a number, a name, a qualifier value): at equal severity they name the span's
# ``severity_signal``, so a year beside a rare word is what the alert reads (monitor.alerts.policy).
PRECISE_SIGNALS = frozenset({"number", "proper_name", "qualifier_value"})


def rank(word: dict[str, Any]) -> tuple[int, bool]:
    """The sort key of a graded word: its severity, then whether its signal is a constraint
    (:data:`PRECISE_SIGNALS`)."""
    return SEVERITY_RANK[word["severity"]], word["signal"] in PRECISE_SIGNALS


def assembled(words: list[dict[str, Any]], span_text: str, n_messages: int) -> Finding:
    """The finding of one span: its graded ``words`` in order, the span's text, the messages received."""
    top = max(words, key=rank)
    detail = ", ".join(f"'{w['text']}' ({w['why']})" for w in words)
    return Finding(
        kind=CHECK_ID,
        step=top["step"],
        severity=top["severity"],
        evidence={
            "span": {"text": span_text, "start": words[0]["start"], "end": words[-1]["end"]},
            "words": words,
            "severity_signal": top["signal"],
            "n_messages": n_messages,
        },
        reason=f"{detail}: in no received turn and no alias group",
        check_id=CHECK_ID,
        check_version=VERSION,
    )
