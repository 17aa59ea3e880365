"""The eight canonical cases of issue 3, each asserting the exact findings (kinds, words, severities)."""

from __future__ import annotations

from monitor.checks.rules import AliasesFile, build_rules
from monitor.record import Resolution
from tests.factories import make_record
from tests.helpers import run, summary

EU = [
    ("user", "Which EU regions support customer-managed encryption keys?"),
    ("assistant", "Frankfurt and Dublin both support customer-managed keys (CMK) for data at rest."),
]
SECOND_ONE = "What's the uptime SLA on the second one?"
TO_DUBLIN = (Resolution("the second one", "Dublin", 2),)

BILLING = [
    ("user", "We are on the enterprise plan. Where do I find our invoices?"),
    ("assistant", "Invoices are listed under Billing, Documents."),
    ("user", "Can I fetch them automatically?"),
    ("assistant", "Yes: the billing export API returns every invoice as JSON."),
]
RATE_LIMIT = "and what's the rate limit on the export API?"
FREE_TIER_QUERY = "What is the rate limit for the billing export API on the free tier?"


def test_case1_dublin_resolution_drops_spent_selecting_qualifier(rules):
    rec = make_record(
        EU,
        SECOND_ONE,
        "What is the uptime SLA for the Dublin region?",
        turn=2,
        resolved=TO_DUBLIN,
        dropped=("customer-managed encryption keys",),
    )
    out = run(rec, rules)
    assert summary(out) == []
    # every check ran (the antecedent check verified Dublin in turn 2) but topic_shift (no new topic)
    # and antecedent_recency (no "it", "they" or demonstrative: "the second one" is list_reference's)
    # and swapped_name (the user wrote no name) and ignored_correction (the user corrected nothing)
    # and frame_not_carried (no "what about" or "instead": nothing of an earlier question substituted)
    # and topic_not_carried (a full question, no ellipsis, fragment or continuer)
    assert {s.check_id for s in out.statuses if s.status == "skipped"} == {
        "topic_shift",
        "antecedent_recency",
        "swapped_name",
        "ignored_correction",
        "frame_not_carried",
        "topic_not_carried",
    }


def test_case2_alias_group_allows_eu_west_1(rules):
    rec = make_record(
        EU,
        SECOND_ONE,
        "What is the uptime SLA for the Dublin (eu-west-1) region?",
        turn=2,
        resolved=TO_DUBLIN,
    )
    assert summary(run(rec, rules)) == []


def test_case2_without_alias_group_flags_exactly_eu_west_1(rules):
    groups = [g for g in rules.aliases.groups if "eu-west-1" not in g.members]
    no_dublin = build_rules(
        aliases=AliasesFile(version=1, groups=groups), neutral=rules.neutral, qualifiers=rules.qualifiers
    )
    rec = make_record(
        EU,
        SECOND_ONE,
        "What is the uptime SLA for the Dublin (eu-west-1) region?",
        turn=2,
        resolved=TO_DUBLIN,
    )
    out = run(rec, no_dublin)
    assert summary(out) == [("added_content_word", "high", ("eu-west-1",))]
    f = out.findings[0]
    assert f.evidence["span"] == {"text": "eu-west-1", "start": 39, "end": 48}
    assert f.evidence["words"][0]["signal"] == "qualifier_value"
    assert f.evidence["words"][0]["qualifier_kind"] == "region"


def test_case3_free_tier_invented_against_enterprise_plan(rules):
    out = run(make_record(BILLING, RATE_LIMIT, FREE_TIER_QUERY, turn=3), rules)
    assert summary(out) == [
        ("added_content_word", "high", ("free", "tier")),
        ("qualifier_conflict", "high", ("free",)),
        ("dropped_qualifier", "medium", ("enterprise",)),
    ]
    added, conflict, dropped = out.findings
    assert added.evidence["span"] == {"text": "free tier", "start": 57, "end": 66}
    assert [(w["text"], w["signal"]) for w in added.evidence["words"]] == [
        ("free", "qualifier_value"),
        ("tier", "rare_term"),
    ]
    assert conflict.evidence["qualifier_kind"] == "plan_tier"
    assert conflict.evidence["query_value"] == "free"
    assert conflict.evidence["live_values"] == ["enterprise"]
    assert dropped.evidence["value"] == "enterprise"
    assert dropped.evidence["stated_at"] == {"message_index": 0, "start": 14, "end": 24, "text": "enterprise"}


def test_case4_free_tier_in_assistant_turn_still_conflicts(rules):
    billing = BILLING[:3] + [
        (
            "assistant",
            "Yes: the billing export API returns every invoice as JSON; "
            "unlike the free tier, enterprise plans have no daily cap.",
        )
    ]
    out = run(make_record(billing, RATE_LIMIT, FREE_TIER_QUERY, turn=3), rules)
    assert summary(out) == [
        ("qualifier_conflict", "high", ("free",)),
        ("dropped_qualifier", "medium", ("enterprise",)),
    ]


def test_case5_truncated_window_and_kept_ordinal(rules):
    msgs = [
        ("user", "How is the retention period configured?"),
        ("assistant", "Per cluster, under Settings."),
        ("user", "Can it be changed later?"),
        ("assistant", "Yes, at any time."),
    ]
    rec = make_record(
        msgs,
        "and the retention period for the second cluster?",
        "What is the retention period for the second cluster?",
        client_turn_count=11,
        turn=7,
    )
    out = run(rec, rules)
    assert summary(out) == [
        ("window_truncated", "medium", ()),
        ("unresolved_reference", "high", ("the second cluster",)),
    ]
    window = out.findings[0]
    assert window.evidence["unseen_turns"] == 7
    assert window.evidence["verdict_hint"] == "chat_state"
    assert out.findings[1].evidence["words"][0] == {
        "text": "the second cluster",
        "start": 33,
        "end": 51,
        "class": "ordinal_or_definite",
    }


def test_case6_six_user_turns_no_assistant(rules):
    msgs = [
        ("user", f"Question {n} about growing tomatoes?")
        for n in ("one", "two", "three", "four", "five", "six")
    ]
    out = run(make_record(msgs, "How do tomatoes grow?", "How do tomatoes grow?", turn=7), rules)
    assert summary(out) == [("missing_assistant_turns", "medium", ())]
    assert out.findings[0].evidence["missing"] == 6


def test_case7_why_not_unchanged_is_unresolved(rules):
    msgs = [
        ("user", "Does Dublin support cross-region read replicas?"),
        ("assistant", "No, Dublin does not support cross-region read replicas."),
    ]
    out = run(make_record(msgs, "Why not?", "Why not?", turn=2), rules)
    # the ellipsis is unresolved, and the topic the first turn set (Dublin, the replicas) is dropped with it
    assert summary(out) == [
        ("unresolved_reference", "high", ("Why not?",)),
        ("dropped_qualifier", "medium", ("Dublin", "cross-region read replicas")),
    ]


def test_case7_why_not_restated_as_proposition_is_clean(rules):
    msgs = [
        ("user", "Does Dublin support cross-region read replicas?"),
        ("assistant", "No, Dublin does not support cross-region read replicas."),
    ]
    rec = make_record(
        msgs, "Why not?", "Why does the Dublin region not support cross-region read replicas?", turn=2
    )
    assert summary(run(rec, rules)) == []


def test_case8_lemmas_and_case(rules):
    msgs = [("user", "Which regions supports rotating Keys?"), ("assistant", "All of them.")]
    rec = make_record(msgs, "What about every region?", "Does every region support a rotating key?", turn=2)
    assert summary(run(rec, rules)) == []
