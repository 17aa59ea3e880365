"""Replay reports: counts by label, the changes between two runs, and JUnit XML for CI."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from monitor.replay.judge import (
    CaseResult,
)

if TYPE_CHECKING:
    pass


# -- reports --------------------------------------------------------------------------------------
def by_label(results: Iterable[CaseResult]) -> dict[str, dict[str, int]]:
    """Per label: ``{cases, pass, fail, error}``, labels sorted."""
    table: dict[str, dict[str, int]] = {}
    for r in results:
        row = table.setdefault(r.label, {"cases": 0, "pass": 0, "fail": 0, "error": 0})
        row["cases"] += 1
        row[r.status] += 1
    return dict(sorted(table.items()))


@dataclass(frozen=True, slots=True)
class Change:
    """One case whose status differs between ``before`` (the compared file) and ``after`` (this run);
    ``None`` when the case is absent from that side."""

    id: str
    label: str
    source_request_id: str
    before: str | None
    after: str | None

    @property
    def regression(self) -> bool:
        return self.before == "pass" and self.after in ("fail", "error")


def compare(before: Sequence[CaseResult], after: Sequence[CaseResult]) -> tuple[list[Change], int]:
    """Cases whose status changed, in ``after`` order then those only in ``before``; and how many kept
    their status. Cases are matched by id (a case's id is the same in every version)."""
    old = {r.id: r for r in before}
    new_ids = {r.id for r in after}
    changes, same = [], 0
    for r in after:
        b = old.get(r.id)
        if b is not None and b.status == r.status:
            same += 1
        else:
            changes.append(Change(r.id, r.label, r.source_request_id, b.status if b else None, r.status))
    changes += [
        Change(r.id, r.label, r.source_request_id, r.status, None) for r in before if r.id not in new_ids
    ]
    return changes, same


def junit_xml(results: Sequence[CaseResult], path: Path, suite: str = "rewrite-monitor replay") -> None:
    """Write JUnit XML: one ``testcase`` per case (``classname`` ``replay.<label>``), ``failure`` for a
    failed case and ``error`` for one that could not be judged, the reasons and query in the text."""
    fails = sum(r.status == "fail" for r in results)
    errors = sum(r.status == "error" for r in results)
    total_time = f"{sum(r.seconds for r in results):.3f}"
    root = ET.Element(
        "testsuites", name=suite, tests=str(len(results)), failures=str(fails), errors=str(errors)
    )
    ts = ET.SubElement(
        root, "testsuite", name=suite, tests=str(len(results)), failures=str(fails), errors=str(errors)
    )
    ts.set("time", total_time)
    for r in results:
        tc = ET.SubElement(
            ts,
            "testcase",
            classname=f"replay.{r.label}",
            name=f"{r.id[:12]} v{r.version} {r.source_request_id}",
            time=f"{r.seconds:.3f}",
        )
        if r.status in ("fail", "error"):
            el = ET.SubElement(
                tc, "failure" if r.status == "fail" else "error", message="; ".join(r.failures)
            )
            el.text = "\n".join([*r.failures, f"query: {r.query}" if r.query is not None else "no query"])
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
