"""Lemmas found ahead of the learning pass (issue 36): while ``run`` ingests, the check processes find the
added lemmas of the records committed so far (``CheckPool.warm``); the learning pass takes what they found
for every record still as it was."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.checks.rules import load_rules
from monitor.ingest.sources import Source, discover
from monitor.ingest.store.batches import IngestSummary, ingest_bytes, ingest_sources
from monitor.ingest.store.records import LoadedShape
from monitor.store.models import AddedLemma
from monitor.worker import pool as pool_module
from monitor.worker.ahead import WarmUp
from monitor.worker.jobs import check_job
from monitor.worker.pool import Ahead, CheckPool, KeptRecords, Lemmas, StoredBatch, store_url
from tests.factories import ctx_input, log, rewrite
from tests.golden.findings import finding_lines, fresh_store

QUERY = "What is the uptime SLA for the Dublin enterprise region?"


def test_lemmas_found_ahead_serve_only_a_record_whose_conversation_is_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """c1 is whole when the processes find its lemmas; c2 has only its rewrite then, and its ctx_input is
    stored after. The learning pass stores what was found for c1 (forged here, 'forged', to show it is
    not found again) and analyses c2 again: its history names no enterprise, so 'enterprise' is added
    (with no message list, nothing is: the half's lemmas were [])."""
    monkeypatch.setattr(pool_module, "_RULES", [])
    monkeypatch.setattr(pool_module, "_KEPT", KeptRecords())
    monkeypatch.setattr(pool_module, "_STORES", {})
    rules = load_rules()
    with fresh_store() as session:
        url = store_url(session)
        assert url is not None
        ingest_bytes(session, log(ctx_input("c1", "c1_2"), rewrite("c1", "c1_2", query=QUERY)))
        ingest_bytes(session, log(rewrite("c2", "c2_2", query=QUERY)))
        session.commit()
        heads = [(1, "c1"), (2, "c2")]
        found = pool_module._warm(pool_module._bare(rules), StoredBatch(url, "ingest", heads))
        assert [x.lemmas.lemmas for x in found if x is not None] == [["enterprise"], []]
        ingest_bytes(session, log(ctx_input("c2", "c2_2")))  # c2's half, completed after
        session.commit()
        forged = {
            i: x._replace(lemmas=x.lemmas._replace(lemmas=["forged"]))
            for i, x in zip((1, 2), found, strict=True)
            if x is not None
        }
        check_job(session=session, rules=rules, ahead=forged)
        assert _lemma_rows(session) == [("ctx-v1", "enterprise", "c2"), ("ctx-v1", "forged", "c1")]
        assert forged == {}  # each taken out as used
        for engine in pool_module._STORES.values():
            engine.dispose()


def test_only_what_was_found_on_this_store_under_these_rules_is_served() -> None:
    """:meth:`CheckPool.found_ahead` waits for each warm-up and keeps what was found on the store asked
    for under the rules asked for; a warm-up that failed is left out."""
    from concurrent.futures import Future

    rules = load_rules()
    key = hashlib.sha256(pool_module._bare(rules)).hexdigest()
    shape = LoadedShape("c1", 2, None, ((2, 1, 1),), True)

    def done(value: object = None, error: Exception | None = None) -> Future[list[Ahead | None]]:
        fut: Future[list[Ahead | None]] = Future()
        fut.set_exception(error) if error is not None else fut.set_result(value)  # type: ignore[arg-type]
        return fut

    def ahead(lemma: str) -> Ahead:
        return Ahead(shape, Lemmas("v", "c1", [lemma]))

    pool = CheckPool(2, model=None)
    pool._ahead = [
        ("sqlite:///a.db", key, [1, 2], done([ahead("one"), None])),
        ("sqlite:///b.db", key, [3], done([ahead("other store")])),
        ("sqlite:///a.db", "other rules", [4], done([ahead("other rules")])),
        ("sqlite:///a.db", key, [5], done(error=RuntimeError("a read failed"))),
        ("sqlite:///a.db", key, [6], done([ahead("six")])),
    ]
    assert pool.found_ahead("sqlite:///a.db", rules) == {1: ahead("one"), 6: ahead("six")}
    assert pool._ahead == [] and pool.found_ahead("sqlite:///a.db", rules) == {}


def test_a_process_that_died_while_finding_ahead_closes_the_pool_once_and_what_it_found_is_lost(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two warm-ups broken by a dead process: the pool's executors are shut down once (the check phase
    starts new ones), with one warning that names no text; a warm-up cancelled by that shutdown is left
    out; what was found before is kept."""
    from concurrent.futures import CancelledError, Future
    from concurrent.futures.process import BrokenProcessPool

    rules = load_rules()
    key = hashlib.sha256(pool_module._bare(rules)).hexdigest()
    kept = Ahead(LoadedShape("c1", 2, None, ((2, 1, 1),), True), Lemmas("v", "c1", ["kept"]))

    def failed(error: BaseException) -> Future[list[Ahead | None]]:
        fut: Future[list[Ahead | None]] = Future()
        fut.set_exception(error)
        return fut

    ok: Future[list[Ahead | None]] = Future()
    ok.set_result([kept])
    shut: list[bool] = []

    class Executor:
        def shutdown(self, wait: bool, cancel_futures: bool) -> None:
            shut.append(wait and cancel_futures)

    pool = CheckPool(2, model=None)
    pool._executors = [Executor()]  # type: ignore[list-item]
    pool._ahead = [
        ("sqlite:///a.db", key, [1], ok),
        ("sqlite:///a.db", key, [2], failed(BrokenProcessPool("a child died"))),
        ("sqlite:///a.db", key, [3], failed(BrokenProcessPool("a child died"))),
        ("sqlite:///a.db", key, [4], failed(CancelledError())),
    ]
    with caplog.at_level("WARNING", logger=pool_module._log.name):
        assert pool.found_ahead("sqlite:///a.db", rules) == {1: kept}
    assert shut == [True] and pool._executors == []
    assert [r.getMessage() for r in caplog.records] == [
        "check phase: a check process died while finding lemmas ahead; processes closed"
    ]


def test_the_processes_are_asked_for_what_waits_and_what_the_unread_rest_of_the_source_promises(
    tmp_path: Path,
) -> None:
    """A source of 29,000 bytes, 14,500 read, then a commit after which c1_2 waits: ``wants`` is asked with
    that 1 and what the 14,500 bytes left promise at 2,900 a rewrite (5), times the share of the source's
    events so far that were new, times check_rate 0.5. All new: 1 + int(2.5) = 3, whether 10 events came in
    10 lines or 1 (a trace log's line holds many: a share of lines would be 10); 5 new, 5 stored already: 1
    + int(1.25) = 2; none new, whether stored at their place or quarantined as stored at another (a log
    read again, a rotated copy): 1. Standard input promises nothing: 1. Nothing is asked after a commit
    that left nothing waiting."""
    log_file = tmp_path / "app.jsonl"
    log_file.write_bytes(b"x" * 29_000)
    on_disk = Source(str(log_file), log_file)
    for source, lines, new, stored_before, duplicates, asked_with in (
        (on_disk, 10, 10, 0, 0, [3]),
        (on_disk, 1, 10, 0, 0, [3]),
        (on_disk, 10, 5, 5, 0, [2]),
        (on_disk, 10, 0, 10, 0, [1]),
        (on_disk, 10, 0, 0, 10, [1]),
        (Source("-", None), 10, 10, 0, 0, [1]),
    ):
        asked: list[int] = []
        ingest = IngestSummary(lines_read=7, stored=7, already_stored=3)  # an earlier source's
        ingest.rejected["duplicate_event"] = 2
        with fresh_store() as session, CheckPool(2, model=None) as pool:
            pool.wants = lambda waiting, asked=asked: asked.append(waiting) or False  # type: ignore[method-assign]
            warm_up = WarmUp(session, load_rules(), 0.5, pool, ingest=ingest)
            warm_up.count(3_000)
            warm_up.source(source)
            warm_up.count(14_500)
            ingest.lines_read += lines
            ingest.stored += new
            ingest.already_stored += stored_before
            ingest.rejected["duplicate_event"] += duplicates
            warm_up()  # nothing waits yet
            assert asked == []
            _commit(session, 2)
            warm_up()
            assert asked == asked_with, (source.origin, lines, new, stored_before, duplicates)


def test_logs_stored_before_start_no_processes_until_new_lines_promise_a_large_job(tmp_path: Path) -> None:
    """``run_job`` with two processes, a commit after each line, any unread byte of a source whose lines so
    far were new promising a large job (``BYTES_PER_REWRITE`` a thousandth of a byte):
    - a log stored before, read again: nothing waits after any commit, no process is started (before,
      the logs' sizes alone started them: ``run``'s second run of 20,000 rewrites took 1.3 s of a core in
      each of two processes for nothing);
    - a new log of one request, then the stored one: the new log has nothing left unread when its
      rewrite is committed, and the stored one promises nothing: none started;
    - two requests appended to the stored log: the commit of c1_3's rewrite, c1_4's lines unread, starts
      them."""
    from monitor.settings import Settings
    from monitor.worker.jobs import run_job

    stored, new = tmp_path / "stored.jsonl", tmp_path / "new.jsonl"
    stored.write_bytes(log(ctx_input("c1", "c1_2", 2), rewrite("c1", "c1_2", 2)))
    new.write_bytes(log(ctx_input("c9", "c9_2", 2), rewrite("c9", "c9_2", 2)))
    started: list[int] = []
    settings = Settings(check_workers=2, batch_size=1)

    with fresh_store() as session, pytest.MonkeyPatch.context() as mp:

        def run(*paths: Path) -> IngestSummary:
            summary = run_job(
                session=session, settings=settings, rules=load_rules(), sources=discover(list(paths))
            )
            assert summary.ingest is not None
            return summary.ingest

        mp.setattr(CheckPool, "_spawn", lambda self: started.append(self.workers))
        mp.setattr("monitor.worker.ahead.BYTES_PER_REWRITE", 0.001)
        assert run(stored).stored == 2 and started == []  # its rewrite was its last line
        assert run(stored).already_stored == 2 and started == []
        assert run(new, stored).stored == 2 and started == []
        with stored.open("ab") as f:
            f.write(
                log(
                    *(e for n in (3, 4) for e in (ctx_input("c1", f"c1_{n}", n), rewrite("c1", f"c1_{n}", n)))
                )
            )
        assert run(stored).stored == 4
    assert started == [2]


def _record_handing(monkeypatch: pytest.MonkeyPatch, pool: CheckPool) -> list[list[int]]:
    """The ids of each batch handed to ``pool`` from now on (taken, and not sent to any process)."""
    handed: list[list[int]] = []

    def warm(rules: object, batch: StoredBatch) -> bool:
        handed.append([i for i, _ in batch.heads])
        return True

    monkeypatch.setattr(pool, "warm", warm)
    return handed


def _commit(session: Session, *turns: int) -> None:
    """Requests ``c1_<turn>`` of conversation c1, each whole, stored in one ingest commit."""
    ingest_bytes(
        session, b"".join(log(ctx_input("c1", f"c1_{n}", n), rewrite("c1", f"c1_{n}", n)) for n in turns)
    )
    session.commit()


def test_what_is_committed_before_the_processes_are_ready_is_handed_once_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ready from the second commit on: its batch holds the first commit's record too; a pool refused for
    the job (``wants`` false with MIN_JOB waiting, min_job 0 here) ends the handing."""
    ready = [False]
    with fresh_store() as session, CheckPool(2, model=None, min_job=0) as pool:
        monkeypatch.setattr(pool, "wants", lambda waiting: True)
        monkeypatch.setattr(pool, "ready", lambda: ready[0])
        handed = _record_handing(monkeypatch, pool)
        warm_up = WarmUp(session, load_rules(), 1.0, pool)
        for n in (2, 3, 4):
            _commit(session, n)
            warm_up()
            ready[0] = True
        assert handed == [[1, 2], [3]] and (warm_up.waiting, warm_up.handed) == (3, 3)
        monkeypatch.setattr(pool, "wants", lambda waiting: False)
        _commit(session, 5)
        warm_up()
        assert warm_up.stored is None and len(handed) == 2


def test_the_handing_stops_at_lemma_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """At most LEMMA_ENTRIES (2 here) records handed: three batches of one record, the third kept back
    (the learning pass finds its lemmas); one batch of three, the third kept back."""
    monkeypatch.setattr(pool_module, "LEMMA_ENTRIES", 2)
    for commits in ([2], [3], [4]), ([2, 3, 4],):
        with fresh_store() as session, CheckPool(2, model=None, min_job=0) as pool:
            monkeypatch.setattr(pool, "ready", lambda: True)
            handed = _record_handing(monkeypatch, pool)
            warm_up = WarmUp(session, load_rules(), 1.0, pool)
            for turns in commits:
                _commit(session, *turns)
                warm_up()
            assert warm_up.handed == 2
            assert handed == ([[1], [2]] if len(commits) == 3 else [[1, 2]])


def _lemma_rows(session: Session) -> list[tuple[str | None, str, str]]:
    rows = session.execute(select(AddedLemma.prompt_version, AddedLemma.lemma, AddedLemma.conv_id))
    return sorted((r.prompt_version, r.lemma, r.conv_id) for r in rows)


def _rewrites_first(path: Path, out: Path) -> Path:
    """``path``'s lines with each request's rewrite moved before its ctx_input (the log allows either
    order): committed in threes, a record is then often handed as its rewrite alone and completed by
    the next commit, before or after a process reads it."""
    lines = path.read_bytes().splitlines(keepends=True)
    for i in range(len(lines) - 1):
        a, b = json.loads(lines[i]), json.loads(lines[i + 1])
        if (a["event"], b["event"]) == ("ctx_input", "rewrite") and a["request_id"] == b["request_id"]:
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
    out.write_bytes(b"".join(lines))
    return out


@pytest.mark.slow
def test_records_handed_during_the_ingest_are_learned_and_graded_as_by_one_process(
    shared_logs: Path, tmp_path: Path
) -> None:
    rules = load_rules()
    sources = [_rewrites_first(shared_logs / "cast2020.jsonl", tmp_path / "cast2020.jsonl")]
    with fresh_store() as one:
        ingest_sources(one, discover(sources))
        one.commit()
        check_job(session=one, rules=rules, batch_size=50)
        want, lemmas = finding_lines(one), _lemma_rows(one)
    with fresh_store() as session, CheckPool(2, model=None, min_job=0) as pool:
        assert pool.start()
        warm_up = WarmUp(session, rules, 1.0, pool)
        ingest_sources(session, discover(sources), batch_size=3, on_commit=warm_up)
        found = warm_up.found()
        # 191 rewrites, each handed once (a process may read one only after its ctx_input was stored:
        # the unit test above fixes the order)
        assert len(found) == warm_up.handed == 191
        got = check_job(session=session, rules=rules, batch_size=50, pool=pool, ahead=found)
        assert found == {} and got.processes == 2  # each taken by the learning pass
        assert _lemma_rows(session) == lemmas
        assert finding_lines(session) == want


def test_a_process_lost_during_the_ingest_stops_the_handing_not_the_ingest(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from monitor.errors import PoolError

    def died(*_: object) -> bool:
        raise PoolError("a check worker process died mid-batch")

    with fresh_store() as session, CheckPool(2, model=None, min_job=0) as pool:
        monkeypatch.setattr(pool, "wants", lambda waiting: True)
        monkeypatch.setattr(pool, "ready", lambda: True)
        monkeypatch.setattr(pool, "warm", died)
        ahead = WarmUp(session, load_rules(), 1.0, pool)
        assert ahead.stored is not None
        assert ingest_bytes(session, log(ctx_input("c1", "c1_2", 2), rewrite("c1", "c1_2", 2))).stored == 2
        session.commit()
        ahead()  # after the commit of an ingest batch, as ingest_sources calls it: no raise
        assert (ahead.after, ahead.waiting, ahead.handed) == (1, 1, 0)
        assert ahead.stored is None
        assert [r.getMessage() for r in caplog.records] == [
            "check phase: no lemmas found during the ingest (a check process died, PoolError); the learning "
            "pass finds them"
        ]
        # the handing's own reads hold no transaction (on SQLite, its write lock) into the next batch
        assert not session.in_transaction()
