"""Fixtures of the check tests. Their records are built by hand with ``tests.factories.make_record``,
exactly as a producer would log them."""

from __future__ import annotations

import pytest

from monitor.checks.rules import Rules, load_rules


@pytest.fixture(scope="session")
def rules() -> Rules:
    return load_rules()
