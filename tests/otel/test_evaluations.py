"""``findings --otlp``: findings as OpenTelemetry gen_ai.evaluation.result events, decoded with the
official OTLP protobuf definitions (``opentelemetry-proto``), with the attribute values computed by
hand and no query or transcript text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.logs.v1.logs_pb2 import LogsData
from typer.testing import CliRunner

from monitor.cli.main import app
from monitor.otel.evaluations import explanation
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
    assert "traceId" not in raw["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]  # a logged rewrite
    assert "eu-west-9" not in line and "Frankfurt" not in line and "uptime" not in line, raw


def test_the_explanation_names_kind_severity_and_signals_only() -> None:
    ev = {"words": [{"text": "Boeing", "signal": "proper_name"}, {"text": "737", "signal": "number"}]}
    assert explanation("added_content_word", "high", ev) == "added_content_word at high: number, proper_name"
    assert (
        explanation("dropped_qualifier", "medium", {"value": "enterprise"}) == "dropped_qualifier at medium"
    )


def test_json_and_otlp_are_exclusive(cli_db: str) -> None:
    done = runner.invoke(app, ["--database-url", cli_db, "findings", "--json", "--otlp"])
    assert done.exit_code == 2 and "choose one of --json, --otlp and --langfuse" in done.output


def test_a_finding_on_a_traced_rewrite_is_parented_to_its_rewrite_span(cli_db: str) -> None:
    """A rewrite mapped from a trace (examples/otel) gives its evaluation record the trace's id and the
    rewrite span's id, hex as OTLP JSON writes them; a logged one (above) carries neither. The rewrite
    span is the model call whose output the retriever searched for (...0204), not the chain around it."""
    from tests.helpers import REPO

    traces = REPO / "examples" / "otel" / "openinference_langchain.jsonl"
    assert runner.invoke(app, ["--database-url", cli_db, "run", str(traces)]).exit_code == 0
    done = runner.invoke(
        app, ["--database-url", cli_db, "findings", "--kind", "added_content_word", "--otlp"]
    )
    assert done.exit_code == 0, done.output
    (line,) = done.stdout.splitlines()
    json_format.Parse(line, LogsData())
    (record,) = json.loads(line)["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    assert (record["traceId"], record["spanId"]) == ("6df92f3577b34da6a3ce929d0e0e4738", "10f067aa0ba90204")
    assert "enterprise" not in line and "Dublin" not in line


def test_findings_on_traced_rewrites_post_as_langfuse_scores(cli_db: str, monkeypatch: Any) -> None:
    """``findings --langfuse``: one score per finding on a traced rewrite, basic auth with the project's
    keys, the trace and rewrite span as trace and observation, no text; a logged rewrite is skipped;
    posting again sends the same score ids; a refusing Langfuse exits 3."""
    import base64

    from tests.factories import canonical_case_2_without_alias
    from tests.helpers import REPO, Receiver

    traces = REPO / "examples" / "otel" / "openinference_langchain.jsonl"
    assert runner.invoke(app, ["--database-url", cli_db, "run", str(traces)]).exit_code == 0
    assert (
        runner.invoke(
            app, ["--database-url", cli_db, "run", "-"], input=canonical_case_2_without_alias()
        ).exit_code
        == 0
    )
    fake = Receiver()
    try:
        monkeypatch.setenv("REWRITE_MONITOR_LANGFUSE_HOST", fake.url(""))
        monkeypatch.setenv("REWRITE_MONITOR_LANGFUSE_PUBLIC_KEY", "pk-lf-test")
        monkeypatch.setenv("REWRITE_MONITOR_LANGFUSE_SECRET_KEY", "sk-lf-test")
        args = ["--database-url", cli_db, "findings", "--kind", "added_content_word", "--langfuse"]
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        assert f"1 scores posted to Langfuse at {fake.url('')}, 1 findings skipped" in done.output
        ((path, headers, body),) = fake.requests
        assert path == "/api/public/scores"
        assert headers["Authorization"] == "Basic " + base64.b64encode(b"pk-lf-test:sk-lf-test").decode()
        score = json.loads(body)
        assert {k: score[k] for k in ("traceId", "observationId", "name", "value", "dataType")} == {
            "traceId": "6df92f3577b34da6a3ce929d0e0e4738",
            "observationId": "10f067aa0ba90204",
            "name": "rewrite_monitor.added_content_word",
            "value": 2.0,
            "dataType": "NUMERIC",
        }
        assert score["comment"] == "added_content_word at high: content_word, qualifier_value"
        assert b"enterprise" not in body and b"Dublin" not in body
        assert runner.invoke(app, args).exit_code == 0
        assert json.loads(fake.requests[1][2])["id"] == score["id"]  # an update, not a second score
        fake.code = 401
        refused = runner.invoke(app, args)
        assert refused.exit_code == 3
        assert "1 failed (HTTP 401)" in refused.output
    finally:
        fake.close()
    monkeypatch.delenv("REWRITE_MONITOR_LANGFUSE_SECRET_KEY")
    missing = runner.invoke(app, ["--database-url", cli_db, "findings", "--langfuse"])
    assert missing.exit_code == 2
    assert "--langfuse needs langfuse_secret_key (settings or environment)" in missing.output


def test_the_langfuse_export_stops_after_three_failures_in_a_row() -> None:
    """A wrong key or a dead host fails every score alike: three tries, then the rest is not tried."""
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from monitor.checks.store import RewriteMeta
    from monitor.otel.langfuse import post_scores
    from tests.helpers import Receiver

    def finding(i: int) -> SimpleNamespace:
        return SimpleNamespace(
            request_id=f"r{i}",
            conv_id="c",
            kind="added_content_word",
            severity="high",
            words=["x"],
            evidence={},
            check_id="added_content_word",
            check_version=6,
        )

    meta = {("c", f"r{i}"): RewriteMeta(datetime.now(UTC), None, None, "a" * 32, "b" * 16) for i in range(5)}
    fake = Receiver(code=500)
    try:
        got = post_scores(
            [finding(i) for i in range(5)], meta, host=fake.url(""), public_key="p", secret_key="s"
        )
    finally:
        fake.close()
    assert (got.sent, got.failed, got.not_tried) == (0, ["HTTP 500"] * 3, 2)
    assert len(fake.requests) == 3
