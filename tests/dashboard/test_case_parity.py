"""The same verdict makes the same regression case from either screen (issue 16, "Done when").

For every label, a reviewer who opens ``c1_2`` (the query adds "enterprise plan": an
``added_content_word`` finding, high; also ``window_truncated`` and ``antecedent_not_in_input``,
medium), chooses the label, the artifact it implies and leaves every prefilled field as it is, exports a
case equal to a hand-written one, whether the verdict was given on the dashboard's Item page or in the
terminal ``review``. The expected cases follow from the rules, written out here rather than computed:
the added words are the must-not-include terms of a fabrication and of nothing else (issue 16, part 1);
an untouched corrected-query field is no correction; the logged query is the expected one when the
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
from monitor.store.engine import make_engine, session_factory
from monitor.verdicts import DEFAULT_ARTIFACT, FINE_LABELS, LABELS
from tests.helpers import seed_dashboard_store

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
LOGGED = "What is the uptime SLA for the Dublin region on the enterprise plan?"
KEY = {label: key for key, label in LABEL_KEYS.items()}

# label -> (artifact, expected_query, must_include, must_not_include) of the exported case
EXPECTED: dict[str, tuple[str, str | None, list[str], list[str]]] = {
    "ok": ("none", LOGGED, [], []),
    "false_alarm_synonym": ("none", LOGGED, [], []),
    "fabricated_constraint": ("rewrite", None, [], ["enterprise", "plan"]),
    "dropped_constraint": ("rewrite", None, [], []),
    "wrong_antecedent": ("rewrite", None, [], []),
    "unresolved_reference": ("rewrite", None, [], []),
    "over_carried": ("rewrite", None, [], []),
    "not_a_query": ("rewrite", None, [], []),
    "window_truncated": ("chat_state", None, [], []),
    "missing_assistant_turns": ("chat_state", None, [], []),
    "foreign_session": ("chat_state", None, [], []),
    "ranking": ("retrieval", LOGGED, [], []),
    "generation": ("generation", LOGGED, [], []),
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


def _case(url: str) -> tuple[str, str | None, list[str], list[str]] | None:
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
    return case["artifact"], case["expected_query"], case["must_include"], case["must_not_include"]


def _dashboard(url: str, label: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWRITE_MONITOR_DATABASE_URL", url)
    monkeypatch.setenv("REWRITE_MONITOR_REVIEWER_NAME", "dana")
    monkeypatch.delenv("REWRITE_MONITOR_CONFIG", raising=False)
    at = AppTest.from_file(str(APP), default_timeout=30).run()
    at = next(b for b in at.button if b.label == "Review next").click().run()
    (item,) = {r.key.split("_")[-1] for r in at.radio if r.key and r.key.startswith("label_")}
    at.radio(key=f"label_{item}").set_value(label)
    if label not in FINE_LABELS:
        at.radio(key=f"artifact_{item}").set_value(DEFAULT_ARTIFACT[label])
    at = at.run()
    at = next(b for b in at.button if b.label == "Submit and next").click().run()
    assert not at.exception


def _terminal(url: str, label: str) -> None:
    keys = iter([KEY[label], "q"])
    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            review_loop(
                session=session,
                reviewer="dana",
                lease=timedelta(minutes=10),
                kind=None,
                read_key=lambda: next(keys),
                read_line=lambda prompt, default: default,  # Enter: keep every prefilled value
                show=lambda _: None,
                now=lambda: datetime.now(UTC),
            )
    finally:
        engine.dispose()


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
