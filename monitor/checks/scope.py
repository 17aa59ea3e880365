"""What the query fails to carry from the conversation (issue 32), read through the conversation state of
:mod:`monitor.checks.state`.

``topic_not_carried`` (issue 32, "scope not carried"): the latest message depends on the conversation by
its form (an elliptical "what about X?", a fragment, a continuer such as "Tell me more about traceability
tools.", a correction), names nothing the user said before and no name of its own, and the query passes it
through without a word of the conversation: the terms of the turn that set the topic ("GMO food
labeling") are live (seeds, chapter 3: a constraining qualifier persists until it is contradicted) and the
query carries none of them.

``frame_not_carried`` (issue 32, "intent not carried"): an elliptical follow-up ("How about replacing it
instead?", "What about for a food truck?") substitutes one constituent of the user's previous question
and keeps the rest of it (Halliday and Hasan, *Cohesion in English*, 1976, ch. 4: the elliptical item
presupposes the structure of the turn before). When that question asked for a measure ("How much does it
cost to repair a garage door opener?", "How long does it take?"), the measure is what the follow-up still
asks, and a rewrite that names the new constituent but not the measure ("How about replacing garage door
opener instead?") asks another question: the carried-over intent term the labelling rules count as a
dropped constraint (``../shared/data/README.md``, ``dropped_constraint``).

The substituted constituent decides what is kept: "What about the region's topography?" after "What is
the size of the area?" replaces the attribute itself (it is possessed, or its head is an attribute noun,
WordNet's ``noun.attribute``), so nothing of the earlier question is live. A count question ("How many film
adaptations of Hamlet are there?") is carried by its counted noun ("the film adaptations of Romeo and
Juliet"): the labelling rules accept a less specific rewrite that asks about the same thing.
"""

from __future__ import annotations

import re

from monitor.checks.base import Finding, SkipCheck, analyzer, message_texts, transcript
from monitor.checks.names import names
from monitor.checks.nlp import derivation_in, synonym_in
from monitor.checks.references import (
    ELLIPSIS_RE,
    INSERT_RE,
    POINTER_DETERMINERS,
    QUESTION_START_RE,
    dependent_fragment,
)
from monitor.checks.registry import register
from monitor.checks.rules import Rules
from monitor.checks.state import PRICE_WORDS, Term, TurnFrame, asked_attribute, frame_of, terms_of, topic_turn
from monitor.checks.steps import Step
from monitor.lexicon import lemma_forms, noun_classes
from monitor.record import RewriteRecord

FRAME_VERSION = 1
FRAME_STEPS = (
    Step(
        "asked_measure_lost",
        "medium",
        "Halliday and Hasan 1976, ch. 4 (ellipsis keeps the presupposed structure); Quirk et al. 1985, "
        "11.15 (degree questions); the rewrite rules (seeds 003: keep the intent)",
        "an elliptical follow-up of a question that asked for a measure, and a query that does not ask it",
    ),
)

SUBSTITUTION_RE = re.compile(
    r"^\W*(?:(?:and|but|or|so|ok(?:ay)?|well|interesting|great|hmm+)\W+)*(?:what|how)\s+about\s+(?P<x>[^?.!]*)"
    r"|\binstead\b",
    re.IGNORECASE,
)
"""An elliptical follow-up that substitutes one constituent of the previous question: "what about X",
"how about X" (X the substitute) or a replacive "instead" (Quirk et al. 1985, 8.121) in a message that is
no full question of its own ("Can I use a microwave instead?" asks whether, not how long: see
:func:`check_frame`). Not fitted to any data file."""

TIME_UNITS = frozenset(
    {"second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month"}
    | {"months", "year", "years", "decade", "decades"}
)
LENGTH_UNITS = frozenset(
    {"metre", "metres", "meter", "meters", "kilometre", "kilometres", "kilometer", "kilometers", "km"}
    | {"mile", "miles", "foot", "feet", "inch", "inches", "yard", "yards", "light"}
)
MEASURE_WORDS: dict[str, frozenset[str]] = {
    "cost": PRICE_WORDS
    | {"much", "fee", "fees", "worth", "expense", "expenses", "spend", "msrp", "dollars", "usd", "eur"},
    "amount": frozenset({"much", "amount", "quantity"}),
    "number": frozenset({"many", "number", "count", "total", "population"}),
    "duration": frozenset({"long", "duration", "time", "take", "takes"}) | TIME_UNITS,
    "age": frozenset({"old", "age"}) | TIME_UNITS,
    "size": frozenset({"big", "large", "size", "area", "dimensions", "square", "acres", "hectares"}),
    "distance": frozenset({"far", "distance"}) | LENGTH_UNITS,
    "frequency": frozenset({"often", "frequency", "frequently"}),
    "speed": frozenset({"fast", "speed", "mph", "kph"}),
    "height": frozenset({"tall", "height", "high"}) | LENGTH_UNITS,
    "weight": frozenset({"heavy", "weight", "weigh", "kg", "kilograms", "pounds", "lbs", "tons"}),
}
"""The words that ask each measure in a query: the degree adverb of its question ("how much"), the
attribute noun (WordNet's attribute of the adjective: long -> duration), the verbs and nouns that ask it
("take" a time, "spend" a price, "population" a count of people) and the units it is given in (the SI
and customary units of time, length, area, mass and speed); for a price, the price words of
:data:`monitor.checks.state.PRICE_WORDS`. A query that says "How many weeks does it take to heal?" for a
"how long" question asks the same thing."""


def counted_noun(question: str) -> str:
    """The lemma of the counted noun of a count question: the last word of the run of content words after
    "how many" ("How many film adaptations of Hamlet are there?" -> "adaptation"); "" when none."""
    toks = analyzer().analyze(question).tokens
    for i, t in enumerate(toks[:-1]):
        if t.lower == "how" and toks[i + 1].lower == "many":
            run = []
            for x in toks[i + 2 :]:
                if not x.is_content:
                    break
                run.append(x)
            return run[-1].key if run else ""
    return ""


def _previous_user_turn(record: RewriteRecord) -> int | None:
    assert record.context is not None and record.context.messages is not None  # message_texts checked
    users = [i for i, m in enumerate(record.context.messages) if m.role == "user"]
    return users[-1] if users else None


POSSESSED_RE = re.compile(r"^\s*(?:its|their|his|her|your|my|our)\b|\w'?s\s+\w", re.IGNORECASE)
"""A substitute with a possessive determiner or genitive ("its safety rating", "the region's
topography"): an attribute of the thing asked about, so it replaces what was asked (Quirk et al. 1985,
5.115: the genitive names the possessor of what the head denotes)."""


def _substitutes_attribute(x: str) -> bool:
    """Whether the substitute ``x`` of "what about X" is itself an attribute of what was asked about: it
    is possessed (:data:`POSSESSED_RE`: "its safety rating") or its last word is a noun of WordNet's
    ``noun.attribute`` class ("the price"), so it replaces what was asked rather than what it was asked
    of."""
    words = re.findall(r"[A-Za-z][\w-]*", x)
    if not words or words[-1][:1].isupper():
        return False
    if POSSESSED_RE.search(x):
        return True
    low = words[-1].lower()
    return "attribute" in noun_classes(low, analyzer().lemma(words[-1], low).lower())


def _carries(query: str, frame: TurnFrame) -> bool:
    """Whether ``query`` still asks the measure ``frame`` asked: a word of :data:`MEASURE_WORDS` for it,
    a WordNet synonym or derivation of the attribute noun, or, for a count, the counted noun."""
    words = set(re.findall(r"[a-z]+", query.lower()))
    if words & MEASURE_WORDS.get(frame.asked, frozenset({frame.asked})):
        return True
    a = analyzer().analyze(query)
    forms = lemma_forms(frame.asked, frame.asked)
    if synonym_in(forms, [a]) is not None or derivation_in(forms, [a]) is not None:
        return True
    counted = counted_noun(frame.text) if frame.asked == "number" else ""
    return bool(counted) and counted in a.vocab


@register(
    "frame_not_carried",
    family="scope",
    version=FRAME_VERSION,
    kinds=("dropped_qualifier",),
    steps=FRAME_STEPS,
    summary="an elliptical follow-up keeps the measure the previous question asked, and the query does not",
)
def check_frame(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``dropped_qualifier`` (medium) when the latest message is an elliptical substitution
    (:data:`SUBSTITUTION_RE`) of a previous user turn that asked for a measure
    (:func:`monitor.checks.state.asked_attribute`: cost, duration, number, ...), the substitute is not
    itself an attribute, the latest message asks no measure of its own, and the query does not carry
    the measure (:func:`_carries`).

    Evidence: ``frame`` {text, message_index, asked} (the previous question), ``missing`` [{text}] (the
    measure), ``live_since`` (that message's index), ``substitution`` (the latest message's "what about"
    or "instead"). Skips without a message list, an elliptical substitution or an earlier user turn that
    asked for a measure.
    """
    texts = message_texts(record)
    sub = SUBSTITUTION_RE.search(record.latest)
    if sub is not None and not sub.group("x") and QUESTION_START_RE.search(record.latest):
        sub = None  # "instead" in a question of its own ("Can I use a microwave instead?")
    if sub is None:
        raise SkipCheck("the latest message substitutes nothing of an earlier question")
    at = _previous_user_turn(record)
    if at is None:
        raise SkipCheck("no earlier user turn")
    frame = frame_of(texts[at], at)
    if not frame.asked:
        raise SkipCheck("the previous user turn asked for no measure")
    if asked_attribute(record.latest) or (sub.group("x") and _substitutes_attribute(sub.group("x"))):
        return []  # the follow-up asks its own measure or replaces the attribute
    if _carries(record.query, frame):
        return []
    return [
        Finding(
            kind="dropped_qualifier",
            severity="medium",
            evidence={
                "frame": {"text": frame.text, "message_index": at, "asked": frame.asked},
                "missing": [{"text": frame.asked}],
                "live_since": at,
                "substitution": sub.group(0).strip(),
            },
            reason=(
                f"live since message {at}: '{frame.asked}' (asked by '{frame.text.strip()[:80]}'); the "
                f"follow-up '{record.latest.strip()[:60]}' keeps that question, but the query does not ask "
                f"for the {frame.asked}"
            ),
            check_id="frame_not_carried",
            check_version=FRAME_VERSION,
            step="asked_measure_lost",
        )
    ]


# -- the topic the query does not carry --------------------------------------------------------------------
TOPIC_VERSION = 1
TOPIC_STEPS = (
    Step(
        "topic_dropped",
        "medium",
        "seeds 003 (a constraining qualifier persists until contradicted); Halliday and Hasan 1976, ch. 4 "
        "(ellipsis); Schegloff 1982 (continuers)",
        "a follow-up that depends on the conversation by its form, passed through without the topic's terms",
    ),
)
ABOUT_RE = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|great|thanks?|interesting|cool|wow)\W+)*(?:(?:can|could|would)\s+you\s+)?"
    r"(?:please\s+)?(?:tell|talk|explain)\s+(?:me\s+|us\s+)?(?:more|(?:a\s+(?:bit|little)\s+)more)?\s*about\b",
    re.IGNORECASE,
)
"""A continuer with an object, "Tell me (more) about X" (Schegloff, "Discourse as an interactional
achievement", 1982: a request to go on with the topic), whose X is read within the topic. Not fitted to
any data file."""
MAX_LIVE_WORDS = 3
"""Topic terms a finding names at most: the first ones the topic-setting turn wrote."""


def dependency(record: RewriteRecord, rules: Rules) -> str | None:
    """How the latest message depends on the conversation by its form, or None: "ellipsis" ("what about
    X?", "and for staging?": :data:`monitor.checks.references.ELLIPSIS_RE`), "continuation" and "correction"
    and "fragment" (:func:`monitor.checks.references.dependent_fragment`), "continuer" (:data:`ABOUT_RE`)."""
    if ELLIPSIS_RE.search(record.latest):
        return "ellipsis"
    fragment = dependent_fragment(record, rules)
    if fragment is not None:
        return fragment[0]
    return "continuer" if ABOUT_RE.search(record.latest) else None


def _anchor(latest: str, said: frozenset[str]) -> str | None:
    """What makes the latest message stand on its own topic, or None: a name it writes (none in a message
    written all in capitals or with every word capitalised: "WHAT ABOUT FEES?"), or a content word
    the user said before (``said``: keys of the earlier user turns' terms) that no pointing determiner
    ("the", "this": Halliday and Hasan 1976, ch. 2) marks as given."""
    shouted = latest.upper() == latest or latest.title() == latest  # every word capitalised: no names
    for n in () if shouted else names(latest):
        if not INSERT_RE.fullmatch(n.text):
            return n.text
    last = ""
    for t in analyzer().analyze(latest).tokens:
        if not t.is_content:
            last = t.lower
        elif t.key in said and last not in POINTER_DETERMINERS:
            return t.text
    return None


def _carried_context(record: RewriteRecord) -> bool:
    """Whether the query writes a content word the latest message lacks and a message holds (the
    record's :func:`monitor.checks.base.transcript`): the rewriter resolved something from the
    conversation, and which thing it chose is other checks' to judge."""
    an = analyzer()
    latest = an.analyze(record.latest).vocab
    held = transcript(record)
    return any(
        t.is_content and t.key not in latest and t.lower not in latest and held.holds(t.key, t.lower)
        for t in an.analyze(record.query).tokens
    )


@register(
    "topic_not_carried",
    family="scope",
    version=TOPIC_VERSION,
    kinds=("dropped_qualifier",),
    steps=TOPIC_STEPS,
    summary="a follow-up that depends on the conversation passed through without the topic it depends on",
)
def check_topic(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``dropped_qualifier`` (medium) when the latest message depends on the conversation by its form
    (:func:`dependency`), does not stand on its own topic (:func:`_anchor`), the query carries no word of
    the conversation (:func:`_carried_context`) and the turn that set the topic
    (:func:`monitor.checks.state.topic_turn`) has terms the query lacks
    (:func:`monitor.checks.state.terms_of`, less those headed by a neutral, framing or filler word of
    ``rules/neutral.yaml``).

    Evidence: ``missing`` [{text, message_index}] (the topic terms, at most :data:`MAX_LIVE_WORDS`),
    ``live_since`` (the topic turn's index), ``dependency``. Skips without a message list or an earlier
    user turn, or when the latest message does not depend on the conversation by its form.

    The rewriter's own ``dropped`` entries are not read: a topic term it dropped may be a spent selecting
    qualifier (seeds 003: "Which EU regions support customer-managed keys?" selected Dublin, and a query
    about "the second one" rightly drops the keys), which the state does not yet tell from a live one.
    """
    texts = message_texts(record)
    assert record.context is not None and record.context.messages is not None  # message_texts checked
    roles = [m.role for m in record.context.messages]
    at = topic_turn(roles, texts)
    if at is None:
        raise SkipCheck("no earlier user turn")
    how = dependency(record, rules)
    if how is None:
        raise SkipCheck("the latest message does not depend on the conversation by its form")
    said = frozenset(
        k for i, r in enumerate(roles) if r == "user" for t in terms_of(texts[i]) for k in t.keys
    )
    if _anchor(record.latest, said) is not None or _carried_context(record):
        return []
    plain = rules.neutral_words | rules.framing_words | rules.filler_words
    query = analyzer().analyze(record.query).vocab
    live: list[Term] = [t for t in terms_of(texts[at]) if t.head not in plain and t.head not in query]
    if not live:
        return []
    missing = [{"text": t.text, "message_index": at} for t in live[:MAX_LIVE_WORDS]]
    words = ", ".join(f"'{m['text']}'" for m in missing)
    return [
        Finding(
            kind="dropped_qualifier",
            severity="medium",
            evidence={"missing": missing, "live_since": at, "dependency": how},
            reason=(
                f"live since message {at}: {words} (the topic the user set); the follow-up "
                f"'{record.latest.strip()[:60]}' ({how}) depends on it, but the query carries none of it"
            ),
            check_id="topic_not_carried",
            check_version=TOPIC_VERSION,
            step="topic_dropped",
        )
    ]
