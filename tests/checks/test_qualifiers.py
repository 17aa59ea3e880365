"""dropped_qualifier / qualifier_conflict: live values, applies_to, admitted drops, selecting kinds."""

from __future__ import annotations

from monitor.checks.qualifiers import check, find_qualifiers, live_values
from tests.factories import make_record

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
    msgs = [("user", "What happened to the band in later years?"), ("assistant", "They split.")]
    rec = make_record(msgs, "Why?", "Why did the band split?")
    assert kinds(rec, rules) == []


def places(text, rules):
    return [(q.value, q.start, q.end) for q in find_qualifiers(text, rules) if q.kind == "place"]


def test_place_needs_a_locative_cue_and_is_taken_whole(rules):
    assert places("How was it received in the United States compared to the UK?", rules) == [
        ("united states", 27, 40)
    ]
    assert places("What is the weather like near Salt Lake City?", rules) == [("salt lake city", 30, 44)]
    assert places("Salt Lake City is big.", rules) == []


def test_place_rejects_dates_possessors_events_titles_and_modifiers(rules):
    for text in (
        "He went there in February 1860.",
        "What were the highlights in Weeb Ewbank's years?",
        "They won in Super Bowl III.",
        "What was his role in the Revolutionary War?",
        "He served in Congress.",
        "Who starred in Memoirs of a Geisha?",
        "What happened in DeSean Jackson's season?",
        "Is the image used in Biblical poetry?",
    ):
        assert places(text, rules) == [], text


def test_alternate_country_name_is_the_same_place(rules):
    msgs = [("user", "How was the album received in America?"), ("assistant", "Well.")]
    rec = make_record(msgs, "And the single?", "How was the single received in the United States?")
    assert kinds(rec, rules) == []


def test_user_mention_without_cue_replaces_the_live_value(rules):
    msgs = [
        ("user", "What is the climate like in Utah?"),
        ("user", "How does Salt Lake City differ?"),
    ]
    rec = make_record(msgs, "What did the games change?", "What did the games change in Salt Lake City?")
    assert [
        v.value for v in live_values(rec, rules, mentions=find_qualifiers(rec.query, rules))["place"]
    ] == ["salt lake city"]
    assert kinds(rec, rules) == []


def test_query_keeping_the_live_value_adds_rather_than_conflicts(rules):
    msgs = [("user", "What is the keto diet?"), ("user", "What is paleo?")]
    rec = make_record(msgs, "How are they different?", "How are the keto diet and paleo diet different?")
    assert kinds(rec, rules) == []


def test_narrower_value_is_not_a_conflict(rules):
    msgs = [("user", "What are the causes of stigma in Africa?"), ("assistant", "Tradition.")]
    rec = make_record(msgs, "Which methods?", "Which traditional methods are used in Southeast Africa?")
    assert kinds(rec, rules) == []


def test_value_the_user_replaced_is_a_low_conflict(rules):
    msgs = [
        ("user", "What are the causes of stigma in Africa?"),
        ("assistant", "Tradition."),
        ("user", "Now, what about the causes in Asia?"),
        ("assistant", "Family values."),
    ]
    rec = make_record(msgs, "What other factors?", "What other factors cause stigma in Africa?")
    out = check(rec, rules)
    assert [(f.kind, f.severity) for f in out] == [
        ("qualifier_conflict", "low"),
        ("dropped_qualifier", "medium"),
    ]
    assert out[0].evidence["query_value_source"] == "user_replaced"
    assert out[0].evidence["live_values"] == ["asia"]


def test_value_never_stated_by_the_user_is_a_high_conflict(rules):
    rec = make_record(PLAN, "What is the rate limit?", "What is the rate limit on the free plan in staging?")
    out = [f for f in check(rec, rules) if f.kind == "qualifier_conflict"]
    assert [(f.severity, f.evidence["query_value"], f.evidence["query_value_source"]) for f in out] == [
        ("high", "free", "unsupported")
    ]


def test_plant_based_is_a_spelling_of_vegan(rules):
    msgs = [("user", "Which of the vegan milks is healthiest?"), ("assistant", "Soy.")]
    rec = make_record(msgs, "And for baking?", "Which plant-based milk is best for baking?")
    assert kinds(rec, rules) == []


def test_a_value_said_for_an_older_question_is_spent_unless_about_the_user(rules):
    """A year stated two questions back does not constrain the latest; the user's own diet does."""
    msgs = [
        ("user", "Who won the Tour de France in 2002?"),
        ("assistant", "Lance Armstrong, later stripped of the title."),
        ("user", "Why was he stripped?"),
        ("assistant", "Doping."),
    ]
    rec = make_record(msgs, "Which drugs?", "Which drugs did Lance Armstrong use?")
    assert kinds(rec, rules) == []
    # one question back, the year still carries into an elliptical follow-up
    rec = make_record(msgs[:2], "Who came second?", "Who came second in the Tour de France?")
    assert [(f.kind, f.evidence["value"]) for f in check(rec, rules)] == [("dropped_qualifier", "2002")]
    msgs = [
        ("user", "I'm vegetarian. Which cereals have iron?"),
        ("assistant", "Fortified oats."),
        ("user", "How much should I eat?"),
        ("assistant", "Two bowls."),
    ]
    rec = make_record(msgs, "What else could I eat?", "What foods are high in iron?")
    (f,) = check(rec, rules)
    assert (f.kind, f.evidence["value"], f.evidence["stated_at"]["message_index"]) == (
        "dropped_qualifier",
        "vegetarian",
        0,
    )


def test_a_demographic_noun_capitalised_inside_a_sentence_is_part_of_a_name(rules):
    from monitor.checks.qualifiers import qualifiers_in

    def values(text):
        return [(q.kind, q.value) for q in qualifiers_in(text, rules)]

    assert values("What is in A Child's Garden of Verses?") == []
    assert values("Is Little Women a good read?") == []
    assert values("Children need iron. Women too?") == [
        ("age_demographic", "child"),
        ("age_demographic", "woman"),
    ]
    assert values("what about kids?") == [("age_demographic", "child")]


def test_a_question_in_the_first_person_says_nothing_about_the_user_and_ellipsis_carries_on(rules):
    """ "Where can I find vegan restaurants in Berlin?" asks; it does not make the user vegan for the
    rest of the conversation. "And in Paris?", "And in Madrid?" continue the vegetarian question."""
    msgs = [
        ("user", "Where can I find vegan restaurants in Berlin?"),
        ("assistant", "Kreuzberg has several."),
        ("user", "Are they open late?"),
        ("assistant", "Some are."),
    ]
    assert kinds(make_record(msgs, "Who founded Cafe X?", "Who founded Cafe X?"), rules) == []
    msgs = [
        ("user", "What vegetarian dishes are typical in Rome?"),
        ("assistant", "Carciofi alla romana."),
        ("user", "And in Paris?"),
        ("assistant", "Ratatouille."),
    ]
    rec = make_record(msgs, "And in Madrid?", "What dishes are typical in Madrid?")
    assert [(f.kind, f.evidence["value"]) for f in check(rec, rules)] == [("dropped_qualifier", "vegetarian")]


def test_a_value_kept_with_an_ending_is_present(rules):
    """ "1930s" keeps the year 1930 the user said, "childhood" keeps "child": the value's last word with
    a plural or derivational ending (KEPT_ENDINGS) is the value, not a drop. A longer word that merely
    starts with the value ("childless") is not."""
    msgs = [("user", "What did Innis write in 1930?"), ("assistant", "About the fur trade.")]
    rec = make_record(msgs, "What other staple products?", "Which staple products did Innis study in 1930s?")
    assert check(rec, rules) == []
    rec = make_record(msgs, "What other staple products?", "Which staple products did Innis study?")
    assert kinds(rec, rules) == [("dropped_qualifier", "medium", "1930")]
    msgs = [("user", "What did Bobby Fischer do as a child?"), ("assistant", "He played chess.")]
    rec = make_record(msgs, "And at school?", "What were Bobby Fischer's childhood activities at school?")
    assert check(rec, rules) == []
    rec = make_record(msgs, "And at school?", "Was Bobby Fischer childless at school?")
    assert kinds(rec, rules) == [("dropped_qualifier", "medium", "child")]


def test_a_full_new_question_does_not_inherit_the_previous_questions_values(rules):
    """The user asked about on-premises options, then a new question with its own subject and nothing
    pointing back: "on-premises" is spent. A follow-up that refers back, or a fragment, still carries."""
    msgs = [
        ("user", "Are there on-premises storage options as alternatives to cloud storage?"),
        ("assistant", "Yes, several."),
    ]
    fresh = "Is IBM Immutable Object Storage encrypted at rest by default?"
    assert check(make_record(msgs, fresh, fresh), rules) == []
    # "the same" comparing two things the message names points back at nothing
    fresh = "Are IBM Immutable Object Storage and Immutable Data Storage the same thing?"
    assert check(make_record(msgs, fresh, fresh), rules) == []
    rec = make_record(msgs, "Which of them is cheapest?", "Which storage option is cheapest?")
    assert kinds(rec, rules) == [("dropped_qualifier", "medium", "on prem")]
    rec = make_record(msgs, "And the price?", "What is the price of storage options?")
    assert kinds(rec, rules) == [("dropped_qualifier", "medium", "on prem")]


def test_later_and_earlier_pick_a_period_only_as_modifiers(rules):
    """After a determiner or preposition "later"/"earlier" pick out a period (a relative_time value); as
    adverbs they order two events of the narrative and constrain nothing (rules/qualifiers.yaml)."""

    def times(text):
        return [(q.value, q.start, q.end) for q in find_qualifiers(text, rules) if q.kind == "relative_time"]

    assert times("Did he face consequences in later seasons?") == [("later", 28, 33)]
    assert times("What were his earlier works?") == [("earlier", 14, 21)]
    assert times("Where did he later die?") == []
    assert times("You mentioned rain gardens earlier. How do they compare?") == []
    assert times("Was it later than expected?") == []
    assert times("What did the band release recently?") == [("recently", 26, 34)]


def test_what_the_user_heard_is_about_the_topic_not_the_user(rules):
    """ "I heard on-premises storage was an option" reports the topic (Biber et al. 1999, mental verbs):
    two questions later the value is spent. "We run on-premises storage" describes the user: it holds."""
    from monitor.checks.qualifiers import _about_the_user

    heard = "But I heard on-premises storage was an option."
    assert _about_the_user(heard, 16, 27) is False
    assert _about_the_user("I've just read that on-prem is cheaper.", 20, 27) is False
    assert _about_the_user("I was wondering if on-prem is cheaper.", 19, 26) is False
    assert _about_the_user("I don't think on-prem is an option.", 14, 21) is False
    assert _about_the_user("I'm on-prem.", 4, 11) is True  # "'m" is no reporting verb
    assert _about_the_user("We run on-premises storage.", 7, 18) is True
    assert _about_the_user("I was told my cluster is on-prem.", 25, 32) is True  # "my cluster"

    def msgs(statement):
        return [
            ("user", "Is the Cloud the only method of storage?"),
            ("assistant", "No."),
            ("user", statement),
            ("assistant", "Yes, it is."),
            ("user", "Are Object Storage and Data Storage the same thing?"),
            ("assistant", "No."),
        ]

    latest = "Where are the retention rules documented?"
    query = "Where are Object Storage retention rules documented?"
    assert kinds(make_record(msgs(heard), latest, query), rules) == []
    rec = make_record(msgs("We run on-premises storage."), latest, query)
    assert [(f.kind, f.evidence["value"]) for f in check(rec, rules)] == [("dropped_qualifier", "on prem")]


def test_a_fragment_that_swaps_the_modifier_of_the_same_head_spends_the_value(rules):
    """ "Spousal support" after "child support": the fragment repeats the head "support" after another
    word, so the user swapped "child" for "spousal" and it is no longer live (Halliday and Hasan 1976,
    contrastive ellipsis). A full question using the head ("enforcement support") swaps nothing."""
    msgs = [("user", "How can I get enforcement for child support?"), ("assistant", "Ask the agency.")]
    rec = make_record(msgs, "Spousal support", "What is spousal support in family law?")
    assert check(rec, rules) == []
    rec = make_record(msgs, "And what about spousal support?", "What is spousal support in family law?")
    assert check(rec, rules) == []
    rec = make_record(msgs, "How can I get enforcement support?", "How can I get enforcement support?")
    assert kinds(rec, rules) == [("dropped_qualifier", "medium", "child")]
    rec = make_record(msgs, "Child support", "What is child support?")
    assert check(rec, rules) == []
    # a determiner or quantifier before the head points back or adds; it swaps nothing (v10)
    for latest in ("That support", "And this support?", "More support?", "Any support?"):
        rec = make_record(msgs, latest, "What support is available?")
        assert kinds(rec, rules) == [("dropped_qualifier", "medium", "child")], latest
