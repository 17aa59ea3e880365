"""``wrong_antecedent`` from list references: "the second one" must name the second item (issue 14, part 1).

The failure the seeds of this product single out: the assistant listed "Frankfurt and Dublin", the user
asks about "the second one", and the rewrite says Frankfurt. The query is fluent, the answer faithful,
and nothing downstream shows it; only reading the rewrite against the transcript does.

A *list reference* in the latest message is an ordinal ("the first/second/third/fourth/fifth/last
one", "the second cluster", "the former", "the latter", "option 2", "number 3") or a bare definite
naming one item by a word of it ("the enterprise one"). Its *enumeration* is the list in the nearest
earlier message that has one (:func:`enumerations`): numbered or bulleted lines, or a coordination of
names ("Frankfurt and Dublin", "Basic, Pro and Enterprise", "both X and Y"). The reference points at one
item (the n-th, the last, or the one holding the word). When the query names that item there is nothing
to report; when it names another item of the same enumeration, or an item of an older enumeration
while the nearest one is the user's, it is ``wrong_antecedent``, severity high, with the reference,
the item the transcript points at, the item the query named and the message index. A query that names
no item is left to ``unresolved_reference``.

When the rewriter logs its ``resolved`` entries (issue 14, part 4), an entry whose surface is a list
reference is read the same way against the list of the message its ``turn`` names (1-based, as
``antecedent_not_in_input`` reads it; the nearest list when it names none): an antecedent that is
another item of that list is ``wrong_antecedent``, high, even when the query's wording names no item.
A reference already reported from the query is not reported twice.

Pure regular expressions over the texts; no model. Only what an enumeration makes certain is reported
here: a pronoun or a definite without a list behind it is not judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from monitor.checks.base import Finding, SkipCheck, message_texts
from monitor.checks.memo import TextMemo
from monitor.checks.numbers import ORDINALS as NUMBER_ORDINALS
from monitor.checks.references import TIME_SPAN_RE
from monitor.checks.registry import register
from monitor.checks.rules import Rules
from monitor.checks.sentences import sentence_around
from monitor.checks.steps import Step
from monitor.record import Resolution, RewriteRecord
from monitor.text import match_key

# v2: the rewriter's own resolved entries are read against the list their turn names.
VERSION = 2
LIST_STEPS = (
    Step(
        "query_names_other_item",
        "high",
        "Quirk et al. 1985, 5.33 (ordinal reference into a list); the rewrite rules (seeds 003)",
        "a list reference of the latest message resolved to another item than the nearest list puts there",
    ),
    Step(
        "resolved_entry_other_item",
        "high",
        "the structured rewrite record (seeds 003): resolved[].antecedent against the list its turn names",
        "the rewriter's logged resolution of a list reference names another item of that list",
    ),
)

ORDINALS = {
    **{word: n for word, n in NUMBER_ORDINALS.items() if n <= 5},
    "former": 1,
    "last": -1,
    "latter": -1,
}
"""Ordinal words and the item they pick (``-1``: the last): "first" to "fifth" (:data:`LIST_REF_RE` reads
no further), and "former"/"latter", which pick of two."""
GENERIC_HEADS = frozenset({"one", "ones", "option", "options", "choice", "item", "alternative"})
"""Heads of an ordinal that point into any list ("the second one"); another head ("the second region")
points into a list only where the list's message uses that word ("two regions: ..."), so "the last
update" is no list reference."""
LIST_REF_RE = re.compile(
    r"\bthe\s+(?P<ord>first|second|third|fourth|fifth|last)\s+(?P<head>[a-z][\w-]*)\b"
    r"|\bthe\s+(?P<fl>former|latter)\b"
    r"|\b(?:option|number|no\.|#)\s*(?P<num>[1-9])\b"
    r"|\bthe\s+(?P<word>[a-z][\w-]*)\s+one\b",
    re.IGNORECASE,
)
"""A list reference in the latest message (see the module docstring)."""
BULLET_RE = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+(?P<item>.+?)\s*$", re.MULTILINE)
NAME = r"[A-Z][\w&'-]*(?:\s+(?:of\s+)?[A-Z0-9][\w&'-]*){0,3}"
COORD_RE = re.compile(rf"(?:\bboth\s+)?(?P<list>{NAME}(?:\s*,\s*{NAME})*\s*,?\s+(?:and|or)\s+{NAME})")
"""A coordination of capitalised names: "Frankfurt and Dublin", "Basic, Pro, and Enterprise"."""
SPLIT_RE = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")
LEAD_RE = re.compile(r"^(?:both|either|neither|the|a|an)\s+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Enumeration:
    """The items of one list in message ``message_index`` (in order, as written)."""

    message_index: int
    items: tuple[str, ...]
    context: str = ""
    """The text that introduces the list: the sentence of a coordination, the lines before bullets."""


def _item_name(text: str) -> str:
    """The naming part of a bullet line: before a colon, a dash or an opening parenthesis."""
    return LEAD_RE.sub("", re.split(r"\s*(?::|\s[-–—]\s|\()", text, maxsplit=1)[0]).strip(" .*")


def enumerations(text: str) -> list[tuple[tuple[str, ...], str]]:
    """The lists in ``text`` with the text that introduces each, in order: its bulleted or numbered
    lines (one list; the text before the first of them), then each coordination of two or more
    capitalised names ("Frankfurt and Dublin"; its sentence). Items are at most six words."""
    out: list[tuple[tuple[str, ...], str]] = []
    matches = list(BULLET_RE.finditer(text))
    bullets = [_item_name(m.group("item")) for m in matches]
    bullets = [b for b in bullets if b and len(b.split()) <= 6]
    if len(bullets) >= 2:
        out.append((tuple(bullets), text[: matches[0].start()][-300:]))
    for m in COORD_RE.finditer(text):
        items = tuple(LEAD_RE.sub("", x).strip() for x in SPLIT_RE.split(m.group("list")) if x.strip())
        if len(items) >= 2 and len(set(items)) == len(items):
            out.append((items, sentence_around(text, m.start(), m.end())))
    return out


MEMO_CHARS = 2_000_000
"""The characters of message texts whose :func:`enumerations` are memoised (:class:`TextMemo`): every
message of a conversation is read again by each later request, and a regular-expression scan of a long
answer is the costly part of this check. At most 2 M characters of texts (usually strings the records in
hand hold anyway) plus their lists, which are a few short tuples."""
_enumerations_of = TextMemo(lambda text: tuple(enumerations(text)), MEMO_CHARS)


def _names(item: str, query_key: str) -> bool:
    """Whether the query (as :func:`monitor.text.match_key`) names ``item`` as whole words, or its last
    word when that is a capitalised name of three letters or more ("Frankfurt" of "Today Frankfurt",
    "OpenShift" of "Red Hat OpenShift")."""
    keys = [match_key(item)]
    last = item.split()[-1] if item.split() else ""
    if len(item.split()) > 1 and len(last) >= 3 and last[0].isupper():
        keys.append(match_key(last))
    return any(k and re.search(rf"(?<!\w){re.escape(k)}(?!\w)", query_key) is not None for k in keys)


def _points_into(m: re.Match[str], enum: Enumeration) -> bool:
    """Whether the reference ``m`` can point into ``enum``: a generic head, or a head the text that
    introduces the list uses (its stem: "region" for "Two regions do: Frankfurt and Dublin")."""
    head = (m.group("head") or "").lower()
    if not m.group("ord") or head in GENERIC_HEADS:
        return True
    stem = head[:-1] if head.endswith("s") else head
    return re.search(rf"\b{re.escape(stem)}", enum.context, re.IGNORECASE) is not None


def _target(m: re.Match[str], items: tuple[str, ...]) -> int | None:
    """The index in ``items`` the reference ``m`` points at, or None when it points at none of them."""
    if m.group("ord"):
        n = ORDINALS[m.group("ord").lower()]
        return len(items) - 1 if n == -1 else (n - 1 if n <= len(items) else None)
    if m.group("fl"):
        if len(items) != 2:
            return None
        return 0 if m.group("fl").lower() == "former" else 1
    if m.group("num"):
        n = int(m.group("num"))
        return n - 1 if n <= len(items) else None
    word = m.group("word").lower()
    holding = [i for i, it in enumerate(items) if word in match_key(it).split()]
    return holding[0] if len(holding) == 1 else None


@register(
    "list_reference",
    family="antecedents",
    version=VERSION,
    kinds=("wrong_antecedent",),
    steps=LIST_STEPS,
    summary="a list reference ('the second one') resolved to another item than the nearest list puts there",
)
def check(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``wrong_antecedent`` (high) when a list reference of the latest message is resolved to another item
    than the one the nearest earlier enumeration puts at that place.

    Evidence: ``reference`` {text, start, end} in the latest message, ``expected`` (the item the
    transcript points at), ``named`` (the item the query names instead), ``message_index`` of the
    enumeration and its ``items``, ``words`` (the named item). Skips when no message list was logged
    or the latest message has no list reference with an enumeration behind it.
    """
    texts = message_texts(record)
    # The newest messages' lists are read even when this request has no list reference: they are what
    # the next requests of the conversation add, so one that has a reference finds its whole history's
    # lists memoised instead of scanning every earlier message at once.
    for text in texts[-2:]:
        _enumerations_of(text)
    spans = [m.span() for m in TIME_SPAN_RE.finditer(record.latest)]  # "the last couple of years"
    refs = [m for m in LIST_REF_RE.finditer(record.latest) if not any(a <= m.start() < b for a, b in spans)]
    resolved = [(r, m) for r in record.resolved if (m := LIST_REF_RE.search(r.surface)) is not None]
    if not refs and not resolved:
        raise SkipCheck("no list reference in the latest message")
    lists = [
        Enumeration(i, items, ctx) for i, text in enumerate(texts) for items, ctx in _enumerations_of(text)
    ]
    if not lists:
        raise SkipCheck("no enumeration in the transcript")
    query_key = match_key(record.query)
    nearest_index = lists[-1].message_index
    nearest = [e for e in lists if e.message_index == nearest_index]
    older = [e for e in lists if e.message_index != nearest_index]
    out: list[Finding] = []
    for ref in refs:
        # The list the query answers from: of the nearest message's lists, the last one the query names
        # an item of ("Ask Sales and Support" after "Frankfurt and Dublin" is not the list meant).
        candidates = [e for e in nearest if _points_into(ref, e) and _target(ref, e.items) is not None]
        named_lists = [e for e in candidates if any(_names(it, query_key) for it in e.items)]
        if not candidates:
            continue
        enum = (named_lists or candidates)[-1]
        t = _target(ref, enum.items)
        assert t is not None
        expected = enum.items[t]
        if _names(expected, query_key):
            continue  # resolved to the right item
        named = [it for i, it in enumerate(enum.items) if i != t and _names(it, query_key)]
        from_older = [(e, it) for e in older for it in e.items if _names(it, query_key)]
        if named:
            out.append(_finding(record, ref, enum, expected, named[0], enum.message_index))
        elif from_older:
            e, it = from_older[-1]
            out.append(_finding(record, ref, enum, expected, it, e.message_index))
    reported = {f.evidence["reference"]["text"].lower() for f in out}
    for entry, ref in resolved:
        if ref.group(0).lower() in reported:
            continue
        got = _resolved_finding(record, entry, ref, lists)
        if got is not None:
            out.append(got)
    return out


def _resolved_finding(
    record: RewriteRecord, entry: Resolution, ref: re.Match[str], lists: list[Enumeration]
) -> Finding | None:
    """``wrong_antecedent`` when the resolved entry ``entry`` (its surface a list reference ``ref``) names
    another item of the list in the message its ``turn`` names (the nearest list when none) than the
    one the reference points at; None otherwise."""
    at = entry.turn - 1 if entry.turn is not None and 1 <= entry.turn <= len(message_texts(record)) else None
    pool = [e for e in lists if e.message_index == at] if at is not None else lists
    candidates = [e for e in pool if _points_into(ref, e) and _target(ref, e.items) is not None]
    if not candidates:
        return None
    ante = match_key(entry.antecedent)
    enum = next((e for e in reversed(candidates) if any(_names(it, ante) for it in e.items)), candidates[-1])
    t = _target(ref, enum.items)
    assert t is not None
    expected = enum.items[t]
    if _names(expected, ante):
        return None
    named = [it for i, it in enumerate(enum.items) if i != t and _names(it, ante)]
    if not named:
        return None  # an antecedent outside the list: antecedent_not_in_input's to judge
    f = _finding(record, ref, enum, expected, named[0], enum.message_index)
    start = record.latest.lower().find(entry.surface.lower())
    f.evidence["reference"] = {
        "text": entry.surface,
        "start": start if start >= 0 else None,
        "end": start + len(entry.surface) if start >= 0 else None,
        "message_index": "latest",
        "resolved_entry": True,
    }
    f.evidence["resolved"] = {"surface": entry.surface, "antecedent": entry.antecedent, "turn": entry.turn}
    return Finding(
        kind=f.kind,
        severity=f.severity,
        evidence=f.evidence,
        reason=(
            f"the rewriter resolved '{entry.surface}' to '{entry.antecedent}', but it points at '{expected}' "
            f"in the list of message {enum.message_index} ({', '.join(enum.items)})"
        ),
        check_id=f.check_id,
        check_version=f.check_version,
        step="resolved_entry_other_item",
    )


def _finding(
    record: RewriteRecord, ref: re.Match[str], enum: Enumeration, expected: str, named: str, named_at: int
) -> Finding:
    evidence: dict[str, Any] = {
        "reference": {
            "text": ref.group(0),
            "start": ref.start(),
            "end": ref.end(),
            "message_index": "latest",
        },
        "expected": expected,
        "named": named,
        "message_index": enum.message_index,
        "items": list(enum.items),
        "named_at": named_at,
        "words": [{"text": named, "message_index": named_at}],
    }
    where = f"message {enum.message_index}"
    older = "" if named_at == enum.message_index else f", an item of the older list in message {named_at}"
    return Finding(
        kind="wrong_antecedent",
        severity="high",
        evidence=evidence,
        reason=(
            f"'{ref.group(0)}' points at '{expected}' in the list of {where} "
            f"({', '.join(enum.items)}), but the query names '{named}'{older}"
        ),
        check_id="list_reference",
        check_version=VERSION,
        step="query_names_other_item",
    )
