"""How often each grading step fires on a store's rewrites: the evidence a step earns its place by.

A step *fires* on a rewrite when it set the grade of one of the rewrite's findings, or, for
``added_content_word``, of one of its words (a finding's own step is its top word's, so the others would
go uncounted). :func:`step_firings` reads that from the stored findings of the current check versions;
``tests/checks/test_steps.py`` runs it on a store of every shared log and traffic file and requires that a
step firing on at most :data:`FEW` rewrites either goes or names why its source stands without them
(issue 31: a step that fires only on the labelled item it was written for is fitting, not detection).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from monitor.stats.store import finding_steps

FEW = 2
"""A step that fires on at most this many rewrites of the shared logs and traffic must say why its source
stands without them, or be removed."""


@dataclass(frozen=True, slots=True)
class StepFiring:
    """One declared step: the ``check_id`` and ``step`` ids, the rewrites it fired on (``fired``) and the
    labelled ones among them (``labelled``), as sorted request ids."""

    check_id: str
    step: str
    fired: tuple[str, ...]
    labelled: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.check_id}/{self.step}"


def _word_steps(evidence: dict[str, Any]) -> Iterator[str]:
    for word in evidence.get("words", ()):
        if not isinstance(word, dict):
            continue
        for part in word.get("parts") or (word,):
            if isinstance(part, dict) and isinstance(part.get("step"), str):
                yield part["step"]


def step_firings(
    *,
    session: Session,
    checks: Sequence[tuple[str, int]],
    declared: Sequence[tuple[str, str]],
    labelled: Collection[str] = (),
) -> list[StepFiring]:
    """Every ``declared`` ``(check_id, step)`` with the request ids it fired on among the stored findings
    of ``checks`` (``(check_id, version)`` pairs), and those of them in ``labelled``; in declared order,
    steps that never fired included (with nothing)."""
    fired: dict[tuple[str, str], set[str]] = {key: set() for key in declared}
    for request_id, check_id, step, evidence in finding_steps(session=session, checks=checks):
        steps = {step} if step else set()
        if check_id == "added_content_word":
            steps.update(_word_steps(evidence))
        for s in steps:
            fired.setdefault((check_id, s), set()).add(request_id)
    marked = set(labelled)
    return [
        StepFiring(check_id, step, tuple(sorted(ids)), tuple(sorted(ids & marked)))
        for (check_id, step), ids in fired.items()
    ]


def firing_table(firings: Sequence[StepFiring]) -> str:
    """A plain-text table of ``firings``: one line a step, rewrites fired on and labelled items among
    them."""
    width = max((len(f.key) for f in firings), default=10)
    lines = [f"{'step':<{width}}  {'rewrites':>8}  {'labelled':>8}"]
    lines += [f"{f.key:<{width}}  {len(f.fired):>8}  {len(f.labelled):>8}" for f in firings]
    return "\n".join(lines) + "\n"
