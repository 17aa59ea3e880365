"""``rules learned``: the learned table listed, as JSON and as YAML to paste, pinned, unpinned and reset
from the terminal (issue 15, part 2)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from monitor.cli.main import app
from tests.factories import ctx_input, log, rewrite

runner = CliRunner()
LATEST = "What's the uptime SLA on the second one?"
ADDS = "What is the uptime SLA for the Dublin region on the enterprise plan?"


def _store(cli_db: str, tmp_path: Path, n: int = 4) -> list[str]:
    """``n`` conversations whose rewrite (prompt version ctx-v1) adds "enterprise plan", run, and an
    ``ok`` verdict on each, by sam and kim in turn."""
    events = []
    for i in range(n):
        msgs = [
            {"role": "user", "content": f"Which EU regions support CMK? (ticket {i})"},
            {"role": "assistant", "content": "Frankfurt and Dublin."},
        ]
        events += [
            ctx_input(f"c{i}", f"c{i}_2", messages=msgs),
            rewrite(f"c{i}", f"c{i}_2", latest=LATEST, query=ADDS),
        ]
    path = tmp_path / "app.jsonl"
    path.write_bytes(log(*events))
    assert runner.invoke(app, ["--database-url", cli_db, "run", str(path)]).exit_code == 0
    reqs = [f"c{i}_2" for i in range(n)]
    for i, req in enumerate(reqs):
        who = "sam" if i % 2 else "kim"
        args = ["--database-url", cli_db, "verdict", req, "--label", "ok", "--reviewer", who]
        assert runner.invoke(app, args).exit_code == 0
    return reqs


def test_rules_learned_lists_the_entries_with_their_effect(cli_db: str, tmp_path: Path) -> None:
    empty = runner.invoke(app, ["--database-url", cli_db, "rules", "learned"])
    assert empty.exit_code == 0
    assert "nothing learned yet" in empty.output
    _store(cli_db, tmp_path)
    got = runner.invoke(app, ["--database-url", cli_db, "rules", "learned", "--json"])
    assert got.exit_code == 0, got.output
    data = json.loads(got.output)
    plan = next(e for e in data["entries"] if e["lemma"] == "plan")
    # 4 dismissals by two reviewers, no other evidence: Beta(5, 1), mean 5/6, bound 0.05^(1/5) = 0.549
    assert plan == {
        "kind": "added_content_word",
        "rewriter": "ctx-v1",
        "lemma": "plan",
        "dismissed": 4,
        "confirmed": 0,
        "reviewers": 2,
        "others_dismissed": 0,
        "others_confirmed": 0,
        "posterior_mean": 0.833,
        "lower_bound": 0.549,
        "pinned": None,
        "steps": -1,
        "effect": "one step lower",
        "last_at": plan["last_at"],
    }
    assert len(data["hash"]) == 16
    table = runner.invoke(app, ["--database-url", cli_db, "rules", "learned", "--effective"])
    assert "one step lower" in table.output and "2 entries, 2 moving a grade" in table.output
    other = runner.invoke(app, ["--database-url", cli_db, "rules", "learned", "--rewriter", "v9", "--json"])
    assert json.loads(other.output)["entries"] == []


def test_rules_learned_yaml_is_a_framing_group_that_validates(cli_db: str, tmp_path: Path) -> None:
    import yaml

    from monitor.checks.rules import NeutralFile

    _store(cli_db, tmp_path)
    got = runner.invoke(app, ["--database-url", cli_db, "rules", "learned", "--yaml"])
    assert got.exit_code == 0, got.output
    doc = yaml.safe_load(got.output)
    assert doc == {
        "framing": [
            {
                "source": "the reviewers' verdicts on rewriter 'ctx-v1': dismissed as false alarms",
                "words": ["enterprise", "plan"],
            }
        ]
    }
    # pasted into a neutral.yaml it passes the schema, sources rule included
    NeutralFile.model_validate({"version": 2, **doc})


def test_pin_unpin_and_reset_from_the_terminal(cli_db: str, tmp_path: Path) -> None:
    _store(cli_db, tmp_path)
    base = ["--database-url", cli_db, "rules", "learned"]
    pin = runner.invoke(app, [*base, "pin", "Plan", "--rewriter", "ctx-v1", "--step", "0", "--by", "ops"])
    assert pin.exit_code == 0, pin.output
    assert pin.output == "pinned added_content_word 'plan' for 'ctx-v1' to 0 step(s)\n"

    def plan() -> dict[str, object]:
        data = json.loads(runner.invoke(app, [*base, "--json"]).output)
        return next(e for e in data["entries"] if e["lemma"] == "plan")

    assert (plan()["pinned"], plan()["steps"], plan()["dismissed"]) == (0, 0, 4)
    assert runner.invoke(app, [*base, "unpin", "plan", "--rewriter", "ctx-v1"]).exit_code == 0
    assert (plan()["pinned"], plan()["steps"]) == (None, -1)
    reset = runner.invoke(app, [*base, "reset", "plan", "--rewriter", "ctx-v1"])
    assert reset.exit_code == 0
    data = json.loads(runner.invoke(app, [*base, "--json"]).output)
    assert [e["lemma"] for e in data["entries"]] == ["enterprise"]
    empty = runner.invoke(app, [*base, "pin", " ", "--rewriter", "ctx-v1", "--step", "0"])
    assert empty.exit_code == 2 and "the word must not be empty" in empty.output
    typo = runner.invoke(app, [*base, "pin", "plan", "--rewriter", "ctx-v9", "--step", "0"])
    assert typo.exit_code == 0 and "no stored rewrite names the rewriter 'ctx-v9'" in typo.output
    bad = runner.invoke(app, [*base, "pin", "plan", "--rewriter", "ctx-v1", "--step", "-3"])
    assert bad.exit_code == 2
    assert "'-3' is not one of '-2', '-1', '0', '1'" in bad.output
    both = runner.invoke(app, [*base, "--json", "--yaml"])
    assert both.exit_code == 2
