"""Every finding on the shared real logs equals the golden file's (``tests/golden/findings.py``).

An optimisation must change no finding; a behaviour change must bump its check's version (and then the
golden file is rewritten on purpose). The comparison names the first lines that differ.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from tests.golden import findings as golden


@pytest.mark.slow
def test_findings_on_the_shared_logs_equal_the_golden_file(shared_logs: Path) -> None:
    want_head, want = golden.read()
    with golden.fresh_store() as session:
        head, got = golden.compute(session, shared_logs)
    if head != want_head:
        changed = [k for k in ("corpus", "checks", "rules_hash") if head[k] != want_head[k]]
        pytest.fail(
            f"the golden file was made with other {', '.join(changed)}: if that change is deliberate, "
            "rewrite it with `python -m tests.golden.findings --write` (--force for a new corpus)"
        )
    diff = list(difflib.unified_diff(want, got, "golden", "now", n=0, lineterm=""))
    assert not diff, "findings changed without a check version bump:\n" + "\n".join(diff[:20])
