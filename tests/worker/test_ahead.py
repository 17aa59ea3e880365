"""Lemmas found ahead of the learning pass (issue 36): while ``run`` ingests, the check processes find the
added lemmas of the records committed so far (``CheckPool.warm``); the learning pass takes what they found
for every record still as it was."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.checks.added_words import added_lemmas
from monitor.checks.rules import load_rules
from monitor.ingest.sources import discover
from monitor.ingest.store.batches import ingest_sources
from monitor.store.models import AddedLemma
from monitor.worker import pool as pool_module
from monitor.worker.jobs import _Ahead, check_job
from monitor.worker.pool import CheckPool
from tests.factories import make_record
from tests.golden.findings import finding_lines, fresh_store

LATEST = "what's the SLA on it?"
QUERY = "What is the SLA on the enterprise plan?"


def test_lemmas_found_ahead_serve_only_the_record_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """c1_3 handed with one history and read by the learning pass with another: the first names plans but
    no enterprise plan ('enterprise' is an added word; 'plan' is not: 'plans' has the lemma), the second
    names the enterprise plan (nothing is added). The second read must not be served the first one's."""
    monkeypatch.setattr(pool_module, "_RULES", [])
    monkeypatch.setattr(pool_module, "_LEMMAS", {})
    rules = load_rules()
    history = [("user", "Tell me about pricing."), ("assistant", "We have three plans.")]
    before = make_record(history, LATEST, QUERY)
    after = make_record(
        [*history, ("user", "And the enterprise plan?"), ("assistant", "It has SSO.")], LATEST, QUERY
    )

    blob = pool_module._bare(rules)
    pool_module._warm(blob, [before])  # type: ignore[arg-type]  # a StoredBatch's records, read
    assert list(pool_module._LEMMAS.values()) == [["enterprise"]] == [sorted(added_lemmas(before, rules))]
    held = next(iter(pool_module._LEMMAS.values()))
    # the same record read again by the learning pass (another object, equal): what was found is taken
    got = pool_module._lemmas(None, [make_record(history, LATEST, QUERY)])[0]
    assert got is not None and got.lemmas is held and pool_module._LEMMAS == {}
    # changed since it was handed: found again, from the record as it is now; the stale one stays unused
    pool_module._warm(None, [before])  # type: ignore[arg-type]
    now = pool_module._lemmas(None, [after])[0]
    assert now is not None and now.lemmas == [] == sorted(added_lemmas(after, rules))
    assert len(pool_module._LEMMAS) == 1
    # other rules: nothing found under the last ones is served
    pool_module._lemmas(pool_module._bare(dataclasses.replace(rules, hash="other")), [before])
    assert pool_module._LEMMAS == {}


def test_a_full_memo_takes_no_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two entries at most: the third record handed is not held (the learning pass finds its lemmas),
    and the first two stay for the learning pass."""
    monkeypatch.setattr(pool_module, "_RULES", [])
    monkeypatch.setattr(pool_module, "_LEMMAS", {})
    monkeypatch.setattr(pool_module, "LEMMA_ENTRIES", 2)
    records = [make_record([("user", f"Tell me about plan {n}.")], LATEST, QUERY) for n in "ABC"]
    pool_module._warm(pool_module._bare(load_rules()), records)  # type: ignore[arg-type]
    assert len(pool_module._LEMMAS) == 2
    assert pool_module._content_key(records[2]) not in pool_module._LEMMAS


def _lemma_rows(session: Session) -> list[tuple[str | None, str, str]]:
    rows = session.execute(select(AddedLemma.prompt_version, AddedLemma.lemma, AddedLemma.conv_id))
    return sorted((r.prompt_version, r.lemma, r.conv_id) for r in rows)


@pytest.mark.slow
def test_records_handed_during_the_ingest_are_learned_and_graded_as_by_one_process(shared_logs: Path) -> None:
    rules = load_rules()
    sources = [shared_logs / "cast2020.jsonl"]
    with fresh_store() as one:
        ingest_sources(one, discover(sources))
        one.commit()
        check_job(session=one, rules=rules, batch_size=50)
        want, lemmas = finding_lines(one), _lemma_rows(one)
    with fresh_store() as session, CheckPool(2, model=None, min_job=0) as pool:
        assert pool.start()
        ahead = _Ahead(session, rules, 1.0, pool)
        # 100 lines a transaction: a request's two halves are sometimes committed apart, so a record
        # handed as a half is completed after the processes found its lemmas
        ingest_sources(session, discover(sources), batch_size=100, on_commit=ahead)
        handed = pool.handed
        got = check_job(session=session, rules=rules, batch_size=50, pool=pool)
        assert handed > 0 and got.processes == 2
        assert _lemma_rows(session) == lemmas
        assert finding_lines(session) == want


def test_a_process_lost_during_the_ingest_stops_the_handing_not_the_ingest(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from monitor.errors import PoolError
    from monitor.ingest.store.batches import ingest_bytes
    from tests.factories import ctx_input, log, rewrite

    def died(*_: object) -> bool:
        raise PoolError("a check worker process died mid-batch")

    with fresh_store() as session, CheckPool(2, model=None, min_job=0) as pool:
        monkeypatch.setattr(pool, "wants", lambda waiting: True)
        monkeypatch.setattr(pool, "ready", lambda: True)
        monkeypatch.setattr(pool, "warm", died)
        ahead = _Ahead(session, load_rules(), 1.0, pool)
        assert ahead.stored is not None
        assert ingest_bytes(session, log(ctx_input("c1", "c1_2", 2), rewrite("c1", "c1_2", 2))).stored == 2
        session.commit()
        ahead()  # after the commit of an ingest batch, as ingest_sources calls it: no raise
        assert (ahead.after, ahead.waiting, ahead.handed) == (1, 1, 0)
        assert ahead.stored is None and "PoolError" in caplog.text
        # the handing's own reads hold no transaction (on SQLite, its write lock) into the next batch
        assert not session.in_transaction()
