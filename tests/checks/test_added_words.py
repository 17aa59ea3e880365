"""added_content_word: support, alias units, spans, and each grading signal with its evidence."""

from __future__ import annotations

import pytest

from monitor.checks import run_checks
from monitor.checks.added_words import check
from tests.factories import make_record

HISTORY = [
    ("user", "Tell me about the Peters family of Broadway performers."),
    (
        "assistant",
        "Peters starred in musicals and was involved with Broadway Barks. "
        "Winter depression (SAD) affected her work in the 1990s.",
    ),
]


def words(rec, rules):
    return [(w["text"], w["severity"], w["signal"]) for f in check(rec, rules) for w in f.evidence["words"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "What role did Bernadette Peters play?",
            [
                ("role", "low", "framing"),
                ("Bernadette", "medium", "name_completion"),
                ("play", "low", "framing"),
            ],
        ),
        (
            "Did Peters win a Tony in 2003?",
            [
                ("win", "medium", "content_word"),
                ("Tony", "high", "proper_name"),
                ("2003", "high", "qualifier_value"),
            ],
        ),
        # not on a list any more (neutral.yaml v2): low as a derivation of the logged "involved"
        ("What was her involvement with Broadway Barks?", [("involvement", "low", "derivation")]),
        (
            "Was her appearance at Broadway Barks popular?",
            [("appearance", "low", "abstract_noun"), ("popular", "low", "framing")],
        ),
        (
            "How did seasonal affective disorder affect her?",
            [("seasonal", "low", "acronym"), ("affective", "low", "acronym"), ("disorder", "low", "acronym")],
        ),
        ("What is Peters' birthplace?", [("birthplace", "medium", "content_word")]),
        ("Did Peters have a stroke?", [("stroke", "high", "rare_term")]),
        (
            "Did Peters perform later in Vienna?",
            [
                ("perform", "low", "framing"),
                ("later", "high", "qualifier_value"),
                ("Vienna", "high", "qualifier_value"),
            ],
        ),
        ("What notable information is there?", [("notable", "low", "framing")]),
        ("Was Peters depressive?", [("depressive", "low", "derivation")]),
    ],
)
def test_grading_signals(rules, query, expected):
    rec = make_record(HISTORY, "What else?", query)
    assert words(rec, rules) == expected


def test_derivation_evidence_names_the_related_word(rules):
    rec = make_record(HISTORY, "What else?", "Was Peters depressive?")
    got = [w for f in check(rec, rules) for w in f.evidence["words"]]
    assert [
        (w["text"], w["signal"], w["related"], w["related_at"]) for w in got if w["signal"] == "derivation"
    ] == [("depressive", "derivation", "depression", {"message_index": 1})]


def test_adjacent_unsupported_words_form_one_span(rules):
    rec = make_record(HISTORY, "What else?", "Did Peters tour Norwegian fjord towns, Swedish ones too?")
    spans = [(f.evidence["span"]["text"], f.severity) for f in check(rec, rules)]
    assert spans == [("tour Norwegian fjord towns", "high"), ("Swedish", "high")]


def test_meta_text_words_are_low(rules):
    rec = make_record(
        HISTORY, "Did Hall win?", "There is no clear referent for Hall in the context provided."
    )
    assert {f.severity for f in check(rec, rules)} == {"low"}


def test_typo_of_function_word_is_low(rules):
    rec = make_record(HISTORY, "Why?", "Why did't Peters sing?")
    assert words(rec, rules) == [("did't", "low", "typo"), ("sing", "medium", "content_word")]


def test_neutral_words_are_never_reported(rules):
    rec = make_record(HISTORY, "More?", "Can you provide details and information about Peters?")
    assert check(rec, rules) == []


def test_latest_message_supports_words(rules):
    rec = make_record(HISTORY, "What about her Tony award?", "Was Peters given a Tony award?")
    assert check(rec, rules) == []


def test_reason_names_the_word_and_why(rules):
    rec = make_record(HISTORY, "What else?", "Did Peters have a stroke?")
    (f,) = check(rec, rules)
    assert f.reason == "'stroke' (rare term (zipf 4.27 < 4.4)): in no received turn and no alias group"
    assert f.evidence["words"][0]["zipf"] == 4.27
    assert f.evidence["span"] == {"text": "stroke", "start": 18, "end": 24}


def test_skipped_without_messages(rules):
    rec = make_record(None, "Why?", "Why is the sky blue?")
    out = run_checks(rec, rules, only=["added_content_word"])
    assert [(s.status, s.reason) for s in out.statuses] == [
        ("skipped", "no ctx_input logged for this request")
    ]
