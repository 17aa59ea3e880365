"""The check job over a real store: idempotent, versioned, skipped is never passed, findings queryable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.checks import checks_by_kind, current_versions
from monitor.checks.store import list_findings
from monitor.ingest.store.batches import ingest_bytes
from monitor.ingest.store.records import load_records
from monitor.intervals import wilson
from monitor.stats.evaluate import evaluate, read_labels
from monitor.store.models import CheckRun, CheckSetMember, Finding, Record
from monitor.worker.jobs import check_job
from tests.factories import canonical_case_2_without_alias, ctx_input, log, rewrite

CHECKS = current_versions()


def test_loaded_record_matches_the_logged_events(session: Session) -> None:
    ingest_bytes(session, canonical_case_2_without_alias())
    rec_id = session.scalar(select(Record.id))
    [(rid, record)] = load_records(session=session, record_ids=[rec_id])
    assert rid == rec_id
    assert record.query == "What is the uptime SLA for the Dublin (eu-west-9) region?"
    assert [m.role for m in record.context.messages] == ["user", "assistant"]
    assert record.context.client_turn_count == 2
    assert record.resolved[0].antecedent == "Dublin"
    assert record.dropped == ("customer-managed encryption keys",)
    assert record.peers == ()


def test_peers_are_the_requests_at_the_same_turn_and_the_nearest_earlier_one(session: Session) -> None:
    """Turns 1, 3, 3 (a retry) and 6 of one conversation: the request at turn 6 is compared with both at
    turn 3, one at turn 3 with the other and with turn 1; another conversation never counts."""
    reqs = [("c", "c_1", 1), ("c", "c_3a", 3), ("c", "c_3b", 3), ("c", "c_6", 6), ("d", "d_5", 5)]
    ingest_bytes(
        session,
        log(*(e for conv, req, turn in reqs for e in (ctx_input(conv, req, turn), rewrite(conv, req, turn)))),
    )
    ids = {req: rid for req, rid in session.execute(select(Record.request_id, Record.id))}
    loaded = dict(load_records(session=session, record_ids=sorted(ids.values())))
    peers = {r.request_id: [p.request_id for p in r.peers] for r in loaded.values()}
    assert peers == {
        "c_1": [],
        "c_3a": ["c_1", "c_3b"],
        "c_3b": ["c_1", "c_3a"],
        "c_6": ["c_3a", "c_3b"],
        "d_5": [],
    }
    assert all(
        p.context is not None and p.context.request_id == p.request_id for p in loaded[ids["c_6"]].peers
    )


def test_check_job_stores_findings_and_is_idempotent(session: Session, rules) -> None:  # type: ignore[no-untyped-def]
    ingest_bytes(session, canonical_case_2_without_alias())
    first = check_job(session=session, rules=rules)
    assert first.records == 1
    rows = list_findings(session=session, checks=CHECKS, kind="added_content_word")
    assert [(r.request_id, r.words) for r in rows] == [("cmk_2", ["eu-west-9"])]
    assert rows[0].severity == "high"
    runs = session.scalar(select(func.count()).select_from(CheckRun))
    assert runs == 1  # one run for the record, at the set of every current version
    assert session.scalar(select(func.count()).select_from(CheckSetMember)) == len(CHECKS)
    second = check_job(session=session, rules=rules)
    assert second.records == 0
    assert session.scalar(select(func.count()).select_from(CheckRun)) == runs
    again = check_job(session=session, rules=rules, recheck=True)
    assert (again.records, again.cleared_runs) == (1, runs)
    assert (
        session.scalar(select(func.count()).select_from(Finding).where(Finding.kind == "added_content_word"))
        == 1
    )


def test_skipped_checks_run_again_once_the_ctx_input_arrives(session: Session, rules) -> None:  # type: ignore[no-untyped-def]
    data = canonical_case_2_without_alias()
    ctx_line, rewrite_line = data.splitlines(keepends=True)
    ingest_bytes(session, rewrite_line, origin="rewrites.log")
    first = check_job(session=session, rules=rules)
    assert first.skipped["added_content_word"] == 1
    assert list_findings(session=session, checks=CHECKS, kind="added_content_word") == []
    ingest_bytes(session, ctx_line, origin="ctx.log")
    second = check_job(session=session, rules=rules)
    assert second.records == 1
    assert [r.words for r in list_findings(session=session, checks=CHECKS, kind="added_content_word")] == [
        ["eu-west-9"]
    ]


def test_wilson_interval_matches_the_published_formula() -> None:
    # 3 of 4 (the reference point in issue 3): centre 0.6, half-width computed by hand with z=1.96
    low, high = wilson(3, 4)
    assert round(low, 4) == 0.3006 and round(high, 4) == 0.9544
    assert wilson(0, 0) is None


def test_evaluate_counts_confusion_from_labels(session: Session, rules, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ingest_bytes(session, canonical_case_2_without_alias("a") + canonical_case_2_without_alias("b"))
    check_job(session=session, rules=rules)
    labels = tmp_path / "labels.jsonl"
    flags = {"dropped_constraint": [], "wrong_antecedent": False, "unresolved": False, "intent_drift": False}
    items = [("a_2", ["eu-west-9"]), ("b_2", []), ("zz_9", [])]
    labels.write_text(
        "".join(json.dumps({"request_id": r, "fabricated": f, **flags}) + "\n" for r, f in items)
    )
    assert [i.request_id for i in read_labels(labels)] == ["a_2", "b_2", "zz_9"]
    kind_to_check = checks_by_kind()
    result = evaluate(session=session, label_files=[labels], checks=CHECKS, kind_to_check=kind_to_check)
    fab = result.as_json()["files"]["labels.jsonl"]["fabricated"]
    # a_2 is a true positive, b_2 (same rewrite, labelled clean) a false alarm; zz_9 is not stored
    assert (fab["tp"], fab["fp"], fab["fn"], fab["tn"]) == (1, 1, 0, 0)
    assert fab["precision"] == 0.5 and fab["recall"] == 1.0 and fab["false_alarm_rate"] == 1.0
    assert result.missing["labels.jsonl"] == ["zz_9"]


def test_a_log_file_is_not_accepted_as_labels(tmp_path: Path) -> None:
    from monitor.errors import LabelError

    logs = tmp_path / "events.jsonl"
    logs.write_text(json.dumps({"event": "rewrite", "request_id": "r1", "query": "q"}) + "\n")
    with pytest.raises(LabelError, match=r"events.jsonl:1: not a label object .*no label fields"):
        read_labels(logs)
