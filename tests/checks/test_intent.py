"""intent_dropped: the latest message's intent words must survive."""

from __future__ import annotations

from monitor.checks.intent import check
from tests.factories import make_record

MSGS = [("user", "Tell me about the Dublin region."), ("assistant", "It is in Ireland.")]


def test_kept_by_lemma_alias_and_derivation(rules):
    rec = make_record(
        MSGS,
        "What's the uptime SLA on the second one? How long is the retention?",
        "What is the service level agreement uptime and retention duration for Dublin?",
    )
    assert check(rec, rules) == []


def test_changed_question_is_high_with_spans_in_latest(rules):
    rec = make_record(MSGS, "What is its uptime SLA?", "Where is the Dublin region located?")
    (f,) = check(rec, rules)
    assert f.severity == "high"
    assert [(w["text"], w["start"], w["end"]) for w in f.evidence["missing"]] == [
        ("uptime", 12, 18),
        ("SLA", 19, 22),
    ]
    assert f.reason == "the query lacks 2 of the 2 words the user asked with: 'uptime', 'SLA'"


def test_one_missing_of_many_is_medium(rules):
    rec = make_record(MSGS, "What is the monthly uptime SLA?", "What is the uptime SLA of Dublin?")
    (f,) = check(rec, rules)
    assert (f.severity, f.evidence["n_intent_words"], f.evidence["n_missing"]) == ("medium", 3, 1)
    assert f.reason == "the query lacks 1 of the 3 words the user asked with: 'monthly'"


def test_fillers_and_ordinals_are_not_intent(rules):
    rec = make_record(MSGS, "Okay, thanks. And the second one?", "What about Frankfurt?")
    assert check(rec, rules) == []
