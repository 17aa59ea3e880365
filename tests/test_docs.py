"""The documentation cannot go stale: every part of README.md and docs/ made from the code is what the
code makes now (``monitor.cli.docs``, ``make docs``), and the README stays a page."""

from __future__ import annotations

import pytest

from monitor.cli import docs
from tests.helpers import REPO


def test_the_readme_is_a_page() -> None:
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


@pytest.mark.parametrize("part", [p for p in docs.PARTS if not p.slow], ids=lambda p: p.name)
def test_the_parts_made_from_the_code_are_not_stale(part: docs.Part) -> None:
    assert docs.stale_parts((part,)) == [], f"{part.path}: run `make docs`"


@pytest.mark.slow
@pytest.mark.parametrize("part", [p for p in docs.PARTS if p.slow], ids=lambda p: p.name)
def test_the_parts_made_from_the_products_output_are_not_stale(part: docs.Part, shared_logs: object) -> None:
    """The demo's output and the accuracy table, made again by running the product (durations aside)."""
    assert docs.stale_parts((part,)) == [], f"{part.path}: run `make docs`"


def test_a_settings_row_gives_its_variable_default_bounds_and_description() -> None:
    rows = {line.split(" | ")[0]: line for line in docs.settings_table().splitlines()}
    assert rows["| `batch_size`"] == (
        "| `batch_size` | `REWRITE_MONITOR_BATCH_SIZE` | `1000` | ≥ 1, ≤ 100,000 "
        "| Lines per ingest transaction. |"
    )
    assert rows["| `database_url`"].startswith(
        "| `database_url` | `REWRITE_MONITOR_DATABASE_URL` or `DATABASE_URL` "
        "| `sqlite:///rewrite-monitor.db` |  |"
    )
    assert rows["| `database_url`"].endswith(" Secret: masked by `config show`. |")
    check_rate = "| `check_rate` | `REWRITE_MONITOR_CHECK_RATE` | `1.0` | > 0, ≤ 1 |"
    assert rows["| `check_rate`"].startswith(check_rate)
    assert rows["| `sentry_dsn`"].split(" | ")[2] == "none"


def test_the_commands_page_holds_every_command_as_its_help_prints_it() -> None:
    paths = docs.command_paths()
    assert paths[0] == "rewrite-monitor" and "rewrite-monitor rules learned pin" in paths
    assert len(paths) == len(set(paths))
    page = docs.command_pages()
    assert [line[5:-1] for line in page.splitlines() if line.startswith("### `")] == paths
    assert "Usage: rewrite-monitor db upgrade [OPTIONS] [revision]" in page


def test_a_part_is_stale_on_any_change_but_a_duration(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "page.md"
    body = "check: 294 rewrites checked in 1.285 s\n"
    page.write_text(f"# Page\n\n{docs.begin_marker('x')}\n{body}{docs.end_marker('x')}\n\nafter\n")
    monkeypatch.setattr(docs, "REPO", tmp_path)
    same = docs.Part("x", "page.md", lambda: "check: 294 rewrites checked in 9.9 s\n")
    assert docs.stale_parts((same,)) == []
    other = docs.Part("x", "page.md", lambda: "check: 295 rewrites checked in 1.285 s\n")
    assert docs.stale_parts((other,), write=True) == ["x"]
    assert page.read_text() == (
        f"# Page\n\n{docs.begin_marker('x')}\ncheck: 295 rewrites checked in 1.285 s\n{docs.end_marker('x')}"
        "\n\nafter\n"
    )
    page.write_text("# Page without markers\n")
    with pytest.raises(ValueError, match="page.md: the markers of the generated part 'x' are missing"):
        docs.stale_parts((same,))


def test_the_accuracy_table_of_an_evaluate_result() -> None:
    fab = {"measured": True, "tp": 3, "fn": 1, "tp_right_word": 2, "fp": 5, "false_alarm_rate": 0.05}
    none_labelled = {"measured": True, "tp": 0, "fn": 0, "tp_right_word": 0, "fp": 0, "false_alarm_rate": 0.0}
    result = {
        "files": {
            "a.jsonl [v1]": {
                "items": 104,
                "fabricated": fab,
                "fabricated_high": none_labelled,
                "unresolved": {"false_alarm_rate": 0.0125},
                "queue": {"queue_precision": 0.5, "queue_lift": 1.234},
            },
            "empty.jsonl": {"items": 0},
        }
    }
    assert docs.accuracy_table(result).splitlines()[2:] == [
        "| `a.jsonl [v1]` | 104 | 2 of 4, FA 5 (5.0%) | none labelled, FA 0 (0.0%) | 1.2% | - | 50.0% "
        "| 1.23 |",
        "| `empty.jsonl` | 0 | not measured | not measured | - | - | - | - |",
    ]


def test_the_command_line_of_the_generator(capsys: pytest.CaptureFixture[str]) -> None:
    assert docs.main(["--check", "--fast"]) == 0
    with pytest.raises(SystemExit) as exc:
        docs.main(["--check", "--only", "nope"])
    assert exc.value.code == 2
    assert "unknown part 'nope'" in capsys.readouterr().err
