"""The checks' part of the documentation, generated from their step tables so it cannot go stale.

- the README's table of the checks: a line a check (finding kinds, check id and version, what it fires
  on), :func:`readme_table`;
- ``docs/checks.md``'s step tables: every step of every check with its grade, what it does and its
  source, :func:`step_pages`.

``make docs`` (``monitor.cli.docs``) writes them between their marker lines; ``tests/test_docs.py`` fails
when either differs from what the step tables make. Reads only the registry.
"""

from __future__ import annotations

from monitor.checks.registry import REGISTRY, CheckSpec, is_builtin
from monitor.checks.steps import markdown_table


def _builtin() -> list[CheckSpec]:
    """This package's checks in report order: the documentation is the product's, whatever plugins the
    machine that makes it has installed."""
    return [spec for spec in REGISTRY.values() if is_builtin(spec)]


def _kinds(spec: CheckSpec) -> str:
    return ", ".join(f"`{k}`" for k in spec.kinds)


def readme_table() -> str:
    """The README's table of the checks: a row a registered check, in report order (the steps are in
    ``docs/checks.md``)."""
    lines = [
        "| finding kind | check | fires when |",
        "| --- | --- | --- |",
    ]
    for spec in _builtin():
        lines.append(f"| {_kinds(spec)} | `{spec.versioned_id}` | {spec.summary} |")
    return "\n".join(lines) + "\n"


def step_pages() -> str:
    """``docs/checks.md``'s generated part: per check, its summary and its full step table."""
    out = []
    for spec in _builtin():
        out.append(
            f"### `{spec.versioned_id}` ({_kinds(spec)})\n\n{spec.summary[:1].upper()}{spec.summary[1:]}.\n"
        )
        out.append(markdown_table((", ".join(spec.kinds), spec.id, step) for step in spec.steps))
    return "\n".join(out)
