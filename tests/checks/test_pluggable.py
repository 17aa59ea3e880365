"""Checks are pluggable and configurable (issue 37, part 4): a check registered by another installed
package through the ``rewrite_monitor.checks`` entry point runs in ``run`` and shows in ``checks list``;
the ``checks`` setting turns a check off (not run, not current, so coverage and ``evaluate`` leave it out)
or sets the lowest severity of its findings that reaches the review queue."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from monitor.checks import registry
from monitor.cli.main import app
from monitor.setting_groups import CheckSettings
from tests.helpers import REPO

runner = CliRunner()
CAST2020 = REPO / "examples" / "cast2020.jsonl"

PLUGIN = '''"""A tiny check from another package: the query names the Boeing brand."""

import re

from monitor.checks.base import Finding
from monitor.checks.registry import register
from monitor.checks.steps import Step

STEPS = (Step("brand_in_query", "medium", "a test of the plugin interface", "the query names Boeing"),)


@register("brand_named", family="style", version=1, kinds=("brand_named",), steps=STEPS,
          summary="the query names the Boeing brand")
def brand_named(record, rules):
    m = re.search(r"\\bBoeing\\b", record.query)
    if m is None:
        return []
    ev = {"words": [{"text": m.group(0), "start": m.start(), "end": m.end()}]}
    return [Finding("brand_named", "medium", ev, "names Boeing", "brand_named", 1, "brand_in_query")]
'''


def _install_plugin(root: Path) -> Path:
    """A distribution ``tiny-brand`` on a path entry of its own: its module and the ``.dist-info`` that
    ``importlib.metadata`` reads the entry point from (what ``pip install`` of a wheel leaves)."""
    root.mkdir()
    (root / "tiny_brand.py").write_text(PLUGIN)
    info = root / "tiny_brand-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-brand\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[rewrite_monitor.checks]\nbrand_named = tiny_brand\n")
    return root


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "monitor", *args], capture_output=True, text=True, env=env, check=False
    )


def test_a_plugin_check_runs_in_run_and_shows_in_checks_list(tmp_path: Path) -> None:
    plugin = _install_plugin(tmp_path / "site")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWRITE_MONITOR_")}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin), str(REPO)])
    url = f"sqlite:///{tmp_path / 'p.db'}"
    assert _cli(["--database-url", url, "db", "upgrade"], env).returncode == 0
    done = _cli(["--database-url", url, "run", str(CAST2020)], env)
    assert done.returncode == 0, done.stderr
    listed = [json.loads(line) for line in _cli(["checks", "list", "--json"], env).stdout.splitlines()]
    mine = [row for row in listed if row["check"] == "brand_named"]
    assert mine == [
        {
            "check": "brand_named",
            "version": 1,
            "family": "style",
            "kinds": ["brand_named"],
            "steps": ["brand_in_query"],
            "source": "tiny_brand",
            "enabled": True,
            "min_severity": "low",
        }
    ]
    assert listed[-1]["check"] == "brand_named"  # another family: after the built-in ones
    found = _cli(["--database-url", url, "findings", "--kind", "brand_named", "--json"], env)
    # the two queries of examples/cast2020.jsonl that name Boeing (turns 3 and 6 of topic 90)
    assert sorted(json.loads(line)["request_id"] for line in found.stdout.splitlines()) == [
        "cast2020-90_3",
        "cast2020-90_6",
    ]


def test_a_plugin_that_fails_to_load_is_named(tmp_path: Path) -> None:
    plugin = _install_plugin(tmp_path / "site")
    (plugin / "tiny_brand.py").write_text("raise RuntimeError('half installed')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWRITE_MONITOR_")}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin), str(REPO)])
    done = _cli(["checks", "list"], env)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: check plugin 'brand_named' (tiny_brand) failed to load: RuntimeError: half installed"
    )


@pytest.fixture
def reset_choices() -> Iterator[None]:
    yield
    registry.configure({})


def test_a_check_turned_off_is_not_run_listed_or_measured(
    cli_db: str, tmp_path: Path, reset_choices: None
) -> None:
    config = tmp_path / "rm.toml"
    config.write_text("[checks.topic_shift]\nenabled = false\n")
    base = ["--config", str(config), "--database-url", cli_db]
    assert runner.invoke(app, [*base, "ingest", str(CAST2020)]).exit_code == 0
    checked = runner.invoke(app, [*base, "check", "--json"])
    assert checked.exit_code == 0, checked.output
    coverage = [c["check"] for c in json.loads(checked.stdout)["coverage"]]
    assert "topic_shift" not in coverage and len(coverage) == len(registry.REGISTRY) - 1
    assert "topic_shift" not in registry.checks_by_kind()["wrong_antecedent"]
    listed = runner.invoke(app, [*base, "checks", "list"])
    assert "20 checks, 19 run, 1 turned off by the checks setting" in listed.stdout
    # the same store read without the setting: topic_shift is current again, and never ran here
    registry.configure({})
    assert ("topic_shift", registry.REGISTRY["topic_shift"].version) in registry.current_versions()


def test_all_checks_of_a_kind_off_leave_it_looked_for_nowhere(reset_choices: None) -> None:
    """``evaluate`` reads which checks emit a kind: with all of them off the kind maps to none (it fell
    back to the kind's own name, which read as a check that never ran)."""
    ids = registry.checks_by_kind()["wrong_antecedent"]
    registry.configure({i: CheckSettings(enabled=False) for i in ids})
    assert registry.checks_by_kind()["wrong_antecedent"] == ()


def test_a_floor_keeps_a_checks_lower_findings_out_of_the_queue_only(
    cli_db: str, tmp_path: Path, reset_choices: None
) -> None:
    """``min_severity = "high"`` on added_content_word: its medium finding on cast2020-94_2 (queued,
    medium, without the floor) no longer admits it; every finding is still stored and listed."""
    config = tmp_path / "rm.toml"
    config.write_text('[checks.added_content_word]\nmin_severity = "high"\n')
    for cfg, url in ((None, cli_db), (config, f"sqlite:///{tmp_path / 'floor.db'}")):
        if cfg is not None:
            assert runner.invoke(app, ["--database-url", url, "db", "upgrade"]).exit_code == 0
        base = ["--database-url", url] + (["--config", str(cfg)] if cfg else [])
        assert runner.invoke(app, [*base, "run", str(CAST2020)]).exit_code == 0
        found = runner.invoke(app, [*base, "findings", "--kind", "added_content_word", "--json"]).stdout
        assert sorted(json.loads(line)["severity"] for line in found.splitlines()) == [
            "high",
            "high",
            "high",
            "low",
            "medium",
            "medium",
        ]
        queue = json.loads(runner.invoke(app, [*base, "queue", "--json", "--state", "all"]).stdout)
        queued = sorted(i["request_id"] for i in queue["items"] if "added_content_word" in i["kinds"])
        want = ["cast2020-104_2", "cast2020-90_3", "cast2020-90_4"] + ([] if cfg else ["cast2020-94_2"])
        assert queued == sorted(want)


def test_a_plugin_check_that_raises_is_skipped_and_the_rest_goes_on(tmp_path: Path) -> None:
    plugin = _install_plugin(tmp_path / "site")
    broken = PLUGIN.replace(
        "    m = re.search",
        "    if 'Boeing' in record.query:\n        raise RuntimeError('x')\n    m = re.search",
    )
    (plugin / "tiny_brand.py").write_text(broken)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWRITE_MONITOR_")}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin), str(REPO)])
    url = f"sqlite:///{tmp_path / 'p.db'}"
    assert _cli(["--database-url", url, "db", "upgrade"], env).returncode == 0
    assert _cli(["--database-url", url, "ingest", str(CAST2020)], env).returncode == 0
    done = _cli(["--database-url", url, "check", "--json"], env)
    assert done.returncode == 0, done.stderr
    mine = next(c for c in json.loads(done.stdout)["coverage"] if c["check"] == "brand_named")
    # the two Boeing queries raised: skipped there with the reason; the 189 others ran
    assert (mine["ran"], mine["skipped"], mine["top_skip_reason"]) == (
        189,
        2,
        "the check raised RuntimeError",
    )
    assert done.stderr.count("check plugin brand_named (tiny_brand) raised RuntimeError") == 1
    others = json.loads(done.stdout)["findings"]
    assert others, "the built-in checks still found what they find"


def test_an_unknown_check_in_the_setting_is_a_config_error(tmp_path: Path, reset_choices: None) -> None:
    config = tmp_path / "rm.toml"
    config.write_text("[checks.topic_shfit]\nenabled = false\n")
    result = runner.invoke(app, ["--config", str(config), "checks", "list"])
    assert result.exit_code == 2
    assert result.stderr == "error: checks.topic_shfit: no such check (did you mean topic_shift?)\n"
