"""The check phase on worker processes (``monitor.worker.pool``): a conversation's process, results equal
to one process's, a check registered in the parent alone, and a process killed mid-phase.

The shared logs' golden file is compared on 1, 2 and 4 processes in ``tests/checks/test_golden_findings.py``.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.checks.rules import load_rules
from monitor.errors import PoolError
from monitor.ingest.sources import discover
from monitor.ingest.store.batches import ingest_sources
from monitor.store.models import CheckRun, Record
from monitor.worker.jobs import AHEAD, check_job
from monitor.worker.pool import CheckPool, busy_cores, default_workers, shard_of
from tests.factories import make_record
from tests.golden.findings import finding_lines, fresh_store


def test_a_conversation_always_goes_to_the_same_process() -> None:
    # CRC-32 of "c1" is 1,591,159,457 (odd; 1 mod 4), of "c2" 3,353,246,491 (3 mod 4)
    assert [shard_of("c1", 2), shard_of("c2", 2), shard_of("c1", 4), shard_of("c2", 4)] == [1, 1, 1, 3]
    assert shard_of("c1", 1) == 0


def test_the_default_is_the_free_cores_capped_by_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    from monitor.worker import pool

    assert 1 <= default_workers() <= len(os.sched_getaffinity(0))
    monkeypatch.setattr(pool, "usable_cores", lambda: 8)
    monkeypatch.setattr(pool, "memory_cap", lambda: 6)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    for load, busy, workers in [(0.1, 0, 6), (2.49, 2, 6), (2.5, 3, 5), (7.6, 8, 1), (30.0, 30, 1)]:
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        assert (busy_cores(), default_workers()) == (busy, workers), load
    # a container allowed 2 of a 64-core host's cores, the host at load 30: 34 idle, so both of its own
    monkeypatch.setattr(pool, "usable_cores", lambda: 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "getloadavg", lambda: (30.0, 0.0, 0.0))
    assert default_workers() == 2
    monkeypatch.setattr(os, "getloadavg", lambda: (63.0, 0.0, 0.0))
    assert default_workers() == 1
    monkeypatch.setattr(pool, "usable_cores", lambda: 8)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)

    def unknowable() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", unknowable)
    assert (busy_cores(), default_workers()) == (0, 6)


def test_one_process_or_a_small_job_grades_in_the_parent() -> None:
    rules = load_rules()
    with CheckPool(1, model=None) as one:
        assert one.wants(1_000_000) is False
        assert one.submit_grade(rules, []) is None
    with CheckPool(2, model=None) as two:
        # 4,999 waiting rewrites: below MIN_JOB (5,000), no process is started
        assert two.min_job == 5_000
        assert two.wants(4_999) is False
        assert two.submit_lemmas(rules, []) is None
        assert multiprocessing.active_children() == []


def _cast2020(session: Session, shared_logs: Path) -> int:
    ingest_sources(session, discover([shared_logs / "cast2020.jsonl"]))
    session.commit()
    return int(session.scalar(select(func.count()).select_from(Record)) or 0)


@pytest.mark.slow
def test_a_process_killed_mid_phase_loses_nothing_and_checks_nothing_twice(shared_logs: Path) -> None:
    rules = load_rules()
    with fresh_store() as one:
        records = _cast2020(one, shared_logs)
        assert check_job(session=one, rules=rules, batch_size=50).processes == 1
        want = finding_lines(one)
        runs = one.scalar(select(func.count()).select_from(CheckRun))
    with fresh_store() as session:
        assert _cast2020(session, shared_logs) == records
        batches: list[int] = []

        def kill_after_the_first_batch(n: int) -> None:
            batches.append(n)
            if len(batches) == 1:
                for child in multiprocessing.active_children():
                    os.kill(child.pid or 0, signal.SIGKILL)

        with CheckPool(2, model=None, min_job=0) as pool, pytest.raises(PoolError, match="died mid-batch"):
            assert pool.start()  # ready before the phase, so that the first batch is graded there
            check_job(
                session=session, rules=rules, batch_size=50, pool=pool, on_batch=kill_after_the_first_batch
            )
        session.rollback()
        # the first batch (50 records) was written, and each of the AHEAD (2) handed to them before it
        # was written that the processes had graded before they died; no other one was
        checked = session.scalar(select(func.count(func.distinct(CheckRun.record_id))))
        assert checked in {50 * (1 + k) for k in range(AHEAD + 1)} == {50, 100, 150}
        with CheckPool(2, model=None, min_job=0) as pool:
            check_job(session=session, rules=rules, batch_size=50, pool=pool)
            assert pool.start()  # the run above may have ended before they were ready
            again = check_job(session=session, rules=rules, batch_size=50, pool=pool, recheck=True)
        assert again.processes == 2 and again.as_dict()["processes"] == 2
        assert finding_lines(session) == want
        assert session.scalar(select(func.count()).select_from(CheckRun)) == runs


@pytest.mark.slow
def test_a_check_registered_in_the_parent_alone_keeps_the_phase_in_the_parent(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from monitor.checks import registry

    spec = next(iter(registry.REGISTRY.values()))
    monkeypatch.setitem(registry.REGISTRY, "only_here", spec)
    rules = load_rules()
    with caplog.at_level(logging.WARNING), CheckPool(2, model=None) as pool:
        assert pool.start() is False
        assert (
            pool.submit_lemmas(rules, [make_record([("user", "Which regions?")], "And SLAs?", "SLAs")])
            is None
        )
    assert "registered other checks than this process" in caplog.text


def test_the_processes_collect_garbage_as_the_parent_does() -> None:
    # The thresholds a command runs under (monitor.cli.main.GC_THRESHOLDS) reach the processes: at
    # CPython's default (700, 10, 10) their collections walked the analysis caches for nothing.
    import gc

    saved = gc.get_threshold()
    gc.set_threshold(12_345, 7, 3)
    try:
        with CheckPool(2, model=None) as pool:
            assert pool.start() is True
            assert [ex.submit(gc.get_threshold).result() for ex in pool._executors] == [(12_345, 7, 3)] * 2
    finally:
        gc.set_threshold(*saved)


def test_each_process_keeps_its_share_of_the_caches() -> None:
    """Two processes, each handed one conversation in two: half the context cache's budget each, half the
    analyzer's cache and vocabulary, while this process keeps the whole."""
    from monitor.checks.nlp.analyzer import analyzer_budgets
    from monitor.ingest.store.records import CONTEXT_CACHE_BYTES, context_cache_budget

    with CheckPool(2, model=None) as pool:
        assert pool.start() is True
        got = [ex.submit(context_cache_budget).result() for ex in pool._executors]
        analyzers = [ex.submit(analyzer_budgets).result() for ex in pool._executors]
    assert got == [CONTEXT_CACHE_BYTES // 2] * 2 == [8 * 2**20] * 2
    assert context_cache_budget() == CONTEXT_CACHE_BYTES
    # CACHE_BYTES 104 MiB and VOCAB_LEXEMES 200,000, each over two
    assert analyzers == [{"cache_bytes": 52 * 2**20, "vocab_lexemes": 100_000}] * 2
    assert analyzer_budgets() == {"cache_bytes": 104 * 2**20, "vocab_lexemes": 200_000}


def test_workers_must_be_at_least_one(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from monitor.cli.main import app

    got = CliRunner().invoke(app, ["--database-url", f"sqlite:///{tmp_path}/s.db", "check", "--workers", "0"])
    assert got.exit_code == 2
    assert "Invalid value for '--workers': Input should be greater than or equal to 1" in got.output


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(c) for c in text.split()]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_a_run_killed_mid_phase_leaves_no_process_and_the_next_run_checks_the_rest(
    shared_logs: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys
    import time

    from benchmarks.corpus import real_lines, replicate, write_corpus
    from monitor.store.engine import make_engine, session_factory, upgrade

    # 5,200 rewrites of texts that do not repeat: a job the processes are started for (MIN_JOB)
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(corpus, replicate(real_lines(), 10_400))

    def store(name: str, workers: int) -> tuple[str, list[str]]:
        url = f"sqlite:///{tmp_path}/{name}.db"
        upgrade(url)
        return url, [
            sys.executable,
            "-m",
            "monitor",
            "--database-url",
            url,
            "run",
            str(corpus),
            "--workers",
            str(workers),
        ]

    url, argv = store("killed", 2)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    workers: list[int] = []
    while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
        workers = [c for c in _children(proc.pid) if "spawn_main" in Path(f"/proc/{c}/cmdline").read_text()]
    assert len(workers) == 2, "the run ended before its worker processes started"
    time.sleep(8)  # mid-phase: the processes ready, some batches written, one in hand
    proc.kill()
    proc.wait()
    time.sleep(3)
    assert [w for w in workers if _alive(w)] == []
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    one_url, one_argv = store("one", 1)
    subprocess.run(one_argv, check=True, stdout=subprocess.DEVNULL)
    got: list[tuple[list[str], int, int]] = []
    for u in (url, one_url):
        engine = make_engine(u)
        try:
            with session_factory(engine)() as session:
                records = session.scalar(select(func.count()).select_from(Record)) or 0
                runs = session.scalar(select(func.count()).select_from(CheckRun)) or 0
                got.append((finding_lines(session), records, runs))
        finally:
            engine.dispose()
    (lines, records, runs), (one_lines, one_records, one_runs) = got
    assert records == one_records == 5_200
    # each record was checked once, and the findings are those of one uninterrupted process
    assert runs == one_runs == records
    assert lines == one_lines


def test_the_processes_read_a_store_they_can_see_and_never_learn_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.orm import Session as PlainSession

    from monitor.store.engine import make_engine, session_factory, upgrade
    from monitor.worker.pool import StoredBatch, store_url

    url = f"sqlite:///{tmp_path}/s.db"
    upgrade(url)
    engine = make_engine(url)
    monkeypatch.chdir(tmp_path)
    try:
        with session_factory(engine)() as session:
            assert store_url(session) == url
        # a relative path, made absolute: processes started in another directory read the same file
        with PlainSession(make_engine("sqlite:///s.db")) as session:
            assert store_url(session) == url
        # a session inside a caller's transaction: what it wrote, no other connection sees
        with engine.connect() as conn, PlainSession(bind=conn) as session:
            assert store_url(session) is None
    finally:
        engine.dispose()
    for memory in ("sqlite://", "sqlite:///:memory:"):
        with PlainSession(make_engine(memory)) as session:
            assert store_url(session) is None, memory
    with PlainSession(make_engine("postgresql://rm:s3cret@db.example/monitor")) as session:
        pg = store_url(session)
    assert pg == "postgresql+psycopg://rm:s3cret@db.example/monitor"
    assert "s3cret" not in repr(StoredBatch(pg, "job", [(1, "c1")]))


@pytest.mark.slow
def test_the_processes_read_their_own_records_and_grade_as_one_process(
    shared_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from monitor.ingest.store import records as record_store
    from monitor.worker import jobs

    rules = load_rules()
    with fresh_store() as one:
        records = _cast2020(one, shared_logs)
        check_job(session=one, rules=rules, batch_size=50)
        want = finding_lines(one)
    with fresh_store() as session, CheckPool(2, model=None, min_job=0) as pool:
        assert _cast2020(session, shared_logs) == records
        assert pool.start()

        def not_here(**_: object) -> object:
            raise AssertionError("the main process read and parsed records")

        # in this process only: the worker processes import their own
        monkeypatch.setattr(jobs, "load_records", not_here)
        monkeypatch.setattr(record_store, "load_records", not_here)
        got = check_job(session=session, rules=rules, batch_size=50, pool=pool)
        assert (got.records, got.processes) == (records, 2)
        assert finding_lines(session) == want


@pytest.mark.slow
def test_a_process_reads_again_a_record_completed_after_the_learning_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tests/worker/test_stale_records.py``'s race, where a worker process kept the record: it read
    c1_2 without its ctx_input in the learning pass, and the other half is stored before the check loop."""
    from monitor.store.engine import make_engine, session_factory, upgrade
    from monitor.store.models import CheckSkip
    from tests.worker.test_stale_records import half_then_the_other_after_learning

    url = f"sqlite:///{tmp_path}/s.db"
    upgrade(url)
    engine = make_engine(url)
    try:
        with session_factory(engine)() as session, CheckPool(2, model=None, min_job=0) as pool:
            assert pool.start()
            half_then_the_other_after_learning(session, monkeypatch)
            summary = check_job(session=session, rules=load_rules(), pool=pool)
            assert (summary.records, summary.processes) == (1, 2)
            reasons = session.scalars(select(CheckSkip.reason)).all()
            assert [r for r in reasons if "no ctx_input" in r] == []
            assert session.scalar(select(func.count()).select_from(CheckRun)) == 1
    finally:
        engine.dispose()


def test_outcomes_cross_to_the_main_process_whole() -> None:
    """``Finding``, ``CheckStatus`` and ``CheckOutcome`` pickle as constructor calls (``__reduce__``): every
    field, none left at its default, comes back."""
    import pickle

    from monitor.checks.base import CheckOutcome, CheckStatus, Finding

    finding = Finding("added_content_word", "medium", {"words": [{"text": "SLA"}]}, "why", "acw", 4, "own")
    status = CheckStatus("acw", 4, "skipped", "no ctx_input logged for this request", 2)
    outcome = CheckOutcome("c1_2", "hash", (finding,), (status,))
    back = pickle.loads(pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL))
    assert back == outcome
    assert (back.statuses[0].reason, back.statuses[0].n_findings, back.findings[0].step) == (
        "no ctx_input logged for this request",
        2,
        "own",
    )


@pytest.mark.slow
def test_a_pool_kept_from_job_to_job_reads_the_store_of_each(tmp_path: Path) -> None:
    """A store made again at the same path (the processes' connection from the first job would read the
    file it replaced): the second job's records are read from the new file."""
    from monitor.ingest.store.batches import ingest_bytes
    from monitor.store.engine import make_engine, session_factory, upgrade
    from tests.factories import ctx_input, log, rewrite

    url = f"sqlite:///{tmp_path}/same.db"
    with CheckPool(2, model=None, min_job=0) as pool:
        assert pool.start()
        requests = []
        for conv in ("first", "second"):
            for name in ("same.db", "same.db-wal", "same.db-shm"):
                (tmp_path / name).unlink(missing_ok=True)
            upgrade(url)
            engine = make_engine(url)
            try:
                with session_factory(engine)() as session:
                    req = f"{conv}_2"
                    ingest_bytes(session, log(ctx_input(conv, req, 2), rewrite(conv, req, 2)))
                    session.commit()
                    assert check_job(session=session, rules=load_rules(), pool=pool).processes == 2
                    requests.append(
                        session.scalars(
                            select(Record.request_id).join(CheckRun, CheckRun.record_id == Record.id)
                        ).all()
                    )
            finally:
                engine.dispose()
    assert requests == [["first_2"], ["second_2"]]
