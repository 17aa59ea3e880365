"""Constraining qualifiers: ``dropped_qualifier`` and ``qualifier_conflict`` (rules/qualifiers.yaml).

A value of a constraining kind stated in a user turn (a user message or the latest message) is *live*
until a later user turn states another value of the same kind; kinds with ``persists: false`` (relative
time) are live only in the turn that states them. Assistant turns never set a live value: the user
did not say it. Selecting kinds never fire. Source of the rule: issue 3, section 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from monitor.checks import register
from monitor.checks.base import Finding, SkipCheck, alias_index, analyzer
from monitor.record import RewriteRecord
from monitor.rules import CompiledKind, Rules, normalise_phrase

VERSION = 1
_NON_WORD = re.compile(r"[^\w]+")


@dataclass(frozen=True, slots=True)
class QualifierMatch:
    """A qualifier value in a text: ``kind``, canonical ``value``, surface ``text``, span ``[start, end)``."""

    kind: str
    value: str
    text: str
    start: int
    end: int
    constrains: bool


def find_qualifiers(text: str, rules: Rules) -> list[QualifierMatch]:
    """Every qualifier value in ``text`` (all kinds), sorted by position; overlapping matches of one kind
    keep the first. Spans are character offsets into ``text``."""
    out: list[QualifierMatch] = []
    for ck in rules.kinds:
        taken: list[tuple[int, int]] = []
        for rx in ck.regexes:
            for m in rx.finditer(text):
                if "value" in rx.groupindex and m.group("value") is not None:
                    s, e = m.span("value")
                else:
                    s, e = m.span()
                if s == e or any(s < b and a < e for a, b in taken):
                    continue
                taken.append((s, e))
                out.append(QualifierMatch(ck.kind, ck.canon(text[s:e]), text[s:e], s, e, ck.spec.constrains))
    out.sort(key=lambda q: (q.start, q.kind))
    return out


@dataclass(frozen=True, slots=True)
class LiveValue:
    """A live constraining value and where the user stated it (message index or ``"latest"``)."""

    kind: str
    value: str
    text: str
    message_index: int | str
    start: int
    end: int


def live_values(record: RewriteRecord, rules: Rules) -> dict[str, list[LiveValue]]:
    """Live constraining values by kind, from the user messages then ``latest`` (later user turns that
    state a kind replace its values). Raises SkipCheck when no message list was logged."""
    ctx = record.context
    if ctx is None:
        raise SkipCheck("no ctx_input logged for this request")
    if ctx.messages is None:
        raise SkipCheck("ctx_input has no message list (signals only)")
    persists = {k.kind: k.spec.persists for k in rules.kinds}
    live: dict[str, list[LiveValue]] = {}
    turns: list[tuple[int | str, str]] = [
        (i, m.content) for i, m in enumerate(ctx.messages) if m.role == "user"
    ]
    turns.append(("latest", record.latest))
    for label, text in turns:
        stated: dict[str, list[LiveValue]] = {}
        for q in _user_qualifiers(text, rules):
            if not q.constrains:
                continue
            if label != "latest" and not persists[q.kind]:
                continue
            vals = stated.setdefault(q.kind, [])
            if all(v.value != q.value for v in vals):
                vals.append(LiveValue(q.kind, q.value, q.text, label, q.start, q.end))
        live.update(stated)
    return live


def _user_qualifiers(text: str, rules: Rules) -> list[QualifierMatch]:
    memo = rules._memo.setdefault("qual_cache", {})
    got = memo.get(text)
    if got is None:
        got = find_qualifiers(text, rules)
        if len(memo) > 100_000:  # bound the memo; texts repeat only within a conversation
            memo.clear()
        memo[text] = got
    return got  # type: ignore[no-any-return]


def _present(
    value: str,
    kind: CompiledKind,
    query_norm: str,
    query_groups: frozenset[int],
    value_groups: frozenset[int],
) -> bool:
    """Is ``value`` (or a spelling of it, or an alias-group sibling) in the normalised query?"""
    for s in kind.surfaces(value):
        if _words(s) in query_norm:
            return True
    return bool(value_groups & query_groups)


def _words(text: str) -> str:
    """Lower-cased words separated and surrounded by single spaces: " dublin eu west 1 region "."""
    return " " + " ".join(_NON_WORD.sub(" ", text.lower()).split()) + " "


def _groups_of(text: str, rules: Rules) -> frozenset[int]:
    from monitor.nlp import alias_matches

    return frozenset(g for g, _, _ in alias_matches(analyzer().analyze(text), alias_index(rules)))


def _applies(kind: CompiledKind, texts: list[str]) -> str | None:
    """The first ``applies_to`` word found (as a word prefix) in ``texts``; ``""`` when the kind has none."""
    if not kind.spec.applies_to:
        return ""
    hay = " " + " ".join(normalise_phrase(t) for t in texts) + " "
    for w in kind.spec.applies_to:
        if f" {normalise_phrase(w)}" in hay:
            return w
    return None


@register("qualifiers", version=VERSION, kinds=("dropped_qualifier", "qualifier_conflict"))
def check(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``dropped_qualifier``: a live constraining value (or a spelling/alias of it) is absent from the
    query and the kind applies to the question (severity high when ``record.dropped`` admits it, medium
    when silent). ``qualifier_conflict`` (high): the query names another value of a kind that is live.
    """
    live = live_values(record, rules)
    if not live:
        return []
    kinds = {k.kind: k for k in rules.kinds}
    query_norm = _words(record.query)
    query_quals = [q for q in find_qualifiers(record.query, rules) if q.constrains]
    query_groups = _groups_of(record.query, rules)
    admitted = [normalise_phrase(d) for d in record.dropped]
    out: list[Finding] = []
    for kind_name, values in live.items():
        ck = kinds[kind_name]
        in_query = [q for q in query_quals if q.kind == kind_name]
        live_set = {v.value for v in values}
        for q in in_query:
            if q.value in live_set:
                continue
            lv = values[0]
            out.append(
                Finding(
                    kind="qualifier_conflict",
                    severity="high",
                    evidence={
                        "qualifier_kind": kind_name,
                        "query_value": q.value,
                        "live_values": sorted(live_set),
                        "words": [{"text": q.text, "start": q.start, "end": q.end}],
                        "stated_at": [
                            {"message_index": v.message_index, "start": v.start, "end": v.end, "text": v.text}
                            for v in values
                        ],
                    },
                    reason=f"query says {kind_name} '{q.value}' but the user's live {kind_name} is "
                    f"'{lv.value}' (stated in {_where(lv.message_index)})",
                    check_id="qualifiers",
                    check_version=VERSION,
                )
            )
        applies = _applies(ck, [record.latest, record.query])
        if applies is None:
            continue
        for v in values:
            v_groups = _groups_of(v.text, rules)
            if _present(v.value, ck, query_norm, query_groups, v_groups):
                continue
            admitted_it = any(v.value in d or normalise_phrase(v.text) in d for d in admitted)
            out.append(
                Finding(
                    kind="dropped_qualifier",
                    severity="high" if admitted_it else "medium",
                    evidence={
                        "qualifier_kind": kind_name,
                        "value": v.value,
                        "stated_at": {
                            "message_index": v.message_index,
                            "start": v.start,
                            "end": v.end,
                            "text": v.text,
                        },
                        "listed_in_dropped": admitted_it,
                        "applies_to_match": applies or None,
                        "words": [],
                    },
                    reason=f"live {kind_name} '{v.value}' (stated in {_where(v.message_index)}) "
                    "is missing from "
                    f"the query" + (" and the rewriter admits dropping it" if admitted_it else ""),
                    check_id="qualifiers",
                    check_version=VERSION,
                )
            )
    return out


def _where(label: int | str) -> str:
    return "the latest message" if label == "latest" else f"message {label}"
