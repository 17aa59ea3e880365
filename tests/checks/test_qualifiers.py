"""dropped_qualifier / qualifier_conflict: live values, applies_to, admitted drops, selecting kinds."""

from __future__ import annotations

from monitor.checks.qualifiers import check, find_qualifiers, live_values

from .conftest import make_record

PLAN = [("user", "We run the enterprise plan in staging."), ("assistant", "Noted.")]


def kinds(rec, rules):
    return [
        (f.kind, f.severity, f.evidence.get("value") or f.evidence.get("query_value"))
        for f in check(rec, rules)
    ]


def test_find_qualifiers_values_and_spans(rules):
    got = [
        (q.kind, q.value, q.start, q.end)
        for q in find_qualifiers("On the Pro plan in prod, v2.1, over 50", rules)
    ]
    assert got == [
        ("plan_tier", "pro", 7, 10),
        ("environment", "production", 19, 23),
        ("product_version", "2.1", 26, 29),
        ("age_demographic", "over 50", 31, 38),
    ]


def test_later_user_turn_replaces_live_value(rules):
    msgs = PLAN + [("user", "Actually we moved to the free plan."), ("assistant", "OK.")]
    rec = make_record(msgs, "What is the rate limit?", "What is the rate limit on the free plan in staging?")
    live = live_values(rec, rules)
    assert {k: [v.value for v in vs] for k, vs in live.items()} == {
        "plan_tier": ["free"],
        "environment": ["staging"],
    }
    assert check(rec, rules) == []


def test_silent_drop_is_medium_admitted_drop_is_high(rules):
    rec = make_record(PLAN, "What is the rate limit?", "What is the API rate limit in staging?")
    assert kinds(rec, rules) == [("dropped_qualifier", "medium", "enterprise")]
    rec = make_record(
        PLAN,
        "What is the rate limit?",
        "What is the API rate limit in staging?",
        dropped=("enterprise plan",),
    )
    assert kinds(rec, rules) == [("dropped_qualifier", "high", "enterprise")]


def test_applies_to_limits_plan_drops_to_plan_questions(rules):
    rec = make_record(PLAN, "Who maintains the docs?", "Who maintains the docs for staging?")
    assert kinds(rec, rules) == []


def test_environment_has_no_applies_to(rules):
    rec = make_record(PLAN, "Who maintains the docs?", "Who maintains the docs for the enterprise plan?")
    assert kinds(rec, rules) == [("dropped_qualifier", "medium", "staging")]


def test_conflict_with_alias_spelling(rules):
    rec = make_record(
        PLAN, "What is the rate limit?", "What is the rate limit on the enterprise plan in production?"
    )
    out = check(rec, rules)
    assert [
        (f.kind, f.evidence["query_value"], f.evidence["live_values"])
        for f in out
        if f.kind == "qualifier_conflict"
    ] == [("qualifier_conflict", "production", ["staging"])]


def test_assistant_turns_do_not_set_live_values(rules):
    msgs = [("user", "What is the rate limit?"), ("assistant", "On the enterprise plan it is 100/s.")]
    rec = make_record(msgs, "And for bulk export?", "What is the rate limit for bulk export?")
    assert kinds(rec, rules) == []


def test_selecting_qualifier_never_fires(rules):
    msgs = [("user", "Compare the first option and the second option."), ("assistant", "A and B.")]
    rec = make_record(msgs, "Price of the second option?", "What is the price of B?")
    assert kinds(rec, rules) == []


def test_relative_time_does_not_persist(rules):
    msgs = [("user", "What happened to the band later?"), ("assistant", "They split.")]
    rec = make_record(msgs, "Why?", "Why did the band split?")
    assert kinds(rec, rules) == []
