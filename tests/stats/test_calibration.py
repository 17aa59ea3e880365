"""The calibrated precision per (rewriter, kind, step) (issue 34): a posterior and an order computed by
hand on a small fixture, and the store's verdicts read into it (``stats --calibration``)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from typer.testing import CliRunner

from monitor.checks.learned import beta_quantile
from monitor.cli.main import app
from monitor.stats.calibration import (
    Calibration,
    Counts,
    PriorTable,
    learned_grade,
    outcome,
    queue_order,
    shipped_table,
    table_from,
)
from monitor.stats.evaluate import REWRITE_KINDS
from tests.factories import ctx_input, log, rewrite

STEP = ("added_content_word", "framing")
# the shipped-table level: 1 confirmed, 3 dismissed -> (1 + 1) / (4 + 2) = 1/3
TABLE = table_from([(*STEP, True)] + [(*STEP, False)] * 3, sources=["a.jsonl"])


def test_a_posterior_by_hand() -> None:
    cal = Calibration(
        {("A", *STEP): Counts(confirmed=1, dismissed=5), ("B", *STEP): Counts(confirmed=4, dismissed=0)},
        TABLE,
    )
    assert TABLE.mean(*STEP) == pytest.approx(1 / 3)
    # A's prior: the table's 1/3 at 4 verdicts, moved by B's 4 confirmations: (4/3 + 4) / (4 + 4) = 2/3,
    # weight min(4 + 4, 8) = 8; posterior Beta(16/3 + 1, 8/3 + 5): mean 19/42
    a = cal.estimate(("A", *STEP))
    assert (a.prior_mean, a.prior_weight) == (pytest.approx(2 / 3), 8)
    assert a.mean == pytest.approx(float(Fraction(19, 42)))
    assert a.low == pytest.approx(beta_quantile(0.05, 19 / 3, 23 / 3))
    assert a.low < a.mean < a.high
    # B's prior: (4/3 + 1) / (4 + 6) = 7/30 at min(10, 8) = 8; posterior Beta(56/30 + 4, 184/30): 22/45
    b = cal.estimate(("B", *STEP))
    assert b.prior_mean == pytest.approx(7 / 30)
    assert b.mean == pytest.approx(float(Fraction(22, 45)))
    # a rewriter with no verdicts on a step the table does not know: its kind's figure, weight 4
    c = cal.estimate(("C", "added_content_word", "synonym"))
    assert (c.mean, c.prior_weight, c.counts.n) == (pytest.approx(1 / 3), 4, 0)
    assert c.describe().startswith("0.33 (")
    assert c.describe().endswith("prior only (no verdict on this step for C)")
    assert a.describe().endswith("from 6 verdicts on A")
    # a kind nobody knows: 1/2
    assert cal.estimate(("C", "not_a_query", "meta_text")).mean == pytest.approx(0.5)


def test_what_a_verdict_says_of_a_finding() -> None:
    assert outcome("ok", "added_content_word") is False
    assert outcome("false_alarm_synonym", "intent_dropped") is False
    assert outcome("fabricated_constraint", "added_content_word") is True
    assert outcome("dropped_constraint", "added_content_word") is True  # another error: a real problem
    assert outcome("window_truncated", "added_content_word") is True  # the chat state: a real problem too
    # the first wrong artifact after the rewrite: the rewrite was fine
    assert outcome("ranking", "added_content_word") is False
    assert outcome("generation", "intent_dropped") is False


def test_the_learned_grade_and_the_order() -> None:
    assert learned_grade("medium", 0.19) == "low"
    assert learned_grade("medium", 0.19, protected=True) == "medium"
    assert learned_grade("high", 0.19) == "medium"
    assert learned_grade("high", 0.49) == "medium" and learned_grade("high", 0.5) == "high"
    assert learned_grade("low", 0.9) == "low"  # learning never raises a grade
    items = [("r1", 0.30, "high"), ("r2", 0.45, "low"), ("r3", 0.30, "medium"), ("r0", 0.30, "high")]
    order = sorted(items, key=lambda t: queue_order(t[1], t[2], t[0]))
    assert [t[0] for t in order] == ["r2", "r0", "r1", "r3"]


def test_the_table_round_trips_and_the_shipped_one_names_its_sources() -> None:
    again = PriorTable.from_json(json.loads(json.dumps(TABLE.as_json())))
    assert again.steps == TABLE.steps and again.sources == ("a.jsonl",)
    shipped = shipped_table()
    assert shipped.sources and all(s.startswith("shared/data/labels/") for s in shipped.sources)
    assert all(c.n > 0 for c in shipped.steps.values())


runner = CliRunner()


def _run_one_flagged_rewrite(url: str) -> None:
    """``run`` a store with request r2 (prompt version ctx-v1), whose query adds "enterprise plan"."""
    history = [
        {"role": "user", "content": "What is the uptime SLA?"},
        {"role": "assistant", "content": "99.9%."},
    ]
    events = [
        ctx_input(request_id="r2", turn=2, messages=history),
        rewrite(
            request_id="r2",
            turn=2,
            latest="And for backups?",
            query="What is the backup SLA on the enterprise plan?",
        ),
    ]
    assert runner.invoke(app, ["--database-url", url, "run", "-"], input=log(*events)).exit_code == 0


def test_stats_calibration_reads_the_verdicts(cli_db: str) -> None:
    _run_one_flagged_rewrite(cli_db)
    listed = runner.invoke(app, ["--database-url", cli_db, "findings", "--json"])
    keys = {(f["kind"], f["step"]) for f in map(json.loads, listed.stdout.splitlines())}
    assert keys
    empty = runner.invoke(app, ["--database-url", cli_db, "stats", "--calibration", "--json"])
    assert json.loads(empty.stdout)["entries"] == []
    done = runner.invoke(
        app, ["--database-url", cli_db, "verdict", "r2", "--label", "ok", "--reviewer", "ann"]
    )
    assert done.exit_code == 0, done.output
    got = json.loads(
        runner.invoke(app, ["--database-url", cli_db, "stats", "--calibration", "--json"]).stdout
    )
    entries = {(e["kind"], e["step"]): e for e in got["entries"]}
    assert set(entries) == keys  # one dismissal per (kind, step) of the item, once each
    assert all((e["confirmed"], e["dismissed"], e["rewriter"]) == (0, 1, "ctx-v1") for e in entries.values())
    assert all(e["estimate"] < e["prior_mean"] for e in entries.values())
    table = runner.invoke(app, ["--database-url", cli_db, "stats", "--calibration"])
    assert table.exit_code == 0 and "calibrated precision per rewriter and grading step" in table.stdout
    # only the rewrite kinds: the chat-state kinds judge the logging, which no label speaks to
    assert all(e["kind"] in REWRITE_KINDS for e in got["entries"])
    mixed = runner.invoke(app, ["--database-url", cli_db, "stats", "--calibration", "--by", "model"])
    assert mixed.exit_code == 2 and "--calibration takes no --agreement, --by or --since" in mixed.output


def test_show_prints_the_estimate_beside_each_finding(cli_db: str) -> None:
    _run_one_flagged_rewrite(cli_db)

    def shown() -> list[dict]:
        got = runner.invoke(app, ["--database-url", cli_db, "show", "r2", "--json"])
        assert got.exit_code == 0, got.output
        return [f for f in json.loads(got.stdout)["findings"] if f["kind"] in REWRITE_KINDS]

    before = shown()
    assert before
    table = shipped_table()
    for f in before:
        est = f["estimate"]
        # no verdict yet: the shipped table's Laplace-smoothed figure for the step, at its weight
        assert (est["confirmed"], est["dismissed"], est["rewriter"]) == (0, 0, "ctx-v1")
        assert est["estimate"] == pytest.approx(table.mean(f["kind"], f["step"]), abs=1e-4)
        assert est["text"].endswith("prior only (no verdict on this step for ctx-v1)")
    done = runner.invoke(
        app, ["--database-url", cli_db, "verdict", "r2", "--label", "ok", "--reviewer", "ann"]
    )
    assert done.exit_code == 0, done.output
    entries = {
        (e["kind"], e["step"]): e
        for e in json.loads(
            runner.invoke(app, ["--database-url", cli_db, "stats", "--calibration", "--json"]).stdout
        )["entries"]
    }
    for f in shown():
        est, entry = f["estimate"], entries[(f["kind"], f["step"])]
        # one "ok": a dismissal, so the mean drops below the prior: m·w / (w + 1) with the pool's weight
        assert (est["confirmed"], est["dismissed"]) == (0, 1)
        assert est["estimate"] == entry["estimate"]
        m, w = entry["prior_mean"], entry["prior_weight"]
        assert est["estimate"] == pytest.approx(m * w / (w + 1), abs=1e-3)
        assert est["text"].endswith("from 1 verdict on ctx-v1")
    page = runner.invoke(app, ["--database-url", cli_db, "show", "r2"], env={"COLUMNS": "250"})
    assert page.exit_code == 0 and "real, by the verdicts" in page.stdout
    # the column wraps the rewriter's name onto the next line
    assert page.stdout.count("from 1 verdict on") == len(entries)


def test_a_held_calibration_is_read_again_only_after_its_ttl(monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal review keeps the calibration between items (it reads every standing verdict)."""
    from monitor.stats import store

    reads: list[int] = []

    def read(**_: object) -> Calibration:
        reads.append(1)
        return Calibration({("A", *STEP): Counts(len(reads), 0)}, TABLE)

    monkeypatch.setattr(store, "calibration", read)
    clock = [0.0]
    held = store.HeldCalibration(session=None, checks=[], ttl=60.0, clock=lambda: clock[0])  # type: ignore[arg-type]
    first = held.get()
    clock[0] = 60.0
    assert held.get() is first and len(reads) == 1  # within the ttl: the one held
    clock[0] = 60.5
    again = held.get()
    assert again is not first and len(reads) == 2
    assert again.counts[("A", *STEP)] == Counts(2, 0)


def test_the_estimates_of_one_rewrites_findings() -> None:
    from types import SimpleNamespace

    cal = Calibration({("ctx-v1", *STEP): Counts(confirmed=0, dismissed=1)}, TABLE)
    findings = [
        SimpleNamespace(kind="added_content_word", step="framing"),
        SimpleNamespace(kind="added_content_word", step="framing"),  # once per (kind, step)
        SimpleNamespace(kind="window_truncated", step="gap"),  # a chat-state kind: not calibrated
    ]
    got = cal.for_findings("ctx-v1", "m1", findings)
    assert list(got) == [STEP]
    # the table's 1/3 at weight 4, one dismissal: (4/3) / (4 + 1) = 4/15
    assert got[STEP].mean == pytest.approx(4 / 15)
    # without a prompt version the model names the rewriter: m1 has no verdicts, so its estimate is the
    # pooled prior, the table moved by ctx-v1's dismissal: (4/3 + 0) / (4 + 1) = 4/15 at weight 5
    m1 = cal.for_findings(None, "m1", findings)[STEP]
    assert (m1.key[0], m1.counts.n, m1.prior_weight) == ("m1", 0, 5)
    assert m1.mean == pytest.approx(4 / 15)
