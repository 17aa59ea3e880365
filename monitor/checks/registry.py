"""The check registry and :func:`run_checks`.

Each family module (``added_words``, ``qualifiers``, ``chat_state``, ``references``, ``intent``)
registers pure functions ``(record, rules) -> list[Finding]`` under a check id and version with
:func:`register`; a behaviour change bumps the version, so stored findings can be re-checked. Modelled
on spaCy's function registry (``spacy/pipeline/functions.py``): the id is the contract, the function is
looked up by it.

This module imports only the standard library, pydantic/PyYAML (via ``monitor.checks.rules``) and,
lazily on first analysis, spaCy and wordfreq: never sqlalchemy, streamlit, anthropic, sentry_sdk or
apscheduler (``tests/checks/test_imports.py`` asserts it in a subprocess).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from monitor.checks.base import (
    CheckOutcome,
    CheckStatus,
    Finding,
    SkipCheck,
)
from monitor.checks.rules import Rules
from monitor.checks.steps import Step, step_ids
from monitor.record import RewriteRecord

CheckFn = Callable[[RewriteRecord, Rules], list[Finding]]


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A registered check: ``id`` (e.g. ``"added_content_word"``), ``version``, the finding ``kinds`` it
    can emit, the module ``family``, the function and its grading ``steps`` (``monitor.checks.steps``)."""

    id: str
    version: int
    kinds: tuple[str, ...]
    family: str
    fn: CheckFn
    steps: tuple[Step, ...]
    step_ids: frozenset[str]
    summary: str
    """One line: what the check fires on (the README's table of the checks shows it)."""

    @property
    def versioned_id(self) -> str:
        return f"{self.id}.v{self.version}"


REGISTRY: dict[str, CheckSpec] = {}


def register(
    check_id: str, *, version: int, kinds: Iterable[str], steps: Iterable[Step], summary: str
) -> Callable[[CheckFn], CheckFn]:
    """Decorator: register ``fn`` as check ``check_id`` at ``version`` emitting ``kinds``, grading by
    ``steps`` (its step table: every finding it returns names one of them); ``summary`` is one line on
    what it fires on.

    Raises ``ValueError`` when the id is already registered by another function, when ``steps`` is
    empty or declares a step id twice, or when ``summary`` is empty.
    """
    table = tuple(steps)
    if not table:
        raise ValueError(f"check {check_id!r} declares no grading step")
    if not summary.strip():
        raise ValueError(f"check {check_id!r} has no summary")
    ids = step_ids(table)

    def deco(fn: CheckFn) -> CheckFn:
        old = REGISTRY.get(check_id)
        if old is not None and old.fn is not fn:
            raise ValueError(f"check {check_id!r} is already registered by {old.fn.__module__}")
        family = fn.__module__.rsplit(".", 1)[-1]
        REGISTRY[check_id] = CheckSpec(check_id, version, tuple(kinds), family, fn, table, ids, summary)
        return fn

    return deco


def current_versions() -> list[tuple[str, int]]:
    """``(check_id, version)`` of every registered check, in registry order.

    This is what "checked at the current versions" means everywhere: stored runs and findings of
    other versions are history, and a record lacking a run of one of these is unchecked.
    """
    return [(spec.id, spec.version) for spec in REGISTRY.values()]


def checks_by_kind() -> dict[str, tuple[str, ...]]:
    """Finding kind -> the ids of the checks that can emit it, in registry order (``wrong_antecedent``:
    ``list_reference``, ``topic_shift``, ``antecedent_recency``, ``swapped_name`` and
    ``ignored_correction``): a kind was looked for on a record when any of them ran."""
    out: dict[str, tuple[str, ...]] = {}
    for spec in REGISTRY.values():
        for kind in spec.kinds:
            out[kind] = (*out.get(kind, ()), spec.id)
    return out


def step_of(check_id: str, step_id: str) -> Step:
    """The declared :class:`Step` ``step_id`` of check ``check_id``; ``KeyError`` when either is unknown."""
    for step in REGISTRY[check_id].steps:
        if step.id == step_id:
            return step
    raise KeyError(f"check {check_id!r} declares no step {step_id!r}")


def run_family(record: RewriteRecord, rules: Rules, family: str) -> list[Finding]:
    """Findings of every check of one family module that ran (skips are dropped; use run_checks for them)."""
    out: list[Finding] = []
    for spec in REGISTRY.values():
        if spec.family == family:
            try:
                out.extend(spec.fn(record, rules))
            except SkipCheck:
                pass
    return out


def run_checks(record: RewriteRecord, rules: Rules, *, only: Iterable[str] | None = None) -> CheckOutcome:
    """Run every registered check (or the ids in ``only``) on ``record``.

    Returns a :class:`CheckOutcome`: the findings in registry order and one status per check
    (``"ran"`` or ``"skipped"`` with the reason). Exceptions other than ``SkipCheck`` propagate: a
    crashing check is a bug, not a skip. Raises ``KeyError`` for an unknown id in ``only`` and
    ``ValueError`` for a finding whose step its check's table does not declare (a bug too).
    """
    specs = list(REGISTRY.values()) if only is None else [REGISTRY[i] for i in only]
    findings: list[Finding] = []
    statuses: list[CheckStatus] = []
    for spec in specs:
        try:
            got = spec.fn(record, rules)
        except SkipCheck as skip:
            statuses.append(CheckStatus(spec.id, spec.version, "skipped", skip.reason))
            continue
        for f in got:
            if f.step not in spec.step_ids:
                raise ValueError(f"check {spec.id!r} returned a finding of undeclared step {f.step!r}")
        findings.extend(got)
        statuses.append(CheckStatus(spec.id, spec.version, "ran", None, len(got)))
    return CheckOutcome(record.request_id, rules.hash, tuple(findings), tuple(statuses))


# Report order: by family as the issue lists them, then registration order within a family.
FAMILIES = ("added_words", "qualifiers", "chat_state", "references", "antecedents", "intent", "scope")


def order_registry() -> None:
    """Reorder :data:`REGISTRY` by :data:`FAMILIES` (stable within a family); ``monitor.checks`` calls it
    once the family modules have registered."""
    ordered = sorted(REGISTRY.values(), key=lambda s: FAMILIES.index(s.family))
    REGISTRY.clear()
    REGISTRY.update((s.id, s) for s in ordered)
