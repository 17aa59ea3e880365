"""``python -m tests.faults``: run the fault suite and print its figures (``make faults`` runs it at full
size). Exit status: 0 when every expectation held, 1 when one failed, 2 on a usage error.

Examples::

    python -m tests.faults                       # every scenario, full size, SQLite and PostgreSQL
    python -m tests.faults --size small --only poison --only secrets
    python -m tests.faults --database sqlite --keep /tmp/faults   # keep the logs and stores
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tests.faults.common import SIZES
from tests.faults.registry import SCENARIOS, run_scenario


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.faults",
        description="Run the fault suite and print one line of figures per scenario and store (make faults "
        "runs it at full size). Exit 0: every expectation held; 1: one failed; 2: usage error.",
    )
    parser.add_argument(
        "--size", choices=sorted(SIZES), default="full", help="how much of each fault (default full)"
    )
    parser.add_argument(
        "--database",
        choices=["sqlite", "postgresql", "both"],
        default="both",
        help="which stores (default both; PostgreSQL from REWRITE_MONITOR_TEST_PG_URL)",
    )
    parser.add_argument(
        "--only", action="append", choices=sorted(SCENARIOS), help="run only this scenario (repeatable)"
    )
    parser.add_argument(
        "--keep", type=Path, help="keep each scenario's logs and SQLite stores under this folder"
    )
    args = parser.parse_args(argv)
    size = SIZES[args.size]
    backends = ["sqlite", "postgresql"] if args.database == "both" else [args.database]
    root = args.keep or Path(tempfile.mkdtemp(prefix="rewrite-monitor-faults-"))
    failed = 0
    started = time.monotonic()
    try:
        for name in args.only or list(SCENARIOS):
            for backend in backends:
                if backend not in SCENARIOS[name].backends:
                    continue
                t0 = time.monotonic()
                result = run_scenario(name, backend, root / f"{name}-{backend}", size)
                failed += bool(result.failures)
                print(f"{result.line()} ({time.monotonic() - t0:.0f} s)", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    verdict = "all passed" if not failed else f"{failed} failed"
    print(f"fault suite ({size.name}): {verdict} in {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
