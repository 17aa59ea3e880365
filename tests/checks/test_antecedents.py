"""list_reference: the seeds' canonical wrong-antecedent cases, with the exact findings."""

from __future__ import annotations

from monitor.checks import run_checks
from monitor.checks.antecedents import enumerations
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
    from monitor.checks.antecedents import VERSION
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
    assert (status.status, status.reason) == ("skipped", "the latest message announces no new topic")
