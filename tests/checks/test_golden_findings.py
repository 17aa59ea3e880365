"""Every finding on the shared real logs equals the golden file's (``tests/golden/findings.py``).

An optimisation must change no finding; a behaviour change must bump its check's version (and then the
golden file is rewritten on purpose). The comparison names the first lines that differ.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from tests.golden import findings as golden


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_findings_on_the_shared_logs_equal_the_golden_file(shared_logs: Path, workers: int) -> None:
    """On one process and graded on 2 and 4 worker processes (``monitor.worker.pool``) alike."""
    want_head, want = golden.read()
    with golden.fresh_store() as session:
        head, got = golden.compute(session, shared_logs, workers=workers)
    if head != want_head:
        changed = [k for k in ("corpus", "checks", "rules_hash") if head[k] != want_head[k]]
        pytest.fail(
            f"the golden file was made with other {', '.join(changed)}: if that change is deliberate, "
            "rewrite it with `python -m tests.golden.findings --write` (--force for a new corpus)"
        )
    diff = list(difflib.unified_diff(want, got, "golden", "now", n=0, lineterm=""))
    assert not diff, "findings changed without a check version bump:\n" + "\n".join(diff[:20])


def _line(check: str, severity: str) -> str:
    return json.dumps({"check": check, "request_id": "r1", "severity": severity}, sort_keys=True)


def test_a_version_bump_licenses_changes_to_its_own_check_only() -> None:
    head = {"corpus": [1], "rules_hash": "h", "checks": ["a.v1", "b.v1"], "runs": {"a ran": 2, "b ran": 2}}
    lines = [_line("a", "low"), _line("b", "low")]
    # b's line changed, a's version was bumped: b changed without a bump
    bumped_a = {**head, "checks": ["a.v2", "b.v1"]}
    assert golden.changed_without_a_bump(head, lines, bumped_a, [_line("a", "low"), _line("b", "high")]) == [
        "b"
    ]
    # a's line changed with its bump: allowed
    assert golden.changed_without_a_bump(head, lines, bumped_a, [_line("a", "high"), _line("b", "low")]) == []
    # b's coverage changed (a run skipped) without a bump
    fewer = {**head, "runs": {"a ran": 2, "b ran": 1, "b skipped: why": 1}}
    assert golden.changed_without_a_bump(head, lines, fewer, lines) == ["b"]
    # a rules edit or a new corpus may change every line
    for edit in ({"rules_hash": "h2"}, {"corpus": [2]}):
        assert golden.changed_without_a_bump(head, lines, {**head, **edit}, [_line("a", "high")]) == []
