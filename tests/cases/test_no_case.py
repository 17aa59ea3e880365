"""A verdict makes a case only when a replay can fail it, and the export says which verdicts made none
and why (issue 35, part 5)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy.orm import Session
from typer.testing import CliRunner

from monitor.cases.store import (
    NO_CASE,
    list_cases,
    sync_cases,
    verdicts_without_case,
    withdraw_empty_cases,
)
from monitor.cli.main import app
from monitor.store.models import RegressionCase
from monitor.verdicts import LABELS, nothing_to_assert
from tests.factories import ctx_input, log, rewrite, verdict
from tests.review.test_verdicts import CLEAN, FABRICATED, seed

NOW = datetime(2024, 3, 5, 9, 30)
runner = CliRunner()


def test_what_an_error_on_the_rewrite_needs() -> None:
    empty: dict[str, object] = {"corrected": False, "must_include": [], "must_not_include": []}
    # one term, or a corrected query, is enough; blank terms are none
    assert nothing_to_assert("dropped_constraint", "rewrite", **empty) == (  # type: ignore[arg-type]
        "a dropped_constraint verdict on the rewrite needs something a replay can fail: the lost qualifier "
        "under must include, or a corrected query"
    )
    assert nothing_to_assert("not_a_query", "rewrite", **empty) == (  # type: ignore[arg-type]
        "a not_a_query verdict on the rewrite needs something a replay can fail: a corrected query"
    )

    def said(corrected: bool, must: list[str]) -> str | None:
        return nothing_to_assert(
            "wrong_antecedent", "rewrite", corrected=corrected, must_include=must, must_not_include=[]
        )

    assert said(False, [" "]) is not None
    assert said(False, ["Dublin"]) is None
    assert said(True, []) is None
    # fine labels, and errors after the rewrite (the logged query is the expected one), need nothing;
    # a chat-state fault makes no case at all (not this rule's business)
    for label, artifact in [
        ("ok", "none"),
        ("false_alarm_synonym", "none"),
        ("ranking", "retrieval"),
        ("generation", "generation"),
        ("window_truncated", "chat_state"),
    ]:
        assert nothing_to_assert(label, artifact, **empty) is None  # type: ignore[arg-type]
    # every error label that can be on the rewrite is said
    for label in LABELS:
        if label not in ("ok", "false_alarm_synonym"):
            said = nothing_to_assert(label, "rewrite", **empty)  # type: ignore[arg-type]
            article = "an" if label[0] in "aeiou" else "a"
            assert said is not None and said.startswith(f"{article} {label} verdict on the rewrite")


def test_each_verdict_without_a_case_is_listed_with_its_reason(session: Session) -> None:
    a, b, c, d, e = seed(session, FABRICATED, CLEAN, FABRICATED, FABRICATED, FABRICATED)
    verdict(session, a, must_not_include=["enterprise"])  # a case
    verdict(session, b, label="ok")  # ok on a clean item: a control that tests nothing
    verdict(session, c, label="wrong_antecedent")  # no term, no corrected query
    verdict(session, d, label="window_truncated", artifact="chat_state")
    verdict(session, e, label="ranking", artifact="retrieval")  # a case: the logged query is expected
    assert sorted(r.source_request_id for r in list_cases(session=session)) == [a, e]
    got = [(u.request_id, u.label, u.reason) for u in verdicts_without_case(session=session)]
    assert got == [
        (b, "ok", "fine_on_clean"),
        (c, "wrong_antecedent", "nothing_to_assert"),
        (d, "window_truncated", "chat_state"),
    ]
    # --since: the verdicts given from then on (the factory gives them all at 2024-03-05 09:30)
    assert verdicts_without_case(session=session, since=datetime(2024, 3, 6)) == []


def test_cases_made_before_the_rule_are_withdrawn_once(session: Session) -> None:
    (req,) = seed(session, FABRICATED)
    verdict(session, req, must_not_include=["enterprise"])
    (case,) = session.query(RegressionCase).all()
    # as a verdict of an earlier release left it: an error on the rewrite asserting nothing
    case.must_not_include = []
    session.flush()
    assert withdraw_empty_cases(session=session, now=NOW) == 1
    assert case.superseded_at == NOW
    assert withdraw_empty_cases(session=session, now=NOW + timedelta(hours=1)) == 0
    assert case.superseded_at == NOW
    assert sync_cases(session=session, now=NOW) == 0
    assert list_cases(session=session) == []


def test_export_reports_the_verdicts_without_a_case(cli_db: str, tmp_path: Path) -> None:
    events = []
    for i, query in enumerate([FABRICATED, FABRICATED, CLEAN], 1):
        # the first question holds every word of CLEAN: only "enterprise plan" is added
        asked = [{"role": "user", "content": f"{CLEAN} ({i})"}, {"role": "assistant", "content": "99.95%."}]
        events += [
            ctx_input(f"c{i}", f"c{i}_2", messages=asked),
            rewrite(f"c{i}", f"c{i}_2", latest="And the SLA?", query=query, resolved=[]),
        ]
    assert runner.invoke(app, ["--database-url", cli_db, "run", "-"], input=log(*events)).exit_code == 0
    for req, args in [
        ("c1_2", ["--label", "fabricated_constraint", "--must-not-include", "enterprise"]),
        ("c2_2", ["--label", "dropped_constraint"]),
        ("c3_2", ["--label", "ok"]),
    ]:
        got = runner.invoke(app, ["--database-url", cli_db, "verdict", req, *args, "--reviewer", "ann"])
        assert got.exit_code == 0, got.output
    out = tmp_path / "cases.jsonl"
    got = runner.invoke(app, ["--database-url", cli_db, "export", "--out", str(out)])
    assert got.exit_code == 0, got.output
    assert len(out.read_text().splitlines()) == 1
    assert "exported 1 case" in got.output
    assert "2 verdicts made no case:" in got.output
    assert f"  1: {NO_CASE['nothing_to_assert']}: c2_2 (dropped_constraint)" in got.output
    assert f"  1: {NO_CASE['fine_on_clean']}: c3_2 (ok)" in got.output
