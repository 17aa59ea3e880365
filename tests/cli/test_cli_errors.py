"""One-line errors with the exit codes of docs/commands.md: unreachable and locked stores, migrations
that drop data, files that are not UTF-8, an empty eval set, and the counts the db and queue commands
print."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from typer.testing import CliRunner

from monitor.cli.main import app
from monitor.replay import judge as rp_judge
from monitor.store.engine import alembic_config, downgrade_plan, head_revision
from tests.factories import ctx_input, log, rewrite
from tests.helpers import REPO, throwaway_pg_database

runner = CliRunner()

# Tables the migrations after 0003 create (0004, 0006, 0009, 0010 and 0013; 0005 adds indexes only).
TABLES_AFTER_0003 = [
    "added_lemmas",
    "alert_deliveries",
    "alerts",
    "alias_proposals",
    "check_set_members",
    "check_sets",
    "check_skips",
    "learned_overrides",
    "leases",
    "regression_cases",
    "source_cursors",
    "store_keys",
]
# Rows each holds in a fresh store: migration 0013 writes the store's key for hashed ids.
ROWS_IN_A_FRESH_STORE = {"store_keys": "1 row"}


def fresh_tables() -> str:
    """The refusal's list of the tables after 0003 with their rows in a fresh store."""
    return ", ".join(f"{t} ({ROWS_IN_A_FRESH_STORE.get(t, '0 rows')})" for t in TABLES_AFTER_0003)


# Columns they add to older tables (0007, 0011, 0012, 0014), as the refusal names them after the tables.
COLUMNS_AFTER_0003 = (
    "; columns check_runs.check_set_id, findings.step, quarantine.resolution, quarantine.resolved_at, "
    "queue_items.reviews_needed, verdicts.accepted_terms, verdicts.adjudication"
)


def _db(tmp_path: Path, name: str = "s.db") -> tuple[str, Path]:
    path = tmp_path / name
    url = f"sqlite:///{path}"
    result = runner.invoke(app, ["--database-url", url, "db", "upgrade"])
    assert result.exit_code == 0, result.output
    return url, path


def _logs(n: int) -> bytes:
    """``n`` joined requests of ``n`` conversations, all on 2024-03-04."""
    events = []
    for i in range(n):
        events += [ctx_input(conv=f"c{i}", req=f"c{i}_2"), rewrite(conv=f"c{i}", req=f"c{i}_2")]
    return log(*events)


def _previous(revision: str) -> str | None:
    down = ScriptDirectory.from_config(alembic_config("sqlite://")).get_revision(revision).down_revision
    assert down is None or isinstance(down, str)
    return down


# -- 1. an unreachable database ------------------------------------------------------------------
DB_COMMANDS = [
    ["db", "current"],
    ["db", "upgrade"],
    ["db", "downgrade", "base", "--yes"],
    ["db", "downgrade", "-1"],
]


@pytest.mark.parametrize("command", DB_COMMANDS, ids=lambda c: " ".join(c))
def test_db_commands_on_a_sqlite_file_in_a_missing_folder_are_one_line_exit_4(
    tmp_path: Path, command: list[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'nowhere' / 'x.db'}"
    result = runner.invoke(app, ["--database-url", url, *command])
    assert result.exit_code == 4
    assert result.stderr == (
        f"error: cannot reach the database {url}: the folder {tmp_path / 'nowhere'} does not exist\n"
    )
    assert not (tmp_path / "nowhere").exists()


def test_other_commands_say_the_same_about_a_missing_folder(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nowhere' / 'x.db'}"
    result = runner.invoke(app, ["--database-url", url, "queue"])
    assert result.exit_code == 4
    assert result.stderr == (
        f"error: cannot reach the database {url}: the folder {tmp_path / 'nowhere'} does not exist\n"
    )


@pytest.mark.parametrize("command", [*DB_COMMANDS, ["queue"]], ids=lambda c: " ".join(c))
def test_an_unreachable_postgresql_is_one_line_exit_4_without_the_password(command: list[str]) -> None:
    # Port 1: nothing listens there, so the connection is refused at once.
    url = "postgresql+psycopg://postgres:s3cret@127.0.0.1:1/x"
    result = runner.invoke(app, ["--database-url", url, *command])
    assert result.exit_code == 4
    assert result.stderr.startswith(
        "error: cannot reach the database postgresql://postgres:***@127.0.0.1:1/x: connection failed: "
    )
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert "s3cret" not in result.output


@pytest.mark.parametrize(
    ("url", "shown", "reason"),
    [
        (
            "postgresql://postgres:s3cret@127.0.0.1:5432/x?sslmode=bogus",
            "postgresql://postgres:***@127.0.0.1:5432/x?sslmode=bogus",
            'connection is bad: invalid sslmode value: "bogus"',
        ),
        (
            "postgresql://postgres@127.0.0.1:1/x?password=s3cret",
            "postgresql://postgres@127.0.0.1:1/x?password=***",
            "connection failed: ",
        ),
    ],
    ids=["bad-sslmode", "password-in-query"],
)
def test_db_current_on_a_bad_postgresql_url(url: str, shown: str, reason: str) -> None:
    result = runner.invoke(app, ["--database-url", url, "db", "current"])
    assert result.exit_code == 4
    assert result.stderr.startswith(f"error: cannot reach the database {shown}: {reason}")
    assert result.stderr.count("\n") == 1 and "s3cret" not in result.output


def test_a_missing_postgresql_database_is_one_line_exit_4() -> None:
    url = "postgresql://postgres@127.0.0.1:5432/rm_no_such_database_here"
    for command in (["db", "current"], ["db", "upgrade"], ["db", "downgrade", "base", "--yes"]):
        result = runner.invoke(app, ["--database-url", url, *command])
        assert result.exit_code == 4, result.output
        # with the server up: 'FATAL: database "rm_no_such_database_here" does not exist'; without: refused
        assert result.stderr.startswith(f"error: cannot reach the database {url}: connection failed: ")
        assert result.stderr.count("\n") == 1


# -- 2. a SQLite store locked by another process ---------------------------------------------------
def _hold_write_lock(path: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    return holder


@pytest.mark.parametrize("where", ["at the schema check", "mid-command"])
def test_a_writer_locked_out_past_the_busy_timeout_gets_one_line_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setattr("monitor.store.engine.SQLITE_BUSY_TIMEOUT_MS", 50)
    if where == "mid-command":
        # Past the schema check the error escapes from inside the job; the CLI maps it all the same.
        monkeypatch.setattr("monitor.store.engine.require_current_schema", lambda engine: None)
    url, path = _db(tmp_path)
    holder = _hold_write_lock(path)
    try:
        result = runner.invoke(app, ["--database-url", url, "ingest", "-"], input=_logs(1))
    finally:
        holder.rollback()
        holder.close()
    assert result.exit_code == 4
    assert result.stderr == (
        f"error: the SQLite store {path} is locked: another process holds its write lock; retry when it "
        "has finished, or use PostgreSQL for concurrent writers\n"
    )


def test_a_writer_waits_for_a_short_overlap_instead_of_failing(tmp_path: Path) -> None:
    # A plain BEGIN would read first and then fail at once on its first write (SQLite does not wait
    # to upgrade a read transaction); the CLI's writers take the lock at BEGIN and wait.
    url, path = _db(tmp_path)
    holder = _hold_write_lock(path)
    release = threading.Timer(0.5, holder.commit)
    release.start()
    try:
        result = runner.invoke(app, ["--database-url", url, "ingest", "-", "--json"], input=_logs(3))
    finally:
        release.join()
        holder.close()
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["stored"] == 6


# -- 3. files that are not UTF-8 -----------------------------------------------------------------
@pytest.fixture
def latin1(tmp_path: Path) -> Path:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"request_id": "a_1"}\n{"request_id": "caf\xe9_2"}\n')
    return path


def test_evaluate_with_a_label_file_that_is_not_utf8_exits_2(tmp_path: Path, latin1: Path) -> None:
    url, _ = _db(tmp_path)
    result = runner.invoke(app, ["--database-url", url, "evaluate", "--labels", str(latin1)])
    assert result.exit_code == 2
    assert result.stderr == f"error: {latin1}:2: not UTF-8 text (byte 0xe9 at column 20)\n"


def test_rules_validate_names_the_line_of_a_byte_that_is_not_utf8(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(REPO / "rules", rules)
    (rules / "aliases.yaml").write_bytes(b"version: 1\ngroups: []\n# caf\xe9\n")
    result = runner.invoke(app, ["rules", "validate", str(rules)])
    assert result.exit_code == 2
    assert result.stderr == f"{rules / 'aliases.yaml'}:3: not UTF-8 text (byte 0xe9 at column 6)\n"


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    path = tmp_path / "eval.jsonl"
    shutil.copy(REPO / "tests" / "golden" / "export_cases.jsonl", path)
    return path


@pytest.mark.usefixtures("api_key")
def test_replay_of_a_file_that_is_not_utf8_exits_5(latin1: Path) -> None:
    result = runner.invoke(app, ["replay", str(latin1)])
    assert result.exit_code == 5
    assert result.stderr == f"error: {latin1}:2: not UTF-8 text (byte 0xe9 at column 20)\n"


@pytest.mark.usefixtures("api_key")
@pytest.mark.parametrize("option", ["--compare", "--prices"])
def test_replay_side_files_that_are_not_utf8_exit_5(cases_file: Path, latin1: Path, option: str) -> None:
    result = runner.invoke(app, ["replay", str(cases_file), option, str(latin1)])
    assert result.exit_code == 5
    assert result.stderr == f"error: {latin1}:2: not UTF-8 text (byte 0xe9 at column 20)\n"


@pytest.mark.usefixtures("api_key")
def test_a_compare_file_that_is_not_json_exits_5(cases_file: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text("nope\n")
    result = runner.invoke(app, ["replay", str(cases_file), "--compare", str(other)])
    assert result.exit_code == 5
    assert result.stderr == f"error: {other}:1: not JSON (Expecting value)\n"


@pytest.mark.usefixtures("api_key")
def test_a_prompt_that_is_not_utf8_is_still_one_line_exit_5(cases_file: Path, latin1: Path) -> None:
    result = runner.invoke(app, ["replay", str(cases_file), "--prompt", str(latin1)])
    assert result.exit_code == 5
    assert result.stderr == f"error: {latin1}:2: not UTF-8 text (byte 0xe9 at column 20)\n"


def test_a_config_file_that_is_not_utf8_is_one_line_exit_2(latin1: Path) -> None:
    result = runner.invoke(app, ["--config", str(latin1), "config", "show"])
    assert result.exit_code == 2
    assert result.stderr == "error: a file given is not UTF-8 text (invalid continuation byte at byte 41)\n"


# -- 4. downgrades that drop data ----------------------------------------------------------------
def test_a_downgrade_that_drops_tables_is_refused_without_a_terminal_or_yes(tmp_path: Path) -> None:
    url, _ = _db(tmp_path)
    head = head_revision()
    result = runner.invoke(app, ["--database-url", url, "db", "downgrade", "0003"])
    assert result.exit_code == 2
    tables = fresh_tables()
    assert result.stderr == (
        "error: refusing to downgrade without --yes: it drops tables "
        f"{tables}{COLUMNS_AFTER_0003} of {url} "
        f"(from {head} to 0003)\n"
    )
    current = runner.invoke(app, ["--database-url", url, "db", "current"])
    assert current.stdout == f"current: {head}  head: {head}\n"


def test_the_refusal_counts_the_rows_that_would_be_lost(tmp_path: Path) -> None:
    url, _ = _db(tmp_path)
    assert runner.invoke(app, ["--database-url", url, "ingest", "-"], input=_logs(1)).exit_code == 0
    result = runner.invoke(app, ["--database-url", url, "db", "downgrade", "base"])
    assert result.exit_code == 2
    assert "events (2 rows)" in result.stderr and "records (1 row)," in result.stderr
    assert result.stderr.endswith(f" of {url} (from {head_revision()} to base)\n")


def test_on_a_terminal_the_downgrade_asks_and_no_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("monitor.cli.commands.db._interactive", lambda: True)
    url, _ = _db(tmp_path)
    head = head_revision()
    tables = fresh_tables()
    declined = runner.invoke(app, ["--database-url", url, "db", "downgrade", "0003"], input="n\n")
    assert declined.exit_code == 2
    # (click writes the prompt to stderr and the space after it, with the echoed answer, to stdout)
    assert declined.stderr == (
        f"downgrade? it drops tables {tables}{COLUMNS_AFTER_0003} of {url} (from {head} to 0003) [y/N]:"
        "not downgraded: nothing was changed\n"
    )
    accepted = runner.invoke(app, ["--database-url", url, "db", "downgrade", "0003"], input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert accepted.stderr.endswith(
        f"downgraded {url} from {head} to 0003; dropped tables {tables}{COLUMNS_AFTER_0003}\n"
    )


def test_minus_one_works_without_the_double_dash_and_yes_skips_the_question(tmp_path: Path) -> None:
    url, _ = _db(tmp_path)
    head = head_revision()
    previous = _previous(head)
    result = runner.invoke(app, ["--database-url", url, "db", "downgrade", "-1", "--yes"])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"downgraded {url} from {head} to {previous}; dropped ")
    again = runner.invoke(app, ["--database-url", url, "db", "downgrade", "--yes", "--", "-1"])
    assert again.exit_code == 0, again.output
    assert again.stderr.startswith(f"downgraded {url} from {previous} to {_previous(previous or '')}; ")
    help_text = runner.invoke(app, ["db", "downgrade", "--help"]).stdout
    assert "rewrite-monitor db downgrade -1" in help_text


def test_downgrade_messages_for_nothing_to_do_and_bad_targets(tmp_path: Path) -> None:
    url, _ = _db(tmp_path)
    head = head_revision()
    same = runner.invoke(app, ["--database-url", url, "db", "downgrade", head])
    assert same.exit_code == 0
    assert same.stderr == f"{url} is at {head}: nothing to downgrade\n"
    unknown = runner.invoke(app, ["--database-url", url, "db", "downgrade", "zzzz", "--yes"])
    assert unknown.exit_code == 2
    assert unknown.stderr.startswith("error: migration: No such revision or branch 'zzzz'")
    assert runner.invoke(app, ["--database-url", url, "db", "downgrade", "0002", "--yes"]).exit_code == 0
    upward = runner.invoke(app, ["--database-url", url, "db", "downgrade", "0003", "--yes"])
    assert upward.exit_code == 2
    assert upward.stderr == (
        "error: migration: 0003 is not below the current revision (0002); "
        "use `rewrite-monitor db upgrade` to move up\n"
    )


def test_downgrade_plan_lists_dropped_tables_and_columns(tmp_path: Path) -> None:
    url, _ = _db(tmp_path)
    plan = downgrade_plan(url, "0002")
    assert plan.current == head_revision() and plan.target == "0002"
    assert {"queue_items", "queue_days", "verdicts", *TABLES_AFTER_0003} == set(plan.tables)
    assert plan.columns == [
        "check_runs.check_set_id",
        "findings.step",
        "quarantine.resolution",
        "quarantine.resolved_at",
        "records.check_draw",
    ]
    assert plan.drops_data


def test_a_sqlite_downgrade_keeps_the_rows_of_tables_it_rebuilds(tmp_path: Path) -> None:
    # 0003's downgrade rebuilds `records` (drops check_draw); with foreign keys on, dropping the old
    # table cascaded to check_runs and findings and emptied them.
    url, path = _db(tmp_path)
    assert runner.invoke(app, ["--database-url", url, "ingest", "-"], input=_logs(2)).exit_code == 0
    assert runner.invoke(app, ["--database-url", url, "check"]).exit_code == 0

    def count(table: str) -> int:
        with sqlite3.connect(path) as conn:
            return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    assert count("check_runs") == 2  # one per record (0015)
    findings = count("findings")
    result = runner.invoke(app, ["--database-url", url, "db", "downgrade", "0002", "--yes"])
    assert result.exit_code == 0, result.output
    from monitor.checks import current_versions

    per_check = 2 * len(current_versions())  # one row per record and check again
    assert (count("check_runs"), count("findings")) == (per_check, findings)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_records_without_a_draw_after_a_round_trip_below_0003_are_sampled_again(tmp_path: Path) -> None:
    """Down to 0002 drops records.check_draw; migration 0003 on the way up gives every record the draw
    ingest would have given it (a check rate below 1 compares the draw with the rate, so a NULL would
    never be checked)."""
    from monitor.sampling import draw

    url, path = _db(tmp_path)
    assert runner.invoke(app, ["--database-url", url, "ingest", "-"], input=_logs(40)).exit_code == 0
    assert runner.invoke(app, ["--database-url", url, "db", "downgrade", "0002", "--yes"]).exit_code == 0
    assert runner.invoke(app, ["--database-url", url, "db", "upgrade"]).exit_code == 0
    with sqlite3.connect(path) as conn:
        draws = dict(conn.execute("SELECT request_id, check_draw FROM records").fetchall())
    assert draws == {f"c{i}_2": draw("rewrite-monitor", "check", f"c{i}/c{i}_2") for i in range(40)}
    rate = 0.5
    expected = sum(draw("rewrite-monitor", "check", f"c{i}/c{i}_2") < rate for i in range(40))
    assert 0 < expected < 40
    env = {"REWRITE_MONITOR_CHECK_RATE": str(rate)}
    result = runner.invoke(app, ["--database-url", url, "check", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["records_checked"] == expected
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM records WHERE check_draw IS NULL").fetchone()[0] == 0


def test_a_bare_alembic_downgrade_on_sqlite_keeps_the_rows_too(tmp_path: Path) -> None:
    # The alembic command without rewrite-monitor (alembic.ini's env.py builds the engine itself).
    from alembic import command

    from monitor.store.engine import alembic_config

    url, path = _db(tmp_path)
    assert runner.invoke(app, ["--database-url", url, "ingest", "-"], input=_logs(2)).exit_code == 0
    assert runner.invoke(app, ["--database-url", url, "check"]).exit_code == 0
    from monitor.checks import current_versions

    with sqlite3.connect(path) as conn:
        assert int(conn.execute("SELECT count(*) FROM check_runs").fetchone()[0]) == 2  # one per record
    command.downgrade(alembic_config(url), "0002")
    with sqlite3.connect(path) as conn:
        after = int(conn.execute("SELECT count(*) FROM check_runs").fetchone()[0])
    assert after == 2 * len(current_versions())  # split back into one row per record and check


def test_a_postgresql_downgrade_is_refused_and_then_done_with_yes() -> None:
    with throwaway_pg_database("rm_cli_down", migrate=True) as url:
        head = head_revision()
        tables = fresh_tables()
        refused = runner.invoke(app, ["--database-url", url, "db", "downgrade", "0003"])
        assert refused.exit_code == 2
        assert refused.stderr == (
            "error: refusing to downgrade without --yes: it drops tables "
            f"{tables}{COLUMNS_AFTER_0003} of {url} "
            f"(from {head} to 0003)\n"
        )
        done = runner.invoke(app, ["--database-url", url, "db", "downgrade", "0003", "--yes"])
        assert done.exit_code == 0, done.output
        assert done.stderr == (
            f"downgraded {url} from {head} to 0003; dropped tables {tables}{COLUMNS_AFTER_0003}\n"
        )


# -- 5. an empty eval set ------------------------------------------------------------------------
@pytest.mark.usefixtures("api_key")
@pytest.mark.parametrize("content", [b"", b"\n  \n"], ids=["empty", "blank-lines"])
def test_replay_of_an_empty_eval_set_exits_5(tmp_path: Path, content: bytes) -> None:
    empty = tmp_path / "evalset.jsonl"
    empty.write_bytes(content)
    result = runner.invoke(app, ["replay", str(empty)])
    assert result.exit_code == 5
    assert result.stderr == f"error: no regression cases in {empty}: nothing to replay\n"


@pytest.mark.usefixtures("api_key")
def test_replay_compared_with_an_empty_baseline_exits_5(cases_file: Path, tmp_path: Path) -> None:
    empty = tmp_path / "baseline.jsonl"
    empty.write_bytes(b"")
    result = runner.invoke(app, ["replay", str(cases_file), "--compare", str(empty)])
    assert result.exit_code == 5
    assert result.stderr == f"error: no results in {empty}: nothing to compare with\n"


@pytest.mark.usefixtures("api_key")
def test_replay_allow_empty_passes_an_empty_eval_set(tmp_path: Path) -> None:
    empty = tmp_path / "evalset.jsonl"
    empty.write_bytes(b"")
    result = runner.invoke(app, ["replay", str(empty), "--allow-empty"])
    assert result.exit_code == 0, result.output
    assert "replay of 0 cases" in result.stdout


def test_the_library_accepts_an_empty_eval_set_when_asked(tmp_path: Path) -> None:
    empty = tmp_path / "evalset.jsonl"
    empty.write_bytes(b"")
    assert rp_judge.load_cases(empty, allow_empty=True) == []
    assert rp_judge.load_results(empty, rules=None, allow_empty=True) == []


# -- 6. queue counts -------------------------------------------------------------------------------
def test_queue_says_how_many_it_shows_of_how_many(tmp_path: Path) -> None:
    url, _ = _db(tmp_path)
    logs = tmp_path / "logs.jsonl"
    logs.write_bytes(_logs(6))
    ran = runner.invoke(app, ["--database-url", url, "run", str(logs), "--json"])
    assert ran.exit_code == 0, ran.output
    depth, overdue = json.loads(ran.stdout)["queue"]["depth"], json.loads(ran.stdout)["queue"]["overdue"]
    assert depth > 1 and overdue == depth  # 2024's items are long overdue
    shown = runner.invoke(app, ["--database-url", url, "queue", "--limit", "1"])
    assert shown.exit_code == 0, shown.output
    assert shown.stderr == (
        f"showing 1 of {depth} pending items; "
        f"queue depth: {depth} open (pending or claimed), {overdue} overdue\n"
    )
    done = runner.invoke(app, ["--database-url", url, "queue", "--state", "done"])
    assert done.stderr == (
        f"showing 0 of 0 done items; queue depth: {depth} open (pending or claimed), {overdue} overdue\n"
    )
    kind = runner.invoke(app, ["--database-url", url, "queue", "--state", "all", "--kind", "not_a_query"])
    assert kind.stderr.startswith("showing 0 of 0 items in any state with not_a_query; queue depth: ")


# -- 7. what db upgrade did ----------------------------------------------------------------------
def test_db_upgrade_says_what_it_changed(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    head = head_revision()
    partial = runner.invoke(app, ["--database-url", url, "db", "upgrade", "0003"])
    assert partial.exit_code == 0, partial.output
    assert partial.stderr == f"upgraded {url} from none to 0003\n"
    full = runner.invoke(app, ["--database-url", url, "db", "upgrade"])
    assert full.stderr == f"upgraded {url} from 0003 to {head} (head)\n"
    again = runner.invoke(app, ["--database-url", url, "db", "upgrade"])
    assert again.exit_code == 0
    assert again.stderr == f"{url} is already at head ({head})\n"


def test_db_upgrade_hides_the_password() -> None:
    with throwaway_pg_database("rm_cli_up") as url:
        from sqlalchemy.engine import make_url

        secret = make_url(url).set(password="s3cret").render_as_string(hide_password=False)
        shown = make_url(url).set(password="s3cret").render_as_string(hide_password=True)
        # trust auth: the password is not checked, only never shown
        result = runner.invoke(app, ["--database-url", secret, "db", "upgrade"])
        assert result.exit_code == 0, result.output
        assert result.stderr == f"upgraded {shown} from none to {head_revision()} (head)\n"
        assert "s3cret" not in result.output


def test_run_names_a_source_it_could_not_read(tmp_path: Path) -> None:
    url, _ = _db(tmp_path)
    fake = tmp_path / "app.jsonl.gz"
    fake.write_bytes(b"not gzip at all\n")
    result = runner.invoke(app, ["--database-url", url, "run", str(fake)])
    assert result.exit_code == 3
    assert result.stderr == (
        f"error: {fake.resolve()}: read failed before the first line: not a gzip stream (bad header)\n"
    )


def test_ctrl_c_says_what_was_kept_and_exits_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A KeyboardInterrupt inside ``run`` (its job) and inside ``stats`` (its report), and SIGTERM's
    ``Stopped`` inside ``check``: one line on stderr, exit 130 (143 for SIGTERM); ``run`` and ``check``
    commit batch by batch, so they say what was kept and how to go on. Typer alone exited 130 without a
    word, and SIGTERM killed the process."""
    import monitor.stats.report
    import monitor.worker.jobs
    from monitor.cli.app import Stopped

    during: list[object] = []

    def interrupt(**_: object) -> None:
        during.append(signal.getsignal(signal.SIGTERM))
        raise KeyboardInterrupt

    def stopped(**_: object) -> None:
        raise Stopped  # what SIGTERM raises (stop_on_sigterm)

    url, _ = _db(tmp_path)
    logs = tmp_path / "app.jsonl"
    logs.write_bytes(log(ctx_input(), rewrite()))
    monkeypatch.setattr(monitor.worker.jobs, "run_job", interrupt)
    # both read by their command when it runs (a module that imported them by name would keep the patch)
    monkeypatch.setattr(monitor.stats.report, "stats_report", interrupt)
    before = signal.getsignal(signal.SIGTERM)
    result = runner.invoke(app, ["--database-url", url, "run", str(logs)])
    assert result.exit_code == 130
    # run turned SIGTERM into Stopped while it ran, and gave the handler back when it ended
    assert during[0] is not before and signal.getsignal(signal.SIGTERM) is before
    with pytest.raises(Stopped):
        during[0](signal.SIGTERM, None)  # type: ignore[operator]
    assert result.stderr == (
        "interrupted; the batches it committed are kept, and `run` again goes on from there (nothing is "
        "stored or checked twice)\n"
    )
    monkeypatch.setattr(monitor.worker.jobs, "check_job", stopped)
    result = runner.invoke(app, ["--database-url", url, "check"])
    assert result.exit_code == 143
    assert result.stderr == (
        "stopped by SIGTERM; the batches it committed are kept, and `check` again goes on from there "
        "(nothing is checked twice; --recheck starts over)\n"
    )
    result = runner.invoke(app, ["--database-url", url, "stats"])
    assert (result.exit_code, result.stderr) == (130, "interrupted\n")


def test_db_current_on_a_missing_sqlite_file_does_not_create_it(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    result = runner.invoke(app, ["--database-url", f"sqlite:///{missing}", "db", "current"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"current: (no database file {missing})  head: {head_revision()}\n"
    assert not missing.exists()


@pytest.mark.slow
def test_a_reader_closing_the_pipe_early_is_exit_0_without_a_message(tmp_path: Path) -> None:
    url, _ = _db(tmp_path)
    assert runner.invoke(app, ["--database-url", url, "run", str(REPO / "examples")]).exit_code == 0
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for args in (["findings", "--json"], ["findings"]):
        proc = subprocess.Popen(
            [sys.executable, "-m", "monitor", "--database-url", url, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # like `| head -1`: more than a pipe buffer (64 KiB) is still to come
        assert proc.wait(timeout=120) == 0, args
        said = proc.stderr.read().decode()
        assert "error" not in said and (said == "" or said.endswith(" findings\n")), (args, said)
        proc.stderr.close()


def test_run_with_nothing_to_read_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = _db(tmp_path)
    monkeypatch.delenv("REWRITE_MONITOR_SOURCES", raising=False)
    result = runner.invoke(app, ["--database-url", url, "run"])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: no PATH given and no `sources` configured (REWRITE_MONITOR_SOURCES or config file)\n"
    )


def test_a_file_that_is_not_a_sqlite_database_is_one_line_and_exit_4(tmp_path: Path) -> None:
    """A newcomer pointed the URL at a text file: every command gave a 60-line traceback and exit 1."""
    notdb = tmp_path / "notes.db"
    notdb.write_text("# not a database\n" * 50)
    for args in (["queue"], ["db", "upgrade"]):
        result = runner.invoke(app, ["--database-url", f"sqlite:///{notdb}", *args])
        assert result.exit_code == 4, (args, result.output)
        assert result.stderr == (
            f"error: cannot reach the database sqlite:///{notdb}: {notdb} is not a SQLite database\n"
        )


def test_db_downgrade_of_a_missing_file_refuses_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    for revision in ("base", "-1"):
        result = runner.invoke(
            app, ["--database-url", f"sqlite:///{missing}", "db", "downgrade", revision, "--yes"]
        )
        assert result.exit_code == 4
        assert result.stderr == f"error: no database file {missing}: nothing to downgrade\n"
    assert not missing.exists()


def test_rules_validate_without_a_folder_checks_the_configured_rules_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It checked the bundled rules whatever rules_dir said, so a broken deployment copy passed."""
    import shutil

    from monitor.bundled import bundled_dir

    rules = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), rules)
    (rules / "neutral.yaml").write_text("version: 1\nneutral: [information]\n")
    monkeypatch.setenv("REWRITE_MONITOR_RULES_DIR", str(rules))
    result = runner.invoke(app, ["rules", "validate"])
    assert result.exit_code == 2
    assert f"{rules}/neutral.yaml:1: version: Input should be 2" in result.stderr


def test_evaluate_shows_a_prompt_version_that_looks_like_markup(cli_db: str, tmp_path: Path) -> None:
    """Rewriter names in brackets ("[mtrag-fig5-rewrite]") vanished from the table titles as Rich tags."""
    msgs = [{"role": "user", "content": "Tell me about the singer."}]
    events = log(
        ctx_input(conv="a", req="a_2", messages=msgs, n_messages=1, client_turn_count=1),
        rewrite(
            conv="a", req="a_2", latest="What else?", query="the singer", prompt_version="[bold]v1[/bold]"
        ),
    )
    assert runner.invoke(app, ["--database-url", cli_db, "run", "-"], input=events).exit_code == 0
    labels = tmp_path / "l.jsonl"
    labels.write_text(json.dumps({"request_id": "a_2", "fabricated": []}) + "\n")
    args = ["--database-url", cli_db, "evaluate", "--labels", str(labels)]
    result = runner.invoke(app, [*args, "--by", "prompt_version"])
    assert result.exit_code == 0, result.output
    assert "l.jsonl [[bold]v1[/bold]]: 1 items" in result.stdout
    # An empty label file is an error naming it, not a table of zeros that reads as a measurement.
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = runner.invoke(app, [*args, "--labels", str(empty), "--json"])
    assert result.exit_code == 2
    assert f"{empty}: no labels (the file is empty)" in result.stderr
    # One rewriter split at a time: the second was silently dropped before; step combines with either.
    result = runner.invoke(app, [*args, "--by", "model", "--by", "prompt_version"])
    assert result.exit_code == 2
    assert "one rewriter split at a time (got model and prompt_version)" in result.stderr
    result = runner.invoke(app, [*args, "--by", "step", "--by", "prompt_version"])
    assert result.exit_code == 0, result.output
    assert "l.jsonl [[bold]v1[/bold]]: 1 items" in result.stdout


def test_ingest_fixes_the_check_draw_with_the_configured_seed(tmp_path: Path) -> None:
    """`ingest` stores the draw of `sample_seed`, as `run` and the worker do: otherwise a check at a rate
    below 1 samples other records after `ingest` than after `run`."""
    from monitor.sampling import draw

    url, path = _db(tmp_path)
    env = {"REWRITE_MONITOR_SAMPLE_SEED": "foo"}
    assert runner.invoke(app, ["--database-url", url, "ingest", "-"], input=_logs(3), env=env).exit_code == 0
    with sqlite3.connect(path) as conn:
        draws = dict(conn.execute("SELECT request_id, check_draw FROM records").fetchall())
    assert draws == {f"c{i}_2": draw("foo", "check", f"c{i}/c{i}_2") for i in range(3)}
