"""The conversation state and the checks over it: an elliptical follow-up keeps the measure asked before it
(frame_not_carried), and a follow-up that depends on the conversation keeps its topic (topic_not_carried)."""

from __future__ import annotations

import pytest

from monitor.checks import run_checks
from monitor.checks.scope import counted_noun
from monitor.checks.state import asked_attribute, frame_of, terms_of, topic_turn
from tests.factories import make_record

GARAGE = [
    ("user", "How much does it cost to repair a garage door opener?"),
    ("assistant", "A repair usually runs between $100 and $300, depending on the part."),
]


def found(history, latest, query, rules):  # type: ignore[no-untyped-def]
    out = run_checks(make_record(history, latest, query), rules, only=["frame_not_carried"])
    return [(f.kind, f.severity, f.step, f.words, f.reason) for f in out.findings], out.statuses[0]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("How much does a used Lamborghini cost?", "cost"),  # "how much" with a price word
        ("How much water should I drink?", "amount"),
        ("What does it cost to ship a parcel?", "cost"),  # the price verb
        ("Do we pay the First Lady?", ""),  # "pay" asks how or whether, not how much
        ("No matter how much I water it, my basil wilts. Why?", ""),  # a concessive "how much"
        ("How long does it take to heal?", "duration"),
        ("how many skills can I create?", "number"),
        ("What is the size of the area?", "size"),  # an attribute noun (WordNet noun.attribute)
        ("What are ways to cook them?", ""),  # "ways" is no attribute
        ("Who wrote Hamlet?", ""),
    ],
)
def test_the_measure_a_question_asks(question: str, asked: str) -> None:
    assert asked_attribute(question) == asked
    assert frame_of(question, 2).asked == asked
    assert frame_of(question, 2).message_index == 2


def test_the_counted_noun_is_the_last_word_of_the_run_after_how_many() -> None:
    assert counted_noun("How many film adaptations of Hamlet are there?") == "adaptation"
    assert counted_noun("how many skills can I create?") == "skill"
    assert counted_noun("What is the size of the area?") == ""


def test_replacing_it_instead_loses_the_cost_the_previous_question_asked(rules) -> None:  # type: ignore[no-untyped-def]
    got, status = found(
        GARAGE, "How about replacing it instead?", "How about replacing garage door opener instead?", rules
    )
    assert status.status == "ran"
    assert got == [
        (
            "dropped_qualifier",
            "medium",
            "asked_measure_lost",
            ["cost"],
            "live since message 0: 'cost' (asked by 'How much does it cost to repair a garage door "
            "opener?'); the follow-up 'How about replacing it instead?' keeps that question, but the query "
            "does not ask for the cost",
        )
    ]


@pytest.mark.parametrize(
    "query",
    [
        "How much does it cost to replace a garage door opener?",  # the degree phrase
        "What is the price of replacing a garage door opener?",  # a price word
        "Garage door opener replacement cost",  # the attribute noun
    ],
)
def test_a_query_that_still_asks_the_measure(rules, query: str) -> None:  # type: ignore[no-untyped-def]
    assert found(GARAGE, "How about replacing it instead?", query, rules)[0] == []


def test_a_substitute_that_is_itself_an_attribute_replaces_what_was_asked(rules) -> None:  # type: ignore[no-untyped-def]
    history = [("user", "what is the size of the area"), ("assistant", "About 1,800 square kilometres.")]
    got, status = found(
        history, "what about the region's topography", "What is the region's topography?", rules
    )
    assert (got, status.status) == ([], "ran")


def test_a_count_question_is_carried_by_its_counted_noun(rules) -> None:  # type: ignore[no-untyped-def]
    history = [("user", "How many film adaptations of Hamlet are there?"), ("assistant", "Over fifty.")]
    latest = "What about Romeo and Juliet?"
    assert found(history, latest, "Tell me about the film adaptations of Romeo and Juliet", rules)[0] == []
    got, _ = found(history, latest, "What about Romeo and Juliet?", rules)
    assert [(w, s) for _, _, s, w, _ in got] == [(["number"], "asked_measure_lost")]


def test_skips_say_why(rules) -> None:  # type: ignore[no-untyped-def]
    assert found(GARAGE, "Is it safe to do myself?", "Is repairing a garage door opener safe?", rules)[
        1
    ].reason == ("the latest message substitutes nothing of an earlier question")
    who = [("user", "Who makes garage door openers?"), ("assistant", "Chamberlain and Genie.")]
    assert found(who, "What about Genie?", "Who is Genie?", rules)[1].reason == (
        "the previous user turn asked for no measure"
    )
    assert (
        found(None, "What about Genie?", "Who is Genie?", rules)[1].reason
        == "no ctx_input logged for this request"
    )


# -- the topic ------------------------------------------------------------------------------------------
GMO = [
    ("user", "I would like to learn about GMO Food labeling."),
    ("assistant", "Labels tell buyers whether a food contains genetically modified ingredients."),
    ("user", "What are the EU rules?"),
    ("assistant", "The EU asks for a label above 0.9% GMO content."),
]


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("I would like to learn about GMO Food labeling.", ["GMO Food"]),  # a name; "like" is no term
        ("Tell me more about traceability tools.", ["traceability tools"]),  # an imperative verb is no term
        (
            "Do shoulder braces help recover from an injury?",
            ["shoulder braces", "injury"],
        ),  # verb after subject
        ("How does the relationship influence biodiversity?", ["relationship", "biodiversity"]),
        (
            "How do you know when your garage door opener is going bad?",
            ["garage door opener"],
        ),  # no adjective
        (
            "Can I have some information on the labor systems of the Ottoman Empire?",
            ["information", "labor systems", "Ottoman Empire"],  # in text order
        ),
        ("Tell me about the x-ray machine, the T-shirt and wi-fi.", ["x-ray machine", "T-shirt", "wi-fi"]),
        ("Compare the Roman army and the Roman navy.", ["Roman army", "Roman navy"]),  # not "Roman" alone
    ],
)
def test_the_terms_of_a_user_turn(text: str, terms: list[str]) -> None:
    assert [t.text for t in terms_of(text)] == terms


def test_the_topic_turn_is_the_first_user_turn_or_the_last_that_announced_a_new_topic() -> None:
    roles = ["user", "assistant", "user", "assistant", "user"]
    greeting = ["Hello, I need some help please.", "Sure.", "Why do brake pads squeak?", "Wear.", "Fix?"]
    assert topic_turn(roles, greeting) == 2  # a turn that only opens the conversation sets no topic
    texts = [
        "What is GDPR?",
        "A regulation.",
        "By the way, what is a secret?",
        "A value.",
        "How is it stored?",
    ]
    assert topic_turn(roles, texts) == 2
    assert (
        topic_turn(roles, ["What is GDPR?", "A regulation.", "Who enforces it?", "Regulators.", "Why?"]) == 0
    )
    assert topic_turn(["assistant"], ["Hello, how can I help?"]) is None


def topic(history, latest, query, rules):  # type: ignore[no-untyped-def]
    out = run_checks(make_record(history, latest, query), rules, only=["topic_not_carried"])
    return [(f.kind, f.severity, f.step, f.words, f.reason) for f in out.findings], out.statuses[0]


def test_a_continuer_passed_through_without_the_topic(rules) -> None:  # type: ignore[no-untyped-def]
    latest = "Tell me more about traceability tools."
    got, status = topic(GMO, latest, latest, rules)
    assert status.status == "ran"
    assert got == [
        (
            "dropped_qualifier",
            "medium",
            "topic_dropped",
            ["GMO Food"],
            "live since message 0: 'GMO Food' (the topic the user set); the follow-up 'Tell me more about "
            "traceability tools.' (continuer) depends on it, but the query carries none of it",
        )
    ]
    # the query that carries the topic, or any word of the conversation, is left to the other checks
    assert topic(GMO, latest, "Tell me more about traceability tools for GMO food labeling.", rules)[0] == []
    assert topic(GMO, latest, "Tell me more about traceability tools under the EU rules.", rules)[0] == []


def test_an_ellipsis_and_a_fragment_without_the_topic_named_in_the_first_turn(rules) -> None:  # type: ignore[no-untyped-def]
    history = [
        ("user", "Is Red Hat Virtualization the same as Red Hat OpenShift virtualization?"),
        ("assistant", "No: Red Hat OpenShift runs virtual machines beside containers."),
        ("user", "Do I need scripts?"),
        ("assistant", "No scripts are needed."),
    ]
    got, _ = topic(history, "What about installation?", "What about installation?", rules)
    assert [(how, words) for _, _, how, words, _ in got] == [
        ("topic_dropped", ["Red Hat Virtualization", "Red Hat OpenShift"])
    ]
    # a follow-up that names its own topic ("Red Hat OpenShift" again, or another name) stands alone
    own = "What about installation of Red Hat OpenShift?"
    assert topic(history, own, own, rules)[0] == []
    assert topic(history, "What about Ansible?", "What about Ansible?", rules)[0] == []


def test_a_full_question_is_not_judged(rules) -> None:  # type: ignore[no-untyped-def]
    latest = "What is the role of Co-Extra?"
    assert topic(GMO, latest, latest, rules)[1].reason == (
        "the latest message does not depend on the conversation by its form"
    )


@pytest.mark.parametrize(
    ("question", "latest", "query"),
    [
        (
            "Should I pay with a credit card?",
            "Can I use PayPal instead?",
            "Can I use PayPal instead of a card?",
        ),
        (
            "How long does it take to boil an egg?",
            "Can I use a microwave instead?",
            "Can I boil an egg in a microwave?",
        ),
        (
            "How long does a broken wrist take to heal?",
            "What about an ankle?",
            "How many weeks does an ankle take?",
        ),
        ("How many people live in Paris?", "What about Berlin?", "What is the population of Berlin?"),
        ("How big is Texas?", "What about Alaska?", "What is the area of Alaska in square miles?"),
        ("How far is the Moon from Earth?", "What about Mars?", "How many kilometres is Mars from Earth?"),
        (
            "How much does a Tesla Model 3 cost?",
            "What about the Model Y?",
            "What is the MSRP of the Model Y?",
        ),
        ("What is the price of a Tesla Model 3?", "What about its safety rating?", "Model 3 safety rating"),
    ],
)
def test_a_follow_up_that_asks_its_own_thing_or_a_query_that_asks_the_measure_otherwise(  # type: ignore[no-untyped-def]
    rules, question: str, latest: str, query: str
) -> None:
    """From a newcomer's read: a "pay" question, an "instead" inside a full question, a measure asked in
    its units or its noun, and a possessed substitute ("its safety rating") are no lost measure."""
    assert found([("user", question), ("assistant", "An answer.")], latest, query, rules)[0] == []
