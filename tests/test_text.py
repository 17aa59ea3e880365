"""The one normaliser of terms (``monitor.text``): stored terms keep their case, matching folds it."""

from __future__ import annotations

from monitor.text import counted, match_key, normalise_term, normalise_terms, split_terms


def test_normalise_term_trims_and_collapses_whitespace_keeping_case_and_punctuation() -> None:
    assert normalise_term("  Dublin \t office\n") == "Dublin office"
    assert normalise_term("Single-Tenant") == "Single-Tenant"
    assert normalise_term("   ") == ""
    assert normalise_term("SLA") == "SLA"


def test_normalise_terms_drops_blanks_and_exact_duplicates_in_order() -> None:
    assert normalise_terms(["Dublin", " ", "SLA", "Dublin ", "sla", "  uptime   SLA"]) == [
        "Dublin",
        "SLA",
        "sla",
        "uptime SLA",
    ]
    assert normalise_terms([]) == []


def test_normalise_terms_ignoring_case_keeps_the_first_spelling() -> None:
    assert normalise_terms(["SLA", " sla", "Dublin", "DUBLIN  "], ignore_case=True) == ["SLA", "Dublin"]
    assert normalise_terms(["Straße", "STRASSE"], ignore_case=True) == ["Straße"]  # casefold, not lower


def test_split_terms_reads_a_comma_separated_field() -> None:
    assert split_terms(" Dublin, ,SLA ,Dublin") == ["Dublin", "SLA"]
    assert split_terms("") == []
    assert split_terms("EU  region, eu region", ignore_case=True) == ["EU region"]


def test_match_key_folds_case_and_joiners() -> None:
    assert match_key("  Single-Tenant  Hosting ") == "single tenant hosting"
    assert match_key("multi_tenant\u2013cloud\u2014x") == "multi tenant cloud x"
    assert match_key("Why? The e-mail_id!") == "why? the e mail id!"


def test_match_key_with_punctuation_drops_every_non_word_character_but_underscore() -> None:
    assert match_key("Why? The e-mail_id!", punctuation=True) == "why the e mail_id"
    assert match_key("What about it?", punctuation=True) == match_key("what about  it", punctuation=True)


def test_bidirectional_and_zero_width_characters_are_escaped() -> None:
    """A right-to-left override could make a reviewer read "pay 0001" as "pay 1000" (Trojan Source)."""
    from monitor.text import visible

    assert visible("pay \u202e1000\u202c now\u200b!") == "pay \\u202e1000\\u202c now\\u200b!"
    assert visible("Dublin, café, 東京") == "Dublin, café, 東京"


def test_counted_agrees_in_number():
    assert [counted(n, "case") for n in (0, 1, 2)] == ["0 cases", "1 case", "2 cases"]
    assert counted(3, "query", "queries") == "3 queries"
