"""unresolved_reference, antecedent_not_in_input, not_a_query."""

from __future__ import annotations

from monitor.checks import run_checks
from monitor.record import Resolution
from tests.factories import make_record

EU = [
    ("user", "Which EU regions support customer-managed keys?"),
    ("assistant", "Frankfurt and Dublin both do."),
]


def found(rec, rules, check_id):
    out = run_checks(rec, rules, only=[check_id])
    return [(f.severity, tuple(f.words)) for f in out.findings], out


def test_pronoun_kept_without_substitution_is_medium(rules):
    rec = make_record(EU, "Is it cheaper?", "Is it cheaper or not?")
    assert found(rec, rules, "unresolved_reference")[0] == [("medium", ("it",))]


def test_pronoun_kept_next_to_a_substituted_name_is_resolved(rules):
    rec = make_record(
        EU, "Is it cheaper than its neighbour?", "Is Dublin cheaper than its neighbour Frankfurt?"
    )
    assert found(rec, rules, "unresolved_reference")[0] == []


def test_bare_definite_one_kept(rules):
    rec = make_record(EU, "What about the enterprise one?", "What is the price of the enterprise one?")
    assert found(rec, rules, "unresolved_reference")[0] == [("high", ("the enterprise one",))]


def test_elliptical_and_for_staging(rules):
    rec = make_record(EU, "and for staging?", "And for staging?")
    assert found(rec, rules, "unresolved_reference")[0] == [("high", ("And for staging?",))]


def test_antecedent_in_named_turn_passes(rules):
    rec = make_record(EU, "The second one?", "Dublin?", resolved=(Resolution("the second one", "Dublin", 2),))
    got, out = found(rec, rules, "antecedent_not_in_input")
    assert got == [] and out.statuses[0].status == "ran"


def test_antecedent_absent_everywhere_is_high(rules):
    rec = make_record(
        EU, "The second one?", "What about Paris?", resolved=(Resolution("the second one", "Paris", 2),)
    )
    got, out = found(rec, rules, "antecedent_not_in_input")
    assert got == [("high", ("Paris",))]
    assert (
        out.findings[0].reason
        == "antecedent 'Paris' of 'the second one' is in no message the rewriter received"
    )


def test_antecedent_in_another_turn_is_medium(rules):
    rec = make_record(EU, "The second one?", "Dublin?", resolved=(Resolution("the second one", "Dublin", 1),))
    got, out = found(rec, rules, "antecedent_not_in_input")
    assert got == [("medium", ("Dublin",))]
    assert out.findings[0].evidence["found_in"] == [{"message_index": 1, "start": 14, "end": 20}]


def test_not_a_query_variants(rules):
    def nq(query, latest="When did he win?"):
        out = run_checks(make_record(EU, latest, query), rules, only=["not_a_query"])
        return [(f.severity, f.evidence["signals"]) for f in out.findings]

    assert nq("") == [("high", ["empty query"])]
    assert nq("Sure! Here is the rewritten query: when did Dublin win?") == [
        ("high", ["meta text or chatter ('Sure')"])
    ]
    assert (
        nq("There is no information in the context about Hall, so it cannot be decontextualized.")[0][0]
        == "high"
    )
    assert nq("Dublin won in 2004. It was the first region to win the award.") == [
        ("medium", ["2 sentences"])
    ]
    # the user's own two sentences kept as two is a two-part query; a third sentence is the rewriter's
    two_part = "What is the origin of funny cars? Why do they call them that?"
    assert nq("What is the origin of funny cars? Why do people call them that?", two_part) == []
    assert nq(two_part + " They were first raced in 1964.", two_part) == [("medium", ["3 sentences"])]
    # "What?" (under three words) is no sentence of its own: one sentence asked, two written
    assert nq("You said it is free. Could you clarify the deposit?", "what? you said it is free!") == [
        ("medium", ["2 sentences"])
    ]
    assert nq("Dublin won the regional availability award in 2004 for its uptime.") == [
        ("medium", ["a declarative sentence where the user asked a question"])
    ]
    assert nq("When did Dublin win the availability award?") == []
    # a question to the assistant about its own words; the user's own such question kept is no signal
    assert nq(
        "Can you clarify what you mean by 'weak understanding metrics'?", "weak understanding metrics"
    ) == [("medium", ["a question to the assistant about its own words ('what you mean')"])]
    assert nq("What did you mean by the second one?", "What did you mean by the second one?") == []


def test_a_message_that_asks_nothing(rules):
    """Thanks, greetings and farewells ask nothing (Biber et al. 1999, 14.3 inserts): a query with words
    they lack is not_a_query, medium; a lone acceptance ("ok") may accept an offer, so it is no closing."""
    from monitor.checks.references import is_closing

    assert [is_closing(t) for t in ("ok bye", "Thanks!", "great, thank you so much", "hi")] == [True] * 4
    assert [
        is_closing(t) for t in ("ok", "Okay.", "ok, what about Dublin?", "That is later than I thought")
    ] == [False] * 4

    def nq(latest, query):
        out = run_checks(make_record(EU, latest, query), rules, only=["not_a_query"])
        return [(f.severity, f.evidence["signals"]) for f in out.findings]

    assert nq("ok bye", "User farewell or conversation ending acknowledgment") == [
        ("medium", ["the user's message asks nothing (thanks, a greeting or a farewell)"])
    ]
    assert nq("ok bye", "ok bye") == []  # passed through: nothing added
    assert nq("ok", "What does the Dublin region cost?") == []


def test_what_is_no_reference_is_not_unresolved(rules):
    """The acronym "IT", an anticipatory "it" (Quirk et al. 18.33), "that" after an adjective, a time
    adverbial counted back from now and "the same" compared "as" something are no references."""
    for latest, query in [
        ("Is Cohasset a legal or IT consulting firm?", "Is Cohasset a legal or IT consulting firm?"),
        # v6: "the same as X" compares with X; the "it" the query replaced was the reference
        ("Is it the same as esophageal cancer?", "Is throat cancer the same as esophageal cancer?"),
        ("Speaking about sea level, is it true that it is rising?", "Is it true that sea level is rising?"),
        (
            "Who performed in the last couple years?",
            "Who performed at the Super Bowl in the last couple of years?",
        ),
    ]:
        assert found(make_record(EU, latest, query), rules, "unresolved_reference")[0] == [], latest


def test_a_reference_the_query_resolves_itself(rules):
    cases = [
        ("Who was the last Emperor?", "Who was the last Emperor of the Byzantine Empire?"),
        ("Are Frankfurt and Dublin the same thing?", "Are Frankfurt and Dublin the same thing?"),
        ("Is that the same?", "Is a FICO score the same as the credit score on Credit Karma?"),
        ("How to become an agent and does it pay?", "How to become an agent and does it pay?"),
        # v6: a postmodifier after the ordinal's head completes it: a prepositional phrase, a
        # to-infinitive, a participle
        ("Who wrote the first", "Who wrote the first episode of the 4th season of The 100?"),
        ("Who is the first fighter", "Who was the first fighter to hold the UFC record?"),
        ("What was the first", "What was the first colony established by the Kingdom of England?"),
    ]
    for latest, query in cases:
        assert found(make_record(EU, latest, query), rules, "unresolved_reference")[0] == [], latest
    # an "of" phrase that names nothing new resolves nothing; nor does a noun in the same clause
    rec = make_record(
        EU, "You missed the second type of key, what was it?", "What was the second type of key you missed?"
    )
    assert found(rec, rules, "unresolved_reference")[0] == [("high", ("the second type",))]
    # a head and a postmodifier that name nothing the latest message did not: still unresolved
    rec = make_record(EU, "What was the first key for?", "What was the first key for?")
    assert found(rec, rules, "unresolved_reference")[0] == [("high", ("the first key",))]
    rec = make_record(EU, "Which was the first?", "Which was the first key in the list?")
    assert found(rec, rules, "unresolved_reference")[0] == [("high", ("the first",))]
    rec = make_record(EU, "What is the price of it?", "What is the price of it?")
    assert found(rec, rules, "unresolved_reference")[0] == [("high", ("it",))]


def test_a_follow_up_only_the_conversation_completes_is_unresolved_when_unchanged(rules):
    """A continuer ("Advise", "Tell me more", "Examples?"), a correction ("No, I meant the Lotus.") or a
    fragment repeating an earlier word ("Dublin keys") passed through unchanged is medium (class fragment,
    its form in the evidence). A fragment none of whose words the conversation holds is a new topic
    ("Bitcoin price"); a question, a closing, a first turn or a rewritten fragment is not judged here."""
    (f,) = run_checks(make_record(EU, "Advise", "Advise"), rules, only=["unresolved_reference"]).findings
    assert (f.severity, f.evidence["words"]) == (
        "medium",
        [{"text": "Advise", "start": 0, "end": 6, "class": "fragment", "form": "continuation"}],
    )
    assert f.reason == (
        "the follow-up 'Advise' is the query unchanged: only the conversation says what it goes on about"
    )
    rec = make_record(EU, "Dublin keys", "Dublin keys")
    (f,) = run_checks(rec, rules, only=["unresolved_reference"]).findings
    assert f.evidence["words"][0]["form"] == "fragment"
    assert f.reason == (
        "the follow-up 'Dublin keys' is the query unchanged: only the conversation says what it asks "
        "(it repeats 'Dublin', 'keys' from an earlier turn)"
    )
    for latest in ("Tell me more", "Examples?", "Can you explain further?", "How?", "Go on please"):
        assert found(make_record(EU, latest, latest), rules, "unresolved_reference")[0] == [
            ("medium", (latest,))
        ], latest
    got = found(
        make_record(EU, "No, I meant the Lotus.", "No, I meant the Lotus."), rules, "unresolved_reference"
    )
    assert got[0] == [("medium", ("No, I meant the Lotus.",))]
    for latest in (
        "Bitcoin price",
        "Albert Einstein",
        "Define photosynthesis",
        "Nevermind",
        "Good decisions?",
        "ok bye",
        "Tell me about Dublin.",
        "Cheaper keys in Dublin region",
    ):
        assert found(make_record(EU, latest, latest), rules, "unresolved_reference")[0] == [], latest
    assert found(make_record([], "Advise", "Advise"), rules, "unresolved_reference")[0] == []
    rec = make_record(EU, "Advise", "Which EU region should I pick for customer-managed keys?")
    assert found(rec, rules, "unresolved_reference")[0] == []
