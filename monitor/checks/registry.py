"""The check registry, the checks a deployment turned on, and :func:`run_checks`.

Each family module (``added_words``, ``qualifiers``, ``chat_state``, ``references``, ``antecedents``,
``intent``, ``scope``) registers pure functions ``(record, rules) -> list[Finding]`` under a check id,
version and declared family with :func:`register`; a behaviour change bumps the version, so stored
findings can be re-checked. Modelled on spaCy's function registry (``spacy/pipeline/functions.py``): the
id is the contract, the function is looked up by it; and, as spaCy's registries do, other packages add
checks through an entry point (group :data:`ENTRY_POINT_GROUP`: the module it names registers its checks
when loaded, :func:`load_plugins`).

The ``checks`` setting turns a check off (:func:`configure`): a check that is off is not run, and is not
among the current versions, so ``run``, ``check``, ``evaluate``, coverage and every listing leave it out.
Its ``min_severity`` (the lowest severity of a check's findings that reaches the review queue) is read by
queue admission (``monitor.queue.store``), not here: every finding is stored and counted.

This module imports only the standard library, pydantic/PyYAML (via ``monitor.checks.rules``) and,
lazily on first analysis, spaCy and wordfreq: never sqlalchemy, streamlit, anthropic, sentry_sdk or
apscheduler (``tests/checks/test_imports.py`` asserts it in a subprocess).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from monitor.checks.base import (
    CheckOutcome,
    CheckStatus,
    Finding,
    SkipCheck,
)
from monitor.checks.rules import Rules
from monitor.checks.steps import Step, step_ids
from monitor.errors import ConfigError
from monitor.record import RewriteRecord

if TYPE_CHECKING:
    from monitor.setting_groups import CheckSettings

CheckFn = Callable[[RewriteRecord, Rules], list[Finding]]
log = logging.getLogger("monitor.checks")


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A registered check: ``id`` (e.g. ``"added_content_word"``), ``version``, the finding ``kinds`` it
    can emit, its declared ``family`` (the built-in ones name their module; a plugin names its own), the
    function and its grading ``steps`` (``monitor.checks.steps``)."""

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
    check_id: str,
    *,
    family: str,
    version: int,
    kinds: Iterable[str],
    steps: Iterable[Step],
    summary: str,
) -> Callable[[CheckFn], CheckFn]:
    """Decorator: register ``fn`` as check ``check_id`` of ``family`` at ``version`` emitting ``kinds``,
    grading by ``steps`` (its step table: every finding it returns names one of them); ``summary`` is one
    line on what it fires on.

    Raises ``ValueError`` when the id is already registered by another function, when ``steps`` is
    empty or declares a step id twice, or when ``family`` or ``summary`` is empty.
    """
    table = tuple(steps)
    if not table:
        raise ValueError(f"check {check_id!r} declares no grading step")
    if not summary.strip():
        raise ValueError(f"check {check_id!r} has no summary")
    if not family.strip():
        raise ValueError(f"check {check_id!r} declares no family")
    ids = step_ids(table)

    def deco(fn: CheckFn) -> CheckFn:
        old = REGISTRY.get(check_id)
        if old is not None and old.fn is not fn:
            raise ValueError(f"check {check_id!r} is already registered by {old.fn.__module__}")
        REGISTRY[check_id] = CheckSpec(check_id, version, tuple(kinds), family, fn, table, ids, summary)
        return fn

    return deco


DISABLED: set[str] = set()
"""The checks the ``checks`` setting turned off, as :func:`configure` applied it."""


def configure(checks: Mapping[str, CheckSettings]) -> None:
    """Apply the ``checks`` setting (check id -> ``monitor.setting_groups.CheckSettings``) for the rest of
    the process, replacing what an earlier call applied: the checks it turns off stop running. Its
    ``min_severity`` is queue admission's to read (``QueueSettings.check_floors``), not the registry's.

    Raises ``ConfigError`` naming the entry for an id no registered check has (with the nearest id),
    before anything is changed. Every check, plugins included, is registered by then: this module is
    imported through ``monitor.checks``, whose ``__init__`` loads them all before anyone can call this."""
    for check_id in checks:
        if check_id not in REGISTRY:
            near = difflib.get_close_matches(check_id, list(REGISTRY), n=1)
            hint = f" (did you mean {near[0]}?)" if near else f"; one of: {', '.join(REGISTRY)}"
            raise ConfigError(f"checks.{check_id}: no such check{hint}")
    DISABLED.clear()
    DISABLED.update(check_id for check_id, choice in checks.items() if not choice.enabled)


def is_enabled(check_id: str) -> bool:
    """Whether check ``check_id`` runs (:func:`configure`)."""
    return check_id not in DISABLED


def active() -> list[CheckSpec]:
    """The registered checks that run, in registry order."""
    return [spec for spec in REGISTRY.values() if is_enabled(spec.id)]


def current_versions() -> list[tuple[str, int]]:
    """``(check_id, version)`` of every check that runs (:func:`active`), in registry order.

    This is what "checked at the current versions" means everywhere: stored runs and findings of
    other versions, or of a check turned off, are history, and a record lacking a run of one of these
    is unchecked.
    """
    return [(spec.id, spec.version) for spec in active()]


def checks_by_kind() -> dict[str, tuple[str, ...]]:
    """Finding kind -> the ids of the checks that run and can emit it, in registry order
    (``wrong_antecedent``: ``list_reference``, ``topic_shift``, ``antecedent_recency``, ``swapped_name``
    and ``ignored_correction``): a kind was looked for on a record when any of them ran. Every registered
    kind is a key: one whose checks are all turned off maps to no check (it was looked for nowhere)."""
    out: dict[str, tuple[str, ...]] = {k: () for spec in REGISTRY.values() for k in spec.kinds}
    for spec in active():
        for kind in spec.kinds:
            out[kind] = (*out[kind], spec.id)
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


def _fault(spec: CheckSpec, got: list[Finding]) -> str | None:
    """What is wrong with the findings a check returned, or None: each must name a step of its check's
    table, one of its kinds, and its own id and version (a finding under another check's id would be
    stored and then shown under that check)."""
    for f in got:
        if f.step not in spec.step_ids:
            return f"returned a finding of undeclared step {f.step!r}"
        if f.kind not in spec.kinds:
            return f"returned a finding of undeclared kind {f.kind!r}"
        if (f.check_id, f.check_version) != (spec.id, spec.version):
            return f"returned a finding of another check ({f.check_id}.v{f.check_version})"
    return None


def is_builtin(spec: CheckSpec) -> bool:
    """Whether ``spec`` is one of this package's checks (what the docs describe)."""
    return spec.fn.__module__.startswith("monitor.checks.")


PLUGINS: dict[str, str] = {}
"""Check id -> the name of the entry point whose loading registered it (:func:`load_plugins`)."""


_REPORTED: set[str] = set()


def _plugin_failed(spec: CheckSpec, why: str) -> CheckStatus:
    """A plugin check that raised or returned a malformed finding: skipped on this rewrite, so the other
    checks and the rest of the batch go on, and logged once per check and process (the check id and what
    went wrong, never the exception's message, which may quote the rewrite)."""
    if spec.id not in _REPORTED:
        _REPORTED.add(spec.id)
        log.warning(
            "check plugin %s (%s) %s; its rewrites are recorded as skipped (turn it off with "
            "[checks.%s] enabled = false)",
            spec.id,
            spec.fn.__module__,
            why,
            spec.id,
        )
    return CheckStatus(spec.id, spec.version, "skipped", f"the check {why}")


def run_checks(record: RewriteRecord, rules: Rules, *, only: Iterable[str] | None = None) -> CheckOutcome:
    """Run every check that runs (:func:`active`; or the ids in ``only``) on ``record``.

    Returns a :class:`CheckOutcome`: the findings in registry order and one status per check (``"ran"``
    with its number of findings, or ``"skipped"`` with the reason). A check that raises anything but
    ``SkipCheck``, or returns a finding of a step, kind or check it does not declare, is a bug: the
    exception propagates (``ValueError`` for the finding). Unless an entry point registered it
    (:data:`PLUGINS`): then it is skipped on this rewrite with the reason ("the check raised
    RuntimeError") and logged once, so that a third-party bug cannot stop the checking of everything
    else. Raises ``KeyError`` for an unknown id in ``only``.
    """
    specs = active() if only is None else [REGISTRY[i] for i in only]
    findings: list[Finding] = []
    statuses: list[CheckStatus] = []
    for spec in specs:
        try:
            got = spec.fn(record, rules)
        except SkipCheck as skip:
            statuses.append(CheckStatus(spec.id, spec.version, "skipped", skip.reason))
            continue
        except Exception as exc:
            if spec.id not in PLUGINS:
                raise
            statuses.append(_plugin_failed(spec, f"raised {type(exc).__name__}"))
            continue
        fault = _fault(spec, got)
        if fault is not None:
            if spec.id not in PLUGINS:
                raise ValueError(f"check {spec.id!r} {fault}")
            statuses.append(_plugin_failed(spec, fault))
            continue
        findings.extend(got)
        statuses.append(CheckStatus(spec.id, spec.version, "ran", None, len(got)))
    return CheckOutcome(record.request_id, rules.hash, tuple(findings), tuple(statuses))


# Report order: by family as the issue lists them, then registration order within a family; checks of
# other families (plugins) after them, in the order they registered.
FAMILIES = ("added_words", "qualifiers", "chat_state", "references", "antecedents", "intent", "scope")


def order_registry() -> None:
    """Reorder :data:`REGISTRY` by :data:`FAMILIES` (stable within a family, other families last);
    ``monitor.checks`` calls it once the family modules and plugins have registered."""

    def rank(spec: CheckSpec) -> int:
        return FAMILIES.index(spec.family) if spec.family in FAMILIES else len(FAMILIES)

    ordered = sorted(REGISTRY.values(), key=rank)
    REGISTRY.clear()
    REGISTRY.update((s.id, s) for s in ordered)


ENTRY_POINT_GROUP = "rewrite_monitor.checks"
"""The entry-point group of checks from other packages: each entry names a module (or an object in one)
whose import registers checks with :func:`register` (``[project.entry-points."rewrite_monitor.checks"]``
in the plugin's ``pyproject.toml``)."""


def load_plugins() -> list[str]:
    """Import every entry point of :data:`ENTRY_POINT_GROUP` installed, in name order; returns their
    names. Raises ``ConfigError`` naming the entry point and its module when one fails to load (a plugin
    that cannot register its checks would otherwise leave them out without a word)."""
    from importlib.metadata import entry_points

    loaded = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        before = set(REGISTRY)
        try:
            ep.load()
        except Exception as exc:  # a plugin's own error of any kind: named, never a traceback mid-run
            raise ConfigError(
                f"check plugin {ep.name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}"
            ) from exc
        PLUGINS.update(dict.fromkeys(set(REGISTRY) - before, ep.name))
        loaded.append(ep.name)
    return loaded
