"""Replace personal details in a regression case by placeholders, consistently within the case.

One :class:`Redactor` serves one case: the same value maps to the same placeholder (``<EMAIL_1>``,
``<PHONE_2>``, ...) in every field it is given, numbered per kind in order of first appearance, so a
case stays self-consistent (an assertion on a redacted value is rewritten to the same placeholder the
messages use, and replaying the case still tests the same thing). Detected:

========== ===============================================================================================
kind       what is matched
========== ===============================================================================================
CREDENTIAL the ``user:password`` (or ``token``) part of a URL ``scheme://user:password@host``; the host
           and path stay
SECRET     the token of ``Bearer``/``Basic``/``token`` headers; the value given to ``api_key``,
           ``access_key``, ``secret``, ``password``, ``token`` (``=`` or ``:``); prefixed key formats
           (``sk-``, ``ghp_``, ``AKIA``, ``xoxb-``, ``AIza``); the signature parameters of signed URLs
           (``X-Amz-Signature``, ``X-Amz-Credential``, ``sig``, ``se``, ``X-Goog-Signature``, ``token``)
EMAIL      ``local@domain.tld``
IBAN       a country code, two check digits and 11-30 letters or digits (spaces every four allowed)
           that pass the ISO 13616 mod-97 check
IP         IPv4 (four octets 0-255, not directly after ``v``, so ``v1.2.3.4`` is a version) and IPv6
           (anything :mod:`ipaddress` accepts with at least two colons)
CARD       13 to 19 digits, optionally grouped by single spaces or hyphens, that pass the Luhn check
NATIONAL_ID a US Social Security number after "SSN" or "social security" (``SSN 078-05-1120``, the
           SSA's area/group/serial rules), a UK
           National Insurance number (``AB 12 34 56 C``, HMRC's prefix rules), a French NIR with its
           key (``1 85 05 78 006 084 91``), a Spanish DNI or NIE with its check letter (``12345678Z``)
PHONE      a valid number by ``phonenumbers`` (libphonenumber's metadata): any country's in
           international format (``+33 6 12 34 56 78``), and the national formats of
           :data:`PHONE_REGIONS` (``(415) 555-0134``, ``1-800-555-0111``, ``020 7946 0958``,
           ``06 12 34 56 78``); one number written two ways is one placeholder (keyed by E.164)
ADDRESS    an English street line after an address cue (``at 221B Baker Street``, ``address: 1600
           Pennsylvania Avenue NW``), a French street (``12 rue de la Paix``), a capitalised Italian or
           Spanish street with its number (``Via Roma 5``), a German one (``Hauptstraße 5``), a UK
           postcode after a comma or "postcode" (``London, SW1A 1AA``) and a US ZIP code after a state
           code (``Springfield, IL 62704``)
NAME       a person's name where a cue introduces it (spaCy ``Matcher`` patterns over the tokenizer: "my
           name is", "call me", "this is ... from/here", "I'm/I am ... from", a greeting "Hi/Hello/Dear
           ... ,", a title Mr/Mrs/Ms/Miss/Dr/Prof, a field "Name:", a sign-off "Thanks,"/"Regards,"),
           hyphenated and apostrophe names included ("Anne-Marie", "O'Brien"); with no cue, a name
           read with the given names and surnames of Faker's person providers (86 locales) and WordNet
           (:func:`lexicon_names`: "Omar Haddad", "Sofia Marchetti", "Dana's laptop", "Ravi said",
           "ask Tomasz"; not "Dr Pepper", "Charlotte Street", "Georgia's capital"), plus ``PERSON``
           entities when a trained pipeline with an ``ner`` component is given; once found, every later
           occurrence of the name, or of one of its words, is replaced in every field of the case
========== ===============================================================================================

Assertion terms are redacted with the same map, and a term that is a fragment of a replaced value
("555-0134") becomes that value's placeholder (:meth:`Redactor.redact_term`). A value replaced once
(6+ letters or digits) is replaced wherever it repeats verbatim later, whatever the context: a
credential a URL revealed, repeated bare in the logged query.

Limits (no trained NER is installed by default): a name in lower case is not found, nor a name with
no cue whose given name no list holds when WordNet knows that word ("Mei Chen": WordNet lists "mei"),
nor a given name that is also a place or a common word ("Sofia", "Grace") with no surname after it and
no person's place around it ("Sofia's phone"); a brand written as a person's name ("Calvin Klein") is
taken for a name. National phone formats of regions outside :data:`PHONE_REGIONS`, numbers written in
words, the national identity numbers of other countries, an SSN without hyphens or without the word SSN
before it (nine digits alone may be taken for a phone number), an English street line without an
address cue, a postcode without a comma or "postcode" before it or outside the UK and US formats, and an
address without a house number and street type ("the blue house opposite the station") are not found;
a valid-looking national number (an order number shaped like a Paris landline) is taken for a phone; a
Luhn-valid 13-19 digit identifier is taken for a card; a four-part dotted number not after ``v`` is
taken for an IPv4 address; after an address cue, a number followed by capitalised words and a street
type ("moved to 3 Little Pigs Lane", a title) is taken for an address. Only the fields passed to
:meth:`Redactor.redact` are touched. The fault suite's ``tests/faults/pii_fixture.json`` lists,
detail by detail, what is in and out of this scope, and ``scripts/measure_redaction.py`` measures the
whole on ``tests/data/redaction/cases.json``.

Also here, for what leaves the machine beside exports: :func:`outbound_id`, the form of a request or
conversation id in an alert, a log line or an OTLP evaluation record.

The package: :mod:`monitor.privacy.patterns` (the kinds found by pattern, :class:`Span`),
:mod:`monitor.privacy.names` (:class:`NameFinder`, :func:`lexicon_names`), :mod:`monitor.privacy.redactor`
(:class:`Redactor`, :func:`redact_case`, :func:`redact_event`) and :mod:`monitor.privacy.outbound_ids`;
their names are imported from here.
"""

from __future__ import annotations

from monitor.privacy.names import (
    DETERMINERS,
    PERSON_COMPANY_WORDS,
    PERSON_OBJECT_WORDS,
    REPORTING_VERBS,
    NameFinder,
    lexicon_names,
    name_finder,
    name_lexicon,
)
from monitor.privacy.outbound_ids import (
    HASHED_ID_PREFIX,
    HASHED_ID_RE,
    OUTBOUND_ID_MODES,
    hashed_id,
    outbound_id,
    personal_id,
)
from monitor.privacy.patterns import (
    KINDS,
    PHONE_REGIONS,
    Span,
    address_spans,
    iban_ok,
    luhn_ok,
    national_id_spans,
    nir_ok,
    pattern_spans,
    phone_spans,
)
from monitor.privacy.redactor import EVENT_KEEP, Redactor, redact_case, redact_event

__all__ = [
    "DETERMINERS",
    "EVENT_KEEP",
    "HASHED_ID_PREFIX",
    "HASHED_ID_RE",
    "KINDS",
    "OUTBOUND_ID_MODES",
    "PERSON_COMPANY_WORDS",
    "PERSON_OBJECT_WORDS",
    "PHONE_REGIONS",
    "REPORTING_VERBS",
    "NameFinder",
    "Redactor",
    "Span",
    "address_spans",
    "hashed_id",
    "iban_ok",
    "lexicon_names",
    "luhn_ok",
    "name_finder",
    "name_lexicon",
    "national_id_spans",
    "nir_ok",
    "outbound_id",
    "pattern_spans",
    "personal_id",
    "phone_spans",
    "redact_case",
    "redact_event",
]
