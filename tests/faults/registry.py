"""The scenarios of the fault suite, the stores each runs on, and how one is run on a fresh store."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.faults import contention, crash, leaks, outage, poison, split
from tests.faults.common import Result, Size
from tests.helpers import fresh_database


@dataclass(frozen=True)
class Scenario:
    """``run(url, workdir, size[, ref_url])``; ``backends`` it applies to; ``reference``: it also needs a
    second fresh store for the one-shot run it compares with; ``in_make_test``: it also runs at the small
    size in the README's test command (else only in ``make faults``)."""

    run: Callable[..., Result]
    backends: tuple[str, ...]
    reference: bool = False
    in_make_test: bool = True


SCENARIOS: dict[str, Scenario] = {
    "kill_rotate": Scenario(crash.kill_rotate, ("sqlite", "postgresql"), reference=True),
    "kill_rotate_traces": Scenario(crash.kill_rotate_traces, ("sqlite", "postgresql"), reference=True),
    "copytruncate": Scenario(crash.copytruncate, ("sqlite", "postgresql")),
    "split_halves": Scenario(split.split_halves, ("sqlite", "postgresql"), reference=True),
    "poison": Scenario(poison.poison, ("sqlite", "postgresql")),
    "contention": Scenario(contention.contention, ("sqlite",)),
    "secrets": Scenario(leaks.secrets, ("postgresql",)),
    "pii_export": Scenario(leaks.pii_export, ("sqlite", "postgresql")),
    "pii_ids": Scenario(leaks.pii_ids, ("sqlite", "postgresql")),
    "db_outage": Scenario(outage.db_outage, ("sqlite", "postgresql"), reference=True),
    "source_shapes": Scenario(outage.source_shapes, ("sqlite", "postgresql")),
}


def run_scenario(name: str, backend: str, workdir: Path, size: Size) -> Result:
    """Run scenario ``name`` on fresh stores of ``backend`` with ``workdir`` as its folder."""
    scenario = SCENARIOS[name]
    with ExitStack() as stack:
        # the tests' own throw-away stores (tests.helpers.fresh_database): a SQLite file per folder,
        # or a new PostgreSQL database dropped afterwards
        store = contextmanager(fresh_database)
        (workdir / "store").mkdir(parents=True, exist_ok=True)
        url = stack.enter_context(store(backend, workdir / "store"))
        args: list[Any] = [url, workdir / "work", size]
        if scenario.reference:
            (workdir / "reference").mkdir(parents=True, exist_ok=True)
            args.append(stack.enter_context(store(backend, workdir / "reference")))
        return scenario.run(*args)
