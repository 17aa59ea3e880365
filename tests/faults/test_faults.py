"""The fault suite at the small size, in the README's test command: each scenario on each store it
applies to must meet every expectation (``tests/faults/__init__.py`` lists them; ``make faults`` runs
the full size and prints the figures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.common import SIZES
from tests.faults.registry import SCENARIOS, run_scenario

CASES = [(name, backend) for name, s in SCENARIOS.items() if s.in_make_test for backend in s.backends]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "backend"), CASES, ids=[f"{n}-{b}" for n, b in CASES])
def test_fault_scenario_at_small_size(name: str, backend: str, tmp_path: Path) -> None:
    result = run_scenario(name, backend, tmp_path, SIZES["small"])
    print(result.line())
    assert result.failures == [], result.line()
