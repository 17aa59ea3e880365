"""Grading steps: every way a check can set a finding's severity, named, with its source.

A check declares its steps in a table (a tuple of :class:`Step`) and registers it with the check
(``register(..., steps=STEPS)``); every :class:`monitor.checks.base.Finding` it returns names the step
that set its severity (``Finding.step``), and :func:`monitor.checks.registry.run_checks` refuses a
finding whose step its check does not declare. So a reviewer reads which rule graded an item, ``evaluate
--by step`` measures each rule on its own, the per-step firing test (``tests/checks/test_steps.py``)
counts how many real rewrites each rule changes, and the README's table of the checks is generated from
these tables (:func:`markdown_table`), never written beside them by hand.

A step's ``source`` says where the rule comes from: a grammar, a lexical resource, a reference work or
the background chapters (``../shared/seeds``). A labelled file alone is never a source: the labelled
files measure the rules, the unlabelled logs and traffic are where they are designed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

STEP_ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
"""What a step id looks like: lower-case words joined by underscores (stable: stored in every finding)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One grading step of a check.

    - ``id``: stable name (``"proper_name"``), unique within its check; findings store it.
    - ``grade``: the severity the step gives (``"high"``, ``"medium"``, ``"low"``) or how it moves one
      (``"one step lower"``, ``"high"`` for a raise), as a reader needs it.
    - ``source``: where the rule comes from (never a labelled data file alone).
    - ``description``: one line, what the step does.

    Raises ``ValueError`` for an id that is not lower-case words and underscores, or an empty field.
    """

    id: str
    grade: str
    source: str
    description: str

    def __post_init__(self) -> None:
        if not STEP_ID_RE.match(self.id):
            raise ValueError(f"step id {self.id!r} must be lower-case words joined by underscores")
        for name in ("grade", "source", "description"):
            if not getattr(self, name).strip():
                raise ValueError(f"step {self.id!r}: {name} is empty")


def step_ids(steps: Iterable[Step]) -> frozenset[str]:
    """The ids of ``steps``; raises ``ValueError`` when one is declared twice."""
    seen: set[str] = set()
    for s in steps:
        if s.id in seen:
            raise ValueError(f"step {s.id!r} is declared twice")
        seen.add(s.id)
    return frozenset(seen)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: Iterable[tuple[str, str, Step]]) -> str:
    """A Markdown table of ``(finding kinds, check id, step)`` rows: one line a step, with its grade,
    description and source. What ``docs/checks.md`` and the README's check table are made of
    (``make docs``: ``monitor.cli.docs``)."""
    lines = [
        "| finding kind (check) | step | grade | what it does | source |",
        "| --- | --- | --- | --- | --- |",
    ]
    for kinds, check_id, step in rows:
        where = kinds if kinds == check_id else f"{kinds} ({check_id})"
        lines.append(
            f"| `{_cell(where)}` | `{step.id}` | {_cell(step.grade)} | {_cell(step.description)} "
            f"| {_cell(step.source)} |"
        )
    return "\n".join(lines) + "\n"
