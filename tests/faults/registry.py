"""The scenarios of the fault suite, the stores each runs on, and how one is run on a fresh store."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monitor.store.engine import upgrade
from tests.faults import contention, crash, leaks, poison, split
from tests.faults.common import Result, Size
from tests.helpers import throwaway_pg_database


@dataclass(frozen=True)
class Scenario:
    """``run(url, workdir, size[, ref_url])``; ``backends`` it applies to; ``reference``: it also needs a
    second fresh store for the one-shot run it compares with."""

    run: Callable[..., Result]
    backends: tuple[str, ...]
    reference: bool = False


SCENARIOS: dict[str, Scenario] = {
    "kill_rotate": Scenario(crash.kill_rotate, ("sqlite", "postgresql"), reference=True),
    "copytruncate": Scenario(crash.copytruncate, ("sqlite", "postgresql")),
    "split_halves": Scenario(split.split_halves, ("sqlite", "postgresql"), reference=True),
    "poison": Scenario(poison.poison, ("sqlite", "postgresql")),
    "contention": Scenario(contention.contention, ("sqlite",)),
    "secrets": Scenario(leaks.secrets, ("postgresql",)),
    "pii_export": Scenario(leaks.pii_export, ("sqlite", "postgresql")),
}


@contextmanager
def fresh_store(backend: str, folder: Path, name: str) -> Any:
    """A new store: a migrated SQLite file in ``folder``, or a throw-away migrated PostgreSQL database
    (dropped on exit; unreachable PostgreSQL skips or fails as in the tests, ``tests.helpers``)."""
    if backend == "sqlite":
        folder.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{folder / (name + '.db')}"
        upgrade(url)
        yield url
        return
    with throwaway_pg_database("rm_faults", migrate=True) as url:
        yield url


def run_scenario(name: str, backend: str, workdir: Path, size: Size) -> Result:
    """Run scenario ``name`` on fresh stores of ``backend`` with ``workdir`` as its folder."""
    scenario = SCENARIOS[name]
    with ExitStack() as stack:
        url = stack.enter_context(fresh_store(backend, workdir / "stores", "store"))
        args: list[Any] = [url, workdir / "work", size]
        if scenario.reference:
            args.append(stack.enter_context(fresh_store(backend, workdir / "stores", "reference")))
        return scenario.run(*args)
