"""Constraining qualifiers: ``dropped_qualifier`` and ``qualifier_conflict`` (rules/qualifiers.yaml).

A value of a constraining kind stated in a user turn (a user message or the latest message) is *live*
until a later user turn states another value of the same kind; kinds with ``persists: false`` (relative
time) are live only in the turn that states them. Assistant turns never set a live value: the user
did not say it. Selecting kinds never fire. Source of the rule: issue 3, section 2.

A value stated for a question is spent once the user asks another (v4, issue 13): beyond the latest
message, only the user turn right before it carries its values into the latest, and the turns before
that one while each is an elliptical follow-up ("And in Paris?" continues the question before it),
unless the sentence that states the value says something about the user ("I'm vegetarian", "my
cluster runs in eu-west-1", not "where can I find ..."): a property of the user holds for the whole
conversation. A year or a place said for one question does not constrain every later
one unless restated.

A full question with its own subject and nothing pointing back (no pronoun, ordinal or ellipsis, more
than a fragment's few words) does not continue the question before it: that question's values are
spent too (v6, :func:`_continues`).

"I heard on-premises storage was an option" reports what the user heard, read or thinks about the
topic; it says nothing about the user, so its values are spent like a question's (v7,
:data:`REPORTING_VERB_RE`; v8: after an auxiliary or a negation too, "I was wondering", "I don't think").

A follow-up fragment that repeats the head a value modified, after another word ("Spousal support"
after "enforcement for child support"), swaps the value for that word: the value is spent (v9,
:func:`_substituted`).

A live value is kept when the query has it, a spelling of it, an alias-group sibling, or its last word
with a plural or derivational ending (v5: "1930s" keeps 1930, "childhood" keeps child).

A conflict means the query *replaces* the user's live value with another value of the kind (v2, the
rules below; each keeps the issue's canonical cases 3 and 4 firing):

- a user turn that mentions a value the query names states that value, even where no pattern cue
  caught it ("How does Salt Lake City differ?" after "the climate in Utah"): the user moved on, so
  that value is live and neither a conflict nor a drop;
- a query that also keeps a live value is adding, not replacing ("How are keto and paleo different?",
  a list copied from an answer): the added value is judged by ``added_content_word``, not here;
- a value that contains the live value or is contained by it ("Southeast Africa" for "Africa")
  narrows or widens it; it does not contradict it;
- a value the user stated earlier and has since replaced is a stale value, a wrong antecedent
  rather than a fabrication: severity low (the live value is missing from the query, so
  ``dropped_qualifier`` already puts the item in the queue);
- a value the user never stated (unsupported, or taken from an assistant turn as in canonical case 4)
  contradicts the user's own latest statement of the kind: severity high.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from monitor.checks.base import Finding, SkipCheck, alias_index, analyzer
from monitor.checks.literals import may_match
from monitor.checks.references import ELLIPSIS_RE, ORDINAL_RE, PRONOUN_RE, SAME_PAIR_RE
from monitor.checks.registry import register
from monitor.checks.rules import CompiledKind, QualifierMatch, Rules
from monitor.checks.sentences import AUXILIARIES, sentence_around
from monitor.checks.steps import Step
from monitor.record import RewriteRecord
from monitor.text import match_key

# v10: the swapped-in modifier must be a content word ("that support" points back, it swaps nothing).
# v11: a live value is kept when the query writes it another way its kind's patterns read as the same
# value ("v2" for "version 2", "2.x" for "version 2").
VERSION = 11
_NON_WORD = re.compile(r"[^\w]+")
QUALIFIER_SEED = (
    "background chapter on selecting vs constraining qualifiers (seeds 003); rules/qualifiers.yaml"
)
STEPS = (
    Step(
        "live_value_missing",
        "medium",
        QUALIFIER_SEED,
        "a constraining value the user stated is still live and the query lacks it",
    ),
    Step(
        "admitted_drop",
        "high",
        "the structured rewrite record (seeds 003): the rewriter's own dropped list",
        "a live constraining value missing from the query that the rewriter's dropped list names",
    ),
    Step(
        "other_value",
        "high",
        QUALIFIER_SEED,
        "the query names a value of a live kind the user never stated, in place of the live one",
    ),
    Step(
        "reverted_value",
        "low",
        QUALIFIER_SEED + " (a stale value is a wrong antecedent, and the drop is reported)",
        "the query names a value the user stated earlier and has since replaced",
    ),
)


def find_qualifiers(text: str, rules: Rules) -> list[QualifierMatch]:
    """Every qualifier value in ``text`` (all kinds), sorted by position; overlapping matches of one kind
    keep the first, and a match holding one of its kind's ``exclude`` words is dropped. Spans are
    character offsets into ``text``."""
    out: list[QualifierMatch] = []
    lower_ascii = text.lower() if text.isascii() else None
    for ck in rules.kinds:
        taken: list[tuple[int, int]] = []
        for rx, anchors in zip(ck.regexes, ck.anchors or (None,) * len(ck.regexes), strict=True):
            if not may_match(anchors, lower_ascii):
                continue  # none of the literals each match holds: most patterns, on most texts
            for m in rx.finditer(text):
                if "value" in rx.groupindex and m.group("value") is not None:
                    s, e = m.span("value")
                else:
                    s, e = m.span()
                if s == e or any(s < b and a < e for a, b in taken):
                    continue
                if ck.exclude and not ck.exclude.isdisjoint(_words(text[s:e]).split()):
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


def live_values(
    record: RewriteRecord, rules: Rules, *, mentions: Sequence[QualifierMatch] = ()
) -> dict[str, list[LiveValue]]:
    """Live constraining values by kind, from the user messages then ``latest`` (later user turns that
    state a kind replace its values). ``mentions`` (the query's values) also count as stated in a user
    turn that mentions them as words, cue or no cue. Raises SkipCheck when no message list was logged."""
    return _live(_user_statements(record, rules, mentions))


Statements = list[tuple[int | str, dict[str, list[LiveValue]], dict[str, list[LiveValue]]]]


def _live(history: Statements) -> dict[str, list[LiveValue]]:
    """The values live in the latest message: a turn that states a kind replaces its values with those
    of them it carries into the latest (none when they are spent)."""
    live: dict[str, list[LiveValue]] = {}
    for _, stated, carried in history:
        for kind in stated:
            live[kind] = carried.get(kind, [])
    return {k: v for k, v in live.items() if v}


def _user_statements(record: RewriteRecord, rules: Rules, mentions: Sequence[QualifierMatch]) -> Statements:
    """Per user turn that states a value, in order (message index, then ``"latest"``): the constraining
    values it states, and those of them it carries into the latest message (all of the latest's, of the
    user turn before it and of the elliptical follow-ups before that; of older turns, only those said
    about the user, :func:`_about_the_user`).

    A value is stated by a pattern match, or (for each of ``mentions``) by the turn holding one of the
    value's spellings as words, case-insensitively: a user who typed "Salt Lake City" has said that
    place even without the "in" that the pattern needs. Raises SkipCheck when no message list was logged.
    """
    ctx = record.context
    if ctx is None:
        raise SkipCheck("no ctx_input logged for this request")
    if ctx.messages is None:
        raise SkipCheck("ctx_input has no message list (signals only)")
    kinds = {k.kind: k for k in rules.kinds}
    turns: list[tuple[int | str, str]] = [
        (i, m.content) for i, m in enumerate(ctx.messages) if m.role == "user"
    ]
    # The turns whose values carry into the latest: the latest, the user turn before it, and before
    # that one while each is an elliptical follow-up ("And in Paris?" continues the question before).
    carrying: set[int | str] = {"latest"}
    if _continues(record.latest, rules):
        for label, text in reversed(turns):
            carrying.add(label)
            if not ELLIPSIS_RE.search(text):
                break
    turns.append(("latest", record.latest))
    out: Statements = []
    for label, text in turns:
        found = [q for q in qualifiers_in(text, rules) if q.constrains]
        for m in mentions:
            if any(q.kind == m.kind and q.value == m.value for q in found):
                continue
            span = _mention(text, kinds[m.kind].surfaces(m.value) + (match_key(m.text),))
            if span is not None:
                found.append(QualifierMatch(m.kind, m.value, text[span[0] : span[1]], *span, True))
        if not found:
            continue  # states nothing, so changes nothing: most turns of a long conversation
        stated: dict[str, list[LiveValue]] = {}
        for q in sorted(found, key=lambda q: q.start):
            if label != "latest" and not kinds[q.kind].spec.persists:
                continue
            vals = stated.setdefault(q.kind, [])
            if all(v.value != q.value for v in vals):
                vals.append(LiveValue(q.kind, q.value, q.text, label, q.start, q.end))
        recent = label in carrying
        carried = {
            kind: kept
            for kind, vals in stated.items()
            if (
                kept := [
                    v
                    for v in vals
                    if (recent or _about_the_user(text, v.start, v.end))
                    and (label == "latest" or _substituted(text, v, record.latest) is None)
                ]
            )
        }
        out.append((label, stated, carried))
    return out


_NEXT_WORD_RE = re.compile(r"[\s-]+([A-Za-z][\w'-]*)")


_FRAGMENT_RE = re.compile(
    r"\s*(?:(?:and|or|but)\s+)?(?:(?:what|how)\s+about\s+)?(?:(?:the|a|an)\s+)?"
    r"(?P<mod>[^\W\d_][\w'-]*)\s+(?P<head>[^\W\d_][\w'-]*)\s*[?.!]*\s*",
    re.IGNORECASE,
)
"""A follow-up that is a bare noun phrase of two words, after "and", "what about" or "how about" and an
article: "Spousal support", "And the spousal support?", "What about spousal support?"."""


def _substituted(text: str, value: LiveValue, latest: str) -> str | None:
    """The word of ``latest`` that takes the place of ``value`` as the modifier of the same head noun, or
    None. "Spousal support" after "How can I get enforcement for child support?": the latest message is
    a fragment (:data:`_FRAGMENT_RE`) whose head is the word that followed the value in ``text``
    ("support") and whose modifier is another word ("spousal"), so the user swapped the value for that
    word and the value is spent, whatever its kind. This is the contrastive ellipsis of Halliday and
    Hasan (*Cohesion in English*, 1976, ch. 4): a follow-up fragment repeats the head and replaces the
    element it contrasts. A full question ("How can I get enforcement support?") is no such fragment:
    its words may use the head in another sense; nor is a determiner or quantifier before the head ("That
    support", "More support?"): it points at or adds to the same thing (v10)."""
    frag = _FRAGMENT_RE.fullmatch(latest)
    nxt = _NEXT_WORD_RE.match(text, value.end)
    if frag is None or nxt is None:
        return None
    own = {w.lower() for w in _NON_WORD.split(value.text) if w}
    mod = analyzer().analyze(frag["mod"]).tokens
    head = analyzer().analyze(frag["head"]).tokens
    was = analyzer().analyze(nxt[1]).tokens
    if len(mod) != 1 or not mod[0].is_content or mod[0].lower in own:
        return None  # "that support", "more support": a determiner or quantifier replaces nothing
    if len(head) == len(was) == 1 and head[0].key == was[0].key:
        return mod[0].text
    return None


CONTINUING_WORDS = 3
"""A latest message of at most this many content words is a follow-up fragment ("What's the rate
limit?", "And the price?"): it continues the question before it even with no referring word."""


def _continues(latest: str, rules: Rules) -> bool:
    """Whether the latest message continues the user's previous question, so that question's values
    still hold: it refers back (a pronoun or demonstrative, an ordinal, ``PRONOUN_RE`` and
    ``ORDINAL_RE``), is elliptical (``ELLIPSIS_RE``), or is a fragment of at most
    :data:`CONTINUING_WORDS` content words. A full question with its own subject and nothing pointing
    back ("Are IBM Immutable Object Storage and Immutable Data Storage the same thing?") starts afresh:
    the values of the question before it are spent (Halliday and Hasan 1976: cohesion is carried by
    reference, substitution and ellipsis)."""
    if ELLIPSIS_RE.search(latest) or PRONOUN_RE.search(latest):
        return True
    # "the same" comparing two things the message names ("Are X and Y the same thing?") points nowhere
    if any(not SAME_PAIR_RE.search(latest, 0, m.end()) for m in ORDINAL_RE.finditer(latest)):
        return True
    content = [
        t for t in analyzer().analyze(latest).tokens if t.is_content and t.key not in rules.filler_words
    ]
    return len(content) <= CONTINUING_WORDS


_POSSESSIVE_RE = re.compile(r"\b(?:my|mine|myself|our|ours|ourselves)\b", re.IGNORECASE)
REPORTING_VERB_RE = re.compile(
    r"\s+(?:(?:just|also|recently|once|already|always|never|have|had|'ve|'d|do|did|don't|didn't|do\s+not"
    r"|did\s+not|am|was|'m)\s+)*"
    r"(?:(?:was|were|have\s+been|'ve\s+been)\s+told"
    r"|hear|heard|read|see|saw|seen|learn|learned|learnt|notice|noticed|think|thought|thinking|believe"
    r"|believed|know|knew|understand|understood|remember|remembered|guess|suppose|supposed|assume"
    r"|assumed|wonder|wondered|wondering)\b",
    re.IGNORECASE,
)
"""What may follow "I" or "we" when the statement reports what the user perceived, learned or thinks
("I heard X", "we read that X", "I was told X"): the mental verbs of cognition and perception and the
passive "was told" of the communication verbs, after an auxiliary or a negation too ("I was wondering",
"I don't think"), in the semantic verb domains of Biber et al.,
*Longman Grammar of Spoken and Written English* (1999), 5.2.1. The clause after such a verb is about
the topic, not the user. Not taken from any data file."""
_SUBJECT_RE = re.compile(r"(?:(?<=\s)|^)(?P<before>[A-Za-z']+\s+)?(?:I|[Ww]e)(?:'m|'ve|'d|'ll)?\b")


def _about_the_user(text: str, start: int, end: int) -> bool:
    """Whether the sentence of ``text`` holding ``[start, end)`` (cut at ``.``, ``?``, ``!`` or a line
    break) says something about the user: a first-person possessive ("my kids", "our cluster"), or "I"
    or "we" as the subject of a statement ("I'm vegetarian", "we run eu-west-1"), not of a question
    ("where can I find", "do we need": an auxiliary before the subject, Quirk et al. 1985, 11.5), nor
    "I" reporting what they heard or think (:data:`REPORTING_VERB_RE`: "I heard on-prem was an option")."""
    sentence = sentence_around(text, start, end)
    if _POSSESSIVE_RE.search(sentence):
        return True
    return any(
        (m.group("before") or "").strip().lower() not in AUXILIARIES
        and not REPORTING_VERB_RE.match(sentence, m.end())
        for m in _SUBJECT_RE.finditer(sentence)
    )


def _mention(text: str, surfaces: Iterable[str]) -> tuple[int, int] | None:
    """Span of the first of ``surfaces`` (normalised phrases) found in ``text`` as whole words."""
    # In an ASCII text an ASCII word matches case aside only where the text, lower-cased, holds it
    # lower-cased (the characters that match ASCII letters case aside, such as the Kelvin sign, are not
    # ASCII): a surface whose first word it lacks is not searched, nor its pattern built (most are not).
    lower = text.lower() if text.isascii() else None
    for s in surfaces:
        words = s.split()
        if lower is not None and words and words[0].isascii() and words[0].lower() not in lower:
            continue
        m = _mention_re(s).search(text)
        if m is not None:
            return m.span()
    return None


@functools.lru_cache(maxsize=4096)
def _mention_re(surface: str) -> re.Pattern[str]:
    """The pattern :func:`_mention` looks for ``surface`` with, built once per surface: each call built its
    text again (an escape per word) and looked it up in the ``re`` module's cache, which cost more than
    most searches (the shared logs' checks look for 345 surfaces 7,589 times, issue 18)."""
    words = r"[\s\-\u2013\u2014_]+".join(re.escape(w) for w in surface.split())
    return re.compile(r"(?<!\w)" + words + r"(?!\w)", re.IGNORECASE)


def qualifiers_in(text: str, rules: Rules) -> list[QualifierMatch]:
    """:func:`find_qualifiers`, memoised per ``Rules`` object: a query is read by two checks, and a
    conversation's user turns by every later request of it."""
    memo = rules._memo.qualifiers
    got = memo.get(text)
    if got is None:
        got = find_qualifiers(text, rules)
        if len(memo) > 100_000:  # bound the memo; texts repeat only within a conversation
            memo.clear()
        memo[text] = got
    return got


def _present(
    value: str,
    kind: CompiledKind,
    query_norm: str,
    query_groups: frozenset[int],
    value_groups: frozenset[int],
) -> bool:
    """Is ``value`` (or a spelling of it, or an alias-group sibling) in the normalised query? Its last
    word may carry an inflectional or derivational ending (:data:`KEPT_ENDINGS`): "1930s" keeps 1930,
    "childhood" and "children" keep child."""
    for s in kind.surfaces(value):
        words = _words(s)
        if words in query_norm:
            return True
        if words.strip() and re.search(re.escape(words[:-1]) + KEPT_ENDINGS, query_norm):
            return True
    return bool(value_groups & query_groups)


KEPT_ENDINGS = r"(?:s|es|ren|hood)\s"
"""Endings that keep a qualifier value's meaning: the plural (and a decade, "1930s"), the irregular
plural of "child", and the state suffix "-hood" (Quirk et al. 1985, App. I.27 and 5.77). Not fitted to
data."""


def _words(text: str) -> str:
    """Lower-cased words separated and surrounded by single spaces: " dublin eu west 1 region "."""
    return " " + " ".join(_NON_WORD.sub(" ", text.lower()).split()) + " "


def _groups_of(text: str, rules: Rules) -> frozenset[int]:
    from monitor.checks.nlp import alias_matches

    return frozenset(g for g, _, _ in alias_matches(analyzer().analyze(text), alias_index(rules)))


def _applies(kind: CompiledKind, texts: list[str]) -> str | None:
    """The first ``applies_to`` word found (as a word prefix) in ``texts``; ``""`` when the kind has none."""
    if not kind.spec.applies_to:
        return ""
    hay = " " + " ".join(match_key(t) for t in texts) + " "
    for w in kind.spec.applies_to:
        if f" {match_key(w)}" in hay:
            return w
    return None


def _nested(a: str, b: str) -> bool:
    """Does one normalised value hold the other as a word sequence ("southeast africa" / "africa")?"""
    return f" {a} " in f" {b} " or f" {b} " in f" {a} "


@register(
    "qualifiers",
    family="qualifiers",
    version=VERSION,
    kinds=("dropped_qualifier", "qualifier_conflict"),
    steps=STEPS,
    summary=(
        "a constraining qualifier the user stated is still live but missing from the "
        "query, or replaced by another value of its kind"
    ),
)
def check(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``dropped_qualifier``: a live constraining value (or a spelling/alias of it) is absent from the
    query and the kind applies to the question (severity high when ``record.dropped`` admits it, medium
    when silent). ``qualifier_conflict``: the query names another value of a live kind in place of the
    live value; high when the user never stated it, low when it is a value the user has since replaced
    (the module docstring gives each rule and why).
    """
    query_quals = [q for q in qualifiers_in(record.query, rules) if q.constrains]
    history = _user_statements(record, rules, query_quals)
    live = _live(history)
    ever: dict[tuple[str, str], LiveValue] = {}  # (kind, value) -> the user's last statement of it
    for _, stated, _ in history:
        for vals in stated.values():
            ever.update({(v.kind, v.value): v for v in vals})
    if not live:
        return []
    kinds = {k.kind: k for k in rules.kinds}
    query_norm = _words(record.query)
    query_groups = _groups_of(record.query, rules)
    received = record.context.messages if record.context is not None else None  # checked above
    admitted = [match_key(d) for d in record.dropped]
    # the values the query writes, in whatever spelling its kinds' patterns read ("v2", "version 2")
    spelled = {(q.kind, q.value) for q in query_quals}
    out: list[Finding] = []
    for kind_name, values in live.items():
        ck = kinds[kind_name]
        kept = {
            v.value: (kind_name, v.value) in spelled
            or _present(v.value, ck, query_norm, query_groups, _groups_of(v.text, rules))
            for v in values
        }
        live_set = set(kept)
        for q in (q for q in query_quals if q.kind == kind_name):
            if q.value in live_set or any(kept.values()):
                continue  # the query keeps the live value: an addition, not a replacement
            if any(_nested(q.value, v) for v in live_set):
                continue  # narrows or widens the live value
            lv = values[0]
            earlier = ever.get((kind_name, q.value))
            if earlier is not None:
                severity, source = "low", "user_replaced"
                why = (
                    f"query reverts to {kind_name} '{q.value}' (stated by the user in "
                    f"{_where(earlier.message_index)}), which the user replaced with '{lv.value}' "
                    f"(stated in {_where(lv.message_index)})"
                )
            else:
                # read here, for a value the user never said, not for every request: it is every
                # assistant turn of the conversation
                assistant_norm = _words(" \n ".join(m.content for m in received or () if m.role != "user"))
                in_assistant = any(_words(s) in assistant_norm for s in ck.surfaces(q.value))
                severity, source = "high", "assistant" if in_assistant else "unsupported"
                why = (
                    f"query says {kind_name} '{q.value}' but the user's live {kind_name} is "
                    f"'{lv.value}' (stated in {_where(lv.message_index)}); the user never said "
                    f"'{q.value}'" + (" (only an assistant turn does)" if in_assistant else "")
                )
            out.append(
                Finding(
                    kind="qualifier_conflict",
                    severity=severity,
                    evidence={
                        "qualifier_kind": kind_name,
                        "query_value": q.value,
                        "query_value_source": source,
                        "live_values": sorted(live_set),
                        "words": [{"text": q.text, "start": q.start, "end": q.end}],
                        "stated_at": [
                            {"message_index": v.message_index, "start": v.start, "end": v.end, "text": v.text}
                            for v in values
                        ],
                    },
                    reason=why,
                    check_id="qualifiers",
                    check_version=VERSION,
                    step="reverted_value" if source == "user_replaced" else "other_value",
                )
            )
        applies = _applies(ck, [record.latest, record.query])
        if applies is None:
            continue
        for v in values:
            if kept[v.value]:
                continue
            admitted_it = any(v.value in d or match_key(v.text) in d for d in admitted)
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
                    step="admitted_drop" if admitted_it else "live_value_missing",
                )
            )
    return out


def _where(label: int | str) -> str:
    return "the latest message" if label == "latest" else f"message {label}"
