"""The verdict form's prefill (``monitor.review.evidence``), per label, on the canonical cases: the same
terms on the dashboard and in the terminal, nothing for a fine rewrite, no untouched query stored."""

from __future__ import annotations

import pytest

from monitor.checks import run_checks
from monitor.review.evidence import (
    Prefill,
    TermChoice,
    accepted_numbers,
    choose_terms,
    corrected_query,
    prefill,
    suggestions,
)
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


def test_suggestions_are_listed_must_first_and_only_accepted_ones_are_stored() -> None:
    """Issue 35, part 4: a suggestion becomes a term only when accepted; typed terms are kept apart."""
    pre = Prefill(("Dublin",), ("enterprise", "plan"))
    offered = suggestions(pre)
    assert [str(s) for s in offered] == ["must: Dublin", "must not: enterprise", "must not: plan"]
    # nothing accepted, nothing typed: nothing to assert
    assert choose_terms([]) == TermChoice()
    assert (choose_terms([]).must_include, choose_terms([]).must_not_include) == ([], [])
    # "plan" accepted; "dublin" typed (differs from the suggestion only in case: not accepted, so typed)
    # and "SLA" typed; " enterprise " typed twice as must-not
    got = choose_terms([offered[2]], ["dublin", "SLA"], [" enterprise ", "Enterprise"])
    assert got == TermChoice((), ("plan",), ("dublin", "SLA"), ("enterprise",))
    assert (got.must_include, got.must_not_include) == (["dublin", "SLA"], ["plan", "enterprise"])
    assert got.accepted() == {"must_include": [], "must_not_include": ["plan"]}
    # a typed term equal to an accepted one (ignoring case) is kept once, as accepted
    got = choose_terms([offered[2], offered[0], offered[2]], ["DUBLIN"], ["Plan", "CMK"])
    assert got == TermChoice(("Dublin",), ("plan",), (), ("CMK",))
    assert got.must_not_include == ["plan", "CMK"]
    # accepted in the order clicked (plan, then enterprise), stored in the order offered
    clicked = [offered[2], offered[1]]
    assert choose_terms(clicked).accepted_exclude == ("plan", "enterprise")
    assert choose_terms(clicked, offered=offered).accepted_exclude == ("enterprise", "plan")


def test_a_terminal_answer_accepts_all_some_or_none_of_the_numbered_suggestions() -> None:
    assert accepted_numbers("a", 3) == accepted_numbers(" ALL ", 3) == (0, 1, 2)
    assert accepted_numbers("", 3) == ()
    assert accepted_numbers("3, 1 3", 3) == (0, 2)
    with pytest.raises(ValueError, match=r"not a suggestion's number \(1 to 2, or a for all\): 0, 3, x"):
        accepted_numbers("0 1 3 x", 2)
    with pytest.raises(ValueError, match="a for all"):
        accepted_numbers("a 1", 2)  # "a" only alone
    with pytest.raises(ValueError, match=r"\): ²"):
        accepted_numbers("²", 2)  # a digit to str.isdigit, not a number to int()
