"""Every choice option fails the same way: click's usage error naming the valid values, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from monitor.checks import REGISTRY
from monitor.cli.app import finding_kinds, lazy_choice
from monitor.verdicts import ARTIFACTS, LABELS

runner = CliRunner()

KINDS = sorted({k for spec in REGISTRY.values() for k in spec.kinds})


def _listed(values: list[str] | tuple[str, ...]) -> str:
    return ", ".join(repr(v) for v in values)


CASES = [
    (["review", "--kind", "nonsense"], "--kind", "'nonsense'", KINDS),
    (["queue", "--kind", "nonsense"], "--kind", "'nonsense'", KINDS),
    (["findings", "--kind", "nonsense"], "--kind", "'nonsense'", KINDS),
    (["verdict", "c1_2", "--label", "okk"], "--label", "'okk'", LABELS),
    (["export", "--out", "e.jsonl", "--label", "okk"], "--label", "'okk'", LABELS),
    (["verdict", "c1_2", "--label", "ok", "--artifact", "rewrit"], "--artifact", "'rewrit'", ARTIFACTS),
    (["findings", "--min-severity", "severe"], "--min-severity", "'severe'", ("low", "medium", "high")),
    (
        ["queue", "--state", "open"],
        "--state",
        "'open'",
        ("pending", "claimed", "done", "skipped", "withdrawn", "all"),
    ),
    (["export", "--out", "e.jsonl", "--format", "xml"], "--format", "'xml'", ("jsonl", "csv", "parquet")),
    (["stats", "--by", "tenant"], "--by", "'tenant'", ("prompt_version", "model", "day")),
]


@pytest.mark.parametrize(("args", "option", "given", "valid"), CASES, ids=lambda c: " ".join(c)[:40])
def test_a_wrong_choice_is_a_usage_error_exit_2_naming_the_valid_values(
    cli_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args, option, given, valid
) -> None:
    from monitor.cli.main import app

    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["--database-url", cli_db, *args])
    assert result.exit_code == 2
    assert f"Invalid value for '{option}': Value error, {given} is not one of {_listed(valid)}." in " ".join(
        result.output.split()
    )
    assert not (tmp_path / "e.jsonl").exists()


def test_the_kinds_are_those_of_the_registered_checks() -> None:
    assert finding_kinds() == KINDS
    assert "added_content_word" in KINDS and "dropped_qualifier" in KINDS


def test_lazy_choice_reads_its_values_when_parsing() -> None:
    calls: list[int] = []

    def values() -> list[str]:
        calls.append(1)
        return ["a", "b"]

    parse = lazy_choice(values)
    assert calls == []
    assert parse("b") == "b"
    with pytest.raises(ValueError, match=r"^'c' is not one of 'a', 'b'\.$"):
        parse("c")
    assert len(calls) == 2


def test_help_does_not_import_the_checks() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom monitor.cli.main import app\n"
        "r = CliRunner().invoke(app, ['--help'])\nassert r.exit_code == 0\n"
        "print('monitor.checks' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_label_and_an_artifact_that_do_not_go_together_are_a_usage_error(cli_db: str) -> None:
    """Exit 2 like any wrong choice (was 6, the store's refusal), before the store is read."""
    from typer.testing import CliRunner

    from monitor.cli.main import app

    done = CliRunner().invoke(
        app, ["--database-url", cli_db, "verdict", "r1", "--label", "ok", "--artifact", "rewrite"]
    )
    assert done.exit_code == 2 and "label 'ok' does not go with artifact 'rewrite' (none does)" in done.output
    missing = cli_db.replace("cli.db", "nope.db")
    done = CliRunner().invoke(app, ["--database-url", missing, "findings", "--json", "--otlp"])
    assert done.exit_code == 2 and "choose one of --json, --otlp and --langfuse" in done.output
