"""Throughput, memory and scaling of ingest and checks, against spaCy's tokenizer as the floor.

Usage::

    python -m benchmarks.run                      # default sizes, SQLite and PostgreSQL (make bench)
    python -m benchmarks.run --events 50000 --repeat 5 --no-pg
    python -m benchmarks.run --backfill 1000000   # also: peak RSS of a 1,000,000-event backfill (slow)

Prints a table, each figure beside its target from issue 18 where it has one, and writes
``benchmarks/results/latest.json`` (not committed) with the corpus it ran on (each log file's name,
size and sha256, the synthetic corpora's parameters), the git commit and the Python and spaCy
versions. Every figure is the median of ``--repeat`` repetitions (1 by default, which keeps ``make
bench`` at a few minutes on 2 cores now that every cold figure pays a process; publish with 3).
Whatever claims to be cold runs in a fresh process (``benchmarks/children.py``): the NLP caches live as
long as the process.

Figures:

- ingest events/s on SQLite and PostgreSQL, in this process: the real logs copied up to ``--events``
  events with fresh ids and marked texts (``benchmarks/corpus.py``);
- check rewrites/s per check family and all together over the real logs' records, preloaded, each
  in a fresh process (cold: building the analyzer and loading the word tables are inside the time);
- the tokenizer floor, in a fresh process: ``spacy.blank("en")`` built, then its tokenizer over each
  distinct text the checks' analyzer tokenised once. Like for like with the in-memory checks (build +
  tokenize against analyzer build + checks; ``import spacy`` outside both), with the CLI's check phase
  (import + build + tokenize: the CLI imports spaCy inside its check phase), and with the end-to-end
  run (the floor process's wall clock, interpreter start-up included);
- the floor again on as many processes as ``run`` checked the real logs on (the texts dealt among
  them, all spawned at once; issue 36: like for like with a check phase on a process pool);
- end to end as users run it: ``rewrite-monitor --database-url URL run LOGS`` as a subprocess on a
  migrated empty store (``db upgrade`` untimed), wall clock from spawn to exit, on SQLite and
  PostgreSQL, with its peak RSS and the check phase it prints; PostgreSQL / SQLite as a throughput ratio;
- start-up alone: a fresh process importing the CLI, loading the rules, building the analyzer and
  loading the word tables (wall clock from spawn to exit);
- per-rewrite check time with 2, 8, 32 and 128 prior messages over :data:`PRIOR_CONVERSATIONS`
  synthetic conversations (messages drawn from the real transcripts), each size in a fresh process
  whose earlier requests were already checked, a collection right before the timed call;
- the check phase's budget: the check job as ``run`` runs it, on a fresh copy of the ingested real logs
  in a fresh process, its time split by stage (``benchmarks.budget``: spaCy, tokenizer, analysis,
  tokens, word tables, checks, load, store, other; the collector's share apart), and the check phase
  the 0.35 target allows at the measured floor, with what that leaves for the product's own work;
- with ``--backfill N``: ``rewrite-monitor run`` on N events whose texts differ between copies, on
  SQLite, with the peak RSS of that process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.budget import FLOOR_STAGES, STAGES
from benchmarks.corpus import (
    REPLICATE_SEED,
    REPO,
    SHARED_LOGS,
    describe_logs,
    real_lines,
    replicate,
    sample_texts,
    write_corpus,
)

RESULTS = REPO / "benchmarks" / "results" / "latest.json"
CLI = Path(sys.executable).parent / "rewrite-monitor"
PRIOR_TURNS = (2, 8, 32, 128)
PRIOR_CONVERSATIONS = 12
"""Conversations per prior-messages size: the figure is their mean, so one slow request cannot decide it."""
CHECK_RATIO_TARGET = 0.35
"""Issue 18: the tokenizer floor over the check phase (and over the checks in memory), at least this."""
CHECK_LINE = re.compile(r"check: (\d+) rewrites checked in ([\d.]+) s(?: on (\d+) processes)?")


# -- processes and stores -------------------------------------------------------------------------
def spawn(argv: list[str], tree: dict[str, float] | None = None) -> tuple[float, float, str]:
    """Run ``argv`` from the repository; returns (wall seconds from spawn to exit, peak RSS in MB of that
    process, its stdout). Raises ``RuntimeError`` with its stderr when it fails.

    With ``tree``, the process and its descendants (a check pool's workers) are sampled every half second
    (:func:`tree_rss`), and ``tree`` gets ``peak_rss_any_process_mb`` (the largest any one of them reached),
    ``peak_rss_total_mb`` (the largest sum at one sample) and ``peak_pss_total_mb`` (the same of their
    proportional set sizes: a page several of them share, the interpreter's and spaCy's libraries, counted
    once, where the sum of RSS counts it in each): issue 36's 500 MB per process, 1 GB in all."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=REPO)
        done = threading.Event()
        peaks = [0.0, 0.0, 0.0]

        def sample() -> None:
            while not done.wait(0.5):
                sizes = tree_rss(proc.pid)
                if sizes:
                    peaks[0], peaks[1] = max(peaks[0], max(sizes)), max(peaks[1], sum(sizes))
                    peaks[2] = max(peaks[2], sum(tree_rss(proc.pid, field="Pss")))

        sampler = threading.Thread(target=sample, daemon=True) if tree is not None else None
        if sampler is not None:
            sampler.start()
        # wait4 gives this child's own rusage; RUSAGE_CHILDREN would be the largest child so far.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        if sampler is not None and tree is not None:
            sampler.join()
            tree["peak_rss_any_process_mb"] = max(peaks[0], usage.ru_maxrss / 1024)
            tree["peak_rss_total_mb"] = max(peaks[1], usage.ru_maxrss / 1024)
            tree["peak_pss_total_mb"] = peaks[2]
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode()
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{err.read().decode()[-3000:]}")
    return wall, usage.ru_maxrss / 1024, stdout


def tree_rss(root: int, field: str = "VmRSS") -> list[float]:
    """Resident set sizes in MB (``VmRSS`` of ``/proc/PID/status``; ``field="Pss"``: proportional set
    sizes, of ``/proc/PID/smaps_rollup``) of ``root`` and its living descendants, read from ``/proc``;
    empty where there is no ``/proc`` (then only the process's own peak is known)."""
    parent: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parent[int(stat.parent.name)] = int(fields[1])
        except (OSError, IndexError, ValueError):  # a process that ended while we read
            continue
    wanted, grew = {root}, True
    while grew:
        more = {pid for pid, ppid in parent.items() if ppid in wanted} - wanted
        wanted |= more
        grew = bool(more)
    sizes = []
    source = "status" if field == "VmRSS" else "smaps_rollup"
    for pid in wanted:
        try:
            for line in Path(f"/proc/{pid}/{source}").read_text().splitlines():
                if line.startswith(f"{field}:"):
                    sizes.append(int(line.split()[1]) / 1024)
        except OSError:
            continue
    return sizes


def idle_host_workers() -> int:
    """The processes ``run`` would use on this host with nothing else running: its cores
    (``monitor.worker.pool.usable_cores``) capped by memory (``memory_cap``). The benchmark passes it as
    ``--workers``, so no figure depends on the load its own processes leave (``default_workers`` reads the
    load average)."""
    from monitor.worker.pool import memory_cap, usable_cores

    return max(1, min(usable_cores(), memory_cap()))


def child(phase: str, **args: Any) -> tuple[float, dict[str, Any]]:
    """Run a phase of ``benchmarks.children`` in a fresh process; returns (wall seconds, its JSON)."""
    wall, _, stdout = spawn([sys.executable, "-m", "benchmarks.run", "--child", phase, json.dumps(args)])
    return wall, json.loads(stdout.strip().splitlines()[-1])


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each numeric field of ``runs`` (dicts with the same keys), each field apart; a whole
    number stays whole (the lower of the two middle runs when their number is even)."""
    return {
        k: (statistics.median_low if isinstance(v, int) else statistics.median)(r[k] for r in runs)
        for k, v in runs[0].items()
    }


def median_of(repeat: int, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run ``fn`` ``repeat`` times; :func:`medians` of its results."""
    return medians([fn() for _ in range(repeat)])


@contextmanager
def database(backend: str, pg_admin: str, migrate: bool = True) -> Iterator[str]:
    """A fresh database URL (migrated unless ``migrate`` is false); dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from monitor.store.engine import upgrade

    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{tmp}/bench.db"
            if migrate:
                upgrade(url)
            yield url
        return
    admin = create_engine(
        make_url(pg_admin).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
    )
    name = f"rm_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        url = make_url(pg_admin).set(database=name).render_as_string(hide_password=False)
        if migrate:
            upgrade(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def ingest_file(url: str, path: Path) -> tuple[int, float]:
    """Ingest ``path`` (a file or a folder) into ``url``; returns (events stored, seconds)."""
    from monitor.ingest.sources import discover
    from monitor.ingest.store.batches import ingest_sources
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            t0 = time.perf_counter()
            summary = ingest_sources(s, discover([path]))
            return summary.stored, time.perf_counter() - t0
    finally:
        engine.dispose()


def cli_run(url: str, path: Path, *options: str) -> dict[str, Any]:
    """``rewrite-monitor run path [options]`` on the empty store ``url`` (migrated by ``db upgrade``,
    untimed).

    Returns ``seconds`` (wall clock of the run process), ``peak_rss_mb``, ``rewrites``, ``check_s`` and
    ``processes`` (1 unless it says "on N processes") as the run's check line prints them, and the peaks
    of its process tree (:func:`spawn`)."""
    spawn([str(CLI), "--database-url", url, "db", "upgrade"])
    tree: dict[str, float] = {}
    wall, rss, stdout = spawn([str(CLI), "--database-url", url, "run", str(path), *options], tree)
    got = CHECK_LINE.search(stdout)
    if got is None:
        raise RuntimeError(f"no check line in the output of run:\n{stdout[:2000]}")
    return {
        "seconds": wall,
        "peak_rss_mb": rss,
        "rewrites": int(got[1]),
        "check_s": float(got[2]),
        "processes": int(got[3] or 1),
        **tree,
    }


# -- the sections ---------------------------------------------------------------------------------
def bench_ingest(path: Path, events: int, repeat: int, backends: list[str], pg: str) -> dict[str, Any]:
    out = {}
    for backend in backends:

        def once(backend: str = backend) -> dict[str, Any]:
            with database(backend, pg) as url:
                stored, secs = ingest_file(url, path)
            if stored != events:
                raise RuntimeError(f"ingest stored {stored} of {events} events")
            return {"seconds": secs}

        secs = median_of(repeat, once)["seconds"]
        out[backend] = {"events": events, "seconds": secs, "events_per_s": events / secs}
    return out


def bench_checks(db: str, texts: Path, repeat: int) -> dict[str, Any]:
    """Per family and all checks, each repetition in a fresh process; ``all`` also writes ``texts``."""
    from monitor.checks import REGISTRY

    families: dict[str, list[str]] = {}
    for spec in REGISTRY.values():
        families.setdefault(spec.family, []).append(spec.id)
    out: dict[str, Any] = {}
    for name, only in [("all", None), *families.items()]:
        dump = str(texts) if name == "all" else None
        x = median_of(
            repeat, lambda only=only, dump=dump: child("checks", db=db, only=only, dump_texts=dump)[1]
        )
        x["seconds"] = x["build_s"] + x["check_s"]
        x["rewrites_per_s"] = x["rewrites"] / x["seconds"]
        out[name] = x
    return out


def bench_floor(texts: Path, repeat: int) -> dict[str, Any]:
    from monitor.cli.main import GC_THRESHOLDS

    def once() -> dict[str, Any]:
        wall, x = child("floor", texts=str(texts), gc_thresholds=list(GC_THRESHOLDS))
        return {**x, "process_s": wall}

    return median_of(repeat, once)


def bench_floor_on(texts: Path, processes: int, repeat: int) -> dict[str, Any]:
    """The tokenizer floor on ``processes`` processes at once, as the product's check phase uses them
    (issue 36, part 3: like for like): the texts dealt round-robin to one cold floor process each, all
    spawned together; ``process_s`` is the wall clock from the first spawn to the last exit, ``docs``
    the texts in all."""
    from monitor.cli.main import GC_THRESHOLDS

    every = json.loads(texts.read_text(encoding="utf-8"))

    def once() -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            parts = []
            for n in range(processes):
                part = Path(tmp) / f"texts{n}.json"
                part.write_text(json.dumps(every[n::processes]), encoding="utf-8")
                parts.append(part)
            t0 = time.perf_counter()
            with ThreadPoolExecutor(processes) as pool:
                list(
                    pool.map(
                        lambda part: child("floor", texts=str(part), gc_thresholds=list(GC_THRESHOLDS)),
                        parts,
                    )
                )
            return {"process_s": time.perf_counter() - t0, "docs": len(every), "processes": processes}

    return median_of(repeat, once)


def bench_startup(repeat: int) -> dict[str, Any]:
    def once() -> dict[str, Any]:
        wall, x = child("startup")
        return {**x, "process_s": wall}

    return median_of(repeat, once)


def bench_end_to_end(backends: list[str], pg: str, repeat: int) -> dict[str, Any]:
    out = {}
    for backend in backends:

        def once(backend: str = backend) -> dict[str, Any]:
            with database(backend, pg, migrate=False) as url:
                return cli_run(url, SHARED_LOGS, "--workers", str(idle_host_workers()))

        x = median_of(repeat, once)
        x["rewrites_per_s"] = x["rewrites"] / x["seconds"]
        x["rewrites_per_s_per_process"] = x["rewrites_per_s"] / x["processes"]
        out[backend] = x
    return out


def bench_prior_turns(texts: Path, repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for prior in PRIOR_TURNS:
        out[str(prior)] = median_of(
            repeat,
            lambda prior=prior: child(
                "prior", prior=prior, conversations=PRIOR_CONVERSATIONS, seed=prior, texts=str(texts)
            )[1],
        )
    out["ratio_128_to_8"] = out["128"]["ms_per_rewrite"] / out["8"]["ms_per_rewrite"]
    return out


def bench_budget(db_file: Path, repeat: int) -> dict[str, Any]:
    """The check phase by stage (``benchmarks.budget``), each repetition in a fresh process on its own
    copy of the ingested store ``db_file``; with ``repeat`` > 1 the median of each stage apart, so the
    stages need not add up to the median ``job_s`` exactly."""
    import sqlite3

    def once() -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "budget.db"
            # the backup API copies what the write-ahead log holds too; a file copy might not
            src, dst = sqlite3.connect(db_file), sqlite3.connect(copy)
            try:
                src.backup(dst)
            finally:
                src.close()
                dst.close()
            return child("budget", url=f"sqlite:///{copy}")[1]

    return median_of(repeat, once)


def bench_backfill(lines: list[str], events: int, workers: int) -> dict[str, Any]:
    """``rewrite-monitor run --workers N`` on ``events`` replicated events (texts differ between copies),
    SQLite, with the peak RSS of the run process and of its process tree."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "backfill.jsonl"
        write_corpus(path, replicate(lines, events))
        x = cli_run(f"sqlite:///{tmp}/backfill.db", path, "--workers", str(workers))
    return {"events": events, "workers": workers, **x}


SPIN = "d = {}\nfor i in range(8_000_000):\n    d[i % 5000] = str(i)\n"
"""A pure-Python loop (dict writes and string allocations, the kind of work the checks do) for
:func:`host_speedup`: about 1.1 s alone on this machine when its host is quiet, 2 s when it is busy."""


def host_speedup(n: int) -> float:
    """What this host gives ``n`` CPU-bound processes at once: ``n`` times the wall clock of :data:`SPIN`
    alone over the wall clock of ``n`` copies started together. ``n`` on idle dedicated cores; lower
    where the cores are shared with other guests of the host (on 2026-12-07 this machine's 2 vCPUs gave
    1.93 at 15:00, and 1.34 to 1.82 between 16:10 and 16:15, when one loop alone also ran 45% slower):
    about what ``run --workers n`` can gain over ``--workers 1`` at that moment (one reading: the host
    can change within a run). Raises ``RuntimeError`` with a loop's error output when one fails; no loop
    is left running."""

    def wall(k: int) -> float:
        start = time.perf_counter()
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for _ in range(k):
                procs.append(subprocess.Popen([sys.executable, "-c", SPIN], stderr=subprocess.PIPE))
            for p in procs:
                _, err = p.communicate()
                if p.returncode != 0:
                    raise RuntimeError(
                        f"the host's speed-up probe exited {p.returncode}:\n{err.decode()[-2000:]}"
                    )
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        return time.perf_counter() - start

    return n * wall(1) / wall(n)


def bench_workers(
    lines: list[str], events: int, counts: tuple[int, ...] = (1, 2), repeat: int = 1
) -> dict[str, Any]:
    """``rewrite-monitor run --workers N`` on ``events`` replicated events (texts differ between copies:
    the non-repeating corpus), SQLite, for each N in ``counts``; ``speedup``: the first N's wall clock over
    the last's, ``rewrites_per_s`` and per process (issue 36).

    With ``repeat`` > 1 the counts are run in turn, ``repeat`` rounds (1, 2, 1, 2, ...), each on a fresh
    store: each N's figures are the medians of its runs, and ``speedup`` the median of the rounds' own
    ratios, so a drift of the host's speed during the benchmark (this machine's ``run --workers 1`` went
    from 54 s to 65 s over three rounds on 2026-12-07) weighs on both sides of each ratio alike.
    ``speedups``: each round's ratio; ``host_speedup``: the median of :func:`host_speedup` measured before
    each round (``host_speedups``), what the host itself gave the last count's processes then. Each
    field is its own median (:func:`medians`), so ``seconds`` and ``check_s`` can come from different
    runs, and ``rewrites_per_s`` is the rewrites over the median wall clock."""
    out: dict[str, Any] = {"events": events, "rounds": repeat}
    runs: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "backfill.jsonl"
        write_corpus(path, replicate(lines, events))
        hosts: list[float] = []
        for round_ in range(repeat):
            if len(counts) > 1:
                hosts.append(host_speedup(counts[-1]))
            for n in counts:
                db = Path(tmp) / f"workers{n}.db"
                for leftover in Path(tmp).glob(f"{db.name}*"):
                    leftover.unlink()
                x = cli_run(f"sqlite:///{db}", path, "--workers", str(n))
                runs[n].append(x)
                print(
                    f"run --workers {n} (round {round_ + 1} of {repeat}): {x['seconds']:.1f} s, "
                    f"check phase {x['check_s']:.1f} s",
                    flush=True,
                )
    for n in counts:
        x = medians(runs[n])
        x["rewrites_per_s"] = x["rewrites"] / x["seconds"]
        x["rewrites_per_s_per_process"] = x["rewrites_per_s"] / n
        out[str(n)] = x
    first, last = runs[counts[0]], runs[counts[-1]]
    out["speedups"] = [a["seconds"] / b["seconds"] for a, b in zip(first, last, strict=True)]
    out["speedup"] = statistics.median(out["speedups"])
    if hosts:
        out["host_speedups"] = hosts
        out["host_speedup"] = statistics.median(hosts)
    return out


def floor_total(floor: dict[str, Any]) -> float:
    """The floor as the check phase of ``run`` is compared with it: import + build + tokenize, seconds."""
    return float(floor["import_s"] + floor["build_s"] + floor["tokenize_s"])


def ratios(r: dict[str, Any]) -> dict[str, float | None]:
    """Each ratio from like-for-like figures (see the module docstring); greater is better except
    ``prior_128_to_8``."""
    floor, checks, e2e = r["tokenizer_floor"], r["check_in_memory"]["all"], r["end_to_end"]
    out: dict[str, float | None] = {
        "floor_to_check_in_memory": (floor["build_s"] + floor["tokenize_s"]) / checks["seconds"],
        "floor_to_check_phase_sqlite": floor_total(floor) / e2e["sqlite"]["check_s"],
        "floor_to_end_to_end_sqlite": floor["process_s"] / e2e["sqlite"]["seconds"],
        "floor_on_processes_to_end_to_end_sqlite": r["tokenizer_floor_on"]["process_s"]
        / e2e["sqlite"]["seconds"],
        "prior_128_to_8": r["prior_turns"]["ratio_128_to_8"],
        "postgresql_to_sqlite_end_to_end": None,
    }
    if "postgresql" in e2e:
        # Throughput ratio: SQLite's time over PostgreSQL's.
        out["postgresql_to_sqlite_end_to_end"] = e2e["sqlite"]["seconds"] / e2e["postgresql"]["seconds"]
    return out


def allowance(r: dict[str, Any]) -> dict[str, float]:
    """What the check phase may take to meet :data:`CHECK_RATIO_TARGET` at the measured floor:
    ``allowed_s`` (the floor's import + build + tokenize over the target), ``over_s`` (how much longer
    `run`'s check phase took: what must go), ``own_allowed_s`` (the allowance less the floor: what it
    leaves beyond the floor's own kind of work) and ``own_s`` (that work as the budget measured it: its
    job less its floor stages, :data:`benchmarks.budget.FLOOR_STAGES`). ``over_s`` compares like with
    like; the last two are read side by side, each from its own process."""
    b = r["check_phase_budget"]
    floor_s = floor_total(r["tokenizer_floor"])
    allowed = floor_s / CHECK_RATIO_TARGET
    return {
        "allowed_s": allowed,
        "over_s": r["end_to_end"]["sqlite"]["check_s"] - allowed,
        "own_allowed_s": allowed - floor_s,
        "own_s": b["job_s"] - sum(b[s] for s in FLOOR_STAGES),
    }


def _require_pg(url: str) -> None:
    """Exit with a usage message (status 2) when PostgreSQL at ``url`` cannot be reached, before any
    figure is measured: the alternative is a traceback minutes into the run."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    engine = create_engine(make_url(url).set(drivername="postgresql+psycopg"))
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        first = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        print(
            f"PostgreSQL unreachable at {make_url(url).render_as_string()}: {first}\n"
            "pass --pg URL for another server, or --no-pg for the SQLite figures alone",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    finally:
        engine.dispose()


def versions() -> dict[str, str | None]:
    try:
        commit: str | None = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    from importlib.metadata import version

    return {"git_commit": commit, "python": platform.python_version(), "spacy": version("spacy")}


def at_least_one(value: str) -> int:
    """``--repeat``'s type: a whole number of at least 1 (``argparse`` reports anything else)."""
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--events", type=int, default=20_000, help="ingest corpus size in events (default 20000)"
    )
    parser.add_argument(
        "--repeat",
        type=at_least_one,
        default=1,
        help="runs per figure, the median kept (default 1: every run is cold)",
    )
    parser.add_argument(
        "--pg",
        default="postgresql://postgres@127.0.0.1:5432/test",
        help="a PostgreSQL database URL whose user may create and drop databases (the benchmark's own "
        "throw-away ones); default postgresql://postgres@127.0.0.1:5432/test",
    )
    parser.add_argument("--no-pg", action="store_true", help="SQLite only: no PostgreSQL figures")
    parser.add_argument("--backfill", type=int, default=0, help="also measure a backfill of N events")
    parser.add_argument(
        "--workers-events",
        type=int,
        default=40_000,
        help="events of the non-repeating corpus `run --workers 1` and `--workers 2` are timed on "
        "(default 40000: 20,000 rewrites; 0 skips it)",
    )
    parser.add_argument("--child", nargs=2, metavar=("PHASE", "ARGS_JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        from benchmarks.children import run_child

        run_child(args.child[0], json.loads(args.child[1]))
        return
    from monitor.cli.main import tune_gc

    tune_gc()  # what every rewrite-monitor command runs under, so the figures are the users'
    lines = real_lines()
    backends = ["sqlite"] + ([] if args.no_pg else ["postgresql"])
    if not args.no_pg:
        _require_pg(args.pg)
    results: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "repeat": args.repeat,
        "cpu_count": os.cpu_count(),
        **versions(),
        "corpus": {
            "logs": {"folder": str(SHARED_LOGS), "files": describe_logs()},
            "ingest": {
                "events": args.events,
                "seed": REPLICATE_SEED,
                "from": "logs, copies with marked texts",
            },
            "prior_turns": {
                "sizes": list(PRIOR_TURNS),
                "conversations": PRIOR_CONVERSATIONS,
                "seed": "the size",
                "from": "messages of the logs",
            },
            "backfill": {"events": args.backfill, "seed": REPLICATE_SEED} if args.backfill else None,
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus = work / "corpus.jsonl"
        events = write_corpus(corpus, replicate(lines, args.events))
        print(
            f"corpus: {events} events from {SHARED_LOGS} (copies with fresh ids and marked texts)", flush=True
        )
        results["ingest"] = bench_ingest(corpus, events, args.repeat, backends, args.pg)
        print("ingest done", flush=True)
        # Checks and the floor run on the real logs as they are; copies would only add texts the
        # marker makes distinct but the checks grade alike.
        db = f"sqlite:///{work}/real.db"
        from monitor.store.engine import upgrade

        upgrade(db)
        ingest_file(db, SHARED_LOGS)
        texts = work / "analysed_texts.json"
        results["check_in_memory"] = bench_checks(db, texts, args.repeat)
        results["tokenizer_floor"] = bench_floor(texts, args.repeat)
        print("checks and floor done", flush=True)
        results["startup"] = bench_startup(args.repeat)
        results["end_to_end"] = bench_end_to_end(backends, args.pg, args.repeat)
        # like for like (issue 36): the floor on as many processes as `run` checked the real logs on
        used = int(results["end_to_end"]["sqlite"]["processes"])
        results["tokenizer_floor_on"] = bench_floor_on(texts, used, args.repeat)
        results["check_phase_budget"] = bench_budget(work / "real.db", args.repeat)
        print("end to end and budget done", flush=True)
        sample = work / "sample_texts.json"
        sample.write_text(json.dumps(sample_texts(lines)), encoding="utf-8")
        results["prior_turns"] = bench_prior_turns(sample, args.repeat)
    if args.backfill:
        results["backfill"] = bench_backfill(lines, args.backfill, idle_host_workers())
    if args.workers_events:
        results["workers"] = bench_workers(lines, args.workers_events, repeat=args.repeat)
    results["ratios"] = ratios(results)
    results["check_phase_budget"].update(allowance(results))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print_table(results)
    print(f"\nwritten {RESULTS.relative_to(REPO)}")


def print_table(r: dict[str, Any]) -> None:
    """Figure, value, detail, and the target from issue 18 with whether it is met."""
    from monitor.text import counted

    ratio = r["ratios"]
    rows: list[tuple[str, str, str, str]] = []

    def target(value: float | None, bound: float, at_least: bool) -> str:
        if value is None:
            return ""
        met = value >= bound if at_least else value <= bound
        return f"{'>=' if at_least else '<='} {bound:g}: {'met' if met else 'MISSED'}"

    for backend, x in r["ingest"].items():
        rows.append(
            (
                f"ingest ({backend})",
                f"{x['events_per_s']:,.0f} events/s",
                f"{x['events']:,} events in {x['seconds']:.2f} s",
                "",
            )
        )
    for fam, x in r["check_in_memory"].items():
        rows.append(
            (
                f"check {fam} (in memory, cold process)",
                f"{x['rewrites_per_s']:,.0f} rewrites/s",
                f"{x['rewrites']:,} in {x['seconds']:.2f} s (build {x['build_s']:.2f} s)",
                "",
            )
        )
    x = r["tokenizer_floor"]
    rows.append(
        (
            "spaCy tokenizer floor (cold process)",
            f"{x['docs'] / x['tokenize_s']:,.0f} docs/s",
            f"{x['docs']:,} texts: import {x['import_s']:.2f} + build {x['build_s']:.2f} + "
            f"tokenize {x['tokenize_s']:.2f} s; process {x['process_s']:.2f} s",
            "",
        )
    )
    x = r["startup"]
    rows.append(
        (
            "start-up (imports, rules, analyzer, tables)",
            f"{x['process_s']:.2f} s",
            f"import {x['import_s']:.2f} + rules {x['rules_s']:.2f} + analyzer {x['build_s']:.2f} + "
            f"tables {x['tables_s']:.2f} s in process",
            "",
        )
    )
    for backend, x in r["end_to_end"].items():
        rows.append(
            (
                f"end to end `run` ({backend})",
                f"{x['rewrites_per_s']:,.0f} rewrites/s",
                f"{x['rewrites']:,} in {x['seconds']:.2f} s, check phase {x['check_s']:.2f} s on "
                + counted(int(x["processes"]), "process", "processes")
                + f" ({x['rewrites_per_s_per_process']:,.0f} rewrites/s per process), "
                f"{x['peak_rss_mb']:.0f} MB peak",
                "",
            )
        )
    b = r["check_phase_budget"]
    for stage in sorted(STAGES, key=lambda k: -b[k]):
        rows.append(
            (
                f"check phase budget: {stage}",
                f"{b[stage]:.2f} s",
                f"{b[stage] / b['job_s']:.0%} of the job's {b['job_s']:.2f} s under the stopwatch"
                + ("; the floor's own kind of work" if stage in FLOOR_STAGES else ""),
                "",
            )
        )
    rows.append(("check phase budget: gc", f"{b['gc_s']:.2f} s", "a share of the stages above", ""))
    check_s = r["end_to_end"]["sqlite"]["check_s"]
    rows.append(
        (
            f"check phase the {CHECK_RATIO_TARGET:g} target allows",
            f"{b['allowed_s']:.2f} s",
            f"floor / {CHECK_RATIO_TARGET:g}; `run`'s check phase {check_s:.2f} s, {b['over_s']:.2f} s over",
            "",
        )
    )
    rows.append(
        (
            "  beyond the floor's own kind of work",
            f"{b['own_allowed_s']:.2f} s",
            f"the allowance less the floor; the budget's job less spacy and tokenizer: {b['own_s']:.2f} s",
            "",
        )
    )
    rows.append(
        (
            "floor / check all in memory",
            f"{ratio['floor_to_check_in_memory']:.3f}",
            "build + tokenize vs build + checks",
            target(ratio["floor_to_check_in_memory"], CHECK_RATIO_TARGET, True),
        )
    )
    rows.append(
        (
            "floor / check phase of run (SQLite)",
            f"{ratio['floor_to_check_phase_sqlite']:.3f}",
            "import + build + tokenize vs the run's check line",
            target(ratio["floor_to_check_phase_sqlite"], CHECK_RATIO_TARGET, True),
        )
    )
    rows.append(
        (
            "floor / end to end (SQLite)",
            f"{ratio['floor_to_end_to_end_sqlite']:.3f}",
            "process wall clocks",
            target(ratio["floor_to_end_to_end_sqlite"], 0.2, True),
        )
    )
    x = r["tokenizer_floor_on"]
    rows.append(
        (
            f"floor on {counted(int(x['processes']), 'process', 'processes')} / end to end (SQLite)",
            f"{ratio['floor_on_processes_to_end_to_end_sqlite']:.3f}",
            f"the floor on as many processes as `run` used: {x['process_s']:.2f} s, {x['docs']:,.0f} texts",
            target(ratio["floor_on_processes_to_end_to_end_sqlite"], 0.3, True),
        )
    )
    pg = ratio["postgresql_to_sqlite_end_to_end"]
    if pg is not None:
        # issue 36's bar (issue 18's was 0.7)
        rows.append(("PostgreSQL / SQLite end to end", f"{pg:.2f}x", "throughput", target(pg, 0.85, True)))
    for prior in PRIOR_TURNS:
        x = r["prior_turns"][str(prior)]
        rows.append(
            (
                f"check, {prior} prior messages",
                f"{x['ms_per_rewrite']:.2f} ms/rewrite",
                f"{PRIOR_CONVERSATIONS} newest requests; {x['ms_per_call']:.2f} ms with coverage",
                "",
            )
        )
    rows.append(
        (
            "128 vs 8 prior messages",
            f"{ratio['prior_128_to_8']:.2f}x",
            "",
            target(ratio["prior_128_to_8"], 1.2, False),  # issue 36's bar (issue 18's was 1.3)
        )
    )
    if "backfill" in r:
        b = r["backfill"]
        big = b["events"] >= 1_000_000
        rows.append(
            (
                f"backfill {b['events']:,} events (run --workers {b.get('workers', 1)}, SQLite)",
                f"{b['seconds'] / 60:.1f} min",
                f"{b['rewrites']:,} rewrites, {b['rewrites'] / b['seconds']:,.0f}/s",
                target(b["seconds"] / 60, 25, False) if big else "(target at 1,000,000: <= 25 min)",
            )
        )
        for key, label, bound in (
            ("peak_rss_any_process_mb", "largest process", 500),
            ("peak_rss_total_mb", "all processes", 1000),
            ("peak_pss_total_mb", "all processes, shared pages once (PSS)", 1000),
        ):
            if key in b:
                rows.append(
                    (
                        f"backfill peak {'PSS' if 'pss' in key else 'RSS'}, {label}",
                        f"{b[key]:.0f} MB",
                        f"run process alone {b['peak_rss_mb']:.0f} MB",
                        target(b[key], bound, False) if big else f"(target at 1,000,000: <= {bound} MB)",
                    )
                )
    if "workers" in r:
        w = r["workers"]
        for n in ("1", "2"):
            x = w[n]
            rows.append(
                (
                    f"run --workers {n}, non-repeating texts (SQLite)",
                    f"{x['rewrites_per_s']:,.0f} rewrites/s",
                    f"{x['rewrites']:,} in {x['seconds']:.1f} s, check phase {x['check_s']:.1f} s, "
                    f"{x['rewrites_per_s_per_process']:,.0f}/s per process, {x['peak_rss_mb']:.0f} MB peak",
                    "",
                )
            )
        rows.append(
            (
                "run --workers 2 over --workers 1",
                f"{w['speedup']:.2f}x",
                "wall clock"
                + (
                    f", median of {len(w['speedups'])} rounds in turn: "
                    + ", ".join(f"{x:.2f}" for x in w["speedups"])
                    if len(w.get("speedups", ())) > 1
                    else ""
                ),
                target(w["speedup"], 1.7, True),
            )
        )
        if "host_speedup" in w:
            rows.append(
                (
                    "  the host's own speed-up, 2 processes",
                    f"{w['host_speedup']:.2f}x",
                    "two pure-Python loops at once against one, before each round: "
                    + ", ".join(f"{x:.2f}" for x in w["host_speedups"])
                    + " (about what the line above can reach; 2 on idle dedicated cores)",
                    "",
                )
            )
        one = w["1"]
        serial = one["seconds"] - one["check_s"]
        rows.append(
            (
                "  the check phase alone halved",
                f"{one['seconds'] / (serial + one['check_s'] / 2):.2f}x",
                f"ingest, admission and start-up {serial:.1f} s of {one['seconds']:.1f} s on one process "
                "(no ceiling: the processes find lemmas while the ingest runs)",
                "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for a, b_, c, d in rows:
        print(f"{a:<{widths[0]}}  {b_:>{widths[1]}}  {c:<{widths[2]}}  {d}".rstrip())


if __name__ == "__main__":
    main()
