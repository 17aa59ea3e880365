"""The values the redactor finds by pattern: credentials, secrets, e-mail addresses, IBANs, IP
addresses, card numbers, phone numbers, national identity numbers and postal addresses, each as a
:class:`Span` (what each kind matches, and what it misses: the table of :mod:`monitor.privacy`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

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
