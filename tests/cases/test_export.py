"""Export of the eval set: schema-valid JSON Lines equal to a golden file, redaction by default,
byte-identical re-export, CSV/Parquet, filters, and the command."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from monitor.cases.export import case_schema, collect_cases, export_cases, write_cases
from monitor.cli.main import app
from monitor.privacy import name_finder
from monitor.review.evidence import Suggestion, choose_terms
from monitor.store.models import RegressionCase, Verdict
from tests.factories import ctx_input, ingest_checked, rewrite, verdict

GOLDEN = Path(__file__).parents[1] / "golden" / "export_cases.jsonl"
NOW = datetime(2024, 3, 5, 9, 30, tzinfo=UTC)
FINDER = name_finder()
runner = CliRunner()


PII = [
    {
        "role": "user",
        "content": "Hi, my name is Dana Reyes (dana.reyes@acme.io). Which EU regions support CMK?",
    },
    {"role": "assistant", "content": "Frankfurt and Dublin, Dana. Call +44 20 7946 0958 for keys."},
]
PLAIN = [
    {"role": "user", "content": "We are on the enterprise plan. What rate limits apply?"},
    {"role": "assistant", "content": "1,000 requests a minute on enterprise."},
]
# Two rewrites whose transcripts hold personal details.
REVIEWED = [
    ctx_input("c1", "c1_2", messages=[dict(m, ts="2024-03-04T08:00:00Z") for m in PII]),
    rewrite(
        "c1",
        "c1_2",
        latest="What's the uptime SLA on the second one? Mail it to dana.reyes@acme.io",
        query="uptime SLA of the Dublin region with CMK for the enterprise plan, mail dana.reyes@acme.io",
        resolved=[{"surface": "the second one", "antecedent": "Dublin", "turn": 2}],
    ),
    ctx_input("c2", "c2_2", messages=[dict(m, ts="2024-03-04T09:00:00Z") for m in PLAIN]),
    rewrite(
        "c2",
        "c2_2",
        latest="And for burst traffic?",
        query="enterprise plan burst rate limits",
        resolved=[],
        model="m2",
        prompt_version="ctx-v2",
    ),
]


def seed(session: Session) -> dict[str, int]:
    """:data:`REVIEWED`, ingested, checked and reviewed; returns request id -> verdict id."""
    ingest_checked(session, *REVIEWED)
    return {
        "c1_2": verdict(
            session,
            "c1_2",
            "over_carried",
            corrected_query="uptime SLA of the Dublin region, mail dana.reyes@acme.io",
            must_include=["Dublin", "dana.reyes@acme.io"],
            must_not_include=["CMK", "enterprise", "Dana Reyes"],
            note="reported by Dana on ticket 88",
            # two of the findings' suggestions accepted, the rest typed (exported as such)
            accepted=choose_terms(
                [Suggestion("must_include", "Dublin"), Suggestion("must_not_include", "CMK")]
            ),
        ),
        "c2_2": verdict(
            session,
            "c2_2",
            "generation",
            reviewer="bob",
            artifact="generation",
            now=NOW + timedelta(days=2),
            must_include=["enterprise", "burst"],
        ),
    }


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_export_validates_matches_the_golden_file_and_is_byte_identical_again(
    session: Session, tmp_path: Path
) -> None:
    verdicts = seed(session)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    summary = export_cases(session=session, path=first, finder=FINDER, now=NOW)
    export_cases(session=session, path=second, finder=FINDER, now=NOW + timedelta(days=9))
    assert (summary.cases, summary.by_label, summary.redacted) == (
        2,
        {"generation": 1, "over_carried": 1},
        True,
    )
    assert first.read_bytes() == second.read_bytes()
    schema = case_schema()
    lines = _lines(first)
    for case in lines:
        jsonschema.validate(case, schema)
    # source ids are kept: they depend on the backend's sequences, so the golden file holds 0
    assert [(c["source_request_id"], c["verdict_id"]) for c in lines] == [
        ("c1_2", verdicts["c1_2"]),
        ("c2_2", verdicts["c2_2"]),
    ]
    for c in lines:
        assert isinstance(c["record_id"], int)
        c["record_id"] = c["verdict_id"] = 0
    assert lines == _lines(GOLDEN)


def test_no_redact_keeps_the_personal_details_and_says_so(session: Session, tmp_path: Path) -> None:
    seed(session)
    (case, _plain) = collect_cases(session=session, redact=False)
    assert case["redacted"] is False
    assert case["messages"][0]["content"].startswith("Hi, my name is Dana Reyes (dana.reyes@acme.io).")
    assert case["must_include"] == ["Dublin", "dana.reyes@acme.io"]


def test_csv_and_parquet_hold_the_same_cases(session: Session, tmp_path: Path) -> None:
    seed(session)
    cases = collect_cases(session=session, finder=FINDER)
    write_cases(cases, tmp_path / "e.csv", "csv")
    write_cases(cases, tmp_path / "e.parquet", "parquet")
    write_cases(cases, tmp_path / "f.parquet", "parquet")
    assert (tmp_path / "e.parquet").read_bytes() == (tmp_path / "f.parquet").read_bytes()
    nested = ("messages", "must_include", "must_not_include", "accepted_terms", "typed_terms", "logged")
    for frame in (
        pd.read_csv(tmp_path / "e.csv", keep_default_na=False),
        pd.read_parquet(tmp_path / "e.parquet"),
    ):
        rows = frame.to_dict(orient="records")
        for row in rows:
            for k in nested:
                row[k] = json.loads(row[k])
            row["version"], row["record_id"], row["verdict_id"] = (
                int(row["version"]),
                int(row["record_id"]),
                int(row["verdict_id"]),
            )
            row["redacted"] = bool(row["redacted"])
        assert [r["id"] for r in rows] == [c["id"] for c in cases]
        assert [r["messages"] for r in rows] == [c["messages"] for c in cases]
        assert [r["must_not_include"] for r in rows] == [c["must_not_include"] for c in cases]
        assert [r["expected_query"] for r in rows] == [c["expected_query"] for c in cases]
        assert [(r["accepted_terms"], r["typed_terms"]) for r in rows] == [
            ({"must_include": ["Dublin"], "must_not_include": ["CMK"]}, cases[0]["typed_terms"]),
            (
                {"must_include": [], "must_not_include": []},
                {"must_include": ["enterprise", "burst"], "must_not_include": []},
            ),
        ]


def test_a_case_whose_verdict_predates_the_accepted_terms_exports_null_origins(session: Session) -> None:
    """A verdict stored before migration 0014 does not say which terms were accepted: its case exports
    accepted_terms and typed_terms as null (and stays valid), never all its terms as typed."""
    ids = seed(session)
    session.execute(update(Verdict).where(Verdict.id == ids["c2_2"]).values(accepted_terms=None))
    session.execute(
        update(RegressionCase).where(RegressionCase.verdict_id == ids["c2_2"]).values(accepted_terms=None)
    )
    session.commit()
    old = next(c for c in collect_cases(session=session, finder=FINDER) if c["source_request_id"] == "c2_2")
    assert (old["must_include"], old["accepted_terms"], old["typed_terms"]) == (
        ["enterprise", "burst"],
        None,
        None,
    )
    jsonschema.validate(old, case_schema())


def test_since_and_label_filter_by_verdict_day_and_label(session: Session) -> None:
    seed(session)
    since = datetime(2024, 3, 6)
    assert [c["source_request_id"] for c in collect_cases(session=session, since=since)] == ["c2_2"]
    assert [c["source_request_id"] for c in collect_cases(session=session, label="over_carried")] == ["c1_2"]
    assert collect_cases(session=session, label="ok") == []


def test_export_command_writes_and_reports(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert runner.invoke(app, ["--database-url", url, "db", "upgrade"]).exit_code == 0
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(url)
    with session_factory(engine)() as s:
        seed(s)
        s.commit()
    engine.dispose()
    out = tmp_path / "eval.jsonl"
    args = [
        "--database-url",
        url,
        "export",
        "--out",
        str(out),
        "--since",
        "2024-03-01",
        "--label",
        "over_carried",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output == f"exported 1 case to {out} (jsonl, redacted); by label: over_carried 1\n"
    assert "dana.reyes@acme.io" not in out.read_text()
    raw = runner.invoke(
        app, ["--database-url", url, "export", "--out", str(out), "--format", "csv", "--no-redact"]
    )
    assert "NOT redacted (--no-redact)" in raw.output
    assert "dana.reyes@acme.io" in out.read_text()
    bad = runner.invoke(app, ["--database-url", url, "export", "--out", str(out), "--since", "March"])
    assert bad.exit_code == 2


@pytest.mark.parametrize("fmt", ["xml"])
def test_an_unknown_format_is_refused(tmp_path: Path, fmt: str) -> None:
    with pytest.raises(ValueError, match="format must be one of jsonl, csv, parquet, got 'xml'"):
        write_cases([], tmp_path / "x", fmt)


def test_export_to_standard_output(cli_db: str, tmp_path: Path) -> None:
    """`--out -` writes the cases to stdout and the summary to stderr; parquet (binary) is refused."""
    from typer.testing import CliRunner

    from monitor.cli.main import app
    from tests.factories import canonical_case_2_without_alias

    runner = CliRunner()
    log = tmp_path / "cmk.jsonl"
    log.write_bytes(canonical_case_2_without_alias())
    assert runner.invoke(app, ["--database-url", cli_db, "run", str(log)]).exit_code == 0
    v = ["--database-url", cli_db, "verdict", "cmk_2", "--label", "fabricated_constraint"]
    assert runner.invoke(app, [*v, "--must-not-include", "eu-west-9"]).exit_code == 0
    done = runner.invoke(app, ["--database-url", cli_db, "export", "--out", "-"])
    assert done.exit_code == 0, done.output
    (case,) = [json.loads(x) for x in done.stdout.splitlines()]
    assert (case["label"], case["must_not_include"]) == ("fabricated_constraint", ["eu-west-9"])
    assert done.stderr.startswith("exported 1 case to standard output (jsonl, redacted)")
    assert not (Path.cwd() / "-").exists()
    refused = runner.invoke(app, ["--database-url", cli_db, "export", "--out", "-", "--format", "parquet"])
    assert refused.exit_code == 2 and "parquet is binary" in refused.output


def test_a_redacted_export_names_a_personal_source_request_by_its_pid_hash(session: Session) -> None:
    """Found by a newcomer's read of issue 38: the messages were redacted but the exported
    ``source_request_id`` still held the e-mail address the request id was built from."""
    from monitor.privacy import hashed_id
    from monitor.store.keys import store_key

    req = "req-dana.reyes@example.com-3"
    ingest_checked(session, ctx_input(conv="pm", req=req), rewrite(conv="pm", req=req))
    verdict(session, req, must_not_include=["enterprise"])
    (case,) = collect_cases(session=session, finder=name_finder())
    assert case["source_request_id"] == hashed_id(req, store_key(session=session))
    (raw,) = collect_cases(session=session, redact=False)
    assert raw["source_request_id"] == req


def test_the_out_suffix_names_the_format_when_format_is_not_given(cli_db: str, tmp_path: Path) -> None:
    """``--out cases.csv`` alone writes CSV (it wrote JSON Lines into a .csv file); ``--format`` still
    wins."""
    for name, fmt in (("cases.csv", "csv"), ("cases.jsonl", "jsonl"), ("cases.txt", "jsonl")):
        done = runner.invoke(app, ["--database-url", cli_db, "export", "--out", str(tmp_path / name)])
        assert done.exit_code == 0, done.output
        assert f"({fmt}, redacted)" in done.output, (name, done.output)
    forced = runner.invoke(
        app, ["--database-url", cli_db, "export", "--out", str(tmp_path / "x.csv"), "--format", "jsonl"]
    )
    assert "(jsonl, redacted)" in forced.output
