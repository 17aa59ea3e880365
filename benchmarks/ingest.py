"""Ingest throughput (events/second) of one log file into fresh SQLite and PostgreSQL stores.

Usage::

    python -m benchmarks.ingest ../shared/data/logs/qrecc_infocqr_dev2k.jsonl [--repeat 3]
        [--pg postgresql://postgres@127.0.0.1:5432/test]

Each repetition migrates a new empty database, ingests the file once (timed) and once more (the
idempotent re-run, timed separately); the median of the repetitions is printed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from monitor.ingest.sources import discover
from monitor.ingest.store.batches import ingest_sources
from monitor.store.engine import make_engine, session_factory, upgrade


def _time_ingest(url: str, path: Path) -> tuple[int, float, float]:
    upgrade(url)
    engine = make_engine(url)
    sources = discover([path])
    try:
        with session_factory(engine)() as session:
            t0 = time.perf_counter()
            summary = ingest_sources(session, sources)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            ingest_sources(session, sources)
            again = time.perf_counter() - t0
    finally:
        engine.dispose()
    return summary.stored, first, again


def _pg_database(admin_url: str) -> tuple[str, Callable[[], None]]:
    admin = create_engine(
        make_url(admin_url).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
    )
    name = f"rm_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return make_url(admin_url).set(database=name).render_as_string(hide_password=False), drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--no-pg", action="store_true")
    args = parser.parse_args()
    backends = ["sqlite"] + ([] if args.no_pg else ["postgresql"])
    print(f"{'backend':<11} {'events':>7} {'first s':>8} {'events/s':>9} {'re-run s':>9} {'lines/s':>9}")
    for backend in backends:
        runs = []
        for _ in range(args.repeat):
            if backend == "sqlite":
                with tempfile.TemporaryDirectory() as tmp:
                    runs.append(_time_ingest(f"sqlite:///{tmp}/bench.db", args.path))
            else:
                url, drop = _pg_database(args.pg)
                try:
                    runs.append(_time_ingest(url, args.path))
                finally:
                    drop()
        n = runs[0][0]
        first = statistics.median(r[1] for r in runs)
        again = statistics.median(r[2] for r in runs)
        print(f"{backend:<11} {n:>7} {first:>8.2f} {n / first:>9.0f} {again:>9.2f} {n / again:>9.0f}")


if __name__ == "__main__":
    main()
