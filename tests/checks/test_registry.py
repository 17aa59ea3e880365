"""The registry: ids, versions, kinds, statuses, and the Finding contract."""

from __future__ import annotations

import json

import pytest

from monitor.checks import REGISTRY, run_checks
from monitor.checks.base import Finding
from tests.factories import make_record


def test_registry_listing():
    assert [(s.versioned_id, s.family, s.kinds) for s in REGISTRY.values()] == [
        ("added_content_word.v20", "added_words", ("added_content_word",)),
        ("qualifiers.v11", "qualifiers", ("dropped_qualifier", "qualifier_conflict")),
        ("window_truncated.v1", "chat_state", ("window_truncated",)),
        ("missing_assistant_turns.v1", "chat_state", ("missing_assistant_turns",)),
        ("non_monotonic.v1", "chat_state", ("non_monotonic",)),
        ("digest_mismatch.v1", "chat_state", ("digest_mismatch",)),
        ("roles_mismatch.v1", "chat_state", ("roles_mismatch",)),
        ("session_mismatch.v1", "chat_state", ("session_mismatch",)),
        ("unresolved_reference.v6", "references", ("unresolved_reference",)),
        ("antecedent_not_in_input.v1", "references", ("antecedent_not_in_input",)),
        ("not_a_query.v6", "references", ("not_a_query",)),
        ("list_reference.v2", "antecedents", ("wrong_antecedent",)),
        ("topic_shift.v2", "antecedents", ("wrong_antecedent",)),
        ("antecedent_recency.v4", "antecedents", ("wrong_antecedent",)),
        ("swapped_name.v1", "antecedents", ("wrong_antecedent",)),
        ("ignored_correction.v1", "antecedents", ("wrong_antecedent",)),
        ("intent_dropped.v14", "intent", ("intent_dropped",)),
        ("replaced_term.v2", "intent", ("replaced_term",)),
        ("frame_not_carried.v1", "scope", ("dropped_qualifier",)),
        ("topic_not_carried.v1", "scope", ("dropped_qualifier",)),
    ]


def test_outcome_statuses_and_json(rules):
    rec = make_record(
        [("user", "Which plans exist?"), ("assistant", "Free and enterprise.")],
        "What's the quota on the free one?",
        "What is the quota on the free one?",
    )
    out = run_checks(rec, rules)
    assert out.rules_hash == rules.hash
    assert [(s.check_id, s.reason) for s in out.statuses if s.status == "skipped"] == [
        ("antecedent_not_in_input", "no resolved entries logged"),
        ("list_reference", "no enumeration in the transcript"),  # "Free and enterprise": no names
        ("topic_shift", "the latest message announces no new topic and no earlier turn set one"),
        ("antecedent_recency", "no 'it', 'they' or demonstrative in the latest message"),
        ("swapped_name", "the latest message writes no name of several words"),
        ("ignored_correction", "the latest message corrects nothing"),
        ("frame_not_carried", "the latest message substitutes nothing of an earlier question"),
        ("topic_not_carried", "the latest message does not depend on the conversation by its form"),
    ]
    assert len(out.statuses) == len(REGISTRY)
    (f,) = out.findings
    d = json.loads(f.to_json())
    assert (d["kind"], d["severity"], d["words"], d["check_id"], d["check_version"], d["step"]) == (
        "unresolved_reference",
        "high",
        ["the free one"],
        "unresolved_reference",
        6,
        "ordinal_kept",
    )


def test_finding_rejects_unknown_severity():
    with pytest.raises(ValueError, match="severity must be one of"):
        Finding(
            kind="x", severity="critical", evidence={}, reason="r", check_id="x", check_version=1, step="s"
        )


def test_module_level_check_functions(rules):
    from monitor.checks import chat_state, references

    rec = make_record([("user", "a b c"), ("user", "d e f")], "Why not?", "Why not?")
    assert [f.kind for f in chat_state.check(rec, rules)] == ["missing_assistant_turns"]
    assert [f.kind for f in references.check(rec, rules)] == ["unresolved_reference"]


def test_every_check_declares_a_step_table_with_sources():
    """Each registered check grades by a declared table; every step names a source and a grade."""
    for spec in REGISTRY.values():
        assert spec.steps, spec.id
        assert {s.id for s in spec.steps} == spec.step_ids
        for step in spec.steps:
            assert step.source.strip() and step.grade.strip() and step.description.strip(), (spec.id, step)


def test_a_finding_of_an_undeclared_step_is_refused(rules):
    """``run_checks`` refuses a finding whose step its check does not declare: a bug, not a skip."""
    from monitor.checks.registry import register
    from monitor.checks.steps import Step

    table = (Step("declared", "low", "a test", "the only step"),)

    @register(
        "test_undeclared_step", family="test", version=1, kinds=("x",), steps=table, summary="a test check"
    )
    def bad(record, rules):
        return [Finding("x", "low", {}, "r", "test_undeclared_step", 1, step="other")]

    try:
        with pytest.raises(ValueError, match="undeclared step 'other'"):
            run_checks(make_record([("user", "a")], "b", "c"), rules, only=["test_undeclared_step"])
    finally:
        REGISTRY.pop("test_undeclared_step")


def test_a_step_id_must_be_lower_case_words_and_unique():
    from monitor.checks.steps import Step, step_ids

    with pytest.raises(ValueError, match="lower-case words"):
        Step("Proper-Name", "high", "s", "d")
    with pytest.raises(ValueError, match="source is empty"):
        Step("proper_name", "high", " ", "d")
    with pytest.raises(ValueError, match="declared twice"):
        step_ids([Step("a", "low", "s", "d"), Step("a", "low", "s", "d")])
