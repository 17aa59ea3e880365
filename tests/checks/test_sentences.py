"""Sentence splitting (monitor.checks.sentences) and the checks that read it: not_a_query v2 and the
request sentences of intent_dropped v3; plus added_content_word's markup and plural-suffix rules."""

from __future__ import annotations

from monitor.checks import added_words, intent, references
from monitor.checks.intent import request_spans
from monitor.checks.sentences import split_sentences
from tests.factories import make_record

MSGS = [("user", "Tell me about the Small Faces."), ("assistant", "They were an English rock band.")]


def texts(text: str) -> list[str]:
    return [s.text for s in split_sentences(text)]


def test_initials_titles_and_dotted_acronyms_do_not_end_a_sentence() -> None:
    assert texts("Joseph P. Kennedy Sr. was born in 1888. Where did he study?") == [
        "Joseph P. Kennedy Sr. was born in 1888.",
        "Where did he study?",
    ]
    assert texts("What is the E.T.A. of the U.S. shipment? Thanks!") == [
        "What is the E.T.A. of the U.S. shipment?",
        "Thanks!",
    ]
    assert texts("Version 3.5 of it, e.g. the second one") == ["Version 3.5 of it, e.g. the second one"]
    # found by a reviewer: Chicago abbreviations, a capital letter that ends a sentence, "No." and decimals
    assert texts("best hotels in Ft. Lauderdale near the beach") == [
        "best hotels in Ft. Lauderdale near the beach"
    ]
    assert texts("Smith et al. Nature 2020 study") == ["Smith et al. Nature 2020 study"]
    assert texts("Awesome, that helps with vitamin C. Which fruits have the most?") == [
        "Awesome, that helps with vitamin C.",
        "Which fruits have the most?",
    ]
    assert texts("Is it No. 5 on the list?") == ["Is it No. 5 on the list?"]
    assert texts("How did E. E. Cummings's life influence his poems?") == [
        "How did E. E. Cummings's life influence his poems?"
    ]
    assert texts("I said no. Why not?") == ["I said no.", "Why not?"]
    assert texts("It needs Python 3.11. What changed?") == ["It needs Python 3.11.", "What changed?"]
    (first, second) = split_sentences("Sounds yummy!  What is in it?")
    assert (first.start, first.end, second.start, second.end) == (0, 13, 15, 29)


def test_a_question_about_joseph_p_kennedy_sr_is_one_sentence(rules) -> None:  # type: ignore[no-untyped-def]
    rec = make_record(
        MSGS, "Where was he born?", "Where was Joseph P. Kennedy Sr. born and what did he study at Harvard?"
    )
    assert references.check_not_a_query(rec, rules) == []


def test_reactions_are_not_intent_but_corrections_are() -> None:
    assert request_spans("Sounds yummy! What is in the stew?") == [(14, 34)]
    assert request_spans("Oh wow. Thanks") == [(0, 14)]  # nothing but reactions: the whole message asks
    text = "No, I meant drinking alcohol. What are some rehab treatment options?"
    assert request_spans(text) == [(0, 29), (30, 68)]  # "No, ..." opens a correction: it is kept


def test_intent_ignores_a_reaction_before_the_question(rules) -> None:  # type: ignore[no-untyped-def]
    rec = make_record(MSGS, "Sounds yummy! What is in the stew?", "What ingredients are in the Irish stew?")
    assert intent.check(rec, rules) == []
    lost = make_record(
        MSGS,
        "No, I meant drinking alcohol. What are some rehab treatment options?",
        "What are some rehab treatment options?",
    )
    (f,) = intent.check(lost, rules)
    assert [w["text"] for w in f.evidence["missing"]] == ["drinking", "alcohol"]


def test_markup_left_by_the_rewriter_is_not_query_text(rules) -> None:  # type: ignore[no-untyped-def]
    rec = make_record(
        MSGS, "Who sang?", "Small Faces band members\n<budget:token_budget>199700</budget:token_budget>"
    )
    words = [w["text"] for f in added_words.check(rec, rules) for w in f.evidence["words"]]
    assert words == ["members"]


def test_a_year_beside_a_rare_word_names_the_span_signal(rules) -> None:  # type: ignore[no-untyped-def]
    """The alert reads the span's signal: at equal severity a number or qualifier value wins over rarity."""
    rec = make_record(MSGS, "Which ones?", "students laptop thunderbolt 2024 models")
    spans = [f.evidence for f in added_words.check(rec, rules) if "2024" in f.evidence["span"]["text"]]
    assert spans and spans[0]["severity_signal"] in ("number", "qualifier_value")


def test_a_plural_abstract_noun_is_low_like_its_singular(rules) -> None:  # type: ignore[no-untyped-def]
    rec = make_record(MSGS, "What did they need?", "Small Faces band equipment requirements")
    graded = {
        w["text"]: (w["severity"], w["signal"])
        for f in added_words.check(rec, rules)
        for w in f.evidence["words"]
    }
    assert graded["requirements"] == ("low", "abstract_noun")


def test_a_quoted_exclamation_inside_a_sentence_does_not_end_it() -> None:
    """The closing quote belongs to the sentence it ends, and a quoted "!" or "?" followed by a
    lower-case word is inside the sentence (the not_a_query false alarm "2 sentences" on a quote)."""
    from monitor.checks.sentences import split_sentences

    def texts(t: str) -> list[str]:
        return [s.text for s in split_sentences(t)]

    assert texts('What does the quote "A horse, my kingdom for a horse!" mean in Richard III?') == [
        'What does the quote "A horse, my kingdom for a horse!" mean in Richard III?'
    ]
    assert texts('He said "Stop!" Then he left.') == ['He said "Stop!"', "Then he left."]
    assert texts('She asked "why?" and left.') == ['She asked "why?" and left.']
