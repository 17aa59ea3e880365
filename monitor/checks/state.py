"""The conversation state: what the conversation has made live for the latest message (issue 32).

Two parts, each read off the user turns, on the tokenizer, lookup lemmas and WordNet classes already
shipped (no parser model):

- a user turn's **frame** (:class:`TurnFrame`): the measure it asks for ("cost" in "How much does it
  cost to repair a garage door opener?", "duration" in "How long does it take?"). An elliptical
  follow-up ("How about replacing it instead?") keeps that frame and substitutes one constituent of it,
  so the frame is what the rewrite must still ask;
- the **topic** (:func:`topic_turn`, :func:`terms_of`): the noun phrases and names of the user turn that
  set the conversation's topic, the first user turn or the last one that announced a new topic. The
  background chapters' rule (``../shared/seeds``, chapter 3) is that a constraining qualifier narrows
  which document is correct and persists until it is contradicted, while a selecting one is spent once
  its item is named. What the topic-setting turn said constrains every later question of the topic, so
  its terms are live (each naming the message that set it) until a turn announces another topic.

The checks over the state are in :mod:`monitor.checks.scope`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from monitor.checks.base import analyzer
from monitor.checks.memo import TextMemo
from monitor.checks.names import names
from monitor.checks.nlp import Tok
from monitor.checks.references import INSERT_RE
from monitor.checks.sentences import BARE_VERB_AUXILIARIES
from monitor.lexicon import is_noun, is_verb, noun_classes, only_verb, word_classes

CLAUSE_OPENING = r"(?:^|[.?!;:,]\s*|\b(?:and|but|so|then|ok(?:ay)?|well)\s+)"
ASKED_ATTRIBUTE_RE = re.compile(
    rf"{CLAUSE_OPENING}how\s+(?P<how>much|many|long|old|big|far|often|fast|large|tall|heavy)\b"
    r"|\bwhat\s+(?:is|are|was|were|'s)\s+(?:the\s+)?(?P<noun>[a-z]+)\s+(?:of|for|to|in)\b"
    r"|\b(?P<verb>costs?|cost|prices?|priced)\b",
    re.IGNORECASE,
)
"""The attribute a question asks for, when it is a degree or a measure: "how much/many/long ..." opening
a clause (the degree question of Quirk et al. 1985, 11.15; not the concessive "no matter how much I
water it", 15.23), "what is the X of ..." (X an attribute noun, WordNet's ``noun.attribute``: "the size
of", not "the ways to"), or the price noun or verb ("cost", "price"; not "pay" or "charge", which ask
how rather than how much: "Should I pay with a credit card?"). Not fitted to any data file."""
HOW_ATTRIBUTE = {
    "much": "cost",
    "many": "number",
    "long": "duration",
    "old": "age",
    "big": "size",
    "far": "distance",
    "often": "frequency",
    "fast": "speed",
    "large": "size",
    "tall": "height",
    "heavy": "weight",
}
"""The attribute each degree adverb asks for: the noun WordNet's attribute relation links to the
adjective ("long" -> "duration"). "How much" asks a price when its question has a price word
(:data:`PRICE_WORDS`), else an amount."""
PRICE_WORDS = frozenset({"cost", "costs", "price", "prices", "priced", "afford", "expensive", "cheap"})
"""Words that make a "how much" question one about a price."""


@dataclass(frozen=True, slots=True)
class TurnFrame:
    """One user turn read as a question: ``message_index`` (0-based into the message list, ``-1`` for the
    latest message), ``text`` and ``asked``, the measure it asks for ("cost", "duration", "number"; ""
    for none: :func:`asked_attribute`)."""

    message_index: int
    text: str
    asked: str


def asked_attribute(text: str) -> str:
    """The measure ``text`` asks for (:data:`ASKED_ATTRIBUTE_RE`), "" when none: "cost" for "How much
    does a used Lamborghini cost?" and for "Do we pay the First Lady?", "duration" for "How long does it
    take?", "size" for "What is the size of the area?", "" for "What are ways to cook them?"."""
    m = ASKED_ATTRIBUTE_RE.search(text)
    if m is None:
        return ""
    if m.group("how"):
        how = m.group("how").lower()
        if how == "much":
            return "cost" if PRICE_WORDS & set(re.findall(r"[a-z]+", text.lower())) else "amount"
        return HOW_ATTRIBUTE[how]
    if m.group("noun"):
        noun = m.group("noun").lower()
        return noun if "attribute" in noun_classes(noun, analyzer().lemma(noun, noun).lower()) else ""
    return "cost"


def frame_of(text: str, message_index: int) -> TurnFrame:
    """The :class:`TurnFrame` of one user turn."""
    return TurnFrame(message_index, text, asked_attribute(text))


# -- the topic -------------------------------------------------------------------------------------------
TOPIC_SHIFT_RE = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|well|hmm+)[,.!]?\s+)?"
    r"(?:by\s+the\s+way|btw|on\s+(?:an)?other\s+note|on\s+a\s+different\s+note|changing\s+the\s+subject"
    r"|unrelated(?:\s+question)?|(?:a|one)\s+(?:different|new|separate|unrelated)\s+question"
    r"|another\s+(?:question|topic)|switching\s+(?:gears|topics?)|moving\s+on|new\s+topic|different\s+topic)\b",
    re.IGNORECASE,
)
"""A user turn that announces a new topic: the digression and topic-change markers of Fraser ("What are
discourse markers?", *Journal of Pragmatics* 31, 1999: "by the way", "on another note", "changing the
subject") and their chat forms ("btw", "new question", "switching gears"). Not "speaking of", which ties
the new question to the old topic. Not fitted to any data file. ``topic_shift`` reads the same markers."""

MAX_TERM_WORDS = 4
"""Words of a noun phrase term at most (a hyphenated word counts once): a longer run of content words is
a list or a keyword string."""
MAX_TERM_CHARS = 2_000
"""Characters of a user turn read for its terms: a topic is stated in a turn's first sentences, and the
name finder's cost grows faster than the text (a 140 KB turn took seconds)."""

VERB_OPENERS = frozenset(
    {"to", "i", "you", "we", "they", "please", "can", "could", "would", "will", "do", "does", "did"}
    | {"should", "may", "might", "must", "let", "not", "how", "why", "when", "where", "what"}
)
"""Words after which a base-form verb that WordNet also knows as a noun is read as the verb: the subject
pronouns, the modal and "do" auxiliaries, "to" of an infinitive and the question words (Quirk et al. 1985,
3.21: the base form after a modal or "do", in the imperative and the infinitive)."""


@dataclass(frozen=True, slots=True)
class Term:
    """A noun phrase or name a user turn brings up: ``text`` as written, ``keys`` its content lemmas (lower
    case), ``head`` the lemma of its last word, ``name`` whether it is written as a name."""

    text: str
    keys: frozenset[str]
    head: str
    name: bool


def _base_verb(t: Tok) -> bool:
    return t.lower == t.key and is_verb(t.key) and not t.mid_cap


def _head_noun(t: Tok) -> bool:
    """Whether ``t`` can head a noun phrase: a number, or a WordNet noun written as its lemma or a regular
    plural ("tools"), not an inflected verb form ("knew", "addressed"), a verb only, nor a response form
    or interjection (:data:`monitor.checks.references.INSERT_RE`: "OK", "Hmm"). A noun form WordNet lists
    ("pricing") heads a phrase only after another word of it (:func:`_terms`)."""
    if t.has_digit:
        return True
    if INSERT_RE.fullmatch(t.lower):
        return False
    regular = t.lower == t.key or t.lower in (t.key + "s", t.key + "es")
    return is_noun(t.key) and regular and not only_verb(t.key)


def _hyphen_joined(toks: Sequence[Tok], i: int) -> bool:
    """Whether ``toks[i]`` is a hyphen joining the words on either side without a space ("cross-region")."""
    return (
        toks[i].text == "-"
        and i + 1 < len(toks)
        and toks[i + 1].is_content
        and toks[i - 1].end == toks[i].start
        and toks[i].end == toks[i + 1].start
    )


def _ends_phrase(run: Sequence[Tok]) -> bool:
    """Whether the last token of ``run`` can end a noun phrase: a head noun (:func:`_head_noun`), the end of a
    hyphenated word ("wi-fi", "x-ray": compounds are nominal), or, after another word of the phrase, a noun
    form WordNet lists ("eu-west-1 *pricing*", not "been *feeling*")."""
    last = run[-1]
    if _head_noun(last):
        return True
    return len(run) > 1 and (run[-2].unit == last.unit or last.lower in word_classes()["noun"])


def _name_term(text: str, toks: Sequence[Tok], start: int, end: int) -> Term | None:
    """The term of a name found at ``[start, end)``, or None: a lone verb or interjection ("Tell",
    "Hello"), a single letter or a name that is the first part of a hyphenated word ("T" of "T-shirt")."""
    inside = [t for t in toks if start <= t.start < end and t.is_content]
    if not inside or INSERT_RE.fullmatch(text[start:end]) or (len(inside) == 1 and _base_verb(inside[0])):
        return None
    if end - start < 2 or text[end : end + 1] == "-":
        return None
    return Term(text[start:end], frozenset(t.key for t in inside), inside[-1].key, True)


def _terms(text: str) -> tuple[Term, ...]:
    text = text[:MAX_TERM_CHARS]
    toks = analyzer().analyze(text).tokens
    found: list[tuple[int, Term]] = []
    spans: list[tuple[int, int]] = []
    for n in names(text):
        term = _name_term(text, toks, n.start, n.end)
        if term is not None:
            found.append((n.start, term))
            spans.append((n.start, n.end))
    i, consumed = 0, -1
    while i < len(toks):
        if not toks[i].is_content:
            i += 1
            continue
        # an auxiliary just before the run, not one whose verb an earlier run already ended at
        aux = any(toks[k].lower in BARE_VERB_AUXILIARIES for k in range(max(0, i - 4, consumed + 1), i))
        j = i
        while j + 1 < len(toks):
            if _hyphen_joined(toks, j + 1):
                j += 2  # "cross-region": one word as a reader sees it
                continue
            if not toks[j + 1].is_content or "\n" in text[toks[j].end : toks[j + 1].start]:
                break
            if aux and _base_verb(toks[j + 1]) and _head_noun(toks[j]):
                break  # "does [the relationship] influence ...": the subject ends at the verb
            j += 1
        run = [t for t in toks[i : j + 1] if t.is_content]
        before = toks[i - 1].lower if i > 0 else ""
        verb_next = aux and j + 1 < len(toks) and _base_verb(toks[j + 1])
        if verb_next:
            consumed = j + 1
        i = j + 2 if verb_next else j + 1  # the verb after the subject is no term
        if run and _base_verb(run[0]) and (len(run) == 1 or not _head_noun(run[1])):
            if not before or before in VERB_OPENERS:
                run = run[1:]  # an imperative or a verb after its subject ("Tell me", "I know")
        # a hyphenated word ends the phrase as a noun ("wi-fi", "x-ray"), whatever its last part is
        while run and not _ends_phrase(run):
            run = run[:-1]
        if not run or len({t.unit for t in run}) > MAX_TERM_WORDS:
            continue
        if len(run) == 1 and run[0].lower in word_classes()["adj"]:
            continue  # a lone adjective is a predicate ("is going bad"), not a term
        start, end = run[0].start, run[-1].end
        if not any(s <= start and end <= e for s, e in spans):
            found.append((start, Term(text[start:end], frozenset(t.key for t in run), run[-1].key, False)))
    # one term per text, and no name that a longer term of the turn holds ("Roman" of "Roman army")
    out: list[Term] = []
    seen: set[str] = set()
    phrases = [t.text.lower() for _, t in found if not t.name]
    for _, term in sorted(found, key=lambda x: x[0]):
        low = term.text.lower()
        if low in seen or (term.name and any(low != p and low in p.split() for p in phrases)):
            continue
        seen.add(low)
        out.append(term)
    return tuple(out)


TERMS_MEMO_CHARS = 1_000_000
"""Characters of user turns whose terms are memoised (each later request of a conversation reads them
again)."""
_terms_of = TextMemo(_terms, TERMS_MEMO_CHARS)


def terms_of(text: str) -> tuple[Term, ...]:
    """The terms of the first :data:`MAX_TERM_CHARS` characters of ``text``, in text order, each once: its
    names (:func:`monitor.checks.names.names`, less a lone verb, interjection or letter, and less a name a
    longer term holds), and each maximal run of content tokens on one line ending in a noun (hyphenated
    words kept whole, at most :data:`MAX_TERM_WORDS` words) that no name holds, less a leading verb ("Tell
    me more about traceability tools" -> "traceability tools") and the verb after a subject an auxiliary
    opens ("Do shoulder braces help" -> "shoulder braces"). Memoised by text."""
    return _terms_of(text)


def topic_turn(roles: Sequence[str], texts: Sequence[str]) -> int | None:
    """The message index of the user turn that set the current topic: the last user turn with a topic-change
    marker (:data:`TOPIC_SHIFT_RE`), else the first user turn that does more than open the conversation
    (:func:`_opening_only`); None when there is no user turn.

    A turn that is complete on its own and names new things is not read as a new topic: nearly every
    follow-up does that within its topic ("What was the importance of the millet?" in a conversation about
    the Ottoman Empire's labour systems), so only an announced shift moves the topic."""
    users = [i for i, r in enumerate(roles) if r == "user"]
    if not users:
        return None
    marked = [i for i in users if TOPIC_SHIFT_RE.search(texts[i])]
    if marked:
        return marked[-1]
    return next((i for i in users if not _opening_only(texts[i])), users[0])


def _opening_only(text: str) -> bool:
    """Whether a user turn only opens the conversation ("Hello, I need some help please.", "hi, can you
    help me"): it starts with a greeting or response form (:data:`monitor.checks.references.INSERT_RE`)
    and asks no question of its own (no question mark), so the topic is set by the turn after it."""
    return "?" not in text and INSERT_RE.match(text.strip()) is not None
