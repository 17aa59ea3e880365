"""Deterministic checks on each rewrite: the family modules and their registry.

Importing this package registers every family's checks and those of the installed plugins (entry-point
group ``rewrite_monitor.checks``; ``monitor.checks.registry`` holds the registry itself, so the family
modules import it without importing this package's re-exports). It imports only
the standard library, pydantic/PyYAML (via ``monitor.checks.rules``) and, lazily on first analysis, spaCy
and wordfreq: never sqlalchemy, streamlit, anthropic, sentry_sdk or apscheduler
(``tests/checks/test_imports.py`` asserts it in a subprocess).
"""

from __future__ import annotations

from monitor.checks import added_words, antecedents, chat_state, intent, qualifiers, references, scope  # noqa: F401
from monitor.checks.base import (
    FABRICATION_KINDS,
    CheckOutcome,
    CheckStatus,
    Finding,
    SkipCheck,
    Skipped,
    at_least,
)
from monitor.checks.registry import (
    FAMILIES,
    REGISTRY,
    CheckSpec,
    checks_by_kind,
    current_versions,
    load_plugins,
    order_registry,
    register,
    run_checks,
    run_family,
)

load_plugins()
order_registry()

__all__ = [
    "FABRICATION_KINDS",
    "FAMILIES",
    "REGISTRY",
    "checks_by_kind",
    "current_versions",
    "CheckOutcome",
    "CheckSpec",
    "CheckStatus",
    "Finding",
    "Skipped",
    "SkipCheck",
    "at_least",
    "register",
    "run_checks",
    "run_family",
]
