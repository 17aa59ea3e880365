"""The check phase budget's stopwatch (``benchmarks/budget.py``): exclusive time per stage, and wrappers
that reach every module holding a function and are taken away afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks import budget
from monitor.checks import antecedents, intent, nlp


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


def test_patched_reaches_every_importer_and_restores_them() -> None:
    original = nlp.one_edit
    watch = budget.Stopwatch()
    with budget.patched([(nlp, "one_edit", "edits")], watch):
        # `from monitor.checks.nlp import one_edit` bound it in these modules too
        assert nlp.one_edit is not original
        assert antecedents.one_edit is nlp.one_edit
        assert intent.one_edit is nlp.one_edit
        assert antecedents.one_edit("colour", "color") is True
        assert intent.one_edit("abc", "xyz") is False
    assert nlp.one_edit is original and antecedents.one_edit is original and intent.one_edit is original
    assert set(watch.seconds) == {"edits"}


def test_patched_replaces_a_method_on_its_class_and_restores_it() -> None:
    original = nlp.Analyzer.lemma
    watch = budget.Stopwatch()
    with budget.patched([(nlp.Analyzer, "lemma", "lemmas")], watch):
        assert nlp.Analyzer.lemma is not original
    assert nlp.Analyzer.lemma is original
