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
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from monitor.lexicon import noun_classes, word_classes

if TYPE_CHECKING:
    from spacy.language import Language

KINDS = ("CREDENTIAL", "SECRET", "EMAIL", "IBAN", "IP", "CARD", "NATIONAL_ID", "PHONE", "ADDRESS", "NAME")
"""Detection order; when two matches overlap the earlier one in the text wins, then the longer one,
then the earlier kind in this tuple."""

_CREDENTIAL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://([^\s/@:]+:[^\s/@]*|[^\s/@:]+)@")
_EMAIL = re.compile(r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_IPV4 = re.compile(r"(?<![\w.])(?<!v)(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
PHONE_REGIONS = ("US", "GB", "FR", "DE", "ES", "IT", "NL")
"""Regions whose national formats are recognised without a ``+`` prefix (``(415) 555-0134``,
``020 7946 0958``, ``06 12 34 56 78``); a number with ``+`` and its country code is recognised
whatever its country. Parsed and validated by ``phonenumbers`` (Google's libphonenumber metadata)."""
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])", re.IGNORECASE
)
# Secrets: an Authorization header's token, an "api key"/"token"/"secret"/"password" given a value, the
# usual prefixed key formats, and the signature parameters of signed URLs (AWS SigV4, Azure SAS, GCS).
_SECRETS = (
    re.compile(r"(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=-]{16,})"),
    # KEY=value, KEY: value, "key": "value", with prefixes (MY_API_KEY, AWS_SECRET_ACCESS_KEY)
    re.compile(
        r"(?i)[A-Za-z0-9_]*(?:api[_-]?key|access[_-]?key|secret|password|passwd|pwd|token)[\"']?"
        r"\s*[:=]\s*[\"']?([^\s\"',;&}]{6,})"
    ),
    re.compile(
        r"\b((?:sk|pk|rk)[-_][A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}"
        r"|glpat-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})"
    ),
    re.compile(
        r"(?i)[?&](?:x-amz-signature|x-amz-credential|x-amz-security-token|sig|signature|se|sv"
        r"|x-goog-signature|token)=([^&\s#]+)"
    ),
)


@dataclass(frozen=True, slots=True)
class Span:
    """A detected value: ``text[start:end]`` of ``kind``; ``key`` normalises it for consistency."""

    start: int
    end: int
    kind: str
    key: str


def _digits(s: str) -> str:
    return re.sub(r"\D", "", s)


def luhn_ok(digits: str) -> bool:
    """The Luhn checksum of a digit string (ISO/IEC 7812-1, the check every payment card number passes)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def pattern_spans(text: str) -> list[Span]:
    """Every credential, secret, email, IBAN, IP address, card number, phone number, national identity
    number and postal address in ``text`` (may overlap)."""
    spans: list[Span] = []
    for m in _CREDENTIAL.finditer(text):
        spans.append(Span(m.start(1), m.end(1), "CREDENTIAL", m.group(1)))
    for m in _EMAIL.finditer(text):
        spans.append(Span(m.start(), m.end(), "EMAIL", m.group().lower()))
    for m in _IPV4.finditer(text):
        try:
            spans.append(Span(m.start(), m.end(), "IP", str(ipaddress.IPv4Address(m.group()))))
        except ValueError:
            pass
    for m in _IPV6.finditer(text):
        if m.group().count(":") < 2 or not re.search(r"[0-9A-Fa-f]", m.group()):
            continue
        try:
            spans.append(Span(m.start(), m.end(), "IP", str(ipaddress.IPv6Address(m.group()))))
        except ValueError:
            pass
    for m in _CARD.finditer(text):
        digits = _digits(m.group())
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            spans.append(Span(m.start(), m.end(), "CARD", digits))
    spans.extend(phone_spans(text))
    for m in _IBAN.finditer(text):
        # The pattern may run on into the words after a grouped IBAN ("... 1332 please", "... 3201 for"):
        # the longest run of its groups that passes the check is the IBAN. Typed in lower case too.
        groups = m.group().split(" ")
        for k in range(len(groups), 0, -1):
            candidate = " ".join(groups[:k])
            if iban_ok(candidate.replace(" ", "").upper()):
                spans.append(
                    Span(m.start(), m.start() + len(candidate), "IBAN", candidate.replace(" ", "").upper())
                )
                break
    for rx in _SECRETS:
        for m in rx.finditer(text):
            spans.append(Span(m.start(1), m.end(1), "SECRET", m.group(1)))
    spans.extend(national_id_spans(text))
    spans.extend(address_spans(text))
    return spans


def phone_spans(text: str, regions: Iterable[str] = PHONE_REGIONS) -> list[Span]:
    """Valid phone numbers in ``text`` (``phonenumbers``, leniency VALID) in any of ``regions``'
    national formats or in international format; the key is the E.164 form, so one number written two
    ways gets one placeholder. Where two regions read overlapping numbers, the first region wins."""
    import phonenumbers

    found: list[Span] = []
    for region in regions:
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            if any(f.start < m.end and m.start < f.end for f in found):
                continue
            key = phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164)
            found.append(Span(m.start, m.end, "PHONE", key))
    return found


def iban_ok(iban: str) -> bool:
    """The ISO 13616 check of an IBAN (no spaces): 15-34 characters, mod 97 of the rearranged number is 1."""
    if not 15 <= len(iban) <= 34:
        return False
    moved = iban[4:] + iban[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


# -- national identity numbers and postal addresses ------------------------------------------------
# US Social Security numbers as the SSA issues them: area 001-899 except 666, group 01-99, serial
# 0001-9999, written with hyphens (SSA, "The SSN numbering scheme"; Program Operations Manual RM 10201).
# A number of that shape is an SSN only where the text says so ("SSN", "social security (number)",
# "SS#"), within a few words before it: a part or order number is written the same way.
_SSN = re.compile(
    r"(?i:\bssn|\bsocial\s+security(?:\s+(?:number|no\.?|#))?|\bss\s*#)\W{0,3}(?:\w+\W+){0,3}?"
    r"(?P<ssn>(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-]))"
)
# UK National Insurance numbers: two prefix letters (not D, F, I, Q, U, V; second not O; not the
# unallocated BG, GB, KN, NK, NT, TN, ZZ), six digits, suffix A-D (HMRC National Insurance Manual
# NIM39110).
_NINO = re.compile(
    r"(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])"
)
# French NIR (numéro de sécurité sociale): sex 1/2, year, month, department (2A/2B for Corsica),
# commune, order, then a two-digit key = 97 - (number mod 97) (INSEE, décret 82-103).
_NIR = re.compile(
    r"(?<!\d)([12]) ?(\d{2}) ?(0[1-9]|1[0-2]|[2-9]\d) ?(\d{2}|2[AB]) ?(\d{3}) ?(\d{3}) ?(\d{2})(?!\d)"
)
# Spanish DNI / NIE: eight digits (NIE: X, Y or Z and seven) and the letter that checks them,
# "TRWAGMYFPDXBNJZSQVHLCKE"[number mod 23] (Real Decreto 1553/2005, art. 11).
_DNI = re.compile(r"(?<![A-Za-z0-9])([XYZ]?)(\d{7,8})-?([A-Z])(?![A-Za-z0-9])")
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
# Postal addresses, where the text shows one. English street lines ("221B Baker Street", "1600
# Pennsylvania Avenue NW") only after an address cue ("at", "to", "address:", "live on"): a number, words
# and "Drive" are as often a product ("2 TB External Hard Drive", "Model 3 Rear Wheel Drive"). A French
# street ("12 rue de la Paix"; "avenue", "boulevard", "place" only before "de"/"du"/"des"/"la"/"l'"), a
# capitalised Italian or Spanish street word with its number ("Via Roma 5", "Calle Mayor 3"), a German
# street word ending in -straße/-strasse/-weg/-platz/-allee/-gasse with its number ("Hauptstraße 5").
# Postcodes that name a street or a few houses only in an address too: a UK postcode (Royal Mail's
# "Postcode Address File" format) after a comma, or a comma and a town, or "postcode" ("..., London NW1
# 6XE", "London, SW1A 1AA"; not "MacBook Air M2 8GB"), and a US ZIP code after a state code ("Springfield,
# IL 62704"). A town or a country alone is not a personal detail.
_STREET_TYPES = (
    "street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|place|pl|way|terrace|close"
    "|crescent|square|sq|highway|hwy|parkway|pkwy"
)
_ADDRESS_CUE = (
    r"(?i:\b(?:at|to|on|address(?:\s+is)?\s*:?|addr\.?\s*:?|live\s+(?:at|on)|located\s+at|moved\s+to"
    r"|deliver(?:ed)?\s+(?:it\s+)?to|ship(?:ped)?\s+(?:it\s+)?to|send\s+(?:it\s+)?to))\s+"
)
_STREET = (
    rf"\d{{1,5}}[A-Za-z]?,? (?:[A-Z][\w'’.-]*\.? ){{1,4}}(?i:{_STREET_TYPES})\b\.?"
    r"(?: (?:N|S|E|W|NE|NW|SE|SW)\b)?"
)
_UK_POSTCODE = r"(?:[A-Z]{1,2}\d[A-Z\d]?|[A-Z]{1,2}\d{2}) ?\d[ABD-HJLNP-UW-Z]{2}(?![A-Za-z0-9])"
_ADDRESSES = (
    re.compile(rf"{_ADDRESS_CUE}(?P<a>{_STREET})"),
    re.compile(
        r"(?P<a>(?<![\w-])\d{1,5}(?:bis|ter)?,? (?:(?i:rue|chemin|allée|impasse|quai)"
        r"|(?i:avenue|boulevard|place)(?= (?:de|du|des|la|l'|d')\b))"
        r"(?: (?:de|du|des|la|le|l'|d')?\s?[\w'’-]+){1,5})"
    ),
    re.compile(r"(?P<a>\b(?:Via|Viale|Piazza|Calle|Avenida|Plaza) (?:[A-Z][\w'’-]*\s?){1,4},? \d{1,5})\b"),
    re.compile(r"(?P<a>\b[A-ZÄÖÜ][\wäöüß-]*(?:straße|strasse|str\.|weg|platz|allee|gasse) \d{1,5}[a-z]?)\b"),
    re.compile(
        r"(?:(?i:post\s*code|postal\s+code)(?:\s+(?i:there|here|is|was|will\s+be)){0,2}\W{0,3}"
        r"|, (?:[A-Z][a-z]+,? )?)"
        rf"(?P<a>(?<![A-Za-z0-9]){_UK_POSTCODE})"
    ),
    re.compile(
        r"(?<=, )(?P<a>(?:A[LKZR]|C[AOT]|D[EC]|FL|GA|HI|I[DLNA]|K[SY]|LA|M[EDAINSOT]|N[EVHJMYCD]|O[HKR]|PA|RI"
        r"|S[CD]|T[NX]|UT|V[TA]|W[AVIY]) \d{5}(?:-\d{4})?)\b"
    ),
)


def nir_ok(groups: tuple[str, ...]) -> bool:
    """The key check of a French NIR: the 13-digit number (Corsica's 2A/2B read as 19/18) mod 97 is
    97 minus the key."""
    body = "".join(groups[:6]).replace("2A", "19").replace("2B", "18")
    return 97 - int(body) % 97 == int(groups[6])


def national_id_spans(text: str) -> list[Span]:
    """US SSNs, UK National Insurance numbers, French NIRs (with their key check) and Spanish DNIs/NIEs
    (with their check letter) in ``text``; the key is the number without spaces or hyphens."""
    spans = [
        Span(m.start("ssn"), m.end("ssn"), "NATIONAL_ID", _digits(m.group("ssn")))
        for m in _SSN.finditer(text)
    ]
    spans += [
        Span(m.start(), m.end(), "NATIONAL_ID", m.group().replace(" ", "")) for m in _NINO.finditer(text)
    ]
    for m in _NIR.finditer(text):
        if nir_ok(m.groups()):
            spans.append(Span(m.start(), m.end(), "NATIONAL_ID", re.sub(r"\s", "", m.group())))
    for m in _DNI.finditer(text):
        prefix, number, letter = m.groups()
        if len(prefix) + len(number) != 8:
            continue
        value = int(str("XYZ".index(prefix)) + number if prefix else number)
        if _DNI_LETTERS[value % 23] == letter:
            spans.append(Span(m.start(), m.end(), "NATIONAL_ID", prefix + number + letter))
    return spans


def address_spans(text: str) -> list[Span]:
    """Street addresses and postcodes in ``text`` where a street cue or a postcode format shows one
    (see the patterns above); the key is the lower-cased text."""
    return [
        Span(m.start("a"), m.end("a"), "ADDRESS", " ".join(m.group("a").lower().split()))
        for rx in _ADDRESSES
        for m in rx.finditer(text)
    ]


# -- names -----------------------------------------------------------------------------------------
_TITLES = ["mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "dr", "dr.", "prof", "prof."]
# Matcher token patterns: dicts of attribute -> value or operator, as spaCy's Matcher.add types them.
# A capitalised word, letters or an apostrophe ("O'Brien"); a hyphenated name ("Anne-Marie", which the
# tokenizer splits at the hyphen) is joined back after the match (NameFinder.names).
_NAME_TOKEN: dict[str, Any] = {
    "IS_TITLE": True,
    "TEXT": {"REGEX": r"^[^\W\d_]+(?:['’][^\W\d_]+)?$"},
    "OP": "{1,3}",
}
_CUES: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    # id: (tokens before the name, tokens after it); the name is what lies between
    "my_name_is": ([{"LOWER": "my"}, {"LOWER": "name"}, {"LOWER": {"IN": ["is", "'s"]}}], []),
    "call_me": ([{"LOWER": "call"}, {"LOWER": "me"}], []),
    "this_is": ([{"LOWER": "this"}, {"LOWER": "is"}], [{"LOWER": {"IN": ["from", "here"]}}]),
    "i_am": ([{"LOWER": "i"}, {"LOWER": {"IN": ["am", "'m"]}}], [{"LOWER": "from"}]),
    "greeting": ([{"LOWER": {"IN": ["hi", "hello", "hey", "dear"]}}], [{"TEXT": {"IN": [",", "!"]}}]),
    "title": ([{"LOWER": {"IN": _TITLES}}], []),
    # a form field ("Name: Dana Reyes") and a sign-off ("Thanks, Dana", "Regards, Omar Haddad")
    "name_field": ([{"LOWER": {"IN": ["name", "customer", "contact"]}}, {"TEXT": ":"}], []),
    "signoff": (
        [
            {"LOWER": {"IN": ["thanks", "regards", "cheers", "best", "sincerely", "br"]}},
            {"TEXT": ","},
        ],
        [],
    ),
}


# Names with no cue: a given name of the lexicon, then a surname, or in a person's place in the sentence.
_WORD_RE = re.compile(r"[^\W\d_]+(?:['’](?![sS]\b)[^\W\d_]{2,})?(?:-[^\W\d_]+)*")
"""A word as names are written: letters, an apostrophe inside ("O'Connor"; not a contraction, "I'm", nor
a possessive, "Dana's") and hyphenated parts ("Anne-Marie")."""
_LATIN = re.compile(r"^[A-Za-zÀ-ɏ]+(?:['’-][A-Za-zÀ-ɏ]+)*$")
REPORTING_VERBS = frozenset(
    {"said", "says", "told", "tells", "asked", "asks", "wrote", "writes", "emailed", "called", "calls"}
    | {"mentioned", "mentions", "replied", "replies", "confirmed", "confirms", "reported", "reports"}
    | {"thinks", "thought", "wants", "wanted", "needs", "needed", "noticed", "added", "sent", "approved"}
    | {"explained", "suggested", "promised", "agreed", "insists", "insisted", "claims", "claimed"}
)
"""Verbs whose subject is a person: the reporting verbs of Quirk et al. (1985, 16.25), in the forms
chats use, and a few verbs of wanting and approving. "Ravi said the export finished" names a person."""
PERSON_COMPANY_WORDS = frozenset({"with", "let", "per", "can", "could", "will", "would", "did"})
"""Words before a given name that make it a person's when the name is neither a place nor a common word
(:func:`_ambiguous`): "spoke with David", "let Jennifer know", "per Michael", "can Lisa approve" (the
subject of a question after its auxiliary: Quirk et al. 1985, 11.5). Not "and": "Echo and Alexa" are
products as often as people."""
PERSON_OBJECT_WORDS = frozenset(
    {"ask", "tell", "email", "e-mail", "call", "cc", "contact", "thank", "message", "text", "ping", "remind"}
    | {"invite", "colleague", "manager", "boss", "wife", "husband", "partner", "son", "daughter", "friend"}
    | {"coworker", "co-worker", "teammate", "assistant", "brother", "sister", "mother", "father", "mom"}
    | {"dad", "mum", "supervisor", "customer", "client", "tenant", "landlord", "neighbour", "neighbor"}
)
"""Words after which a given name is a person's: verbs whose object is a person ("ask Tomasz", "cc
Chidi") and nouns of kinship and work roles in apposition ("my manager Ingrid"; Quirk et al. 1985,
17.65: close apposition)."""


@lru_cache(maxsize=1)
def name_lexicon() -> tuple[frozenset[str], frozenset[str]]:
    """(given names, surnames) in Latin script from the person providers of every locale ``faker`` ships
    (86 locales; about 21,000 given names and 20,000 surnames, from each locale's own sources as Faker
    documents them). Loaded once (about 0.5 s)."""
    import importlib
    import pkgutil

    import faker.providers.person as people

    given: set[str] = set()
    family: set[str] = set()
    for module in pkgutil.iter_modules(people.__path__):
        provider = importlib.import_module(f"{people.__name__}.{module.name}").Provider
        for attr in dir(provider):
            values = getattr(provider, attr)
            if not isinstance(values, (tuple, list, dict)):
                continue
            words = {v for v in values if isinstance(v, str) and _LATIN.match(v)}
            if attr.startswith(("first_name", "first_romanized")):
                given |= words
            elif attr.startswith(("last_name", "last_romanized")):
                family |= words
    return frozenset(given), frozenset(family)


@lru_cache(maxsize=1 << 14)
def _senses(word: str) -> tuple[frozenset[str], bool]:
    """WordNet's noun classes of ``word`` (lower case) and whether it is also a verb, adjective or
    adverb (``monitor.lexicon``)."""
    low = word.lower()
    classes = word_classes()
    return noun_classes(low, low), any(low in classes[p] for p in ("verb", "adj", "adv"))


def _ambiguous(word: str) -> bool:
    """Whether a given name is also a place or a common word in WordNet ("Jordan", "Georgia", "Grace",
    "Will"): then only a surname after it, or a person's place in the sentence, makes it a name. A word
    WordNet knows only as a person ("Dana", "Noah") is not ambiguous."""
    nouns, other = _senses(word)
    return other or bool(nouns - {"person"})


def _common(word: str) -> bool:
    """Whether ``word`` is a common word in WordNet: a verb, adjective or adverb, or a noun of a class
    other than a person, a place or a natural object ("Grace", "White", "Pepper"; not "Jordan",
    "O'Connor")."""
    nouns, other = _senses(word)
    return other or bool(nouns - {"person", "location", "object"})


def _stop(word: str) -> bool:
    """A function word ("My", "The"), which starts no name whatever a lexicon lists."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return word.lower() in STOP_WORDS


def _owns(text: str, at: int) -> bool:
    """Whether the possessive ending at ``at`` governs a noun phrase: a content word follows ("Dana's
    laptop"), not a function word ("Jerry's in the freezer aisle": a shop's or brand's name)."""
    m = re.match(r"\s+([^\W\d_][\w-]*)", text[at:])
    return m is not None and not _stop(m.group(1))


def _title_word(word: str) -> bool:
    """Whether the word after a title (Dr, Mr, ...) is a common word no surname list holds ("Dr
    Pepper"), so the title starts a product's name, not a person's."""
    return word not in name_lexicon()[1] and _common(word)


DETERMINERS = frozenset(
    {"the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "this", "that", "these", "those"}
    | {"every", "each", "any", "some", "no"}
)
"""A person's name takes no determiner (Quirk et al. 1985, 5.60): after one, a name is a brand or a
classifier ("a Louis Vuitton bag", "my Morgan Stanley account", "the Macy's order")."""


def _inside_a_name(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Whether ``words[i]`` follows a determiner, or continues a capitalised name that started before it
    mid-sentence ("Trader Joe's"): a brand's or an organisation's name, not a person's."""
    if i == 0:
        return False
    prev = words[i - 1]
    if prev.group().lower() in DETERMINERS:
        return True
    gap = text[prev.end() : words[i].start()]
    if gap != " " or not prev.group()[:1].isupper() or _stop(prev.group()):
        return False
    # mid-sentence: a word before the capitalised one, with no sentence end between
    before = text[: prev.start()].rstrip()
    return (
        bool(before) and before[-1] not in ".!?:;\n\"'(" and prev.group().lower() not in PERSON_OBJECT_WORDS
    )


def lexicon_names(text: str) -> list[tuple[int, str]]:
    """``(start, name)`` of the person names in ``text`` that no cue introduces, read with
    :func:`name_lexicon` and WordNet (:func:`_ambiguous`):

    - a given name and a capitalised word after it that is a surname no street type ends ("Omar Haddad";
      "Dana White" when the given name is not ambiguous; not "Charlotte Street"), or a word WordNet does
      not know that is no given name ("Sofia Marchetti"; not "Santa Clara") after an unambiguous given
      name;
    - a given name before ``'s`` that is not ambiguous ("Dana's laptop"; not "Georgia's capital");
    - a given name after a word of :data:`PERSON_OBJECT_WORDS` ("ask Tomasz", "my manager Ingrid") or
      before a verb of :data:`REPORTING_VERBS` ("Ravi said").
    """
    given, family = name_lexicon()
    words = list(_WORD_RE.finditer(text))
    found: list[tuple[int, str]] = []
    i = 0
    while i < len(words):
        w = words[i].group()
        if not w[0].isupper() or len(w) < 2 or _stop(w) or _inside_a_name(text, words, i):
            i += 1
            continue
        nxt = words[i + 1] if i + 1 < len(words) else None
        adjacent = nxt is not None and text[words[i].end() : nxt.start()] == " "
        second = nxt.group() if nxt is not None and adjacent and nxt.group()[:1].isupper() else ""
        second = "" if second.isupper() else second  # "Dell XPS": an acronym is no surname
        if second and not _stop(second):
            nouns, other = _senses(second)
            known = bool(nouns) or other
            street = re.fullmatch(_STREET_TYPES, second.lower()) is not None or "location" in nouns
            if w in given:
                full = second in family and not street and (not _common(second) or not _ambiguous(w))
                full = full or (not known and second not in given and second not in family and not _common(w))
            else:  # a given name the lexicon lacks ("Chidi"), before a surname it has ("Okafor")
                full = second in family and not known and not any(_senses(w))
            if full and nxt is not None:
                found.append((words[i].start(), text[words[i].start() : nxt.end()]))
                i += 2
                continue
        before = words[i - 1].group().lower() if i > 0 else ""
        if w not in given:
            if before in PERSON_OBJECT_WORDS and not any(_senses(w)):  # "cc Chidi"
                found.append((words[i].start(), w))
            i += 1
            continue
        after = text[words[i].end() : words[i].end() + 2]
        two_before = " ".join(x.group().lower() for x in words[max(0, i - 2) : i])
        then = nxt.group().lower() if nxt is not None else ""
        if (
            (after in ("'s", "’s") and not _ambiguous(w) and _owns(text, words[i].end() + 2))
            or before in PERSON_OBJECT_WORDS
            or (then in REPORTING_VERBS and not second)
            or (two_before in ("this is", "i am", "i'm", "i’m", "am i") and not _common(w))
            or (before in PERSON_COMPANY_WORDS and not second and not _ambiguous(w))
            or (then == "from" and not _ambiguous(w))  # "Steve from IT"
        ):
            found.append((words[i].start(), w.removesuffix("'s").removesuffix("’s")))
        i += 1
    return found


class NameFinder:
    """Finds person names in text with cue patterns (and ``PERSON`` entities of a trained pipeline).

    ``nlp``: a spaCy ``Language``; default ``spacy.blank("en")`` (tokenizer only, no download). A
    pipeline with an ``ner`` component adds its ``PERSON`` entities.
    """

    def __init__(self, nlp: Language | None = None, *, lexicon: bool = True) -> None:
        import spacy

        self.lexicon = lexicon
        from spacy.matcher import Matcher

        self.nlp = nlp if nlp is not None else spacy.blank("en")
        self.matcher = Matcher(self.nlp.vocab)
        self._shape: dict[int, tuple[int, int]] = {}
        for cue, (before, after) in _CUES.items():
            # a name may follow its cue after a line break or extra spaces ("Thanks,\nBob")
            gap = [{"IS_SPACE": True, "OP": "?"}]
            self.matcher.add(cue, [[*before, *gap, _NAME_TOKEN, *after]], greedy="LONGEST")
            self._shape[self.nlp.vocab.strings[cue]] = (len(before), len(after))

    def names(self, text: str) -> list[str]:
        """The names found in ``text``, in order of appearance, without repeats."""
        return [name for name, _cued in self.found(text)]

    def found(self, text: str) -> list[tuple[str, bool]]:
        """``(name, cued)`` for each name of :meth:`names`: ``cued`` when a cue or the NER model found
        it, not the lexicon alone. Only a cued name's single words are replaced wherever they recur
        (:meth:`Redactor.learn_names`): "Paris" of a "Paris Hilton" the lexicon read stays a city."""
        doc = self.nlp(text)
        found: list[tuple[int, str]] = []
        for match_id, start, end in self.matcher(doc):
            before, after = self._shape[match_id]
            first, last = start + before, end - after
            while first < last and doc[first].is_space:
                first += 1
            # join a hyphenated name the tokenizer split ("Anne" "-" "Marie") and the words after it
            words = last - first
            while (
                last + 1 < len(doc)
                and doc[last].text == "-"
                and doc[last].whitespace_ == ""
                and doc[last - 1].whitespace_ == ""
                and doc[last + 1].is_title
            ):
                last += 2
                while last < len(doc) and doc[last].is_title and doc[last].is_alpha and words < 3:
                    last += 1
                    words += 1
            span = doc[first:last]
            if len(span) and not (
                self.nlp.vocab.strings[match_id] == "title" and self.lexicon and _title_word(span[0].text)
            ):
                found.append((span.start_char, span.text))
        if "ner" in self.nlp.pipe_names:
            found.extend((e.start_char, e.text) for e in doc.ents if e.label_ == "PERSON")
        cued = {name for _pos, name in found}
        if self.lexicon:
            found.extend(lexicon_names(text))
        out: dict[str, bool] = {}
        for _pos, name in sorted(found):
            out.setdefault(name, name in cued)
        return list(out.items())


@lru_cache(maxsize=4)
def name_finder(model: str | None = None) -> NameFinder:
    """A process-wide :class:`NameFinder` on ``spacy.load(model)``, or on blank English when ``None``."""
    if model is None:
        return NameFinder()
    import spacy

    return NameFinder(spacy.load(model))


# -- the redactor ----------------------------------------------------------------------------------
@dataclass
class Redactor:
    """Redacts the fields of one case with one placeholder map (see the module docstring).

    Call :meth:`learn_names` with every text of the case first, so a name introduced in a later
    message is also replaced where it appears earlier; then :meth:`redact` each field in a fixed order
    (the order fixes the numbering).
    """

    finder: NameFinder | None = None
    placeholders: dict[tuple[str, str], str] = field(default_factory=dict)
    _counts: Counter[str] = field(default_factory=Counter)
    _names: dict[str, str] = field(default_factory=dict)  # surface -> full name it belongs to
    _surfaces: dict[str, set[str]] = field(default_factory=dict)  # placeholder -> texts it replaced
    _seen: dict[str, tuple[str, str]] = field(default_factory=dict)  # replaced text -> (kind, key)

    def learn_names(self, texts: Iterable[str]) -> None:
        if self.finder is None:
            return
        found = [hit for text in texts for hit in self.finder.found(text)]
        # cued names first: "Dana" the lexicon read in "Can Dana see ...?" is the "Dana Reyes" a later
        # "my name is" introduced, so both take one placeholder
        for name, cued in sorted(found, key=lambda hit: not hit[1]):
            self._names.setdefault(name, name)
            for part in re.split(r"[\s-]+", name) if cued else ():
                if len(part) > 1 and part[0].isupper():
                    self._names.setdefault(part, name)

    def _name_spans(self, text: str) -> list[Span]:
        spans = []
        for surface, full in self._names.items():
            for m in re.finditer(rf"(?<!\w){re.escape(surface)}(?!\w)", text):
                spans.append(Span(m.start(), m.end(), "NAME", full))
        return spans

    key: bytes | None = None
    """With a key, a placeholder is keyed by the value (``<EMAIL_3f9a0c12>``: HMAC-SHA256 of kind and
    value, 8 hex) instead of numbered: the same value gets the same placeholder in every text redacted
    with the key, across cases and events (what ``redact_at_ingest`` needs: a rewrite and the transcript
    it was made from are separate events), and nothing learns the value without the key."""

    def _placeholder(self, span: Span) -> str:
        got = self.placeholders.get((span.kind, span.key))
        if got is None:
            if self.key is not None:
                mac = hmac.new(self.key, f"{span.kind}:{span.key}".encode(), hashlib.sha256).hexdigest()
                got = f"<{span.kind}_{mac[:8]}>"
            else:
                self._counts[span.kind] += 1
                got = f"<{span.kind}_{self._counts[span.kind]}>"
            self.placeholders[(span.kind, span.key)] = got
        return got

    def redact(self, text: str) -> str:
        """``text`` with every detected value replaced by its placeholder."""
        spans = pattern_spans(text) + self._name_spans(text) + self._seen_spans(text)
        spans.sort(key=lambda s: (s.start, -(s.end - s.start), KINDS.index(s.kind)))
        out, pos = [], 0
        for s in spans:
            if s.start < pos:
                continue  # overlaps a span already replaced
            out.append(text[pos : s.start])
            placeholder = self._placeholder(s)
            surface = text[s.start : s.end]
            self._surfaces.setdefault(placeholder, set()).add(surface.lower())
            if sum(c.isalnum() for c in surface) >= 6:
                # without a closing period a pattern took along ("742 Evergreen Terrace."), so the
                # value repeated bare (a resolved antecedent, a dropped term) is found again
                self._seen.setdefault(surface.lower().rstrip(".,;:"), (s.kind, s.key))
            out.append(placeholder)
            pos = s.end
        out.append(text[pos:])
        return "".join(out)

    def _seen_spans(self, text: str) -> list[Span]:
        """Every verbatim (case-insensitive) occurrence of a value this redactor replaced before, 6+
        letters or digits long: a credential found in a URL and repeated bare in the logged query
        ("deploy:Xy9-pass") is the same value without the context that revealed it."""
        if not self._seen:
            return []
        lower = text.lower()
        return [
            Span(m.start(), m.end(), kind, key)
            for surface, (kind, key) in self._seen.items()
            if surface in lower
            for m in re.finditer(rf"(?<!\w){re.escape(surface)}(?!\w)", lower)
        ]

    def redact_all(self, texts: Iterable[str]) -> list[str]:
        return [self.redact(t) for t in texts]

    def redact_term(self, term: str) -> str:
        """An assertion term (``must_include``/``must_not_include``) redacted consistently with the texts
        redacted before it: a term that is a fragment of a replaced value ("555-0134" of
        "(415) 555-0134", "dana.reyes" of an e-mail address) becomes that value's placeholder, so the
        case never keeps a piece of what its messages hide. A fragment needs 4 letters or digits."""
        red = self.redact(term)
        if red != term:
            # "Jane Doe" -> "<NAME_1> <NAME_1>": one value, one placeholder
            return re.sub(r"(<[A-Z][A-Z_]*_[0-9a-f]+>)(?:[\s-]+\1)+", r"\1", red)
        probe = term.strip().lower()
        if sum(c.isalnum() for c in probe) >= 4:
            for placeholder, surfaces in self._surfaces.items():
                if any(probe in surface for surface in surfaces):
                    return placeholder
        return term


def redact_case(case: dict[str, Any], finder: NameFinder | None) -> dict[str, Any]:
    """A copy of an exported case (``monitor.cases.export`` shape) with its personal details redacted.

    Redacted, in this order: message contents, ``latest``, ``expected_query``, ``must_include``,
    ``must_not_include``, and the logged rewrite (``query``, ``resolved`` surfaces and antecedents,
    ``dropped``). Ids, labels, reviewer, model and times are kept as they are.
    """
    r = Redactor(finder)
    logged = case.get("logged")
    texts = [m["content"] for m in case["messages"]] + [case["latest"]]
    r.learn_names(texts)
    sub: Callable[[str | None], str | None] = lambda t: None if t is None else r.redact(t)  # noqa: E731
    out = dict(case)
    out["messages"] = [{**m, "content": r.redact(m["content"])} for m in case["messages"]]
    out["latest"] = r.redact(case["latest"])
    out["expected_query"] = sub(case.get("expected_query"))
    out["must_include"] = [r.redact_term(t) for t in case["must_include"]]
    out["must_not_include"] = [r.redact_term(t) for t in case["must_not_include"]]
    if logged is not None:
        out["logged"] = {
            **logged,
            "query": r.redact(logged["query"]),
            "resolved": [
                {**x, "surface": r.redact(x["surface"]), "antecedent": r.redact(x["antecedent"])}
                for x in logged["resolved"]
            ],
            "dropped": r.redact_all(logged["dropped"]),
        }
    out["redacted"] = True
    return out


EVENT_KEEP = frozenset(
    {
        "event",
        "ts",
        "conv_id",
        "request_id",
        "turn",
        "n_messages",
        "roles",
        "first_ts",
        "last_ts",
        "monotonic",
        "digest",
        "client_turn_count",
        "role",
        "model",
        "prompt_version",
        "rewritten",
        "latency_ms",
        "rank",
        "doc_id",
        "score",
        "api_created",
        "transcript_kind",
    }
)
"""Fields of a log event (``schemas/``) that hold ids, times, counts and names of the rewriter, never
free text: kept as logged by :func:`redact_event`. Every other string, at any depth, is redacted."""


def _map_free_text(value: Any, fn: Callable[[str], str], field_name: str | None = None) -> Any:
    """``value`` (decoded JSON) with ``fn`` applied to every string not under a key of
    :data:`EVENT_KEEP`, at any depth; other values as they are."""
    if field_name in EVENT_KEEP:
        return value
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_free_text(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_free_text(v, fn, k) for k, v in value.items()}
    return value


def redact_event(raw: dict[str, Any], key: bytes, finder: NameFinder | None = None) -> dict[str, Any]:
    """A copy of a decoded log event with every free-text string redacted, placeholders keyed by ``key``
    (see :attr:`Redactor.key`), for the ``redact_at_ingest`` setting.

    Names are learned from all the event's texts first (a name introduced in one message is replaced in
    every other). A ``ctx_input`` whose logged ``digest`` matches its messages gets the digest of the
    redacted messages, so the digest checks judge the stored transcript as they would have judged the
    logged one; a digest that did not match is kept, and still does not."""
    from monitor.record import Message, transcript_digest

    r = Redactor(finder, key=key)
    texts: list[str] = []

    def collect(text: str) -> str:
        texts.append(text)
        return text

    _map_free_text(raw, collect)
    r.learn_names(texts)
    out: dict[str, Any] = _map_free_text(raw, r.redact)
    messages = raw.get("messages")
    if raw.get("event") == "ctx_input" and isinstance(messages, list) and isinstance(raw.get("digest"), str):

        def msgs(ms: list[Any]) -> list[Message]:
            return [Message(role=str(m.get("role")), content=str(m.get("content")), ts=None) for m in ms]

        if transcript_digest(msgs(messages)) == raw["digest"]:
            out["digest"] = transcript_digest(msgs(out["messages"]))
    return out


# -- ids that leave the machine ------------------------------------------------------------------------
OUTBOUND_ID_MODES = ("hash_personal", "hash_all", "raw")
"""What an external payload carries for a request or conversation id (the ``outbound_ids`` setting):
``hash_personal`` (default) the keyed hash of an id in which :func:`personal_id` finds personal data
and the id itself otherwise, ``hash_all`` the hash of every id, ``raw`` every id as logged."""
HASHED_ID_PREFIX = "pid_"
HASHED_ID_RE = re.compile(r"^pid_[0-9a-f]{20}$")
"""What a hashed id looks like: ``pid_`` and 20 hex characters (80 bits of HMAC-SHA256: no two ids of
one store meet by chance)."""
_ID_SEPARATORS = re.compile(r"[_:/|#=;,]+")


@lru_cache(maxsize=1 << 16)
def personal_id(value: str) -> bool:
    """Whether the redactor (:func:`pattern_spans`: e-mail, phone in any of :data:`PHONE_REGIONS`'
    formats or international, IBAN, card, IP, national id, credential, secret, street address) finds
    personal data in the id ``value``, read as written, percent-decoded (``dana%40example.com``) and with
    the separators ids use (``_ : / | # = ; ,``) as spaces, so ``conv_+14155550134_3`` and
    ``user:dana@example.com`` are found. Errs towards hashing: a 10-digit number that is a valid phone
    number, or a Luhn-valid digit run, is hashed whatever it stands for. A name is not looked for (an id
    has no sentence to read it in)."""
    from urllib.parse import unquote

    # memoised: findings --otlp asks for the same request and conversation ids once per finding, and
    # each ask runs the phone matcher of seven regions over up to four forms (about 0.5 ms)
    forms = [value, unquote(value)]
    forms += [_ID_SEPARATORS.sub(" ", f) for f in forms]
    return any(pattern_spans(form) for form in dict.fromkeys(forms))


def hashed_id(value: str, key: bytes) -> str:
    """``pid_`` and the first 20 hex characters of HMAC-SHA256 of ``value`` under ``key``: the same id
    gives the same hash in every payload of one store, and nobody without the store's key can tell which
    id it was (``rewrite-monitor show pid_...`` resolves it locally)."""
    return HASHED_ID_PREFIX + hmac.new(key, value.encode(), hashlib.sha256).hexdigest()[:20]


def outbound_id(value: str, key: bytes, mode: str = "hash_personal") -> str:
    """The form of the id ``value`` an external payload (an alert to Sentry, a webhook, Slack or
    PagerDuty, the worker's log, the OTLP evaluation records) carries under ``mode``
    (:data:`OUTBOUND_ID_MODES`). Raises ``ValueError`` for another mode."""
    if mode not in OUTBOUND_ID_MODES:
        raise ValueError(f"outbound_ids must be one of {', '.join(OUTBOUND_ID_MODES)}, not {mode!r}")
    if mode == "raw" or (mode == "hash_personal" and not personal_id(value)):
        return value
    return hashed_id(value, key)
