"""The same verdict makes the same regression case from either screen (issue 16, "Done when").

For every label, a reviewer who opens ``c1_2`` (the query adds "enterprise plan": an
``added_content_word`` finding, high; also ``window_truncated`` and ``antecedent_not_in_input``,
medium), chooses the label, the artifact it implies and leaves every field as it is, exports a case
equal to a hand-written one, whether the verdict was given on the dashboard's Item page or in the
terminal ``review``. The expected cases follow from the rules, written out here rather than computed:
the added words are suggested as the must-not-include terms of a fabrication and of nothing else (issue
16, part 1), and a suggestion is stored only when accepted (issue 35, part 4): untouched, a fabrication
asserts nothing; accepted (A on the page, "a" in the terminal; or one of them, by its pill or number,
with a typed term), the case holds exactly what was accepted and typed, and says which was which. An
untouched corrected-query field is no correction; the logged query is the expected one when the
reviewer judged the rewrite right (a fine label, or retrieval or generation first wrong).
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from monitor.cases.export import collect_cases
from monitor.cli.commands.review import LABEL_KEYS, review_loop
from monitor.review.evidence import Suggestion
from monitor.store.engine import make_engine, session_factory
from monitor.verdicts import DEFAULT_ARTIFACT, FINE_LABELS, LABELS
from tests.helpers import count_verdicts, seed_dashboard_store

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
LOGGED = "What is the uptime SLA for the Dublin region on the enterprise plan?"
KEY = {label: key for key, label in LABEL_KEYS.items()}

NONE_ACCEPTED = {"must_include": [], "must_not_include": []}
# label -> (artifact, expected_query, must_include, must_not_include) of the exported case; None: the
# verdict makes no case. An error on the rewrite whose fields hold nothing (every label, a fabrication
# too: its suggestions are not accepted) is first refused with what is missing, then stored without a
# case on the second submit: the case would assert nothing (issue 35). A chat-state fault makes none
# either: a replay gives the rewriter the same received messages.
EXPECTED: dict[str, tuple[str, str | None, list[str], list[str]] | None] = {
    "ok": ("none", LOGGED, [], []),
    "false_alarm_synonym": ("none", LOGGED, [], []),
    "fabricated_constraint": None,
    "dropped_constraint": None,
    "wrong_antecedent": None,
    "unresolved_reference": None,
    "over_carried": None,
    "not_a_query": None,
    "window_truncated": None,
    "missing_assistant_turns": None,
    "foreign_session": None,
    "ranking": ("retrieval", LOGGED, [], []),
    "generation": ("generation", LOGGED, [], []),
}
REFUSED_ONCE = {
    "fabricated_constraint",
    "dropped_constraint",
    "wrong_antecedent",
    "unresolved_reference",
    "over_carried",
    "not_a_query",
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("parity") / "template.db"
    seed_dashboard_store(f"sqlite:///{path}")
    return path


def _store(template: Path, tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.db"
    shutil.copy(template, path)
    return f"sqlite:///{path}"


def _case(url: str, origins: bool = False) -> tuple[Any, ...] | None:
    """The exported case of c1_2 as (artifact, expected query, must, must not), with its accepted and
    typed terms when ``origins``; None when the verdict made none."""
    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            cases = [
                c for c in collect_cases(session=session, redact=False) if c["source_request_id"] == "c1_2"
            ]
    finally:
        engine.dispose()
    if not cases:
        return None
    (case,) = cases
    got = case["artifact"], case["expected_query"], case["must_include"], case["must_not_include"]
    return (*got, case["accepted_terms"], case["typed_terms"]) if origins else got


def _open(url: str, label: str, monkeypatch: pytest.MonkeyPatch) -> tuple[AppTest, str]:
    """The Item page of c1_2 with ``label`` and its artifact chosen, and the item's id."""
    monkeypatch.setenv("REWRITE_MONITOR_DATABASE_URL", url)
    monkeypatch.setenv("REWRITE_MONITOR_REVIEWER_NAME", "dana")
    monkeypatch.delenv("REWRITE_MONITOR_CONFIG", raising=False)
    at = AppTest.from_file(str(APP), default_timeout=30).run()
    at = next(b for b in at.button if b.label == "Review next").click().run()
    (item,) = {r.key.split("_")[-1] for r in at.radio if r.key and r.key.startswith("label_")}
    at.radio(key=f"label_{item}").set_value(label)
    if label not in FINE_LABELS:
        at.radio(key=f"artifact_{item}").set_value(DEFAULT_ARTIFACT[label])
    return at.run(), item


def _dashboard(url: str, label: str, monkeypatch: pytest.MonkeyPatch) -> None:
    at, _ = _open(url, label, monkeypatch)
    # nothing is suggested for any other label on c1_2; a fabrication's suggestions are left unaccepted
    assert len(at.pills) == (label == "fabricated_constraint")
    at = next(b for b in at.button if b.label == "Submit and next").click().run()
    assert not at.exception
    if label in REFUSED_ONCE:
        # said next to Submit, nothing stored; the same label submitted again stores the verdict
        # (shown as literal text: Markdown's specials escaped)
        said = [e.value.replace("\\", "") for e in at.error]
        article = "an" if label[0] in "aeiou" else "a"
        assert any(f"Not stored yet: {article} {label} verdict on the rewrite needs" in e for e in said)
        # said with what would help: only a fabrication has suggestions here, none accepted
        hinted = any("(none of the suggested terms is accepted: A accepts them all)" in e for e in said)
        assert hinted == (label == "fabricated_constraint")
        assert count_verdicts(url) == 0
        at = next(b for b in at.button if b.label == "Submit and next").click().run()
        assert not at.exception
    assert count_verdicts(url) == 1
    # the confirmation says when the verdict made no case, and why
    stored = [m.value.replace("\\", "") for m in at.toast]
    assert any("(no regression case: " in m for m in stored) == (EXPECTED[label] is None), stored


def _terminal(url: str, label: str, answers: dict[str, str] | None = None) -> None:
    """``label`` given to c1_2 in the terminal ``review``; each question answered by ``answers`` (by
    the start of its prompt), else with Enter."""
    keys = iter([KEY[label], "q"])
    said: list[str] = []
    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            review_loop(
                session=session,
                reviewer="dana",
                lease=timedelta(minutes=10),
                kind=None,
                read_key=lambda: next(keys),
                read_line=lambda prompt, default: _answer(answers or {}, prompt, default),
                show=lambda x: said.append(x) if isinstance(x, str) else None,
                now=lambda: datetime.now(UTC),
            )
    finally:
        engine.dispose()
    if answers is None:
        refused = [x for x in said if "needs something a replay can fail" in x]
        assert len(refused) == (label in REFUSED_ONCE)
        assert any("(no regression case: " in x for x in said) == (EXPECTED[label] is None)
    assert count_verdicts(url) == 1


def _answer(answers: dict[str, str], prompt: str, default: str) -> str:
    return next((a for start, a in answers.items() if prompt.startswith(start)), default)


@pytest.mark.parametrize("label", LABELS)
def test_the_same_verdict_exports_the_same_case_from_either_screen(
    label: str, template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert set(EXPECTED) == set(LABELS)
    on_page, in_terminal = _store(template, tmp_path, "page"), _store(template, tmp_path, "terminal")
    _dashboard(on_page, label, monkeypatch)
    _terminal(in_terminal, label)
    expected: Any = EXPECTED[label]
    assert _case(on_page) == expected
    assert _case(in_terminal) == expected


# How the reviewer takes c1_2's two suggestions for a fabrication ("must not: enterprise", "must not:
# plan"): on the page (pills accepted, typed must-include) and in the terminal (the acceptance
# answer, the typed must-include); the exported case written out by hand.
ACCEPTANCE = {
    "all": (
        (["must not: enterprise", "must not: plan"], ""),
        {"accept": "a"},
        (
            "rewrite",
            None,
            [],
            ["enterprise", "plan"],
            {"must_include": [], "must_not_include": ["enterprise", "plan"]},
            {"must_include": [], "must_not_include": []},
        ),
    ),
    "one, and a typed term": (
        (["must not: enterprise"], "Dublin"),
        {"accept": "1", "must include": "Dublin"},
        (
            "rewrite",
            None,
            ["Dublin"],
            ["enterprise"],
            {"must_include": [], "must_not_include": ["enterprise"]},
            {"must_include": ["Dublin"], "must_not_include": []},
        ),
    ),
}


@pytest.mark.parametrize("how", list(ACCEPTANCE))
def test_accepted_suggestions_export_the_same_case_from_either_screen(
    how: str, template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (pills, typed), answers, expected = ACCEPTANCE[how]
    on_page, in_terminal = _store(template, tmp_path, "page"), _store(template, tmp_path, "terminal")
    at, item = _open(on_page, "fabricated_constraint", monkeypatch)
    (offered,) = at.pills
    assert [str(o) for o in offered.options] == ["must not: enterprise", "must not: plan"]
    if how == "all":
        at = next(b for b in at.button if b.label == "Accept all suggestions").click().run()
    else:
        at = offered.set_value([Suggestion("must_not_include", p.split(": ")[1]) for p in pills]).run()
    assert [str(o) for o in at.pills[0].value] == pills
    at.text_input(key=f"include_{item}_fabricated_constraint").input(typed)
    at = next(b for b in at.button if b.label == "Submit and next").click().run()
    assert not at.exception and not at.error
    _terminal(in_terminal, "fabricated_constraint", answers)
    assert _case(on_page, origins=True) == expected
    assert _case(in_terminal, origins=True) == expected
