"""The verdict form's prefill (``monitor.review.evidence``), per label, on the canonical cases: the same
terms on the dashboard and in the terminal, nothing for a fine rewrite, no untouched query stored."""

from __future__ import annotations

from monitor.checks import run_checks
from monitor.review.evidence import Prefill, corrected_query, prefill
from monitor.verdicts import LABELS
from tests.factories import make_record

PLANE = [
    ("user", "Which commercial plane is the biggest?"),
    ("assistant", "The Airbus A380 is the largest passenger plane."),
]
EU = [
    ("user", "Which EU regions support customer-managed keys?"),
    ("assistant", "Frankfurt and Dublin both do."),
]
PLAN = [("user", "We run the enterprise plan in staging."), ("assistant", "Noted.")]


def findings(history, latest, query, rules):  # type: ignore[no-untyped-def]
    return run_checks(make_record(history, latest, query), rules).findings


def test_an_invented_name_is_a_must_not_for_a_fabrication_and_nothing_for_a_fine_verdict(rules) -> None:  # type: ignore[no-untyped-def]
    """The README's Boeing example: an `ok` (or false-alarm) verdict exports no assertion on the flagged
    words, where before it kept must-not-include ["Boeing", "737"] and the logged query as expected."""
    got = findings(
        PLANE,
        "How does its fuel consumption compare?",
        "How does the Boeing 737 fuel consumption compare?",
        rules,
    )
    assert prefill("fabricated_constraint", got) == Prefill((), ("Boeing", "737"))
    for label in ("ok", "false_alarm_synonym", None):
        assert prefill(label, got) == Prefill()
    # a label no finding speaks to starts empty too
    assert prefill("unresolved_reference", got) == prefill("window_truncated", got) == Prefill()


def test_a_wrong_list_reference_prefills_the_item_pointed_at_and_the_one_named(rules) -> None:  # type: ignore[no-untyped-def]
    got = findings(EU, "What's the SLA on the second one?", "What is the SLA for Frankfurt?", rules)
    assert prefill("wrong_antecedent", got) == Prefill(("Dublin",), ("Frankfurt",))
    assert prefill("fabricated_constraint", got) == Prefill()  # no word was added


def test_a_swapped_name_and_an_ignored_correction_prefill_what_the_user_meant(rules) -> None:  # type: ignore[no-untyped-def]
    mars = [("user", "Who is Bruno Mars?"), ("assistant", "Bruno Mars is a singer.")]
    got = findings(mars, "Did Mario Mars play at the Bowery?", "Did Bruno Mars play at the Bowery?", rules)
    assert prefill("wrong_antecedent", got) == Prefill(("Mario Mars",), ("Bruno Mars",))
    quit_ = [("user", "What helps after quitting smoking?"), ("assistant", "Exercise helps.")]
    latest = "No, I meant drinking alcohol. What rehab options are there?"
    got = findings(quit_, latest, "What rehab options are there after quitting smoking?", rules)
    assert prefill("wrong_antecedent", got) == Prefill(("drinking alcohol",), ())


def test_a_dropped_qualifier_is_a_must_include_for_a_drop_only(rules) -> None:  # type: ignore[no-untyped-def]
    got = findings(PLAN, "What is the rate limit?", "What is the rate limit in staging?", rules)
    assert prefill("dropped_constraint", got) == prefill("over_carried", got) == Prefill(("enterprise",), ())
    assert prefill("fabricated_constraint", got) == Prefill()


def test_every_label_has_a_prefill_and_low_findings_suggest_nothing(rules) -> None:  # type: ignore[no-untyped-def]
    got = findings(
        PLANE,
        "How does its fuel consumption compare?",
        "How does the Boeing 737 fuel consumption compare?",
        rules,
    )
    assert all(isinstance(prefill(label, got), Prefill) for label in LABELS)
    low = [f for f in got if f.severity == "low"]
    assert all(prefill(label, low) == Prefill() for label in LABELS)


def test_an_untouched_corrected_query_is_no_correction() -> None:
    logged = "What is the uptime SLA for Dublin?"
    assert corrected_query(logged, logged) is None
    assert corrected_query("  What is the uptime  SLA for Dublin? ", logged) is None  # spaces only
    assert corrected_query("", logged) is None and corrected_query(None, logged) is None
    assert (
        corrected_query(" What is the uptime SLA for Frankfurt? ", logged)
        == "What is the uptime SLA for Frankfurt?"
    )


def test_the_live_topic_and_measure_a_follow_up_lost_are_must_includes(rules) -> None:  # type: ignore[no-untyped-def]
    """Issue 32: the conversation-state checks name the live item, and the prefill takes it."""
    gmo = [("user", "I would like to learn about GMO Food labeling."), ("assistant", "Labels are required.")]
    latest = "Tell me more about traceability tools."
    assert prefill("dropped_constraint", findings(gmo, latest, latest, rules)) == Prefill(("GMO Food",), ())
    garage = [("user", "How much does it cost to repair a garage door opener?"), ("assistant", "About $200.")]
    got = findings(
        garage, "How about replacing it instead?", "How about replacing a garage door opener?", rules
    )
    assert prefill("dropped_constraint", got) == Prefill(("cost",), ())
