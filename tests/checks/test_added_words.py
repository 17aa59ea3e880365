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
                ("Bernadette", "low", "name_completion"),
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
        # rare (zipf 4.27), but the head of its phrase: rarity alone grades nothing high (v18), medium
        ("Did Peters have a stroke?", [("stroke", "medium", "rare_term")]),
        # a rare noun restricting the noun after it or the noun its phrase is attached to: high
        (
            "Did Peters give stroke advice?",
            [("stroke", "high", "restricting_noun"), ("advice", "low", "aspect_noun")],
        ),
        (
            "Did Peters give advice on strokes?",
            [("advice", "low", "aspect_noun"), ("strokes", "high", "restricting_noun")],
        ),
        # a rare word WordNet knows only as an adverb: a viewpoint or manner, low
        (
            "Traditionally, was Peters popular?",
            [("Traditionally", "low", "adverb"), ("popular", "low", "framing")],
        ),
        # a number word is a number (spaCy files it under stop words); one written otherwise is restated
        (
            "Did three people sing in the 1990s?",
            [("three", "high", "number"), ("people", "low", "framing"), ("sing", "medium", "content_word")],
        ),
        ("Was it in the nineteen-nineties?", [("nineteen-nineties", "high", "number")]),
        # an ordinal after "a" means "another": no position or count, a content word (medium, not high)
        (
            "Did Peters get a second agent?",
            [("second", "medium", "content_word"), ("agent", "medium", "content_word")],
        ),
        (
            "Did Peters sign the second agent?",
            [
                ("sign", "medium", "content_word"),
                ("second", "high", "number"),
                ("agent", "medium", "content_word"),
            ],
        ),
        # every sense of "biography" is noun.communication: what about Peters is asked, low however rare
        # (zipf ~3.9) as the head of its phrase (v19)
        ("Was there a Peters biography?", [("biography", "low", "aspect_noun")]),
        ("What was the career of Peters?", [("career", "low", "aspect_noun")]),
        # as a modifier an aspect noun restricts its head, however common ("comedy": zipf ~4.5): medium
        (
            "Did Peters have a comedy career?",
            [("comedy", "medium", "aspect_noun"), ("career", "low", "aspect_noun")],
        ),
        # a preposition spaCy's stop list lacks (rules/neutral.yaml, Quirk et al. 9.7)
        ("Peters versus Broadway Barks", []),
        # "later" as an adverb orders two events (framing, low); after a determiner or preposition it
        # picks out a period: a relative_time value, high (rules/qualifiers.yaml)
        (
            "Did Peters perform later in Vienna?",
            [
                ("perform", "low", "framing"),
                ("later", "low", "framing"),
                ("Vienna", "high", "qualifier_value"),
            ],
        ),
        (
            "Was Peters depressed in her later musicals?",
            [("depressed", "low", "derivation"), ("later", "high", "qualifier_value")],
        ),
        ("What notable information is there?", [("notable", "low", "framing")]),
        ("Was Peters depressive?", [("depressive", "low", "derivation")]),
        # "slump" shares a WordNet synset with the logged "depression" (any sense counts)
        ("Did Peters go through a slump?", [("slump", "low", "synonym")]),
        # a rare verb names an action: medium, not high (zipf of "debunk" ~2.9)
        ("Did Peters debunk Broadway Barks?", [("debunk", "medium", "rare_verb")]),
        # coordinated with its WordNet antonym, each pole asks about the whole scale: low; alone, "cons"
        # is a rare term (zipf ~4.3) and "disadvantages" a rare aspect noun
        (
            "What are the pros and cons of Peters' career?",
            [
                ("pros", "low", "antonym_pair"),
                ("cons", "low", "antonym_pair"),
                ("career", "low", "aspect_noun"),
            ],
        ),
        (
            "What are the cons of Peters' career?",
            [("cons", "medium", "rare_term"), ("career", "low", "aspect_noun")],
        ),
        (
            "Was her career an advantage or a disadvantage?",
            [
                ("career", "low", "aspect_noun"),
                ("advantage", "low", "antonym_pair"),
                ("disadvantage", "low", "antonym_pair"),
            ],
        ),
    ],
)
def test_grading_signals(rules, query, expected):
    rec = make_record(HISTORY, "And then?", query)
    assert words(rec, rules) == expected


def test_derivation_evidence_names_the_related_word(rules):
    rec = make_record(HISTORY, "And then?", "Was Peters depressive?")
    got = [w for f in check(rec, rules) for w in f.evidence["words"]]
    assert [
        (w["text"], w["signal"], w["related"], w["related_at"]) for w in got if w["signal"] == "derivation"
    ] == [("depressive", "derivation", "depression", {"message_index": 1})]


def test_adjacent_unsupported_words_form_one_span(rules):
    rec = make_record(HISTORY, "And then?", "Did Peters tour Norwegian fjord towns, Swedish ones too?")
    spans = [(f.evidence["span"]["text"], f.severity) for f in check(rec, rules)]
    assert spans == [("tour Norwegian fjord towns", "high"), ("Swedish", "high")]


def test_meta_text_words_are_low(rules):
    rec = make_record(
        HISTORY, "Did Hall win?", "There is no clear referent for Hall in the context provided."
    )
    assert {f.severity for f in check(rec, rules)} == {"low"}


def test_a_misspelling_is_low_and_names_the_word(rules):
    """A word WordNet does not know, one edit from a received word or a contraction, is a typing slip
    (Damerau 1964): "did't", and "Broadwy" for the logged "broadway"."""
    rec = make_record(HISTORY, "Why?", "Why did't Peters sing?")
    assert words(rec, rules) == [("did't", "low", "misspelling"), ("sing", "medium", "content_word")]
    rec = make_record(HISTORY, "Why?", "Why did Peters leave Broadwy?")
    got = [(w["text"], w["signal"], w.get("related")) for f in check(rec, rules) for w in f.evidence["words"]]
    assert got == [("leave", "content_word", None), ("Broadwy", "misspelling", "broadway")]


def test_neutral_words_are_never_reported(rules):
    rec = make_record(HISTORY, "More?", "Can you provide details and information about Peters?")
    assert check(rec, rules) == []


def test_latest_message_supports_words(rules):
    rec = make_record(HISTORY, "What about her Tony award?", "Was Peters given a Tony award?")
    assert check(rec, rules) == []


def test_reason_names_the_word_and_why(rules):
    rec = make_record(HISTORY, "And then?", "Did Peters have a stroke?")
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


def test_an_aspect_noun_is_graded_by_its_place_and_names_its_wordnet_classes(rules):
    # the head of its phrase: low, rare as it is (zipf 2.94)
    rec = make_record(HISTORY, "And then?", "Tell me the etymology of Peters.")
    (w,) = [w for f in check(rec, rules) for w in f.evidence["words"]]
    assert (w["severity"], w["classes"]) == ("low", ["cognition", "communication"])
    assert w["why"] == "aspect noun (zipf 2.94; WordNet: cognition, communication)"
    # a modifier of the noun after it: medium, and the evidence names the noun it restricts
    rec = make_record(HISTORY, "And then?", "Tell me about Peters' etymology research.")
    (w, _) = [w for f in check(rec, rules) for w in f.evidence["words"]]
    assert (w["text"], w["severity"], w["restricts"]) == ("etymology", "medium", "research")
    assert w["why"] == "aspect noun (zipf 2.94; WordNet: cognition, communication) restricting 'research'"


@pytest.mark.parametrize(
    ("latest", "query", "expected"),
    [
        # the focus of a wh-phrase: one step lower than the same word elsewhere (medium above)
        (
            "And then?",
            "What is the etymology research of Peters?",
            [("etymology", "low", "aspect_noun", True), ("research", "low", "aspect_noun", None)],
        ),
        ("Is it free?", "Is there a cost to seeing Peters?", [("cost", "low", "content_word", True)]),
        (
            "Was it written anywhere?",
            "Is there any written record of Peters?",
            [("record", "low", "content_word", True)],
        ),
        (
            "Did Peters like it?",
            "What benefits did Peters see in Broadway Barks?",
            [("benefits", "low", "content_word", True)],
        ),
        # the verb of a request frame with a first/second-person or generic subject
        (
            "Can I skip it?",
            "How can I reach Peters on Broadway?",
            [("reach", "low", "content_word", True)],
        ),
        (
            "And then?",
            "Could you clarify Peters' role?",
            [("clarify", "low", "rare_verb", True), ("role", "low", "framing", None)],
        ),
        # a subject that is no speech-act participant: the verb is what is asked about, not a frame
        ("And then?", "How did the stroke affect Peters?", [("stroke", "medium", "rare_term", None)]),
        # a rare term, a name or a number in the frame keeps its grade
        ("And then?", "What are the cons of Peters?", [("cons", "medium", "rare_term", None)]),
        (
            "And then?",
            "What Tony did Peters win?",
            [("Tony", "high", "proper_name", None), ("win", "medium", "content_word", None)],
        ),
    ],
)
def test_question_frame_words_are_one_step_lower(rules, latest, query, expected):
    rec = make_record(HISTORY, latest, query)
    got = [
        (w["text"], w["severity"], w["signal"], w.get("question_frame"))
        for f in check(rec, rules)
        for w in f.evidence["words"]
    ]
    assert got == expected


def test_a_frame_noun_is_one_step_lower_whatever_the_question_word(rules):
    """ "When was he born?" asked as "What is the birthplace of ...?": v13-v17 graded a frame noun that
    answers another question word high; the step fired on one of the 4,543 shared rewrites and was
    retired in v18 (docs/checks.md). "birthplace" is a frame word like any other, one step lower."""
    hist = [("user", "Where was Kurt Gödel born?"), ("assistant", "Kurt Gödel was born in Brünn.")]
    rec = make_record(hist, "When was he born?", "What is the birthplace of Kurt Gödel?")
    (w,) = [w for f in check(rec, rules) for w in f.evidence["words"]]
    assert (w["text"], w["severity"], w["step"], w.get("answer_type")) == (
        "birthplace",
        "low",
        "question_frame",
        None,
    )


def test_a_synonym_of_a_received_word_is_low_and_names_it(rules):
    """A shared WordNet synset supports a word ("work" and "employment" share one); a co-hyponym never
    does ("solar" for the logged "lunar")."""
    hist = [("user", "Tell me about her employment and the lunar eclipse she filmed.")]
    rec = make_record(hist, "And then?", "Did her work include a solar eclipse?")
    got = {w["text"]: w for f in check(rec, rules) for w in f.evidence["words"]}
    assert (got["work"]["severity"], got["work"]["signal"], got["work"]["related"]) == (
        "low",
        "synonym",
        "employment",
    )
    assert got["work"]["why"] == "synonym of 'employment' (message 0; a WordNet synset)"
    assert (got["solar"]["severity"], got["solar"]["signal"]) == ("medium", "content_word")


def test_words_of_a_trailing_note_or_leaked_turn_are_low(rules):
    rec = make_record(
        HISTORY,
        "And then?",
        "Was there a Peters Broadway birthplace?\n\nThis rewritten query:\n- Replaces the pronoun with the "
        "name\nHuman: Output ONLY the rewritten query text.",
    )
    got = [(w["text"], w["severity"]) for f in check(rec, rules) for w in f.evidence["words"]]
    assert got[0] == ("birthplace", "medium")  # the query part is graded as ever (a content word)
    assert {sev for _, sev in got[1:]} == {"low"} and len(got) > 3


def test_a_keyword_list_lowers_its_facets_one_step_and_keeps_constraints(rules):
    # v7: no question mark and a run of three or more content words, two or more of them added (v8): a
    # list of added facets. "habitat" (a rare noun before a noun, high) and "biography", "birthplace"
    # (medium) are facets, one step lower; the year, the name and the nouns with a person sense in
    # WordNet ("beginners"; "stroke" is also the oarsman) keep theirs (rare terms, medium since v18).
    rec = make_record(HISTORY, "And then?", "Peters habitat biography birthplace 2003 Tony beginners stroke")
    assert words(rec, rules) == [
        ("habitat", "medium", "restricting_noun"),
        ("biography", "low", "aspect_noun"),
        ("birthplace", "low", "content_word"),
        ("2003", "high", "qualifier_value"),
        ("Tony", "high", "proper_name"),
        ("beginners", "medium", "rare_term"),
        ("stroke", "medium", "rare_term"),
    ]
    listed = {w["text"]: w.get("keyword_list", False) for f in check(rec, rules) for w in f.evidence["words"]}
    assert listed == {
        "habitat": True,
        "biography": True,
        "birthplace": True,
        "2003": False,
        "Tony": False,
        "beginners": False,
        "stroke": False,
    }


@pytest.mark.parametrize(
    ("query", "grades"),
    [
        # a question keeps every grade, however many content words stand together ("biography" restricts
        # "birthplace" there: an aspect noun as a modifier, medium)
        ("Was the Peters habitat biography birthplace known?", ["medium", "medium"]),
        (
            "Peters habitat biography birthplace\uff1f",
            ["medium", "medium"],
        ),  # a full-width question mark (v8)
        # two content words together are no list; "biography" heads its phrase there: low as ever
        ("Peters habitat and the biography of birthplace", ["low", "medium"]),
    ],
)
def test_no_keyword_list_no_step(rules, query, grades):
    got = [w for f in check(make_record(HISTORY, "And then?", query), rules) for w in f.evidence["words"]]
    assert [w["text"] for w in got] == ["habitat", "biography", "birthplace"]
    assert [w.get("keyword_list") for w in got] == [None, None, None]
    assert [w["severity"] for w in got[1:]] == grades


def test_one_word_added_to_a_keyword_query_is_no_list(rules):
    # v8: "Peters Broadway musicals" are the user's words; one added word beside them is as likely a
    # constraint as a facet, so it keeps its grade (v7 lowered it)
    rec = make_record(HISTORY, "And then?", "Peters Broadway musicals habitat")
    assert words(rec, rules) == [("habitat", "medium", "rare_term")]


def test_keyword_list_tokens_join_hyphenated_units_and_ignore_markup():
    from monitor.checks.added_words import keyword_list_tokens
    from monitor.checks.base import analyzer

    # latex(0) -(5) free(6) paint(11) options(17): three units (0, 1, 2); "and a son" breaks the run
    a = analyzer().analyze("latex-free paint options, and a son")
    assert keyword_list_tokens(a, {0, 2}) == {0, 5, 6, 11, 17}
    assert keyword_list_tokens(a, {2}) == frozenset()  # one added word: no list of added facets
    # a question mark outside markup makes it a question; inside a tag it is not query text
    assert keyword_list_tokens(analyzer().analyze("latex paint options?"), {0, 1, 2}) == frozenset()
    assert keyword_list_tokens(analyzer().analyze("latex paint options <t>?</t>"), {0, 1}) == {0, 6, 12}


def test_words_of_a_rewrite_of_a_message_that_asks_nothing_are_meta(rules):
    """ "ok bye" made "User farewell or conversation ending acknowledgment" (the keyword-expansion rewriter
    of mtrag_dev_sonnet45agg did so): no constraint was invented on a request, there was none; every word
    is low, left to not_a_query."""
    rec = make_record(HISTORY, "ok bye", "User farewell or conversation ending acknowledgment")
    got = [
        (w["text"], w["severity"], w["signal"], w["why"])
        for f in check(rec, rules)
        for w in f.evidence["words"]
    ]
    assert got == [
        (w, "low", "meta_text", "the user's message asks nothing, see not_a_query")
        for w in ("User", "farewell", "conversation", "ending", "acknowledgment")
    ]


def test_a_coordinated_sibling_keeps_its_own_grade(rules):
    """ "music career" beside the received "motocross career": v14-v17 raised such a sibling to medium;
    the step fired on one of the 4,543 shared rewrites and was retired in v18. Since v19 "music" is medium
    as any aspect noun modifying another noun is (it restricts "career"); "family" heads its own phrase
    in answer to an open request for more ("Anything else?"), but WordNet files a sense of it under
    noun.person, so the request does not lower it."""
    hist = [("user", "Tell me about Vanilla Ice's motocross career."), ("assistant", "He raced motocross.")]
    rec = make_record(hist, "Anything else?", "What about his motocross career, music career and family?")
    got = [(w["text"], w["severity"], w["step"]) for f in check(rec, rules) for w in f.evidence["words"]]
    assert got == [("music", "medium", "aspect_noun"), ("family", "medium", "content_word")]


def test_a_bound_prefix_is_graded_with_its_word(rules):
    """ "non" in "non-compliance" means nothing alone (Quirk et al., App. I): the unit is graded by
    "compliance", an abstract noun (low), and a logged "compliance" supports the whole unit."""
    hist = [("user", "What are the recycling ordinances?")]
    rec = make_record(hist, "Explain with penalty.", "What are the penalties for non-compliance?")
    got = [(w["text"], w["severity"], w["signal"]) for f in check(rec, rules) for w in f.evidence["words"]]
    assert got == [("non-compliance", "low", "abstract_noun")]
    hist = [("user", "Is compliance with the recycling ordinances checked?")]
    rec = make_record(hist, "Explain with penalty.", "What are the penalties for non-compliance?")
    assert check(rec, rules) == []


def test_a_cause_the_user_did_not_state_is_graded_by_its_words(rules):
    """ "due to climate change": v16-v17 raised the words of an added cause to high; the step fired on 3
    of the 4,543 shared rewrites and gave no word a grade its own step would not: retired in v18. Each
    word is a common content word, medium, so the finding still reaches the queue."""
    hist = [("user", "What drives atmospheric pressure?"), ("assistant", "Air density and temperature.")]
    latest = "Speaking about sea level, is it true that it is rising?"
    rec = make_record(hist, latest, "Is sea level rising due to climate change?")
    got = [(w["text"], w["severity"], w["step"]) for f in check(rec, rules) for w in f.evidence["words"]]
    assert got == [("climate", "medium", "content_word"), ("change", "medium", "content_word")]


def test_a_general_noun_after_a_received_modifier_is_low(rules):
    """ "freelance work": "work" (among the commonest 300 words) names the kind of thing the received
    "freelance" picks out, so it is low. A plural before it is a subject ("did any singles come"), and a
    rarer head ("freelance clients") keeps its medium."""
    hist = [("user", "Freelancer here: should I open a second account for freelance income?")]
    latest = "Is it free to open a second bank account?"
    rec = make_record(hist, latest, "Is it free to open a second bank account for freelance work?")
    got = [
        (w["text"], w["severity"], w.get("head_of")) for f in check(rec, rules) for w in f.evidence["words"]
    ]
    assert got == [("work", "low", "freelance")]
    rec = make_record(hist, latest, "Is it free to open a second bank account for freelance clients?")
    got = [
        (w["text"], w["severity"], w.get("head_of")) for f in check(rec, rules) for w in f.evidence["words"]
    ]
    assert got == [("clients", "medium", None)]
    hist = [("user", "Tell me about the singles of that album.")]
    rec = make_record(hist, "Did any singles chart?", "Did any singles come out?")
    assert [(w["text"], w["severity"]) for f in check(rec, rules) for w in f.evidence["words"]] == [
        ("come", "medium")
    ]


@pytest.mark.parametrize(
    ("latest", "query", "expected"),
    [
        # an open request for more: a noun heading its phrase names an aspect the user left open, one
        # step lower (medium content word -> low); the same query after a closed question stays medium
        (
            "What else is there?",
            "What is Peters' birthplace?",
            [("birthplace", "low", "content_word", "open_request")],
        ),
        (
            "And then?",
            "What is Peters' birthplace?",
            [("birthplace", "medium", "content_word", "content_word")],
        ),
        # a modifier restricts its head and a name or qualifier value is a constraint: neither moves
        (
            "Tell me more about her.",
            "Tell me more about Peters' singing career in Vienna.",
            [
                ("singing", "medium", "content_word", "content_word"),
                ("career", "low", "aspect_noun", "aspect_noun"),
                ("Vienna", "high", "qualifier_value", "qualifier_value"),
            ],
        ),
        # a person or a condition (WordNet noun.person, noun.state) is what the documents are about
        (
            "Tell me more about her.",
            "Tell me more about Peters' wife and her cancer.",
            [
                ("wife", "medium", "content_word", "content_word"),
                ("cancer", "medium", "content_word", "content_word"),
            ],
        ),
        # a noun-verb with no determiner before it reads as the verb: no aspect
        (
            "Anything else?",
            "Did Peters win a Tony?",
            [
                ("win", "medium", "content_word", "content_word"),
                ("Tony", "high", "proper_name", "proper_name"),
            ],
        ),
    ],
)
def test_open_request_lowers_only_an_aspect_heading_its_phrase(rules, latest, query, expected):
    rec = make_record(HISTORY, latest, query)
    got = [
        (w["text"], w["severity"], w["signal"], w["step"])
        for f in check(rec, rules)
        for w in f.evidence["words"]
    ]
    assert got == expected


def test_a_qualifier_value_written_otherwise_is_restated(rules):
    """ "v2" for a received "version 2" (and the other way): the product_version patterns read both as the
    value '2', so the query restates it: low, by the number_restated step. Another version is high."""
    hist = [("user", "I use version 2 of the app."), ("assistant", "OK.")]
    got = [
        (w["text"], w["severity"], w["step"])
        for f in check(make_record(hist, "Any bugs?", "Bugs in the app v2?"), rules)
        for w in f.evidence["words"]
    ]
    assert got == [("v2", "low", "number_restated")]
    got = [
        (w["text"], w["severity"], w["step"])
        for f in check(make_record(hist, "Any bugs?", "Bugs in the app v3?"), rules)
        for w in f.evidence["words"]
    ]
    assert got == [("v3", "high", "qualifier_value")]
