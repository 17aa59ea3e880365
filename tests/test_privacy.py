"""Redaction of personal details: every kind, consistency within a case, assertions, and the limits."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.privacy import Redactor, luhn_ok, name_finder, redact_case

FINDER = name_finder()


def _redact(*texts: str) -> list[str]:
    r = Redactor(FINDER)
    r.learn_names(texts)
    return r.redact_all(texts)


def test_each_kind_becomes_a_numbered_placeholder() -> None:
    assert _redact(
        "Hi, my name is Dana Reyes. Email dana.reyes@example.com or call +44 20 7946 0958.",
        "Card 4111 1111 1111 1111, server 10.0.0.12, db postgres://admin:s3cret@db.example.com:5432/app",
        "Also (415) 555-0134, 020 7946 0958 and 2001:db8::1",
    ) == [
        "Hi, my name is <NAME_1>. Email <EMAIL_1> or call <PHONE_1>.",
        "Card <CARD_1>, server <IP_1>, db postgres://<CREDENTIAL_1>@db.example.com:5432/app",
        # 020 7946 0958 is the +44 20 7946 0958 of the first line, written nationally: one number
        "Also <PHONE_2>, <PHONE_1> and <IP_2>",
    ]


def test_the_same_value_gets_the_same_placeholder_however_it_is_written() -> None:
    # the email's case, the phone's separators and the card's grouping do not make a new placeholder
    assert _redact(
        "write to Ops@Example.com, 415-555-0134, 4111-1111-1111-1111",
        "ops@example.com and (415) 555-0134 and 4111111111111111 and another: bo@example.org",
    ) == [
        "write to <EMAIL_1>, <PHONE_1>, <CARD_1>",
        "<EMAIL_1> and <PHONE_1> and <CARD_1> and another: <EMAIL_2>",
    ]


def test_each_name_cue_finds_the_name_and_only_the_name() -> None:
    assert _redact(
        "Hello Sam, this is Priya Patel from Acme.",
        "Dr. Watson asked; call me Lee; I'm Omar Haddad from billing; my name's Ana",
    ) == [
        "Hello <NAME_1>, this is <NAME_2> from Acme.",
        "Dr. <NAME_3> asked; call me <NAME_4>; I'm <NAME_5> from billing; my name's <NAME_6>",
    ]


def test_a_name_introduced_later_is_replaced_earlier_too_and_by_its_parts() -> None:
    assert _redact("Can Dana see the invoice?", "Sorry, my name is Dana Reyes.", "Reyes again") == [
        "Can <NAME_1> see the invoice?",
        "Sorry, my name is <NAME_1>.",
        "<NAME_1> again",
    ]


def test_product_words_versions_dates_and_plain_numbers_are_left_alone() -> None:
    text = (
        "Enterprise plan on v3.2 and v1.2.3.4 in eu-west-1 Dublin since 2024-03-04 at 10:30:00, "
        "order 1234567890123456, 99.9% uptime, port 5432"
    )
    assert _redact(text) == [text]
    assert not luhn_ok("1234567890123456")
    assert luhn_ok("4111111111111111")


def test_a_name_with_no_cue_is_found_by_the_name_lexicon_and_its_context() -> None:
    """Given names and surnames of Faker's person providers, weighed by WordNet (issue 38, part 3)."""
    assert _redact(
        "Send the report to Dana Reyes",  # a given name and a surname
        "Sofia Marchetti called",  # a given name that is also a place, before a word nobody lists
        "Ravi said it works",  # a given name before a reporting verb
        "Please cc Chidi on it",  # a name no list holds, after a verb whose object is a person
        "Dana's laptop is slow",  # a possessive of a given name WordNet knows only as a person
    ) == [
        "Send the report to <NAME_1>",
        "<NAME_2> called",
        "<NAME_3> said it works",
        "Please cc <NAME_4> on it",
        "<NAME_5>'s laptop is slow",  # the lexicon's "Dana Reyes" is not spread: its own
    ]


def test_places_products_and_brands_that_share_a_name_survive() -> None:
    kept = [
        "Is Dr Pepper Zero in the plan?",  # a title before a common word is a product
        "The shop on Charlotte Street is closed.",  # a given name before a street type
        "Ben & Jerry's in the freezer aisle",  # a possessive that governs no noun
        "My Dell XPS 13 has no sound.",  # an acronym is no surname
        "Georgia's capital is Tbilisi.",  # a place's possessive
        "May I ask about Jordan and Austin?",  # given names that are also places and words, no context
    ]
    assert _redact(*kept) == kept


def test_a_name_the_lexicon_alone_found_is_replaced_whole_and_a_determiner_makes_a_brand() -> None:
    """Found by the cold read of issue 38: the single words of a name no cue introduced are not spread to
    every field ("Paris" stays a city), and a name after a determiner is a brand (Quirk et al. 5.60)."""
    assert _redact("Paris Hilton perfume.", "Cheap hotels in Paris.", "Repair for a Louis Vuitton bag.") == [
        "<NAME_1> perfume.",
        "Cheap hotels in Paris.",
        "Repair for a Louis Vuitton bag.",
    ]
    # a cued name's words are still replaced wherever they recur
    assert _redact("My name is Dana Reyes.", "Reyes is on the account.") == [
        "My name is <NAME_1>.",
        "<NAME_1> is on the account.",
    ]


def test_known_limits_of_the_name_lexicon() -> None:
    """A name in lower case, and a given name that is also a place with nothing around it that a person
    fills, are not found."""
    kept = ["my colleague jorge says hi", "Sofia's phone has no signal"]
    assert _redact(*kept) == kept


def _case(**over: object) -> dict[str, object]:
    case: dict[str, object] = {
        "id": "a" * 64,
        "messages": [
            {"role": "user", "content": "My name is Dana Reyes, I'm on the enterprise plan (dana@acme.io)."},
            {"role": "assistant", "content": "Thanks Dana. Which region?"},
        ],
        "latest": "The invoice for dana@acme.io in Dublin",
        "expected_query": "enterprise plan invoice for dana@acme.io in Dublin",
        "must_include": ["dana@acme.io", "Dublin", "enterprise"],
        "must_not_include": ["Dana Reyes", "free tier"],
        "logged": {
            "query": "invoice for dana@acme.io",
            "rewritten": True,
            "resolved": [{"surface": "The invoice", "antecedent": "Dana's invoice", "turn": 1}],
            "dropped": ["enterprise"],
        },
        "reviewer": "alice",
        "source_request_id": "c1_2",
        "redacted": False,
    }
    case.update(over)
    return case


def test_a_case_is_redacted_consistently_and_assertions_only_where_they_are_personal() -> None:
    got = redact_case(_case(), FINDER)
    assert got["messages"] == [
        {"role": "user", "content": "My name is <NAME_1>, I'm on the enterprise plan (<EMAIL_1>)."},
        {"role": "assistant", "content": "Thanks <NAME_1>. Which region?"},
    ]
    assert got["latest"] == "The invoice for <EMAIL_1> in Dublin"
    assert got["expected_query"] == "enterprise plan invoice for <EMAIL_1> in Dublin"
    # the personal assertions are rewritten to the placeholder; "Dublin", "enterprise", "free tier" stay
    assert got["must_include"] == ["<EMAIL_1>", "Dublin", "enterprise"]
    assert got["must_not_include"] == ["<NAME_1>", "free tier"]
    assert got["logged"] == {
        "query": "invoice for <EMAIL_1>",
        "rewritten": True,
        "resolved": [{"surface": "The invoice", "antecedent": "<NAME_1>'s invoice", "turn": 1}],
        "dropped": ["enterprise"],
    }
    # identity and source ids are kept; the input is not modified
    assert (got["reviewer"], got["source_request_id"], got["id"], got["redacted"]) == (
        "alice",
        "c1_2",
        "a" * 64,
        True,
    )
    assert _case()["latest"] == "The invoice for dana@acme.io in Dublin"


def test_numbering_restarts_for_each_case() -> None:
    first = redact_case(_case(), FINDER)
    second = redact_case(_case(latest="bo@x.org then dana@acme.io", messages=[]), FINDER)
    assert first["latest"] == "The invoice for <EMAIL_1> in Dublin"
    assert second["latest"] == "<EMAIL_1> then <EMAIL_2>"


_plain = st.text(alphabet=string.ascii_letters + string.digits + " .,:@-+()/", max_size=80)


@settings(max_examples=200, deadline=None)
@given(st.lists(_plain, min_size=1, max_size=4))
def test_redacting_twice_changes_nothing_more(texts: list[str]) -> None:
    # placeholders hold no personal detail, so a second pass (fresh map) finds nothing new to replace
    once = _redact(*texts)
    assert Redactor(None).redact_all(once) == once


def test_phone_numbers_in_national_and_international_formats() -> None:
    """Parsed by phonenumbers: a French mobile, a US toll-free number with its 1-, a UK landline; the
    key is E.164, so the same number written twice is one placeholder."""
    assert _redact("Ring 06 12 34 56 78, 1-800-555-0111 or +33 6 12 34 56 78; fax 020 7946 0958") == [
        "Ring <PHONE_1>, <PHONE_2> or <PHONE_1>; fax <PHONE_3>"
    ]


def test_ibans_secrets_and_signed_urls() -> None:
    good_iban = "GB82 WEST 1234 5698 7654 32"  # the ISO 13616 example: its check digits hold
    bad_iban = "GB00 WEST 1234 5698 7654 32"
    out = _redact(
        f"Pay to {good_iban}, not {bad_iban}.",
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig' with api_key=abc123def456",
        "key sk-proj-AbCdEfGhIjKlMnOpQrSt and https://b.s3.amazonaws.com/f.pdf?X-Amz-Signature=9f8e7d6c&x=1",
    )
    assert out == [
        f"Pay to <IBAN_1>, not {bad_iban}.",
        "curl -H 'Authorization: Bearer <SECRET_1>' with api_key=<SECRET_2>",
        "key <SECRET_3> and https://b.s3.amazonaws.com/f.pdf?X-Amz-Signature=<SECRET_4>&x=1",
    ]


def test_names_after_field_labels_sign_offs_hyphens_and_apostrophes() -> None:
    assert _redact(
        "Name: Dana Reyes", "Thanks, Omar", "Dear Mrs. Anne-Marie Dupont,", "Mr O'Brien called"
    ) == ["Name: <NAME_1>", "Thanks, <NAME_2>", "Dear Mrs. <NAME_3>,", "Mr <NAME_4> called"]


def test_an_assertion_that_is_a_fragment_of_a_redacted_value_gets_its_placeholder() -> None:
    case = {
        "messages": [{"role": "user", "content": "Call me on (415) 555-0134 or mail dana.reyes@example.com"}],
        "latest": "What about my number?",
        "expected_query": None,
        "must_include": ["555-0134"],
        "must_not_include": ["dana.reyes", "SLA"],
        "logged": None,
    }
    out = redact_case(case, FINDER)
    assert out["messages"][0]["content"] == "Call me on <PHONE_1> or mail <EMAIL_1>"
    assert (out["must_include"], out["must_not_include"]) == (["<PHONE_1>"], ["<EMAIL_1>", "SLA"])


def test_keys_in_env_and_json_forms_and_names_after_a_line_break() -> None:
    out = _redact(
        "export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
        'MY_API_KEY=abcdef123456 and {"token": "abcdefghijklmnop"}',
        "github_pat_11ABCDEFG0123456789abcdef",
        "Thanks,\nBob",
        "Regards,\r\nAlice Smith",
    )
    assert out == [
        "export ANTHROPIC_API_KEY=<SECRET_1>",
        'MY_API_KEY=<SECRET_2> and {"token": "<SECRET_3>"}',
        "<SECRET_4>",
        "Thanks,\n<NAME_1>",
        "Regards,\r\n<NAME_2>",
    ]


def test_a_short_surname_in_an_assertion_is_redacted_as_the_name() -> None:
    r = Redactor(FINDER)
    r.learn_names(["Name: Jane Doe-Smith"])
    assert r.redact("Name: Jane Doe-Smith") == "Name: <NAME_1>"
    assert (r.redact_term("Doe"), r.redact_term("Jane Doe"), r.redact_term("SLA")) == (
        "<NAME_1>",
        "<NAME_1>",
        "SLA",
    )


def test_national_ids_pass_their_own_checks() -> None:
    """An SSN by the SSA's rules (area 000, 666 and 9xx are never issued, nor serial 0000), a NINO by
    HMRC's prefixes, a French NIR whose key is 97 - (number mod 97), a Spanish DNI/NIE whose letter is
    the number mod 23."""
    out = _redact(
        "SSN 078-05-1120, not 000-12-3456 nor 123-45-0000; NI AB 12 34 56 C, not QQ 12 34 56 C",
        "NIR 1 85 05 78 006 084 91 (key 91 holds), not 1 85 05 78 006 084 36",
        "DNI 12345678Z and NIE X1234567L, not 12345678A",
    )
    assert out == [
        "SSN <NATIONAL_ID_1>, not 000-12-3456 nor 123-45-0000; NI <NATIONAL_ID_2>, not QQ 12 34 56 C",
        "NIR <NATIONAL_ID_3> (key 91 holds), not 1 85 05 78 006 084 36",
        "DNI <NATIONAL_ID_4> and NIE <NATIONAL_ID_5>, not 12345678A",
    ]


def test_street_addresses_and_postcodes_where_a_cue_shows_them() -> None:
    out = _redact(
        "I live at 221B Baker Street, London NW1 6XE.",
        "Ship to 1600 Pennsylvania Avenue NW, Washington, DC 20500 or 12 rue de la Paix, 75002 Paris.",
        "Hauptstraße 5 in Berlin, Via Roma 5 in Milan; 3 Main concerns, version 2.1, 100 dollars.",
    )
    assert out == [
        "I live at <ADDRESS_1>, London <ADDRESS_2>.",
        "Ship to <ADDRESS_3>, Washington, <ADDRESS_4> or <ADDRESS_5>, 75002 Paris.",
        "<ADDRESS_6> in Berlin, <ADDRESS_7> in Milan; 3 Main concerns, version 2.1, 100 dollars.",
    ]


def test_product_text_shaped_like_an_address_or_an_id_is_left_alone() -> None:
    """A street line needs an address cue, a postcode a comma or "postcode" before it, an SSN the word
    SSN: the product text a support chat is full of stays as written."""
    text = [
        "MacBook Air M2 8GB",
        "connect via Bluetooth 5",
        "2 TB External Hard Drive",
        "Model 3 Rear Wheel Drive",
        "1973 Supreme Court",
        "Top 5 Easy Way",
        "4 place settings",
        "part number 123-45-6789",
    ]
    assert _redact(*text) == text


def test_a_value_found_in_one_field_is_replaced_where_it_repeats_bare() -> None:
    """The credential a URL revealed, repeated without the URL in the logged query, is the same value:
    it gets the same placeholder (case-insensitively), as a name found by its cue does."""
    r = Redactor()
    assert r.redact("The remote is https://deploy:Xy9-pass@git.acme.io/repo.git.") == (
        "The remote is https://<CREDENTIAL_1>@git.acme.io/repo.git."
    )
    assert (
        r.redact("What about deploy:Xy9-pass, or DEPLOY:XY9-PASS?")
        == "What about <CREDENTIAL_1>, or <CREDENTIAL_1>?"
    )
    assert Redactor().redact("What about deploy:Xy9-pass?") == "What about deploy:Xy9-pass?"  # nothing seen


# -- ids that leave the machine (issue 38, part 2) ------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "personal"),
    [
        ("dana.reyes@example.com", True),
        ("user:dana.reyes@example.com:3", True),
        ("conv_+14155550134_3", True),  # an international number between the separators ids use
        ("dana.reyes%40example.com_3", True),  # percent-encoded
        ("+44 20 7946 0958", True),
        ("sess-192.0.2.44", True),  # a documentation IPv4 address (RFC 5737)
        ("cast2020-81_4", False),
        ("mtrag-clapnq-5b9edac1_2-mixtral", False),
        ("3f2b9c1e-8d4a-4b7e-9f10-2a6c5d8e7b01", False),  # a UUID
        ("req-000123", False),
    ],
)
def test_personal_id_finds_what_the_redactor_finds_inside_an_id(value: str, personal: bool) -> None:
    from monitor.privacy import personal_id

    assert personal_id(value) is personal


def test_outbound_ids_hash_by_mode_with_a_stable_keyed_hash() -> None:
    import hashlib
    import hmac

    from monitor.privacy import hashed_id, outbound_id

    key = b"k" * 64
    want = "pid_" + hmac.new(key, b"dana@example.com", hashlib.sha256).hexdigest()[:20]
    assert hashed_id("dana@example.com", key) == want
    assert outbound_id("dana@example.com", key) == want  # hash_personal: an e-mail goes out hashed
    assert outbound_id("cast2020-81_4", key) == "cast2020-81_4"  # nothing personal: as logged
    assert outbound_id("cast2020-81_4", key, "hash_all") == hashed_id("cast2020-81_4", key)
    assert outbound_id("dana@example.com", key, "raw") == "dana@example.com"
    assert hashed_id("dana@example.com", b"another key" * 6) != want  # the store's key decides
    with pytest.raises(ValueError, match="outbound_ids must be one of hash_personal, hash_all, raw"):
        outbound_id("x", key, "hash")
