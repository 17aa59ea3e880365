"""Layering contracts between the pipeline stages, checked statically on the source with ``ast``.

Every ``import`` and ``from ... import`` statement counts, wherever it is: at module level, inside a
function (the lazy imports that keep ``--help`` fast), in a ``try`` block or under ``if TYPE_CHECKING``.
Names are resolved as Python would resolve them: relative imports against the importing module's
package, and ``from a.b import c`` is an import of the module ``a.b.c`` when that module exists, else of
``a.b``. An import of ``a.b.c`` is an edge to ``a.b.c`` only, not to ``a`` and ``a.b``. The dashboard's
modules import each other as top-level names (Streamlit puts ``dashboard/`` on ``sys.path``), so
``import reads`` there is the module ``dashboard.reads``.

Run just these with ``make contracts``.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

HEAVY = ("sqlalchemy", "streamlit", "anthropic", "sentry_sdk", "apscheduler")
MODELS = "monitor.store.models"


# --- the graph walker ------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Import:
    """One imported name: ``target`` is a module of the scanned tree when it resolves to one, else the
    dotted name as written (``sqlalchemy.orm``)."""

    importer: str
    target: str
    file: str
    line: int
    typing_only: bool = False  # under ``if TYPE_CHECKING:``: read by type checkers, never run

    def __str__(self) -> str:
        return f"{self.importer} -> {self.target}  ({self.file}:{self.line})"


@dataclass
class Graph:
    modules: dict[str, str]  # module name -> file, relative to the scanned root
    imports: list[Import]

    def __post_init__(self) -> None:
        self._by_importer: dict[str, list[Import]] = defaultdict(list)
        for imp in self.imports:
            self._by_importer[imp.importer].append(imp)

    def imports_of(self, module: str) -> list[Import]:
        return self._by_importer.get(module, [])

    def edges(self, within: str = "", *, runtime_only: bool = False) -> set[tuple[str, str]]:
        """(importer, imported) between modules of the tree, both inside the package ``within``;
        ``runtime_only`` leaves out the imports under ``if TYPE_CHECKING:``."""
        return {
            (i.importer, i.target)
            for i in self.imports
            if i.target in self.modules
            and in_package(i.importer, within)
            and in_package(i.target, within)
            and not (runtime_only and i.typing_only)
        }


def in_package(name: str, package: str) -> bool:
    return not package or name == package or name.startswith(package + ".")


def top(name: str) -> str:
    return name.partition(".")[0]


def module_name(rel: Path) -> str:
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def scan(root: Path, dirs: Iterable[str], path_entries: Iterable[str] = ()) -> Graph:
    """Every import in the ``.py`` files under ``root/<dir>`` for each of ``dirs``.

    ``path_entries`` are directories among ``dirs`` whose files are also importable under their own
    top-level names (a directory on ``sys.path``): ``import reads`` in one of them is ``<entry>.reads``.
    """
    files: dict[str, Path] = {}
    for d in dirs:
        for path in sorted((root / d).rglob("*.py")):
            files[module_name(path.relative_to(root))] = path
    entry_of = {
        name.split(".")[1]: entry for entry in path_entries for name in files if name.startswith(entry + ".")
    }

    def resolve(name: str) -> str:
        if top(name) in entry_of:
            name = f"{entry_of[top(name)]}.{name}"
        parts = name.split(".")
        for n in range(len(parts), 0, -1):
            if ".".join(parts[:n]) in files:
                return ".".join(parts[:n])
        return name

    imports: set[Import] = set()
    for module, path in files.items():
        rel = path.relative_to(root).as_posix()
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_bytes(), filename=rel)
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _is_type_checking(node.test)
            for stmt in node.body
            for inner in ast.walk(stmt)
        }
        for node in ast.walk(tree):
            only = id(node) in typing_only
            if isinstance(node, ast.Import):
                for alias in node.names:
                    imports.add(Import(module, resolve(alias.name), rel, node.lineno, only))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".") if package else []
                    if node.level - 1 >= len(parts):
                        raise ValueError(f"{rel}:{node.lineno}: relative import beyond the top-level package")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                for alias in node.names:
                    full = resolve(f"{base}.{alias.name}")
                    target = full if alias.name != "*" and full in files else resolve(base)
                    imports.add(Import(module, target, rel, node.lineno, only))
    return Graph({m: p.relative_to(root).as_posix() for m, p in files.items()}, sorted(imports))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def cycles(graph: Graph, within: str = "", *, runtime_only: bool = True) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted, in name order.

    With ``runtime_only`` (the default), imports under ``if TYPE_CHECKING:`` are left out: they never run,
    so they cannot make the import order matter."""
    succ: dict[str, set[str]] = defaultdict(set)
    for a, b in graph.edges(within, runtime_only=runtime_only):
        succ[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(m for m in graph.modules if in_package(m, within)):
        if v not in index:
            visit(v)
    return sorted(found)


def loaded_by(graph: Graph, starts: Iterable[str]) -> dict[str, list[str]]:
    """Every module of the tree that importing one of ``starts`` can load, counting lazy imports and the
    parent packages Python runs first (``import a.b.c`` runs ``a`` and ``a.b``), each with one chain of
    imports from a start that shows how."""
    chains: dict[str, list[str]] = {}
    todo = deque((s, [s]) for s in sorted(starts))
    while todo:
        module, chain = todo.popleft()
        if module in chains or module not in graph.modules:
            continue
        chains[module] = chain
        parts = module.split(".")
        for n in range(1, len(parts)):
            parent = ".".join(parts[:n])
            todo.append((parent, chain[:-1] + [f"{parent} (package of {module})"]))
        todo.extend((imp.target, chain + [imp.target]) for imp in graph.imports_of(module))
    return chains


# --- the contracts ---------------------------------------------------------------------------------


@cache
def project() -> Graph:
    return scan(REPO, ["monitor", "dashboard", "migrations"], path_entries=["dashboard"])


def fail_if(offences: list, title: str, lines: Iterable[object] | None = None) -> None:
    """Fail with ``title`` and one line per offence (or per line of ``lines``)."""
    __tracebackhide__ = True
    if offences:
        pytest.fail("\n".join([title, *(f"  {line}" for line in (offences if lines is None else lines))]))


def test_checks_import_no_heavy_stack_and_no_store_or_cli() -> None:
    """``monitor.checks`` (the package and all its modules except the stage's own ``store`` package) imports
    none of sqlalchemy, streamlit, anthropic, sentry_sdk, apscheduler, ``monitor.store`` or ``monitor.cli``,
    neither directly nor through another monitor module, lazily or not.

    Why: the checks are pure functions of a record and the rules. The replay tool, the benchmarks and the
    check tests run them without a database, a UI, an LLM client or a scheduler, and they must stay cheap
    to import. ``monitor/checks/store/`` is the storage adapter of the checks stage (see the models
    contract) and may use SQLAlchemy, but no other checks module may import it.
    ``tests/checks/test_imports.py`` asserts the same at run time for what one import actually loads.
    """
    graph = project()
    starts = [
        m
        for m in graph.modules
        if in_package(m, "monitor.checks") and not in_package(m, "monitor.checks.store")
    ]
    chains = loaded_by(graph, starts)
    bad = [
        f"{imp}  [via {' -> '.join(chains[imp.importer])}]"
        for module in sorted(chains)
        for imp in graph.imports_of(module)
        if top(imp.target) in HEAVY
        or in_package(imp.target, "monitor.store")
        or in_package(imp.target, "monitor.cli")
    ]
    fail_if(bad, "monitor.checks loads a heavy stack, the store or the CLI:")


def test_stages_do_not_import_the_cli_or_the_dashboard() -> None:
    """No module under ``monitor/`` other than ``monitor.cli`` (and ``monitor.__main__``, which only hands
    over to the CLI) imports ``monitor.cli`` or the dashboard.

    Why: the CLI and the dashboard are the outermost layer, the presentation of the stages. A stage that
    imports them drags in typer/rich or Streamlit, cannot be reused by the other front end or the worker,
    and closes import cycles with the CLI, which imports every stage.
    """
    graph = project()
    bad = [
        imp
        for imp in graph.imports
        if in_package(imp.importer, "monitor")
        and not in_package(imp.importer, "monitor.cli")
        and imp.importer != "monitor.__main__"
        and (in_package(imp.target, "monitor.cli") or top(imp.target) == "dashboard")
    ]
    fail_if(bad, "stage modules import the CLI or the dashboard:")


def test_no_import_cycles_in_monitor() -> None:
    """The module import graph of ``monitor/`` has no cycle: no strongly connected component of more than
    one module, counting lazy imports, ``__init__`` importing its submodules as an edge from the package,
    and an import of ``a.b.c`` as an edge to ``a.b.c`` only.

    Why: a cycle makes the import order matter (a module sees the other half-initialised), forces
    function-level imports as a workaround, and means the modules cannot be understood, tested or moved
    apart. A lazy import still closes the cycle; it only hides it until the function runs.
    """
    graph = project()
    found = cycles(graph, "monitor")
    lines = []
    for component in found:
        lines.append("cycle: " + ", ".join(component))
        lines += [
            f"  {imp}" for imp in graph.imports if imp.importer in component and imp.target in component
        ]
    fail_if(found, f"{len(found)} import cycle(s) in monitor/:", lines)


def test_no_cycle_even_through_type_annotations() -> None:
    """Not even the imports under ``if TYPE_CHECKING:`` close a loop between two modules of ``monitor/``:
    two modules that need each other's types share a third that defines them (``monitor.worker.context``
    for the jobs and the process that runs them; ``QualifierMatch`` with the rules it is matched by).

    Why: a loop through annotations still means neither module can be read, or moved, without the other.
    """
    graph = project()
    found = cycles(graph, "monitor", runtime_only=False)
    fail_if(
        found, "modules of monitor/ that use each other's types:", ["cycle: " + ", ".join(c) for c in found]
    )


GROUND = frozenset(
    {
        "monitor.errors",
        "monitor.text",
        "monitor.severity",
        "monitor.setting_groups",
        "monitor.instrument",
        "monitor.lexicon",
        "monitor.sampling",
        "monitor.verdicts",
        "monitor.intervals",
        "monitor.http",
        "monitor.bundled",
        "monitor.record",
        "monitor.privacy",
        "monitor.data",
    }
)
"""The ground floor: modules every stage may read, which read no stage (each other, without a cycle)."""

STAGES = (
    "monitor.store",
    "monitor.otel",
    "monitor.settings",
    "monitor.ingest",
    "monitor.checks",
    "monitor.queue",
    "monitor.alerts",
    "monitor.cases",
    "monitor.review",
    "monitor.replay",
    "monitor.stats",
    "monitor.observability",
    "monitor.worker",
    "monitor.cli",
    "monitor.__main__",
)
"""The floors above the ground, lowest first: the pipeline in the order its data flows (stored, read in,
checked, queued, turned into cases, reviewed, replayed, counted), then the worker that runs it and the
command line. ``settings`` sits above ``otel`` because it validates the trace-mapping options."""


def floor_of(module: str) -> int:
    """0 for a ground module, else 1 + the index of its stage in :data:`STAGES`; ``KeyError`` for a module
    of ``monitor/`` that is on no floor."""
    if module == "monitor" or any(in_package(module, g) for g in GROUND):
        return 0
    for i, stage in enumerate(STAGES):
        if in_package(module, stage):
            return i + 1
    raise KeyError(module)


def test_every_import_runs_down_the_floors() -> None:
    """Every import between two modules of ``monitor/`` (lazy ones and those under ``if TYPE_CHECKING:``
    too) goes to a lower floor or stays in its own stage: ingest reads nothing of the checks or the queue,
    the review stage reads the cases it makes and not the statistics, no ground module reads a stage.
    A new top-level module must be placed in :data:`GROUND` or :data:`STAGES`.

    Why: a stage that reads a later one cannot be understood, tested or reused without it, and one import
    up is all a cycle needs (``farm-studio look`` draws such an arrow running back up)."""
    graph = project()
    unplaced = sorted(
        {m for m in graph.modules if in_package(m, "monitor")} - {m for m in graph.modules if _placed(m)}
    )
    fail_if(unplaced, "modules of monitor/ on no floor (add them to GROUND or STAGES):")
    up = [
        f"{imp}  (floor {floor_of(imp.importer)} -> {floor_of(imp.target)})"
        for imp in graph.imports
        if in_package(imp.importer, "monitor")
        and in_package(imp.target, "monitor")
        and imp.target in graph.modules
        and floor_of(imp.target) > floor_of(imp.importer)
    ]
    fail_if(up, "imports that run up the floors:")


def _placed(module: str) -> bool:
    try:
        floor_of(module)
    except KeyError:
        return False
    return True


# monitor/store/*, monitor/<stage>/store.py or the modules of a stage's store/ package (ingest owns four
# tables and keeps one module per table), migrations/* (the CLI is no stage)
STORE_MODULE = re.compile(r"monitor\.store\.\w+|monitor\.(?!cli\.)\w+\.store(\.\w+)?|migrations\..+")


def test_only_store_modules_import_the_models() -> None:
    """Only store modules import ``monitor.store.models``: ``monitor/store/*``, a stage's ``store.py``
    (``monitor/<stage>/store.py``, or the modules of its ``store/`` package) and ``migrations/``; the rest
    of ``monitor/`` and the dashboard do not.

    Why: the tables are the storage layout, not an interface. Keeping every query in the store modules
    lets the schema change behind their functions, keeps SQLAlchemy out of the pure code, and gives each
    stage one place that says what it reads and writes.
    """
    graph = project()
    bad = [imp for imp in graph.imports if imp.target == MODELS and not STORE_MODULE.fullmatch(imp.importer)]
    fail_if(bad, f"modules outside the store modules import {MODELS}:")


def test_alert_policy_is_pure() -> None:
    """``monitor/alerts/policy.py`` imports no sqlalchemy, directly or through any monitor module it
    imports, transitively (lazy imports and parent packages included).

    Why: the alert policy is a pure decision over counts and history (``monitor.alerts.store`` feeds it
    rows); the Sentry integration and the tests use it without a database, and it must stay testable with
    plain values.
    """
    graph = project()
    chains = loaded_by(graph, ["monitor.alerts.policy"])
    bad = [
        f"{imp}  [via {' -> '.join(chains[imp.importer])}]"
        for module in sorted(chains)
        for imp in graph.imports_of(module)
        if top(imp.target) == "sqlalchemy"
    ]
    fail_if(bad, "monitor.alerts.policy loads sqlalchemy:")


# --- the walker itself -----------------------------------------------------------------------------


def test_walker_on_a_hand_made_tree(tmp_path: Path) -> None:
    """Lazy and relative imports, submodule resolution of ``from x import y``, top-level names of a
    ``sys.path`` directory, and the cycle finder, on a small tree with exact expected values."""
    files = {
        "pkg/__init__.py": "from . import a\nVALUE = 1\n",
        "pkg/a.py": "import json\n\n\ndef f():\n    from pkg.b import thing\n    return thing\n",
        "pkg/b.py": "from .sub import c\nthing = c\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/c.py": "import pkg.a\nfrom .. import b\nfrom ..b import thing as t\n",
        "pkg/d.py": "from pkg import a, VALUE\n"
        "try:\n    import sqlalchemy.orm\nexcept ImportError:\n    pass\n",
        "app/page.py": "import helpers\nfrom pkg.sub import *\n",
        "app/helpers.py": "class C:\n    def m(self):\n        import pkg.d\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)

    graph = scan(tmp_path, ["pkg", "app"], path_entries=["app"])

    assert sorted(graph.modules) == [
        "app.helpers",
        "app.page",
        "pkg",
        "pkg.a",
        "pkg.b",
        "pkg.d",
        "pkg.sub",
        "pkg.sub.c",
    ]
    assert [(i.importer, i.target, i.line) for i in graph.imports] == [
        ("app.helpers", "pkg.d", 3),  # inside a method
        ("app.page", "app.helpers", 1),  # a top-level name of a sys.path directory
        ("app.page", "pkg.sub", 2),  # star import: the package itself
        ("pkg", "pkg.a", 1),  # relative, and a package importing its own submodule
        ("pkg.a", "json", 1),
        ("pkg.a", "pkg.b", 5),  # inside a function
        ("pkg.b", "pkg.sub.c", 1),  # relative, y is a submodule
        ("pkg.d", "pkg", 1),  # VALUE is not a submodule
        ("pkg.d", "pkg.a", 1),
        ("pkg.d", "sqlalchemy.orm", 3),
        ("pkg.sub.c", "pkg.a", 1),  # to pkg.a only, not to its parent pkg
        ("pkg.sub.c", "pkg.b", 2),  # two levels up, y is a submodule
        ("pkg.sub.c", "pkg.b", 3),  # two levels up, y is a name in pkg.b
    ]
    assert graph.edges("pkg") == {
        ("pkg", "pkg.a"),
        ("pkg.a", "pkg.b"),
        ("pkg.b", "pkg.sub.c"),
        ("pkg.d", "pkg"),
        ("pkg.d", "pkg.a"),
        ("pkg.sub.c", "pkg.a"),
        ("pkg.sub.c", "pkg.b"),
    }
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    assert cycles(graph, "pkg.sub") == []
    assert loaded_by(graph, ["app.page"]) == {
        "app.page": ["app.page"],
        "app.helpers": ["app.page", "app.helpers"],
        "pkg.sub": ["app.page", "pkg.sub"],
        "pkg.d": ["app.page", "app.helpers", "pkg.d"],
        "pkg": ["app.page", "pkg (package of pkg.sub)"],  # `from pkg.sub import *` runs pkg first
        "pkg.a": ["app.page", "app.helpers", "pkg.d", "pkg.a"],
        "pkg.b": ["app.page", "app.helpers", "pkg.d", "pkg.a", "pkg.b"],
        "pkg.sub.c": ["app.page", "app.helpers", "pkg.d", "pkg.a", "pkg.b", "pkg.sub.c"],
    }


def test_type_checking_imports_close_no_cycle(tmp_path: Path) -> None:
    """Two modules that use each other's types only under ``if TYPE_CHECKING:`` form no cycle; the same
    import outside it does."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/e.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.f import X\n"
    )
    (tmp_path / "pkg/f.py").write_text("import pkg.e\nX = 1\n")
    graph = scan(tmp_path, ["pkg"])
    assert [(i.importer, i.target, i.typing_only) for i in graph.imports if i.target.startswith("pkg")] == [
        ("pkg.e", "pkg.f", True),
        ("pkg.f", "pkg.e", False),
    ]
    assert cycles(graph) == []
    (tmp_path / "pkg/e.py").write_text("from pkg.f import X\n")
    assert cycles(scan(tmp_path, ["pkg"])) == [["pkg.e", "pkg.f"]]
