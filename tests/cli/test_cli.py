"""The command line: exit codes, summaries, config display, schema files, documentation."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from monitor.checks import current_versions
from monitor.cli.main import app
from monitor.ingest.events import json_schemas, parse_line
from tests.factories import ctx_input, log, rewrite
from tests.helpers import REPO

runner = CliRunner()


def test_ingest_from_stdin_prints_json_summary(cli_db: str) -> None:
    data = log(ctx_input(), rewrite()) + b"{oops\n"
    result = runner.invoke(app, ["--database-url", cli_db, "ingest", "-", "--json"], input=data)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["stored"] == 2 and summary["joined"] == 1
    assert summary["rejected"] == {"invalid_json": 1}
    assert summary["sources"] == ["-"]


def test_strict_exits_1_on_rejects_and_0_without(cli_db: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(log(ctx_input()) + b"[]\n")
    assert runner.invoke(app, ["--database-url", cli_db, "ingest", str(bad)]).exit_code == 0
    assert runner.invoke(app, ["--database-url", cli_db, "ingest", str(bad), "--strict"]).exit_code == 1


def test_unreadable_source_exits_3_and_names_it(cli_db: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["--database-url", cli_db, "ingest", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 3
    assert "nope.jsonl: no such file or directory" in result.stderr


@pytest.mark.parametrize("command", ["ingest", "run"])
def test_a_missing_path_beside_a_good_one_is_reported_and_the_good_one_read(
    command: str, cli_db: str, tmp_path: Path
) -> None:
    """One mistyped path does not stop a backfill: the other sources are read, the missing one is
    named, and the exit status is 3 (the exit codes of docs/commands.md)."""
    good = tmp_path / "good.jsonl"
    good.write_bytes(log(ctx_input()) + log(rewrite()) + b"[]\n")
    args = ["--database-url", cli_db, command, str(tmp_path / "nope.jsonl"), str(good), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 3, result.output
    summary = json.loads(result.stdout)
    ingest = summary if command == "ingest" else summary["ingest"]
    assert (ingest["stored"], ingest["joined"]) == (2, 1)
    assert ingest["source_errors"] == [
        {
            "source": str(tmp_path / "nope.jsonl"),
            "error": "no such file or directory",  # the source names the path: once is enough
        }
    ]
    again = runner.invoke(app, args[:-1])  # as text: the missing path is named on stderr
    assert again.exit_code == 3 and "nope.jsonl: no such file or directory" in again.stderr
    assert "nope.jsonl: " + str(tmp_path) not in again.stderr  # the path is not said twice


def test_ingest_without_schema_tells_to_upgrade(tmp_path: Path) -> None:
    (tmp_path / "empty.db").write_bytes(b"")  # a database with no tables (an empty SQLite file)
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    result = runner.invoke(app, ["--database-url", url, "ingest", "-"], input=b"")
    assert result.exit_code == 4
    assert "has no schema: run `rewrite-monitor db upgrade`" in result.stderr


def test_config_show_masks_the_database_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://monitor:s3cret@db.internal/rm")
    monkeypatch.setenv("REWRITE_MONITOR_BATCH_SIZE", "250")
    result = runner.invoke(app, ["config", "show", "--json"])
    assert result.exit_code == 0, result.output
    cfg = json.loads(result.stdout)
    assert cfg["database_url"] == "postgresql://monitor:***@db.internal/rm"
    assert cfg["batch_size"] == 250
    assert "s3cret" not in result.output


def test_config_file_and_bad_values_are_reported(tmp_path: Path) -> None:
    cfg = tmp_path / "rm.toml"
    cfg.write_text("batch_size = 0\n")
    result = runner.invoke(app, ["--config", str(cfg), "config", "show"])
    assert result.exit_code == 2
    assert "batch_size: Input should be greater than or equal to 1 (got 0)" in result.stderr


def test_python_dash_m_runs_the_cli() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "monitor", "--help"], capture_output=True, text=True, check=True
    )
    assert "Audit the query rewriter" in proc.stdout


def test_schema_files_are_generated_from_the_ingest_models() -> None:
    from monitor.review.views import read_schemas

    for name, schema in {**json_schemas(), **read_schemas()}.items():
        committed = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text())
        assert committed == schema, (
            f"schemas/{name}.schema.json is stale: run `rewrite-monitor schema export`"
        )


def test_schema_files_accept_what_ingest_accepts() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for ev in (ctx_input(), rewrite()):
        assert not isinstance(parse_line(json.dumps(ev)), Exception)
        schema = json.loads((REPO / "schemas" / f"{ev['event']}.schema.json").read_text())
        jsonschema.validate(ev, schema)
    broken = rewrite()
    del broken["query"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, json.loads((REPO / "schemas" / "rewrite.schema.json").read_text()))


def _command_paths(cmd, prefix: str = "") -> list[str]:  # type: ignore[no-untyped-def]
    subs = getattr(cmd, "commands", None)
    if not subs:
        return [prefix.strip()]
    return [p for name, sub in subs.items() for p in _command_paths(sub, f"{prefix} {name}")]


def test_every_command_is_documented_in_the_commands_page() -> None:
    page = (REPO / "docs" / "commands.md").read_text()
    missing = [p for p in _command_paths(get_command(app)) if f"### `rewrite-monitor {p}`" not in page]
    assert missing == []


def test_check_findings_and_evaluate_from_the_command_line(cli_db: str, tmp_path: Path) -> None:
    from tests.factories import canonical_case_2_without_alias

    assert (
        runner.invoke(
            app, ["--database-url", cli_db, "ingest", "-"], input=canonical_case_2_without_alias()
        ).exit_code
        == 0
    )
    result = runner.invoke(app, ["--database-url", cli_db, "check", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["records_checked"] == 1
    again = runner.invoke(app, ["--database-url", cli_db, "check", "--json"])
    assert json.loads(again.stdout)["records_checked"] == 0
    found = runner.invoke(
        app,
        [
            "--database-url",
            cli_db,
            "findings",
            "--kind",
            "added_content_word",
            "--min-severity",
            "high",
            "--json",
        ],
    )
    assert found.exit_code == 0, found.output
    rows = [json.loads(x) for x in found.stdout.splitlines()]
    assert [(r["request_id"], r["kind"], r["severity"], r["words"]) for r in rows] == [
        ("cmk_2", "added_content_word", "high", ["eu-west-9"])
    ]
    assert set(rows[0]) == {"request_id", "kind", "severity", "check_id", "step", "words", "reason"}
    bad = runner.invoke(app, ["--database-url", cli_db, "findings", "--min-severity", "urgent"])
    assert bad.exit_code == 2
    labels = tmp_path / "l.jsonl"
    labels.write_text('{"request_id": "cmk_2", "fabricated": ["eu-west-9"]}\n')
    ev = runner.invoke(app, ["--database-url", cli_db, "evaluate", "--labels", str(labels), "--json"])
    assert ev.exit_code == 0, ev.output
    fab = json.loads(ev.stdout)["files"]["l.jsonl"]["fabricated"]
    assert (fab["tp"], fab["fp"], fab["fn"], fab["tn"], fab["recall"]) == (1, 0, 0, 0, 1.0)
    assert json.loads(ev.stdout)["files"]["l.jsonl"]["fabricated_high"]["tp"] == 1


def test_rules_validate_names_file_and_line(tmp_path: Path) -> None:
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(REPO / "rules", rules)
    assert runner.invoke(app, ["rules", "validate", str(rules)]).exit_code == 0
    (rules / "neutral.yaml").write_text((rules / "neutral.yaml").read_text() + "\nsurprise_key: 1\n")
    result = runner.invoke(app, ["rules", "validate", str(rules)])
    assert result.exit_code == 2
    assert re.search(r"neutral\.yaml:\d+: ", result.stderr)


def test_a_missing_spacy_model_fails_at_start_up(cli_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWRITE_MONITOR_SPACY_MODEL", "xx_no_such_pipeline")
    result = runner.invoke(app, ["--database-url", cli_db, "check"])
    assert result.exit_code == 2
    assert "spacy_model 'xx_no_such_pipeline' cannot be loaded" in result.stderr


def test_every_setting_is_in_the_configuration_page() -> None:
    from monitor.settings import Settings

    page = (REPO / "docs" / "configuration.md").read_text()
    assert [n for n in Settings.model_fields if f"| `{n}` |" not in page] == []


@pytest.mark.parametrize(
    ("env", "value", "message"),
    [
        ("REWRITE_MONITOR_SOURCES", "notjson", "lists are given as JSON"),
        ("REWRITE_MONITOR_TIMEZONE", "Mars/Base", "unknown time zone 'Mars/Base'"),
        ("REWRITE_MONITOR_DAILY_TIME", "25:99", "'25:99' is not a time of day"),
    ],
)
def test_invalid_settings_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, message: str
) -> None:
    monkeypatch.setenv(env, value)
    result = runner.invoke(app, ["config", "show"])
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output


def test_unwritable_paths_and_unknown_revisions_are_one_line_errors(cli_db: str, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    blocked = runner.invoke(app, ["schema", "export", str(not_a_dir)])
    assert blocked.exit_code == 3
    assert blocked.stderr == f"error: File exists: {not_a_dir}\n"
    bogus = runner.invoke(app, ["--database-url", cli_db, "db", "upgrade", "bogusrev"])
    assert bogus.exit_code == 2
    assert "error: migration: Can't locate revision identified by 'bogusrev'" in bogus.stderr


def test_quarantine_lists_rejected_lines_without_their_text_unless_asked(cli_db: str) -> None:
    data = log(ctx_input()) + b'{"event": "rewrite", "conv_id": "c1"}\n' + b"[1]\n"
    assert runner.invoke(app, ["--database-url", cli_db, "ingest", "-"], input=data).exit_code == 0
    result = runner.invoke(app, ["--database-url", cli_db, "quarantine", "--json"])
    assert result.exit_code == 0, result.output
    rows = sorted((r["line"], r["reason"], r["detail"]) for r in map(json.loads, result.stdout.splitlines()))
    assert [(line, reason) for line, reason, _ in rows] == [(2, "missing_field"), (3, "not_an_object")]
    assert rows[0][2].startswith("field 'request_id' is required; field 'turn' is required")
    assert rows[1][2] == "a log line must be a JSON object, got an array"
    assert "excerpt" not in result.stdout
    only = runner.invoke(
        app, ["--database-url", cli_db, "quarantine", "--reason", "not_an_object", "--excerpt", "--json"]
    )
    assert [json.loads(x)["excerpt"] for x in only.stdout.splitlines()] == ["[1]"]
    bad = runner.invoke(app, ["--database-url", cli_db, "quarantine", "--reason", "nope"])
    assert bad.exit_code == 2
    unnamed = runner.invoke(app, ["--database-url", cli_db, "quarantine", "resolve"])
    assert unnamed.exit_code == 2 and "name the lines to dismiss" in unnamed.stderr
    done = runner.invoke(app, ["--database-url", cli_db, "quarantine", "resolve", "--line", "3"])
    assert (done.exit_code, done.stdout) == (0, "dismissed 1 rejected line\n")
    left = runner.invoke(app, ["--database-url", cli_db, "quarantine", "--json"])
    assert [json.loads(x)["line"] for x in left.stdout.splitlines()] == [2]
    every = runner.invoke(app, ["--database-url", cli_db, "quarantine", "--resolved", "--json"])
    assert sorted((r["line"], r["resolution"]) for r in map(json.loads, every.stdout.splitlines())) == [
        (2, None),
        (3, "dismissed"),
    ]
    huge = runner.invoke(app, ["--database-url", cli_db, "quarantine", "clear", "--older-than-days", "inf"])
    assert huge.exit_code == 2 and "Traceback" not in huge.output
    too_many = runner.invoke(app, ["--database-url", cli_db, "quarantine", "--limit", "99999999999999999999"])
    assert too_many.exit_code == 2 and "Traceback" not in too_many.output
    cleared = runner.invoke(app, ["--database-url", cli_db, "quarantine", "clear"])
    assert (cleared.exit_code, cleared.stdout) == (0, "deleted 1 resolved line\n")


def test_small_usage_errors_are_caught_before_any_work(cli_db: str, tmp_path: Path) -> None:
    kind = runner.invoke(app, ["--database-url", cli_db, "queue", "--kind", "bogus"])
    assert kind.exit_code == 2 and "Value error, 'bogus' is not one of 'added_content_word'," in kind.output
    limit = runner.invoke(app, ["--database-url", cli_db, "findings", "--limit", "0"])
    assert limit.exit_code == 2
    label = runner.invoke(
        app, ["--database-url", cli_db, "export", "--out", str(tmp_path / "e.jsonl"), "--label", "nonsense"]
    )
    assert label.exit_code == 2 and "Value error, 'nonsense' is not one of 'ok'," in label.output
    missing = tmp_path / "nowhere.db"
    result = runner.invoke(app, ["--database-url", f"sqlite:///{missing}", "queue"])
    assert result.exit_code == 4
    assert f"no database file {missing}: run `rewrite-monitor db upgrade`" in result.stderr
    assert not missing.exists()  # nothing was created by asking
    # not a terminal: refused without asking (a piped "y" would otherwise drop every table)
    refused = runner.invoke(app, ["--database-url", cli_db, "db", "downgrade", "base"], input="y\n")
    assert refused.exit_code == 2
    assert refused.stderr.startswith(
        "error: refusing to downgrade without --yes: it drops tables added_lemmas (0 rows), "
        "alert_deliveries (0 rows), alerts (0 rows)"
    )
    assert runner.invoke(app, ["--database-url", cli_db, "queue"]).exit_code == 0


def test_every_command_runs_under_the_tuned_collector_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from monitor.cli import main as entry

    seen: list[object] = []
    monkeypatch.setattr(entry, "app", lambda: seen.append(gc.get_threshold()))
    # the collector is frozen once the command is done (not this test process's, though)
    monkeypatch.setattr(gc, "freeze", lambda: seen.append("frozen"))
    before = gc.get_threshold()
    try:
        entry.main()
    finally:
        gc.set_threshold(*before)
    assert seen == [(50_000, 20, 20), "frozen"]


def test_a_command_process_leaves_the_store_whole_in_its_file(cli_db: str, tmp_path: Path) -> None:
    """``main`` freezes the collector before the interpreter exits, so nothing is finalised after the
    command: its engines are disposed when the command ends, which on SQLite checkpoints the write-ahead
    log into the database file and removes it."""
    logs = tmp_path / "logs.jsonl"
    logs.write_bytes(log(ctx_input(), rewrite()))
    proc = subprocess.run(
        [sys.executable, "-m", "monitor", "--database-url", cli_db, "run", str(logs), "--json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["checked"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cli.db", "logs.jsonl"]  # no -wal, no -shm
    alone = tmp_path / "copy" / "cli.db"  # the file without anything beside it holds what run stored
    alone.parent.mkdir()
    alone.write_bytes((tmp_path / "cli.db").read_bytes())
    with closing(sqlite3.connect(alone)) as conn:
        counts = conn.execute(
            "SELECT (SELECT count(*) FROM records), (SELECT count(*) FROM check_runs), "
            "(SELECT count(*) FROM check_set_members)"
        ).fetchone()
    assert counts == (1, 1, len(current_versions()))  # one run, at every current version


def test_version_names_the_package_and_the_schema_it_needs() -> None:
    from monitor import __version__
    from monitor.store.engine import HEAD_REVISION

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"rewrite-monitor {__version__} (store schema {HEAD_REVISION})\n"
