"""Capitalised names and their mentions: what antecedent_recency compares."""

from __future__ import annotations

from monitor.checks.names import distinctive, is_plural, mentions, names


def texts(text: str) -> list[str]:
    return [n.text for n in names(text)]


def test_names_cut_at_a_possessive_and_drop_leading_function_words_and_verbs() -> None:
    assert texts("How well did Ai Otsuka's Love Piece do?") == ["Ai Otsuka", "Love Piece"]
    assert texts("Describe Netflix's growth. However, The Venom GT won.") == ["Netflix", "Venom GT"]
    assert texts("Is it the Bank of America or Model 3?") == ["Bank of America", "Model 3"]


def test_a_sentence_initial_dictionary_word_and_a_long_heading_are_no_names() -> None:
    # "Hot Rod News Comparing Vintage" is five words: a heading; "Modern Funny Cars" after "and" is kept.
    assert texts("Hot Rod News Comparing Vintage and Modern Funny Cars") == ["Modern Funny Cars"]
    assert texts("Stay within Italy. Italy is big. Netflix grew.") == ["Italy", "Netflix"]


def test_mentions_case_aside_singular_or_plural() -> None:
    assert mentions("Funny Car", "What is the origin of funny cars?")
    assert mentions("Funny Cars", "The Funny Cars showed up")
    assert not mentions("Funny Car", "a funny carnival")


def test_distinctive_and_plural() -> None:
    assert distinctive("Italy", ["Stay within Italy."])
    assert not distinctive("Emperor", ["Who was the last Emperor?", "the emperor ruled"])
    assert distinctive("Netflix", ["netflix"])  # no dictionary word
    assert [is_plural(n) for n in ("Funny Cars", "Gigafactories", "Christmas", "Lotus", "US")] == [
        True,
        True,
        False,
        False,
        False,
    ]
