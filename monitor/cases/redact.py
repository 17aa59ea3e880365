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
EMAIL      ``local@domain.tld``
IP         IPv4 (four octets 0-255, not directly after ``v``, so ``v1.2.3.4`` is a version) and IPv6
           (anything :mod:`ipaddress` accepts with at least two colons)
CARD       13 to 19 digits, optionally grouped by single spaces or hyphens, that pass the Luhn check
PHONE      ``+`` and 8 to 15 digits in groups; North American ``(415) 555-0134`` / ``415-555-0134`` /
           ``415 555 0134``; national numbers with a leading 0 and 10 or 11 digits (``020 7946 0958``)
NAME       a person's name where a cue introduces it (spaCy ``Matcher`` patterns over the tokenizer: "my
           name is", "call me", "this is ... from/here", "I'm/I am ... from", a greeting "Hi/Hello/Dear
           ... ,", a title Mr/Mrs/Ms/Miss/Dr/Prof), plus ``PERSON`` entities when a trained pipeline with
           an ``ner`` component is given; once found, every later occurrence of the name, or of one of its
           words, is replaced in every field of the case
========== ===============================================================================================

Limits (no trained NER is installed by default): a name with no cue ("send it to Dana Reyes") is not
found; phone numbers in other national formats, numbers written in words and postal addresses are
not found; a 10- or 11-digit number starting with 0 (an order number) is taken for a phone; a
Luhn-valid 13-19 digit identifier is taken for a card; a four-part dotted number not after ``v`` is
taken for an IPv4 address. Only the fields passed to :meth:`Redactor.redact` are touched.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language

KINDS = ("CREDENTIAL", "EMAIL", "IP", "CARD", "PHONE", "NAME")
"""Detection order; when two matches overlap the earlier one in the text wins, then the longer one,
then the earlier kind in this tuple."""

_CREDENTIAL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://([^\s/@:]+:[^\s/@]*|[^\s/@:]+)@")
_EMAIL = re.compile(r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_IPV4 = re.compile(r"(?<![\w.])(?<!v)(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_PHONES = (
    re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?!\d)"),
    re.compile(r"(?<![\w(])(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}(?!\d)"),
    re.compile(r"(?<![\w])0\d{2,4}[ -]?\d{3,4}[ -]?\d{3,4}(?!\d)"),
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
    """Every credential, email, IP address, card number and phone number in ``text`` (may overlap)."""
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
    for i, rx in enumerate(_PHONES):
        for m in rx.finditer(text):
            digits = _digits(m.group())
            ok = (
                8 <= len(digits) <= 15
                if i == 0
                else (len(digits) == 10 if i == 1 else len(digits) in (10, 11))
            )
            if ok:
                spans.append(Span(m.start(), m.end(), "PHONE", ("+" if i == 0 else "") + digits))
    return spans


# -- names -----------------------------------------------------------------------------------------
_TITLES = ["mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "dr", "dr.", "prof", "prof."]
# Matcher token patterns: dicts of attribute -> value or operator, as spaCy's Matcher.add types them.
_NAME_TOKEN: dict[str, Any] = {"IS_TITLE": True, "IS_ALPHA": True, "OP": "{1,3}"}
_CUES: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    # id: (tokens before the name, tokens after it); the name is what lies between
    "my_name_is": ([{"LOWER": "my"}, {"LOWER": "name"}, {"LOWER": {"IN": ["is", "'s"]}}], []),
    "call_me": ([{"LOWER": "call"}, {"LOWER": "me"}], []),
    "this_is": ([{"LOWER": "this"}, {"LOWER": "is"}], [{"LOWER": {"IN": ["from", "here"]}}]),
    "i_am": ([{"LOWER": "i"}, {"LOWER": {"IN": ["am", "'m"]}}], [{"LOWER": "from"}]),
    "greeting": ([{"LOWER": {"IN": ["hi", "hello", "hey", "dear"]}}], [{"TEXT": {"IN": [",", "!"]}}]),
    "title": ([{"LOWER": {"IN": _TITLES}}], []),
}


class NameFinder:
    """Finds person names in text with cue patterns (and ``PERSON`` entities of a trained pipeline).

    ``nlp``: a spaCy ``Language``; default ``spacy.blank("en")`` (tokenizer only, no download). A
    pipeline with an ``ner`` component adds its ``PERSON`` entities.
    """

    def __init__(self, nlp: Language | None = None) -> None:
        import spacy
        from spacy.matcher import Matcher

        self.nlp = nlp if nlp is not None else spacy.blank("en")
        self.matcher = Matcher(self.nlp.vocab)
        self._shape: dict[int, tuple[int, int]] = {}
        for cue, (before, after) in _CUES.items():
            self.matcher.add(cue, [[*before, _NAME_TOKEN, *after]], greedy="LONGEST")
            self._shape[self.nlp.vocab.strings[cue]] = (len(before), len(after))

    def names(self, text: str) -> list[str]:
        """The names found in ``text``, in order of appearance, without repeats."""
        doc = self.nlp(text)
        found: list[tuple[int, str]] = []
        for match_id, start, end in self.matcher(doc):
            before, after = self._shape[match_id]
            span = doc[start + before : end - after]
            if len(span):
                found.append((span.start_char, span.text))
        if "ner" in self.nlp.pipe_names:
            found.extend((e.start_char, e.text) for e in doc.ents if e.label_ == "PERSON")
        out: list[str] = []
        for _pos, name in sorted(found):
            if name not in out:
                out.append(name)
        return out


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

    def learn_names(self, texts: Iterable[str]) -> None:
        if self.finder is None:
            return
        for text in texts:
            for name in self.finder.names(text):
                self._names.setdefault(name, name)
                for part in name.split():
                    if len(part) > 1 and part[0].isupper():
                        self._names.setdefault(part, name)

    def _name_spans(self, text: str) -> list[Span]:
        spans = []
        for surface, full in self._names.items():
            for m in re.finditer(rf"(?<!\w){re.escape(surface)}(?!\w)", text):
                spans.append(Span(m.start(), m.end(), "NAME", full))
        return spans

    def _placeholder(self, span: Span) -> str:
        got = self.placeholders.get((span.kind, span.key))
        if got is None:
            self._counts[span.kind] += 1
            got = f"<{span.kind}_{self._counts[span.kind]}>"
            self.placeholders[(span.kind, span.key)] = got
        return got

    def redact(self, text: str) -> str:
        """``text`` with every detected value replaced by its placeholder."""
        spans = pattern_spans(text) + self._name_spans(text)
        spans.sort(key=lambda s: (s.start, -(s.end - s.start), KINDS.index(s.kind)))
        out, pos = [], 0
        for s in spans:
            if s.start < pos:
                continue  # overlaps a span already replaced
            out.append(text[pos : s.start])
            out.append(self._placeholder(s))
            pos = s.end
        out.append(text[pos:])
        return "".join(out)

    def redact_all(self, texts: Iterable[str]) -> list[str]:
        return [self.redact(t) for t in texts]


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
    out["must_include"] = r.redact_all(case["must_include"])
    out["must_not_include"] = r.redact_all(case["must_not_include"])
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
