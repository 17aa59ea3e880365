"""``findings --otlp``: findings as OpenTelemetry gen_ai.evaluation.result events, decoded with the
official OTLP protobuf definitions (``opentelemetry-proto``), with the attribute values computed by
hand and no query or transcript text."""

from __future__ import annotations

import json
from pathlib import Path

from google.protobuf import json_format
from opentelemetry.proto.logs.v1.logs_pb2 import LogsData
from typer.testing import CliRunner

from monitor.checks.otlp import explanation
from monitor.cli.main import app
from tests.factories import canonical_case_2_without_alias

runner = CliRunner()


def test_the_canonical_invented_region_exports_as_an_evaluation_event(cli_db: str, tmp_path: Path) -> None:
    log = tmp_path / "cmk.jsonl"
    log.write_bytes(canonical_case_2_without_alias())
    assert runner.invoke(app, ["--database-url", cli_db, "run", str(log)]).exit_code == 0
    done = runner.invoke(
        app, ["--database-url", cli_db, "findings", "--kind", "added_content_word", "--otlp"]
    )
    assert done.exit_code == 0, done.output
    (line,) = done.stdout.splitlines()
    data = json_format.Parse(line, LogsData())  # raises on any field the OTLP schema does not have
    (resource,) = data.resource_logs
    assert {a.key: a.value.string_value for a in resource.resource.attributes}[
        "service.name"
    ] == "rewrite-monitor"
    (scope,) = resource.scope_logs
    (record,) = scope.log_records
    attrs = {a.key: a.value for a in record.attributes}
    assert record.event_name == "gen_ai.evaluation.result"
    assert (record.severity_number, record.severity_text) == (17, "HIGH")
    assert attrs["gen_ai.evaluation.name"].string_value == "added_content_word"
    assert (
        attrs["gen_ai.evaluation.score.value"].double_value,
        attrs["gen_ai.evaluation.score.label"].string_value,
    ) == (
        2.0,
        "high",
    )
    assert attrs["gen_ai.response.id"].string_value == "cmk_2"
    assert attrs["gen_ai.conversation.id"].string_value == "cmk"
    assert attrs["rewrite_monitor.check_id"].string_value == "added_content_word"
    assert attrs["gen_ai.evaluation.explanation"].string_value.startswith("added_content_word at high: ")
    # the event time is the rewrite's (2024-03-04T08:01:31.420Z), in nanoseconds since the epoch
    assert record.time_unix_nano == 1709539291420 * 1_000_000
    # no text of the query or the transcript
    raw = json.loads(line)
    assert "eu-west-9" not in line and "Frankfurt" not in line and "uptime" not in line, raw


def test_the_explanation_names_kind_severity_and_signals_only() -> None:
    ev = {"words": [{"text": "Boeing", "signal": "proper_name"}, {"text": "737", "signal": "number"}]}
    assert explanation("added_content_word", "high", ev) == "added_content_word at high: number, proper_name"
    assert (
        explanation("dropped_qualifier", "medium", {"value": "enterprise"}) == "dropped_qualifier at medium"
    )


def test_json_and_otlp_are_exclusive(cli_db: str) -> None:
    done = runner.invoke(app, ["--database-url", cli_db, "findings", "--json", "--otlp"])
    assert done.exit_code == 2 and "choose one of --json and --otlp" in done.output
