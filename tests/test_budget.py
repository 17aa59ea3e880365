"""The check phase budget's stopwatch (``benchmarks/budget.py``): exclusive time per stage, and wrappers
that reach every module holding a function and are taken away afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import budget
from monitor.checks import intent, nlp
from monitor.checks.antecedents import swapped_name

REPO = Path(__file__).resolve().parents[1]


def _clock(*ticks: float) -> Iterator[float]:
    yield from ticks


def test_a_nested_call_is_charged_to_its_own_stage_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # outer starts at 0, inner runs from 1 to 3, outer ends at 10: outer 10 - 2 = 8, inner 2
    ticks = _clock(0.0, 1.0, 3.0, 10.0)
    monkeypatch.setattr(budget.time, "perf_counter", lambda: next(ticks))
    watch = budget.Stopwatch()
    inner = watch.wrap("inner", lambda x: x + 1)
    outer = watch.wrap("outer", lambda x: inner(x) * 2)
    assert outer(4) == 10
    assert watch.seconds == {"outer": 8.0, "inner": 2.0}


def test_calls_of_one_stage_add_up(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = _clock(0.0, 0.5, 2.0, 2.25)
    monkeypatch.setattr(budget.time, "perf_counter", lambda: next(ticks))
    watch = budget.Stopwatch()
    f = watch.wrap("f", str.upper)
    assert [f("a"), f("b")] == ["A", "B"]
    assert watch.seconds == {"f": 0.75}


def test_a_stage_that_raises_is_still_charged(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = _clock(0.0, 4.0)
    monkeypatch.setattr(budget.time, "perf_counter", lambda: next(ticks))
    watch = budget.Stopwatch()

    def boom() -> None:
        raise ValueError("x")

    with pytest.raises(ValueError):
        watch.wrap("boom", boom)()
    assert watch.seconds == {"boom": 4.0}
    assert watch._inner == []  # the next call starts from a balanced stack


def test_patched_reaches_every_importer_and_restores_them() -> None:
    original = nlp.one_edit
    watch = budget.Stopwatch()
    with budget.patched([(nlp, "one_edit", "edits")], watch):
        # `from monitor.checks.nlp import one_edit` bound it in these modules too
        assert nlp.one_edit is not original
        assert swapped_name.one_edit is nlp.one_edit
        assert intent.one_edit is nlp.one_edit
        assert swapped_name.one_edit("colour", "color") is True
        assert intent.one_edit("abc", "xyz") is False
    assert nlp.one_edit is original and swapped_name.one_edit is original and intent.one_edit is original
    assert set(watch.seconds) == {"edits"}


def test_patched_replaces_a_method_on_its_class_and_restores_it() -> None:
    original = nlp.Analyzer.lemma
    watch = budget.Stopwatch()
    with budget.patched([(nlp.Analyzer, "lemma", "lemmas")], watch):
        assert nlp.Analyzer.lemma is not original
    assert nlp.Analyzer.lemma is original


def test_patched_restores_when_the_body_raises() -> None:
    original = nlp.one_edit
    with pytest.raises(RuntimeError), budget.patched([(nlp, "one_edit", "edits")], budget.Stopwatch()):
        raise RuntimeError("job failed")
    assert nlp.one_edit is original and intent.one_edit is original


def test_a_module_imported_while_patched_gets_the_original_back() -> None:
    original = nlp.one_edit
    late = types.ModuleType("monitor._budget_probe")
    sys.modules[late.__name__] = late
    try:
        with budget.patched([(nlp, "one_edit", "edits")], budget.Stopwatch()):
            late.one_edit = nlp.one_edit  # what `from monitor.checks.nlp import one_edit` binds now
            assert late.one_edit is not original
        assert late.one_edit is original
    finally:
        del sys.modules[late.__name__]


class _Base:
    def inherited(self) -> int:
        return 1


class _Owner(_Base):
    @staticmethod
    def static() -> int:
        return 2


@pytest.mark.parametrize(
    ("owner", "name", "says"),
    [
        (_Owner, "static", "no plain function defined in that class"),
        (_Owner, "inherited", "no plain function defined in that class"),
        (json, "dumps", "neither a class nor a loaded monitor module"),
    ],
)
def test_patched_refuses_what_it_cannot_restore(owner: object, name: str, says: str) -> None:
    with pytest.raises(TypeError, match=says), budget.patched([(owner, name, "x")], budget.Stopwatch()):
        pass
    assert _Owner.__dict__["static"].__class__ is staticmethod and "inherited" not in _Owner.__dict__


def _budget_child(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--child", "budget", json.dumps({"url": url})],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_the_budget_of_five_rewrites_adds_up_and_a_checked_store_is_refused(cli_db: str) -> None:
    from monitor.ingest.store.batches import ingest_bytes
    from monitor.store.engine import make_engine, session_factory

    # the example's first ten lines: the ctx_input and rewrite of requests cast2020-81_2 .. _6
    lines = (REPO / "examples" / "cast2020.jsonl").read_bytes().splitlines(keepends=True)[:10]
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        assert ingest_bytes(s, b"".join(lines)).stored == 10
    engine.dispose()

    done = _budget_child(cli_db)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["rewrites"] == 5
    stages = {k: got[k] for k in budget.STAGES}
    assert sum(stages.values()) == pytest.approx(got["job_s"], abs=1e-9)
    # each of these ran: spaCy built, the five transcripts tokenised and analysed, the checks run,
    # the records loaded and the results stored
    assert all(stages[k] > 0 for k in ("spacy", "tokenizer", "analysis", "checks", "load", "store"))
    assert min(stages.values()) >= 0

    again = _budget_child(cli_db)
    assert again.returncode == 1
    assert "no unchecked rewrites" in again.stderr


@pytest.mark.slow
def test_the_budget_refuses_a_missing_store(tmp_path: Path) -> None:
    done = _budget_child(f"sqlite:///{tmp_path / 'nothing.db'}")
    assert done.returncode == 1
    assert "no such SQLite file" in done.stderr
    assert not (tmp_path / "nothing.db").exists()


def test_the_allowance_at_a_floor_of_1_44_s() -> None:
    from benchmarks.run import allowance

    got = allowance(
        {
            "tokenizer_floor": {"import_s": 0.47, "build_s": 0.10, "tokenize_s": 0.87},
            "check_phase_budget": {"job_s": 5.41, "spacy": 0.45, "tokenizer": 1.03},
            "end_to_end": {"sqlite": {"check_s": 5.64}},
        }
    )
    # 1.44 / 0.35 = 4.1143; 5.64 - 4.1143 = 1.5257; 4.1143 - 1.44 = 2.6743; 5.41 - 0.45 - 1.03 = 3.93
    assert got == pytest.approx(
        {"allowed_s": 4.1143, "over_s": 1.5257, "own_allowed_s": 2.6743, "own_s": 3.93}, abs=1e-4
    )


def test_the_check_line_of_run_gives_the_processes_it_used() -> None:
    """Issue 36, part 3: the floor is compared with `run` on as many processes as `run` used, read from
    its check line ("... on 2 processes"; nothing said: one)."""
    from benchmarks.run import CHECK_LINE

    two = CHECK_LINE.search("ingest: ...\ncheck: 294 rewrites checked in 1.172 s on 2 processes\n")
    one = CHECK_LINE.search("check: 294 rewrites checked in 1.172 s\nqueue: ...")
    assert two is not None and one is not None
    assert (two[1], two[2], two[3]) == ("294", "1.172", "2")
    assert (one[1], one[2], one[3]) == ("294", "1.172", None)
