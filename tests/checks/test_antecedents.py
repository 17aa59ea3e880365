"""list_reference: the seeds' canonical wrong-antecedent cases, with the exact findings."""

from __future__ import annotations

import pytest

from monitor.checks import run_checks
from monitor.checks.antecedents.list_reference import enumerations
from tests.factories import make_record

EU = [
    ("user", "Which EU regions support customer-managed keys?"),
    ("assistant", "Frankfurt and Dublin both do."),
]
PLANS = [
    ("user", "What plans are there?"),
    (
        "assistant",
        "There are three plans:\n1. Basic: 10 GB\n2. Pro: 100 GB\n3. Enterprise: unlimited storage",
    ),
]


def found(history, latest, query, rules):  # type: ignore[no-untyped-def]
    out = run_checks(make_record(history, latest, query), rules, only=["list_reference"])
    for f in out.findings:
        assert f.words == [f.evidence["named"]]  # the item the query named, as a reviewer sees it
    return [(f.severity, f.reason) for f in out.findings], out.statuses[0]


def test_the_second_one_of_frankfurt_and_dublin(rules) -> None:  # type: ignore[no-untyped-def]
    assert found(EU, "What's the SLA on the second one?", "What is the SLA for Dublin?", rules)[0] == []
    got, _ = found(EU, "What's the SLA on the second one?", "What is the SLA for Frankfurt?", rules)
    assert got == [
        (
            "high",
            "'the second one' points at 'Dublin' in the list of message 1 (Frankfurt, Dublin), but the "
            "query names 'Frankfurt'",
        )
    ]


def test_the_enterprise_one_against_a_plan_list(rules) -> None:  # type: ignore[no-untyped-def]
    assert enumerations(PLANS[1][1]) == [(("Basic", "Pro", "Enterprise"), "There are three plans:\n")]
    assert found(PLANS, "How much is the enterprise one?", "How much is the Enterprise plan?", rules)[0] == []
    got, _ = found(PLANS, "How much is the enterprise one?", "How much is the Pro plan?", rules)
    assert got == [
        (
            "high",
            "'the enterprise one' points at 'Enterprise' in the list of message 1 (Basic, Pro, Enterprise), "
            "but the query names 'Pro'",
        )
    ]


def test_why_not_after_a_negative_statement_is_no_list_reference(rules) -> None:  # type: ignore[no-untyped-def]
    """A proposition antecedent ("it is not cheaper"), restated in the rewrite: nothing to report."""
    history = [("user", "Is Dublin cheaper?"), ("assistant", "No, it is not cheaper than Frankfurt.")]
    got, status = found(history, "Why not?", "Why is Dublin not cheaper than Frankfurt?", rules)
    assert got == [] and (status.status, status.reason) == (
        "skipped",
        "no list reference in the latest message",
    )


def test_an_item_of_an_earlier_list_while_the_user_points_at_the_later_one(rules) -> None:  # type: ignore[no-untyped-def]
    history = [*EU, ("user", "And in the US?"), ("assistant", "Virginia and Oregon.")]
    assert found(history, "What about the second one?", "What is the uptime in Oregon?", rules)[0] == []
    got, _ = found(history, "What about the second one?", "What is the uptime in Dublin?", rules)
    assert got == [
        (
            "high",
            "'the second one' points at 'Oregon' in the list of message 3 (Virginia, Oregon), but the query "
            "names 'Dublin', an item of the older list in message 1",
        )
    ]


def test_the_latter_and_option_numbers(rules) -> None:  # type: ignore[no-untyped-def]
    assert found(EU, "Is the latter cheaper?", "Is Dublin cheaper?", rules)[0] == []
    assert found(EU, "Is the latter cheaper?", "Is Frankfurt cheaper?", rules)[0][0][0] == "high"
    assert found(PLANS, "What does option 2 cost?", "What does the Pro plan cost?", rules)[0] == []
    # a time adverbial is no list reference
    _, status = found(
        EU, "Which regions opened in the last couple of years?", "Which EU regions opened lately?", rules
    )
    assert (status.status, status.reason) == ("skipped", "no list reference in the latest message")
    # a query that names no item is unresolved_reference's to report, not this check's
    assert (
        found(EU, "What's the SLA on the second one?", "What is the SLA on the second one?", rules)[0] == []
    )


def test_an_ordinal_over_a_noun_the_list_does_not_use_is_no_list_reference(rules) -> None:  # type: ignore[no-untyped-def]
    """ "the last update" does not point into "Frankfurt and Dublin"; "the second region" does into a
    message about regions."""
    assert (
        found(EU, "When was the last update?", "When was the last update to the Frankfurt SLA?", rules)[0]
        == []
    )
    regions = [("user", "Which regions?"), ("assistant", "Two regions do: Frankfurt and Dublin.")]
    assert found(regions, "And the second region?", "What about Frankfurt?", rules)[0][0][0] == "high"
    # a head the message uses elsewhere ("emperors") is not what introduces "Italy and Iberia"
    rome = [("user", "Who ruled?"), ("assistant", "The emperors ruled long. It held Italy and Iberia.")]
    assert found(rome, "Who was the last emperor?", "Who was the last emperor of Italy?", rules)[0] == []


def test_the_item_is_named_by_its_last_name_and_the_list_is_the_one_the_query_answers_from(rules) -> None:  # type: ignore[no-untyped-def]
    history = [
        ("user", "Which EU regions support customer-managed keys?"),
        ("assistant", "Today Frankfurt and Dublin both do. Ask Sales and Support for pricing."),
    ]
    got, _ = found(history, "What's the SLA on the second one?", "What is the SLA for Frankfurt?", rules)
    assert got == [
        (
            "high",
            "'the second one' points at 'Dublin' in the list of message 1 (Today Frankfurt, Dublin), but "
            "the query names 'Today Frankfurt'",
        )
    ]


def test_the_check_job_stores_a_list_reference_finding(session) -> None:  # type: ignore[no-untyped-def]
    """Through the store: ingest, check job, stored finding with its words (what `findings` lists)."""
    from monitor.checks.antecedents.list_reference import VERSION
    from monitor.checks.rules import load_rules
    from monitor.checks.store import list_findings
    from monitor.ingest.store.batches import ingest_bytes
    from monitor.worker.jobs import check_job
    from tests.factories import ctx_input, log, rewrite

    msgs = [{"role": r, "content": c} for r, c in EU]
    ingest_bytes(
        session,
        log(
            ctx_input(messages=msgs, n_messages=2),
            rewrite(latest="What's the SLA on the second one?", query="What is the SLA for Frankfurt?"),
        ),
    )
    check_job(session=session, rules=load_rules())
    (f,) = list_findings(session=session, checks=[("list_reference", VERSION)])
    assert (f.kind, f.severity, f.words, f.evidence["expected"]) == (
        "wrong_antecedent",
        "high",
        ["Frankfurt"],
        "Dublin",
    )


def test_a_resolved_entry_naming_another_item_of_the_list_its_turn_names(rules) -> None:  # type: ignore[no-untyped-def]
    """The rewriter's own resolved entry, read against the list of the message its turn names: "the
    second one" resolved to Frankfurt is wrong even when the query's wording names no item; resolved to
    Dublin it is right; the query-based finding is not doubled by the entry saying the same."""
    from monitor.record import Resolution

    def run(query: str, antecedent: str, turn: int | None = 2):  # type: ignore[no-untyped-def]
        rec = make_record(
            EU,
            "What's the SLA on the second one?",
            query,
            resolved=(Resolution("the second one", antecedent, turn),),
        )
        out = run_checks(rec, rules, only=["list_reference"])
        return [(f.severity, f.reason, f.evidence.get("resolved")) for f in out.findings]

    assert run("What is the SLA for the region?", "Frankfurt") == [
        (
            "high",
            "the rewriter resolved 'the second one' to 'Frankfurt', but it points at 'Dublin' in the list "
            "of message 1 (Frankfurt, Dublin)",
            {"surface": "the second one", "antecedent": "Frankfurt", "turn": 2},
        )
    ]
    assert run("What is the SLA for the region?", "Dublin") == []
    assert run("What is the SLA for the region?", "Frankfurt", turn=None)[0][0] == "high"  # the nearest list
    # the query names Frankfurt too: one finding, the query's
    ((sev, reason, resolved),) = run("What is the SLA for Frankfurt?", "Frankfurt")
    assert (sev, resolved) == ("high", None) and reason.startswith("'the second one' points at 'Dublin'")
    # turn 1 (the user's question) holds no list: nothing to read the entry against
    assert run("What is the SLA for the region?", "Frankfurt", turn=1) == []


def test_a_stale_scope_attached_to_an_announced_new_topic(rules) -> None:  # type: ignore[no-untyped-def]
    """ "By the way" opens a new question; the query attaches the earlier topic's scope: medium, with the
    carried words. Without the marker nothing is judged (an implicit continuation is usually right)."""
    history = [
        ("user", "What does IBM Cloud Internet Services bot management do?"),
        ("assistant", "CIS bot management tells good bots from malicious ones."),
    ]
    out = run_checks(
        make_record(
            history,
            "By the way, what is a secret?",
            "What is a secret in IBM Cloud Internet Services bot management?",
        ),
        rules,
        only=["topic_shift"],
    )
    (f,) = out.findings
    assert (f.kind, f.severity, [c["text"] for c in f.evidence["carried"]]) == (
        "wrong_antecedent",
        "medium",
        ["IBM", "Cloud", "Internet", "Services", "bot", "management"],
    )
    assert f.reason.startswith("the user changed the topic ('By the way'), but the query carries 'IBM'")
    # one carried word is the domain, not a scope; and no marker, no judgement
    rec = make_record(history, "By the way, what is a secret?", "What is a secret in IBM security?")
    assert run_checks(rec, rules, only=["topic_shift"]).findings == ()
    rec = make_record(history, "What is a secret?", "What is a secret in IBM Cloud Internet Services?")
    (status,) = run_checks(rec, rules, only=["topic_shift"]).statuses
    assert (status.status, status.reason) == (
        "skipped",
        "the latest message announces no new topic and no earlier turn set one",
    )


TRUCK = [
    ("user", "How much does a used Lamborghini cost?"),
    ("user", "How does it compare to a Ferrari?"),
    ("user", "Interesting. What about for a pimped-out food truck?"),
    ("user", "What licenses and permits are needed?"),
]


def test_an_older_name_attached_to_a_topic_the_user_set_since(rules) -> None:  # type: ignore[no-untyped-def]
    """The user set the food truck as a new topic after the Lamborghini; "Lamborghini food truck" merges
    the two: medium, with the carried name and the topic. The food truck alone, or a query naming nothing
    older than the topic, is fine."""

    def shift(latest, query):  # type: ignore[no-untyped-def]
        out = run_checks(make_record(TRUCK, latest, query), rules, only=["topic_shift"])
        (status,) = out.statuses
        return [(f.severity, f.reason, f.evidence) for f in out.findings], (status.status, status.reason)

    got, _ = shift("How can I run it successfully?", "How can I run Lamborghini food truck successfully?")
    assert got == [
        (
            "medium",
            "the user set a new topic, 'food truck' (message 2), after 'Lamborghini' (message 0), but the "
            "query attaches 'Lamborghini' to it: check the antecedent",
            {
                "carried": [{"text": "Lamborghini", "message_index": 0, "start": 14, "end": 25}],
                "topic": {"text": "food truck", "message_index": 2},
                "words": [{"text": "Lamborghini", "start": 14, "end": 25}],
            },
        )
    ]
    assert shift("How can I run it successfully?", "How can I run a food truck successfully?") == (
        [],
        ("skipped", "the query names nothing older than the topic an earlier turn set"),
    )
    # the older name in the query, but not attached to the topic: tested, nothing to report
    assert shift("Is it cheaper?", "Is a food truck cheaper than a Lamborghini?") == ([], ("ran", None))


# -- antecedent_recency (issue 14, part 2) ----------------------------------------------------------
KOGI = [
    ("user", "What is Kogi?"),
    ("assistant", "It is a food truck in Los Angeles, started by Roy Choi and Mark Manguera in 2008."),
]
CARS = [
    ("user", "How fast is the Tesla Roadster?"),
    ("assistant", "The Tesla Roadster reaches 250 mph."),
    ("user", "What about the Hennessey Venom GT?"),
    ("assistant", "The Venom GT reached 270 mph in 2014."),
]
SPACE = [
    ("user", "What is the Hubble Space Telescope?"),
    ("assistant", "It is a space telescope launched in 1990."),
    ("user", "And the Voyagers?"),
    ("assistant", "They were launched in 1977."),
]


def recency(history, latest, query, rules):  # type: ignore[no-untyped-def]
    out = run_checks(make_record(history, latest, query), rules, only=["antecedent_recency"])
    (status,) = out.statuses
    for f in out.findings:
        assert (f.kind, f.severity, f.words) == (
            "wrong_antecedent",
            "medium",
            [f.evidence["substituted"]["text"]],
        )
    return [(f.reason, f.evidence) for f in out.findings], (status.status, status.reason)


def test_what_is_x_then_when_was_it_founded_keeps_x(rules) -> None:  # type: ignore[no-untyped-def]
    """The answer describes Kogi with "it" and names a city and founders; "it" is still Kogi. An answer
    never supplies a competitor, and a person the user asks about ("Who is Roy Choi?") is no "it"."""
    assert recency(KOGI, "When was it founded?", "When was Kogi founded?", rules) == ([], ("ran", None))
    who = [*KOGI, ("user", "Who is Roy Choi?"), ("assistant", "The chef who started it.")]
    assert recency(who, "When was it founded?", "When was Kogi founded?", rules) == ([], ("ran", None))


def test_a_stale_name_chosen_over_the_one_the_user_named_since(rules) -> None:  # type: ignore[no-untyped-def]
    """The user moved from the Tesla Roadster to the Hennessey Venom GT; "it" made the Tesla Roadster is
    reported at medium with both names and where each was last named; the Venom GT is not."""
    got, _ = recency(CARS, "When was it built?", "When was the Tesla Roadster built?", rules)
    assert got == [
        (
            "'it' became 'Tesla Roadster', last mentioned in message 1, but the user named 'Hennessey "
            "Venom GT' later (message 2): check the antecedent",
            {
                "reference": {"text": "it", "start": 9, "end": 11, "message_index": "latest"},
                "substituted": {"text": "Tesla Roadster", "start": 13, "end": 27, "message_index": 1},
                "competitor": {"text": "Hennessey Venom GT", "message_index": 2, "from": "user"},
                "others": [],
                "words": [{"text": "Tesla Roadster", "start": 13, "end": 27}],
            },
        )
    ]
    assert recency(CARS, "When was it built?", "When was the Hennessey Venom GT built?", rules)[0] == []


def test_a_competitor_must_agree_in_number_with_the_reference(rules) -> None:  # type: ignore[no-untyped-def]
    """ "the Voyagers" (plural) competes with "they", not with "it"."""
    query = "When will the Hubble Space Telescope be retired?"
    assert recency(SPACE, "When will it be retired?", query, rules) == ([], ("ran", None))
    got, _ = recency(
        SPACE, "When were they launched?", "When was the Hubble Space Telescope launched?", rules
    )
    ((reason, ev),) = got
    assert reason == (
        "'they' became 'Hubble Space Telescope', last mentioned in message 0, but the user named "
        "'Voyagers' later (message 2): check the antecedent"
    )
    assert (ev["reference"], ev["substituted"], ev["competitor"]) == (
        {"text": "they", "start": 10, "end": 14, "message_index": "latest"},
        {"text": "Hubble Space Telescope", "start": 13, "end": 35, "message_index": 0},
        {"text": "Voyagers", "message_index": 2, "from": "user"},
    )


def test_a_turn_that_points_back_with_it_keeps_the_older_focus(rules) -> None:  # type: ignore[no-untyped-def]
    """ "How does it compare to a Ferrari?" is still about the Lamborghini (Centering's Rule 1); "What
    about a Ferrari?" moves to it."""
    old = ("user", "How much does a used Lamborghini cost?")
    compare = [old, ("user", "How does it compare to a Ferrari?")]
    assert recency(compare, "Is it reliable?", "Is a Lamborghini reliable?", rules)[0] == []
    moved = [old, ("user", "What about a Ferrari?")]
    ((reason, ev),) = recency(moved, "Is it reliable?", "Is a Lamborghini reliable?", rules)[0]
    assert (ev["substituted"]["text"], ev["substituted"]["message_index"], ev["competitor"]) == (
        "Lamborghini",
        0,
        {"text": "Ferrari", "message_index": 1, "from": "user"},
    )


def test_recency_skips_without_a_reference_or_a_substituted_name(rules) -> None:  # type: ignore[no-untyped-def]
    assert recency(SPACE, "What about pricing?", "What is the pricing of the Voyagers?", rules) == (
        [],
        ("skipped", "no 'it', 'they' or demonstrative in the latest message"),
    )
    # the query keeps "it", or puts a common noun in its place: nothing named to compare
    for query in ("When will it be retired?", "When will the telescope be retired?"):
        assert recency(SPACE, "When will it be retired?", query, rules) == (
            [],
            ("skipped", "the query puts no name of the transcript in place of the reference"),
        )


def test_replacement_aligns_the_query_with_the_latest_message() -> None:
    from monitor.checks.antecedents.recency import replacement

    latest, query = "How fast did it go?", "How fast did the Tesla Roadster go in 1966?"
    assert replacement(latest, query, latest.index("it")) == (13, 31)
    assert query[13:31] == "the Tesla Roadster"
    assert replacement("Why did it fall?", "Why did it fall?", 8) is None


def test_a_topic_set_with_what_about_competes_with_an_older_name(rules) -> None:  # type: ignore[no-untyped-def]
    """ "What about for a food truck?" sets a new topic (a common noun, new to the conversation); "it"
    made the older Lamborghini is reported with the topic as the competitor. A topic the conversation
    already had ("Tell me more about the Lamborghini's engine" after the engine) sets none."""
    history = [
        ("user", "How much does a used Lamborghini cost?"),
        ("user", "What about for a pimped-out food truck?"),
        ("user", "What licenses are needed?"),
    ]
    got, _ = recency(history, "What made it successful?", "What made Lamborghini successful?", rules)
    assert got == [
        (
            "'it' became 'Lamborghini', last mentioned in message 0, but the user named 'food truck' later "
            "(message 1): check the antecedent",
            {
                "reference": {"text": "it", "start": 10, "end": 12, "message_index": "latest"},
                "substituted": {"text": "Lamborghini", "start": 10, "end": 21, "message_index": 0},
                "competitor": {"text": "food truck", "message_index": 1, "from": "user"},
                "others": [],
                "words": [{"text": "Lamborghini", "start": 10, "end": 21}],
            },
        )
    ]
    assert recency(history, "What made it successful?", "What made the food truck successful?", rules) == (
        [],
        ("skipped", "the query puts no name of the transcript in place of the reference"),
    )
    given = [("user", "Does the Lamborghini have a good engine?"), ("user", "Tell me more about the engine.")]
    assert recency(given, "Is it reliable?", "Is the Lamborghini reliable?", rules)[0] == []


def test_about_topic_reads_the_noun_phrase_after_the_frame() -> None:
    from monitor.checks.antecedents.topics import about_topic

    earlier = ["How much does a used Lamborghini cost?"]
    assert about_topic("Interesting. What about for a pimped-out food truck?", earlier) == "food truck"
    assert about_topic("Tell me more about some exercises that could help.", earlier) == "exercises"
    assert about_topic("Tell me about the series of manifestos.", earlier) is None  # series or manifestos
    assert about_topic("What about the Lamborghini?", earlier) is None  # given, not a new topic
    assert about_topic("How much is a food truck?", earlier) is None  # no frame


def test_it_points_at_no_person_and_a_premodifier_is_no_competitor(rules) -> None:  # type: ignore[no-untyped-def]
    """ "the European and US approaches" names approaches: neither "European" (a person's noun, which
    "it" cannot mean) nor "US" (it modifies "approaches") competes with the method named before."""
    from monitor.checks.antecedents.recency import is_person, premodifier

    history = [
        ("user", "How is testing done with PCR?"),
        ("user", "What's the difference between the European and US approaches?"),
    ]
    assert recency(history, "How could they improve it?", "How could they improve PCR?", rules)[0] == []
    assert is_person("European") and is_person("author") and not is_person("Model")
    assert premodifier("US", history[1][1]) and not premodifier("US", "Is it sold in the US?")
    assert not premodifier("Tesla", "Does Tesla make trucks?")  # a verb after a bare name


ROME = [
    ("user", "Why was the eastern empire called the Byzantine Empire?"),
    ("assistant", "Historians call it so after Byzantium, the old name of Constantinople."),
    ("user", "When was it reorganized?"),
    ("assistant", "Diocletian split the Roman Empire in 285. The Byzantine Empire grew from its east."),
]


def test_the_answer_just_before_opens_on_another_entity(rules) -> None:  # type: ignore[no-untyped-def]
    """The answer before "Why did it fall?" opens on the Roman Empire ("Diocletian", a single dictionary
    word opening the sentence, is no name); the rewrite reaches past it to the Byzantine Empire, which
    that sentence does not name: reported, with the answer's opening entity. The same rewrite after an
    answer that opens on the Byzantine Empire, or with its own "it", is not."""
    got, _ = recency(ROME, "Why did it fall?", "Why did the Byzantine Empire fall?", rules)
    assert got == [
        (
            "'it' became 'Byzantine Empire', last mentioned in message 3, but the answer just before "
            "(message 3) opens on 'Roman Empire', not on it: check the antecedent",
            {
                "reference": {"text": "it", "start": 8, "end": 10, "message_index": "latest"},
                "substituted": {"text": "Byzantine Empire", "start": 12, "end": 28, "message_index": 3},
                "competitor": {"text": "Roman Empire", "message_index": 3, "from": "answer"},
                "others": [],
                "words": [{"text": "Byzantine Empire", "start": 12, "end": 28}],
            },
        )
    ]
    assert recency(ROME, "Why did it fall?", "Why did the Roman Empire fall?", rules)[0] == []
    opens = [*ROME[:3], ("assistant", "The Byzantine Empire was reorganized by Heraclius.")]
    assert recency(opens, "Why did it fall?", "Why did the Byzantine Empire fall?", rules)[0] == []
    own_it = [*ROME[:3], ("assistant", "It was reorganized when Diocletian split the Roman Empire.")]
    assert recency(own_it, "Why did it fall?", "Why did the Byzantine Empire fall?", rules)[0] == []
    # a demonstrative may point at what is merely activated: not judged against the answer's opening
    assert recency(ROME, "Why did that fall?", "Why did the Byzantine Empire fall?", rules)[0] == []


# -- swapped_name ---------------------------------------------------------------------------------
MARS = [
    ("user", "Who is Bruno Mars?"),
    ("assistant", "Bruno Mars is a singer and songwriter from Honolulu."),
]


def swapped(history, latest, query, rules):  # type: ignore[no-untyped-def]
    out = run_checks(make_record(history, latest, query), rules, only=["swapped_name"])
    (status,) = out.statuses
    return [(f.severity, f.reason, f.evidence) for f in out.findings], (status.status, status.reason)


def test_a_name_the_user_wrote_swapped_for_the_transcripts(rules) -> None:  # type: ignore[no-untyped-def]
    latest = "Did Mario Mars play at the Bowery Ballroom?"
    got, _ = swapped(MARS, latest, "Did Bruno Mars play at the Bowery Ballroom?", rules)
    assert got == [
        (
            "medium",
            "the user wrote 'Mario Mars', but the query names 'Bruno Mars' in its place (last named in "
            "message 1): 'Mario' is not 'Bruno'; check the antecedent",
            {
                "expected": "Mario Mars",
                "named": "Bruno Mars",
                "user_name": {"text": "Mario Mars", "start": 4, "end": 14},
                "substituted": {"text": "Bruno Mars", "start": 4, "end": 14, "message_index": 1},
                "words": [{"text": "Bruno Mars", "start": 4, "end": 14}],
            },
        )
    ]
    # The user's name kept, a misspelling corrected ("Marz": one letter off), a name of one word: nothing.
    assert swapped(MARS, latest, "Did Mario Mars play at the Bowery Ballroom?", rules)[0] == []
    assert swapped(MARS, "Did Bruno Marz play there?", "Did Bruno Mars play at the Bowery?", rules)[0] == []
    assert swapped(MARS, "Did Mario play there?", "Did Bruno Mars play there?", rules) == (
        [],
        ("skipped", "the latest message writes no name of several words"),
    )


def test_a_title_cased_phrase_is_no_name_to_swap(rules) -> None:  # type: ignore[no-untyped-def]
    """'Mark Join Penske' differs from 'Mark Donohue' by a verb: a phrase the chunker joined, not a name.
    A name the transcript never held is left to added_content_word."""
    history = [("user", "Who was Mark Donohue?"), ("assistant", "Mark Donohue was a racing driver.")]
    query = "When did Mark Donohue join Penske?"
    assert swapped(history, "when did Mark Join Penske?", query, rules)[0] == []
    assert swapped(MARS, "Did Mario Mars sing?", "Did Peter Mars sing?", rules) == ([], ("ran", None))


# -- ignored_correction -----------------------------------------------------------------------------
QUIT = [
    ("user", "What are the health effects of quitting smoking?"),
    ("assistant", "Within a year the risk of heart disease halves."),
]


def corrected(latest, query, rules):  # type: ignore[no-untyped-def]
    out = run_checks(make_record(QUIT, latest, query), rules, only=["ignored_correction"])
    (status,) = out.statuses
    return [(f.severity, f.reason, f.evidence) for f in out.findings], (status.status, status.reason)


def test_a_correction_the_query_loses(rules) -> None:  # type: ignore[no-untyped-def]
    latest = "No, I meant drinking alcohol. What are some rehab treatment options?"
    got, _ = corrected(latest, "What are some rehab treatment options after stopping smoking?", rules)
    assert got == [
        (
            "medium",
            "the user corrected themselves: they meant 'drinking alcohol', which the query does not say: "
            "check the antecedent",
            {
                "expected": "drinking alcohol",
                "correction": {"text": "drinking alcohol", "start": 12, "end": 28},
                "words": [],
            },
        )
    ]
    # The corrected referent in the query (an inflection of it too): nothing.
    assert corrected(latest, "What are rehab treatment options for alcohol drinkers?", rules)[0] == []
    # A correction kept as it stands is unresolved_reference's, not this check's.
    assert corrected("No, I meant drinking alcohol.", "No, I meant drinking alcohol.", rules)[0] == []


def test_a_turn_that_moves_on_after_the_correction_is_not_judged(rules) -> None:  # type: ignore[no-untyped-def]
    query = "How does quitting smoking change the heart rate?"
    moved = "No, I meant drinking alcohol. But I heard it raises the heart rate. How much?"
    assert corrected(moved, query, rules) == ([], ("ran", None))
    assert (
        corrected("No, I meant drinking alcohol. Anyway, how fast does the heart heal?", query, rules)[0]
        == []
    )
    # "I mean" is a filler, no repair.
    assert corrected("I mean, how fast does the heart heal?", query, rules) == (
        [],
        ("skipped", "the latest message corrects nothing"),
    )


NAMES = [
    ("user", "Tell me about Bruno Mars, Tesla cars and famous families."),
    (
        "assistant",
        "Bruno Mars, Barack Obama, Martin Luther King, Charles III, the Los Angeles Lakers, the New York "
        "Times, Samuel L. Jackson, Tom Hanks, Prince William, Melinda Gates, Apple Music, World War II, "
        "Henry VIII, Manchester United, Saint Louis, the Tesla Model S and Las Vegas.",
    ),
]


@pytest.mark.parametrize(
    ("latest", "query", "swap"),
    [
        # The same name written otherwise: a title, a short form, a middle initial, a corrected spelling.
        ("How old is President Obama?", "How old is Barack Obama?", None),
        ("When was Dr King born?", "When was Martin Luther King born?", None),
        ("Where does King Charles live?", "Where does Charles III live?", None),
        ("Did the LA Lakers win?", "Did the Los Angeles Lakers win?", None),
        ("Who owns the NY Times?", "Who owns the New York Times?", None),
        ("Where does Man United play?", "Where does Manchester United play?", None),
        ("Weather in St Louis?", "Weather in Saint Louis?", None),
        ("How old is Samuel Jackson?", "How old is Samuel L. Jackson?", None),
        ("How tall is Tim Hanks?", "How tall is Tom Hanks?", None),
        # Two names the user ran together: the query still writes "Vegas".
        ("Adele Vegas ticket prices?", "What are ticket prices for Adele shows in Las Vegas?", None),
        # Another referent, though the words are also verbs or numbers.
        ("Who is Prince Harry married to?", "Who is Prince William married to?", "'Harry' is not 'William'"),
        ("What did Bill Gates found?", "What did Melinda Gates found?", "'Bill' is not 'Melinda'"),
        ("Does Apple Watch cost money?", "Does Apple Music cost money?", "'Watch' is not 'Music'"),
        ("When did World War I end?", "When did World War II end?", "'I' is not 'II'"),
        ("Who married Henry VII?", "Who married Henry VIII?", "'VII' is not 'VIII'"),
        ("How fast is the Tesla Model 3?", "How fast is the Tesla Model S?", "'3' is not 'S'"),
    ],
)
def test_a_swap_is_another_referent_not_the_same_name_written_otherwise(latest, query, swap, rules) -> None:  # type: ignore[no-untyped-def]
    got, _ = swapped(NAMES, latest, query, rules)
    assert [r.split("): ")[1].removesuffix("; check the antecedent") for _, r, _ in got] == (
        [swap] if swap else []
    )


MIXED = [
    ("user", "What is the latency in Frankfurt? How tall is Superman? Tell me about Java."),
    ("assistant", "Frankfurt and Dublin both do. Henry Cavill plays him. Java is a programming language."),
]


@pytest.mark.parametrize(
    ("latest", "query", "expected"),
    [
        # A reference, a deictic, an acronym, a description or a number the query resolves: not judged.
        ("No, I meant the second one.", "What is the latency in Dublin?", None),
        ("No, I meant last year.", "What did inflation do in 2023?", None),
        ("Sorry, I meant NYC.", "What is the weather in New York City?", None),
        ("Sorry, I meant the actor, not the character. How tall is he?", "How tall is Henry Cavill?", None),
        ("No, I meant 3.12.", "What is new in Python 3.12?", None),
        # Carried: a name written otherwise; the last of two repairs; an intention is no repair.
        ("No, I meant St. Louis.", "What is the weather in Saint Louis?", None),
        ("No, I meant Lyon. Sorry, I meant Nice.", "What is the weather in Nice?", None),
        ("I meant to thank you. What are your support hours?", "What are the customer support hours?", None),
        # Lost.
        ("No, I meant the Model 3.", "How fast is the Tesla Model S?", "the Model 3"),
        ("No, I meant Michelle Obama.", "Who is Barack Obama?", "Michelle Obama"),
        ("No, I meant the Model 3. How fast is it?", "How fast is the Tesla Model S?", "the Model 3"),
        ("My bad, I meant drinking alcohol.", "What helps after quitting smoking?", "drinking alcohol"),
        ("What I meant was drinking alcohol.", "What helps after quitting smoking?", "drinking alcohol"),
        ("No, I mean drinking alcohol.", "What helps after quitting smoking?", "drinking alcohol"),
        # A description judged by the half the user rejected, which the query kept.
        (
            "No, I meant the island, not the programming language.",
            "What is the Java programming language?",
            "the island",
        ),
    ],
)
def test_what_a_correction_carries(latest, query, expected, rules) -> None:  # type: ignore[no-untyped-def]
    out = run_checks(make_record(MIXED, latest, query), rules, only=["ignored_correction"])
    assert [f.evidence["expected"] for f in out.findings] == ([expected] if expected else [])
