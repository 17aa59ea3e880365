"""The halves of each request in different files, read by three workers at once (``split_halves``)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from sqlalchemy import func, select

from monitor.store.engine import upgrade
from monitor.store.models import CheckRun, Event
from tests.factories import stream_lines
from tests.faults.common import (
    Result,
    Size,
    backend,
    compare_with,
    half_records,
    one_shot,
    quarantined,
    stored_events,
    worker_cycle,
)
from tests.helpers import Writer, count, start_worker, worker_env


def _cycles_done(logs: list[Path]) -> list[int]:
    """Cycles each worker has finished, by its log."""
    return [
        sum(
            1
            for x in log.read_text().splitlines()
            if x.startswith("{") and json.loads(x)["event"] == "cycle done"
        )
        if log.exists()
        else 0
        for log in logs
    ]


def split_halves(url: str, workdir: Path, size: Size, ref_url: str) -> Result:
    """Every ``ctx_input`` goes to ``ctx-<n>.jsonl`` and every ``rewrite`` to ``rw-<n>.jsonl`` (two files
    each), written while three workers run (one on SQLite, where a second worker is refused). Once every
    line is stored and the workers have run two more cycles each, no record may lack a half, and every
    record must be checked once; after a last cycle (which admits the day again) findings and queue must
    equal a one-shot run of the same lines."""
    res = Result("split_halves", backend(url))
    lines = stream_lines(size.workers_conversations, turns=4, seed=41)
    workdir.mkdir(parents=True)
    files = {k: [workdir / f"{k}-{i}.jsonl" for i in range(2)] for k in ("ctx", "rw")}
    per_file: dict[Path, list[bytes]] = {f: [] for fs in files.values() for f in fs}
    for i, ln in enumerate(lines):
        kind = "ctx" if json.loads(ln)["event"] == "ctx_input" else "rw"
        per_file[files[kind][(i // 2) % 2]].append(ln)
    for f in per_file:
        f.touch()
    n_workers = 3 if backend(url) == "postgresql" else 1
    env = worker_env(url, [str(workdir / "*.jsonl")], worker_interval_minutes=0.01, batch_size=50)
    logs = [workdir / f"worker-{i}.log" for i in range(n_workers)]
    workers = [start_worker(env, log) for log in logs]
    try:
        writers = [Writer(f, ls, seconds=8, seed=i) for i, (f, ls) in enumerate(per_file.items())]
        for w in writers:
            w.start()
        for w in writers:
            w.join()
        deadline = time.monotonic() + 600
        while count(url, select(func.count()).select_from(Event)) < len(lines):
            if time.monotonic() > deadline or any(p.poll() is not None for p in workers):
                raise RuntimeError("workers did not store every line: " + logs[0].read_text()[-1500:])
            time.sleep(0.5)
        # Two more cycles by *each* worker: a count over all of them was met by two idle workers while
        # the third, slow under load, still held the batches it had claimed (a CI run on a busy machine).
        settled = [n + 2 for n in _cycles_done(logs)]
        while any(n < want for n, want in zip(_cycles_done(logs), settled, strict=True)):
            if time.monotonic() > deadline:
                raise RuntimeError("workers stopped cycling")
            time.sleep(0.5)
        res.figures["workers"] = n_workers
        res.figures["requests"] = len(lines) // 2
        res.figures["half-records"] = half_records(url)
        # One run per (record, set of check versions) is the schema's unique key: a shortfall is a
        # record never checked.
        runs = count(url, select(func.count()).select_from(CheckRun))
        res.figures["check runs missing"] = len(lines) // 2 - runs
    finally:
        for p in workers:
            p.send_signal(signal.SIGTERM)
        for p in workers:
            p.wait(timeout=120)
    worker_cycle(url, [str(workdir / "*.jsonl")], batch_size=50)
    stored = stored_events(url)
    res.figures["lost"] = len(lines) - len(stored)
    res.figures["quarantined"] = sum(quarantined(url).values())
    res.expect(res.figures["half-records"] == 0, "half-records remain")
    res.expect(res.figures["check runs missing"] == 0, "records left unchecked")
    res.expect(res.figures["lost"] == 0 and all(v == 1 for v in stored.values()), "events lost or doubled")
    res.expect(res.figures["quarantined"] == 0, "lines quarantined")
    upgrade(ref_url)
    one_shot(ref_url, lines, workdir / "ref", batch_size=50)
    compare_with(res, url, ref_url)
    return res
