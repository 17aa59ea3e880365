"""The main job from the command line on the bundled real examples: run, run again, queue, show, stats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from monitor.cli.main import app
from tests.helpers import DEMO_LOGS

runner = CliRunner()


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict, dict]:
    url = f"sqlite:///{tmp_path_factory.mktemp('main') / 'main.db'}"
    assert runner.invoke(app, ["--database-url", url, "db", "upgrade"]).exit_code == 0
    first = runner.invoke(app, ["--database-url", url, "run", *DEMO_LOGS, "--json"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, ["--database-url", url, "run", *DEMO_LOGS, "--json"])
    assert second.exit_code == 0, second.output
    return url, json.loads(first.stdout), json.loads(second.stdout)


def test_first_run_ingests_checks_and_queues_the_examples(ran: tuple[str, dict, dict]) -> None:
    _url, first, _second = ran
    # examples/: 191 CAsT 2020 + 103 CAsT 2019 follow-ups (examples/README.md)
    assert (first["ingest"]["stored"], first["ingest"]["joined"], first["checked"]) == (588, 294, 294)
    added = first["queue"]["added"]
    assert sum(added.values()) == first["queue"]["depth"] > 0
    # synthetic timestamps start conversation k at 08:00 + 2 h·k (examples/README.md): the 25 CAsT 2020
    # conversations run from 08:00 on 4 March to 08:00 on 6 March, so three UTC days
    assert first["queue"]["days"] == ["2024-03-04", "2024-03-05", "2024-03-06"]
    assert all(c["rewrites"] == 294 for c in first["coverage"])
    kinds = {k["kind"]: k for k in first["rates"]["kinds"]}
    for k in kinds.values():
        assert k["rewrites_checked"] == 294
        assert k["per_1000"] == pytest.approx(1000 * k["rewrites_flagged"] / 294, abs=0.01)


def test_second_run_adds_nothing(ran: tuple[str, dict, dict]) -> None:
    _url, first, second = ran
    assert second["ingest"]["stored"] == 0 and second["ingest"]["already_stored"] == 588
    assert second["checked"] == 0
    assert second["queue"]["added"] == {}
    assert second["queue"]["depth"] == first["queue"]["depth"]


def test_queue_show_and_stats(ran: tuple[str, dict, dict]) -> None:
    url, first, _second = ran
    q = runner.invoke(app, ["--database-url", url, "queue", "--limit", "3"])
    assert q.exit_code == 0, q.output
    depth, overdue = first["queue"]["depth"], first["queue"]["overdue"]
    # every open item is pending here (nobody claimed one), so the matches are the whole queue
    assert q.stderr == (
        f"showing 3 of {depth:,} pending items; queue depth: {depth:,} open (pending or claimed), "
        f"{overdue:,} overdue\n"
    )
    stats = runner.invoke(app, ["--database-url", url, "stats", "--by", "prompt_version", "--json"])
    assert stats.exit_code == 0, stats.output
    body = json.loads(stats.stdout)
    assert body["verdicts"] == 0 and body["estimates"] == []
    groups = {r["group"] for r in body["rates"]}
    assert groups == {
        "treccastweb/2019/test_topics.query",
        "treccastweb/2020/2020_automatic_evaluation_topics_v1.0.json",
    }
    missing = runner.invoke(app, ["--database-url", url, "show", "nope_1"])
    assert missing.exit_code == 1 and "no request 'nope_1'" in missing.stderr
    shown = runner.invoke(app, ["--database-url", url, "show", "cast2020-81_2"])
    assert shown.exit_code == 0, shown.output
    text = shown.stdout
    order = [
        text.index(h) for h in ("1. chat state", "2. transcript", "3. rewrite", "4. retrieval", "5. answer")
    ]
    assert order == sorted(order)
    assert "Why did garage door opener stop working?" in text  # the logged rewrite (cast_audit_labels)
    # the findings name the grading step that set each severity: CAsT 2020 logs user turns only, which
    # its source declares, so missing_assistant_turns is low by the user_only_by_design step
    assert "step" in text and "user_only_by_design" in text
    bad = runner.invoke(app, ["--database-url", url, "stats", "--by", "tenant"])
    assert bad.exit_code == 2


def test_run_says_which_files_of_a_folder_it_passed_over(cli_db: str, tmp_path: Path) -> None:
    """``run DIR`` read the folder's log names and passed over the rest without a word, as ``ingest``
    never does."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_text("")
    (logs / "notes.txt").write_text("not a log")
    result = runner.invoke(app, ["--database-url", cli_db, "run", str(logs)])
    assert result.exit_code == 0, result.output
    assert (
        "skipped 1 file in the given directories whose names are not log names (notes.txt); name them "
        "(run reads the log names of ingest --help)\n" in result.stderr
    )


def test_run_empties_the_analysis_cache_it_filled(tmp_path: Path) -> None:
    # one process (the examples are below MIN_JOB): its analyzer grades the 294 rewrites, and run lets
    # the analyses go before admission (release_analyses)
    from monitor.checks.nlp import get_analyzer

    url = f"sqlite:///{tmp_path / 'release.db'}"
    assert runner.invoke(app, ["--database-url", url, "db", "upgrade"]).exit_code == 0
    an = get_analyzer()
    misses = an.misses
    got = runner.invoke(app, ["--database-url", url, "run", *DEMO_LOGS, "--workers", "1", "--json"])
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["checked"] == 294
    assert an.misses > misses and an.cached_texts() == [] and an.cache_bytes == 0
    assert "alone" not in got.stderr  # one process was asked for


def test_run_says_why_several_processes_asked_for_were_not_started(tmp_path: Path) -> None:
    # the examples' 294 rewrites are below MIN_JOB (5,000): graded here, and said so on stderr
    url = f"sqlite:///{tmp_path / 'one.db'}"
    assert runner.invoke(app, ["--database-url", url, "db", "upgrade"]).exit_code == 0
    got = runner.invoke(app, ["--database-url", url, "run", *DEMO_LOGS, "--workers", "2"])
    assert got.exit_code == 0, got.output
    assert "check: 294 rewrites checked in" in got.stdout and "processes" not in got.stdout
    assert got.stderr.splitlines()[-1] == (
        "checked on this process alone: the check processes grade when 5,000 rewrites or more wait, "
        "and 294 did"
    )
    # check --workers 2 on what is left (nothing): nothing to say
    again = runner.invoke(app, ["--database-url", url, "check", "--workers", "2"])
    assert again.exit_code == 0, again.output
    assert "alone" not in again.stderr
