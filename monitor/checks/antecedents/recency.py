"""``antecedent_recency`` (issue 14, part 2): an "it", "they" or demonstrative of the latest message that
the query replaced by a capitalised name of the transcript (:mod:`monitor.checks.names`), when the user's
focus had moved on.

When a user turn after that name's last mention named another name of the same number, or set a new
topic with "what about X" / "tell me about X", which neither the query nor the latest message mentions,
the rewrite may have taken the stale one. Since v4 the same holds when the answer just before the latest
message opens on another name and its first sentence does not name the one the query chose (Centering: a
pronoun prefers the first-ranked entity of the utterance before it). v1 reported at low ("check the
antecedent"): it fired on 3 of 652 labelled items (2 right, 1 false alarm). v3 reports at medium, as the
precision measured on v2 supports (see :func:`check_recency`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from monitor.checks.antecedents.topics import about_topic, last_mention
from monitor.checks.base import Finding, SkipCheck, analyzer, message_texts
from monitor.checks.names import (
    distinctive,
    is_plural,
    mention_at,
    mentions,
    names,
    stop_words,
    text_key,
)
from monitor.checks.references import PRONOUN_RE, not_a_reference
from monitor.checks.registry import register
from monitor.checks.rules import Rules
from monitor.checks.sentences import split_sentences
from monitor.checks.steps import Step
from monitor.lexicon import is_verb, noun_classes
from monitor.record import RewriteRecord
from monitor.text import match_key

# -- recency of competing candidates (issue 14, part 2) ---------------------------------------------
# v4: an "it"/"they" made a name the answer just before does not open on, while it opens on another
# (_answer_opening), is reported too.
# v3: medium (the precision v2 measured: 5 right of 5 on the labelled files, none wrong).
# v2: a topic the user set with "what about"/"tell me about" competes too (about_topic); "it" points at
# no person (is_person); a name that only modifies a noun ("US approaches") is no competitor (premodifier).
RECENCY_VERSION = 4
RECENCY_STEPS = (
    Step(
        "later_rival",
        "medium",
        "recency in pronoun resolution (Hobbs 1978; Lappin and Leass 1994)",
        "a pronoun replaced by a name when a later user turn named another candidate of its number",
    ),
    Step(
        "answer_opening",
        "medium",
        "centering: the answer's opening entity is the preferred centre (Grosz, Joshi and Weinstein 1995)",
        "'it'/'they' replaced by a name the answer just before does not open on",
    ),
)
SINGULAR = frozenset({"it", "its", "this", "that"})
PLURAL = frozenset({"they", "them", "their", "theirs", "these", "those"})
"""The references judged for recency, by number. Not "he"/"she": without a model nothing tells a person's
name from a place's or a product's, and the names a user brings up after a person are mostly that
person's works, places and teams, which "he" cannot mean (as read on ``qrecc_infocqr_dev2k.jsonl`` and
``cast2020.jsonl``, where such findings were nearly all false alarms)."""
_WORD_RE = re.compile(r"[\w'’-]+")


@dataclass(frozen=True, slots=True)
class Substituted:
    """The name the query put where a reference stood: ``text`` (the name and the common nouns it
    modifies there: "Tesla batteries"), ``[start, end)`` in the query, ``message_index`` of its last
    mention in the transcript."""

    text: str
    start: int
    end: int
    message_index: int


def replacement(latest: str, query: str, start: int) -> tuple[int, int] | None:
    """The span of the query that stands where the word at offset ``start`` of ``latest`` stood: the
    query words a word-level alignment (difflib's longest matching blocks, case aside) puts in place of
    that word and its unmatched neighbours; None when the query keeps the word or drops it unreplaced."""
    lw = list(_WORD_RE.finditer(latest))
    qw = list(_WORD_RE.finditer(query))
    at = next((i for i, m in enumerate(lw) if m.start() <= start < m.end()), None)
    if at is None:
        return None
    sm = difflib.SequenceMatcher(
        a=[m.group(0).lower() for m in lw], b=[m.group(0).lower() for m in qw], autojunk=False
    )
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if i1 <= at < i2:
            return None if tag == "equal" or j1 == j2 else (qw[j1].start(), qw[j2 - 1].end())
    return None


def _substituted(record: RewriteRecord, texts: list[str], span: tuple[int, int]) -> Substituted | None:
    """What the query put in ``span``: the last name there (an English noun phrase ends in its head:
    "Ai Otsuka's Love Piece") that the transcript mentions and the latest message does not name, with
    the lower-case nouns after it in the span; its last mention is the later of the name's and those
    nouns' ("the Tesla batteries" is as recent as "the batteries")."""
    own = {w.lower() for n in names(record.latest) for w in n.text.split()}
    query = record.query
    for n in reversed([n for n in names(query) if n.start < span[1] and n.end > span[0]]):
        if mentions(n.text, record.latest) or own & {w.lower() for w in n.text.split()}:
            continue
        if not distinctive(n.text, [*texts, record.latest, query]):
            continue
        at = last_mention(n.text, texts)
        if at is None:
            continue
        # The common nouns the name modifies ("Tesla batteries"): the lower-case words after it while they
        # are nouns ("Love Piece album", not "perform"; "Byzantine Empire", not "founded").
        tail = re.match(r"(?:[ \t]+[a-z][\w-]*)+", query[n.end : span[1]])
        nouns: list[str] = []
        for w in tail.group(0).split() if tail else []:
            if w in stop_words() or not noun_classes(w, analyzer().lemma(w, w).lower()):
                break
            nouns.append(w)
        end = n.end
        if nouns:
            end = query.index(nouns[-1], n.end) + len(nouns[-1])
            head = " ".join(nouns)
            at = max([at, *(i for i, t in enumerate(texts) if mentions(head, t))])
        return Substituted(query[n.start : end], n.start, end, at)
    return None


def _rivals(
    record: RewriteRecord,
    texts: list[str],
    roles: list[str],
    ent: Substituted,
    plural: bool,
    neuter: bool = False,
) -> tuple[int, list[str]] | None:
    """The latest user turn after ``ent``'s last mention that names a competing candidate, and those
    candidates in the order the turn names them; None when no turn does.

    A candidate is a distinctive name (:func:`monitor.checks.names.distinctive`) the turn names (written
    there, or any name of the transcript it mentions, unless inside a longer name of the turn), of the
    reference's number (:func:`monitor.checks.names.is_plural`), that neither the query nor the latest
    message mentions and that is not part of ``ent`` nor holds it; for an "it" (``neuter``), no name
    of a person (:func:`is_person`); no name the turn uses only to modify a noun (:func:`premodifier`:
    "the European and US approaches" names approaches, not the US). A turn with its own pronoun of that
    number is skipped: it still speaks of what that pronoun points at, and a name it adds is no new
    focus ("How does it compare to a Ferrari?"). Source: Centering theory's Rule 1, "if any element is
    realized by a pronoun, the backward-looking center is too" (Grosz, Joshi and Weinstein,
    *Computational Linguistics* 21(2), 1995).
    """
    every = [*texts, record.latest, record.query]
    pool = {n.text for t in texts for n in names(t)}  # a user turn's own names are among them
    same_number = PLURAL if plural else SINGULAR
    for j in range(len(texts) - 1, ent.message_index, -1):
        turn = texts[j]
        # Any pronoun of the number counts, an anticipatory "it" too ("Is it easier to learn than
        # Spanish?" is still about Norwegian): a turn misread as on the older topic only keeps us silent.
        if roles[j] != "user" or any(m.group(0).lower() in same_number for m in PRONOUN_RE.finditer(turn)):
            continue
        # The turn's names, and the transcript's names it mentions (not inside a longer one of its own:
        # "Christmas" of "the Christmas Lottery"), in the order the turn mentions them.
        written = [n.text for n in names(turn)]
        named = {c: at for c in pool if (at := mention_at(c, turn)) is not None}
        named = {
            c: at
            for c, at in named.items()
            if c in written or not any(c != w and mentions(c, w) for w in written)
        }
        got = [
            c
            for c, _ in sorted(named.items(), key=lambda kv: (kv[1], -len(kv[0])))
            if distinctive(c, every)
            and is_plural(c) == plural
            and (plural or not _asked_who(c, turn))
            and not (neuter and is_person(c))
            and not premodifier(c, turn)
            and not mentions(c, record.query)
            and not mentions(c, record.latest)
            and not mentions(ent.text, c)
            and not mentions(c, ent.text)
        ]
        topic = None if got else about_topic(turn, texts[:j])
        if topic is not None:
            low = topic.lower()
            key = analyzer().lemma(topic.split()[-1], low.split()[-1]).lower()
            if (
                (key != low.split()[-1]) == plural
                and not (neuter and is_person(topic))
                and not mentions(topic, record.query)
                and not mentions(topic, record.latest)
                and not mentions(topic, ent.text)
            ):
                got = [topic]
        if got:
            return j, got
    return None


_NEXT_WORD_RE = re.compile(r"(?:e?s)?(?:['’]s?)?[ \t]+([a-z][\w-]*)")
_DETERMINER_BEFORE_RE = re.compile(r"(?:^|\W)(?:the|a|an|and|or|of)\s+$", re.IGNORECASE)


def premodifier(name: str, turn: str) -> bool:
    """Whether every mention of ``name`` in ``turn`` modifies a common noun after it ("US approaches",
    "GMO food"): a lower-case noun that is no stop word, and no verb unless a determiner or a
    coordinator stands before the name ("the European and US approaches"; not "Tesla makes").

    A noun inside a compound or used as a modifier introduces no discourse referent of its own, so a
    later pronoun cannot point at it: Postal's "anaphoric islands" (*Papers from the Fifth Regional
    Meeting of the Chicago Linguistic Society*, 1969), as in "*The US approaches differ; is it ...?"."""
    found = False
    for m in re.finditer(rf"(?<![\w-]){re.escape(name)}", turn, re.IGNORECASE):
        found = True
        nxt = _NEXT_WORD_RE.match(turn, m.end())
        if nxt is None:
            return False
        word = nxt.group(1)
        key = analyzer().lemma(word, word).lower()
        if word in stop_words() or not noun_classes(word, key):
            return False
        if is_verb(key) and _DETERMINER_BEFORE_RE.search(turn[: m.start()]) is None:
            return False
    return found


NEUTER = frozenset({"it", "its"})
"""The references that cannot point at a person: English "it" is the non-personal pronoun (Quirk et al.,
*A Comprehensive Grammar of the English Language*, 1985, 6.10-6.12), and gender agreement is a filter of
Hobbs' algorithm ("Resolving pronoun references", *Lingua* 44, 1978). Not "this"/"that", which can
point at a person ("Who is that?")."""


def is_person(name: str) -> bool:
    """Whether ``name`` names a person by its last word: a word whose every noun sense in WordNet 3.0 is
    of the class ``person`` ("European", "author", "Dali"; not "Model", which is also an artifact, nor a
    word WordNet lacks). :data:`NEUTER` references cannot point at it."""
    last = name.split()[-1]
    low = last.lower()
    return noun_classes(low, analyzer().lemma(last, low).lower()) == frozenset({"person"})


PERSONAL = frozenset({"it", "its", "they", "them", "their", "theirs"})
"""The references :func:`_answer_opening` judges: the personal pronouns, which point at what is in focus,
not the demonstratives, which may point at anything merely activated (Gundel, Hedberg and Zacharski,
"Cognitive status and the form of referring expressions in discourse", *Language* 69(2), 1993)."""
_OBLIQUE_RE = re.compile(
    r"\b(?:in|on|at|of|from|to|by|with|for|into|about|near|under|over|than|as|via|before|after|until|since"
    r"|during)\s+(?:the\s+|a\s+|an\s+)?(?:\d+\s+)?$",
    re.IGNORECASE,
)
"""A preposition (and article, and day number) just before a name: the name is an oblique, which ranks
below subject and object among an utterance's forward-looking centers."""


def _answer_opening(
    record: RewriteRecord, texts: list[str], roles: list[str], ent: Substituted, plural: bool, neuter: bool
) -> str | None:
    """The entity the answer just before the latest message opens on, when it competes with ``ent``: the
    first name of the answer's first sentence that is no oblique (:data:`_OBLIQUE_RE`), when that sentence
    neither names ``ent`` (its name, a name in it, or the common noun it ends in: "IBM Cloud Lite
    account" is named by "a Lite account") nor has a pronoun of the reference's number, and the name is
    distinctive, of that number, no person for an "it", no premodifier, and named neither by the query
    nor by the latest message, nor part of ``ent``. None otherwise: the first non-oblique name decides.

    Source: Centering theory (Grosz, Joshi and Weinstein 1995): a pronoun of the next utterance prefers
    the highest-ranked forward-looking center of the one before it, and an utterance that does not
    realize the entity at all makes it no candidate there; its ranking by surface order and grammatical
    role, with the first mention first (Gernsbacher and Hargreaves, "Accessing sentence participants:
    the advantage of first mention", *Journal of Memory and Language* 27, 1988). The answer is the
    utterance just before the user's; a rewrite that reaches past it to an entity it does not name, while
    it opens on another, may have taken the stale one. A first sentence with its own "it" continues the
    earlier center ("It is a food truck in Los Angeles"), as in :func:`_rivals`.
    """
    if not texts or roles[-1] != "assistant":
        return None
    sentences = split_sentences(texts[-1])
    if not sentences:
        return None
    first = sentences[0].text
    same_number = PLURAL if plural else SINGULAR
    if any(m.group(0).lower() in same_number for m in PRONOUN_RE.finditer(first)):
        return None
    words = ent.text.split()
    own = [ent.text, *(n.text for n in names(ent.text)), *([words[-1]] if words[-1].islower() else [])]
    if any(mentions(o, first) for o in own):
        return None
    every = [*texts, record.latest, record.query]
    for n in names(first):
        if _OBLIQUE_RE.search(first, 0, n.start) is not None:
            continue
        c = n.text
        ok = (
            distinctive(c, every)
            and is_plural(c) == plural
            and not (neuter and (is_person(c) or is_person(c.split()[0])))
            and not premodifier(c, first)
            and not mentions(c, record.query)
            and not mentions(c, record.latest)
            and not mentions(ent.text, c)
            and not mentions(c, ent.text)
        )
        return c if ok else None
    return None


def _asked_who(name: str, turn: str) -> bool:
    """Whether ``turn`` asks who ``name`` is ("Who is Roy Choi?"): "who" is the personal interrogative
    (Quirk et al. 1985, ch. 6), so the name is a person's, which "it" does not point at."""
    pattern = rf"\bwho(?:'s|\s+(?:is|was))\s+(?:the\s+)?{re.escape(match_key(name))}\b"
    return re.search(pattern, text_key(turn)) is not None


@register(
    "antecedent_recency",
    family="antecedents",
    version=RECENCY_VERSION,
    kinds=("wrong_antecedent",),
    steps=RECENCY_STEPS,
    summary="a pronoun replaced by a name when a later turn named a competitor",
)
def check_recency(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``wrong_antecedent`` (medium, "check the antecedent") when the query puts in place of an "it",
    "they" or demonstrative of the latest message (:func:`replacement`) a name (:func:`_substituted`)
    last mentioned before a user turn that named a competing candidate of the same number
    (:func:`_rivals`: a name, or a new topic the turn sets with "what about X" / "tell me about X",
    :func:`about_topic`): "When was it built?" made "When was the Tesla Roadster built?" after the user
    asked "What about the Hennessey Venom GT?", or "what made it successful?" made "what made Lamborghini
    successful?" after "What about for a food truck?"; or, for a personal pronoun, the answer just before
    the latest message opens on another name and does not name the substituted one in that sentence
    (:func:`_answer_opening`). An "it" made a person's name
    (:func:`is_person`) is not judged. Only user turns supply a competitor: an answer that
    describes X with "it" names founders and places while X stays the topic ("What is Kogi?" ... "When
    was it founded?").

    Severity: measured alone on a fresh store of the shared logs (``evaluate``, the findings table), it
    fired on 2 of 200 items of ``cast_audit_labels.jsonl`` (1 right, 1 false alarm: 1 of 153 items
    without the label), 1 of 138 of ``mtrag_dev_mixtral_labels.jsonl`` and 1 of 157 of
    ``mtrag_dev_sonnet45agg_labels.jsonl`` (both right) and none of ``mtrag_dev_sonnet4live_labels.jsonl``;
    the two MTRAG hits name "Italy" where the labels' antecedent is Rome. A precision of 0.5 to 1.0 on
    one or two findings per file, and none on one file, does not support medium, so it is low: shown in
    the item view, not queued. v2 (the topic frames, no person for "it", no premodifier): on the same
    files 2 right and no false alarm on ``cast_audit_labels.jsonl`` (+1 right: the food truck; -1 false
    alarm: "US approaches"), the MTRAG files unchanged. Over the labelled files v2 fires on 5 items and
    all 5 carry the label (``cast_audit_labels.jsonl`` 2, ``mtrag_dev_mixtral_labels.jsonl`` 1,
    ``mtrag_dev_sonnet45agg_labels.jsonl`` 1, ``llm_word_labels.jsonl`` 1; no false alarm in any file):
    precision 1.0, 95% Wilson interval 0.57-1.0. On the 6 unlabelled items of the corpus it fires on,
    read against their gold rewrites, 4 are right, 1 is borderline and 1 is wrong ("it" = Tesla after
    "What is unique about the Model 3?"). So v3 reports at medium: the item reaches the queue. It stays
    rare: 11 of 3,385 rewrites of the shared logs. v4 (the answer's opening) adds 5 findings over the
    shared logs: 4 labelled items, all right (``mtrag_dev_mixtral_labels.jsonl`` and
    ``mtrag_dev_sonnet45agg_labels.jsonl`` 2 each: "it" made the Byzantine Empire after answers that
    open on Rome and on Constantine I's reorganisation of the Roman Empire; all four are one
    conversation, labelled Borderline), and 1 unlabelled QReCC item whose rewrite joins two restaurant
    chains where the gold rewrite names one. Too few, and from one conversation, to say more than that
    it adds no false alarm on the labelled files.

    Evidence: ``reference`` {text, start, end, message_index "latest"}, ``substituted`` {text, start,
    end (in the query), message_index of its last mention}, ``competitor`` {text, message_index, from:
    "user" or "answer"} and ``others`` (the turn's other candidates), ``words`` (the substituted name).
    Skips without a message list, without such a reference, or when the query puts no name of the
    transcript in its place.
    """
    texts = message_texts(record)
    assert record.context is not None and record.context.messages is not None  # message_texts checked
    roles = [m.role for m in record.context.messages]
    latest = record.latest
    refs = [
        m
        for m in PRONOUN_RE.finditer(latest)
        if m.group(0).lower() in SINGULAR | PLURAL
        and not not_a_reference(latest, "pronoun", m.group(0), m.start())
    ]
    if not refs:
        raise SkipCheck("no 'it', 'they' or demonstrative in the latest message")
    out: list[Finding] = []
    substituted = False
    for ref in refs:
        span = replacement(latest, record.query, ref.start())
        ent = _substituted(record, texts, span) if span is not None else None
        if ent is None or any(f.evidence["substituted"]["start"] == ent.start for f in out):
            continue
        substituted = True
        neuter = ref.group(0).lower() in NEUTER
        if neuter and is_person(ent.text):
            continue  # "it" made a person's name: not a recency question
        plural = ref.group(0).lower() in PLURAL
        rivals = _rivals(record, texts, roles, ent, plural, neuter)
        if rivals is not None:
            out.append(_recency_finding(ref, ent, *rivals))
        elif ref.group(0).lower() in PERSONAL:
            opening = _answer_opening(record, texts, roles, ent, plural, neuter)
            if opening is not None:
                out.append(_recency_finding(ref, ent, len(texts) - 1, [opening], answer=True))
    if not substituted:
        raise SkipCheck("the query puts no name of the transcript in place of the reference")
    return out


def _recency_finding(
    ref: re.Match[str], ent: Substituted, at: int, rivals: list[str], answer: bool = False
) -> Finding:
    if answer:
        why = f"the answer just before (message {at}) opens on '{rivals[0]}', not on it"
    else:
        why = f"the user named '{rivals[0]}' later (message {at})"
    return Finding(
        kind="wrong_antecedent",
        severity="medium",
        evidence={
            "reference": {
                "text": ref.group(0),
                "start": ref.start(),
                "end": ref.end(),
                "message_index": "latest",
            },
            "substituted": {
                "text": ent.text,
                "start": ent.start,
                "end": ent.end,
                "message_index": ent.message_index,
            },
            "competitor": {"text": rivals[0], "message_index": at, "from": "answer" if answer else "user"},
            "others": rivals[1:],
            "words": [{"text": ent.text, "start": ent.start, "end": ent.end}],
        },
        reason=(
            f"'{ref.group(0)}' became '{ent.text}', last mentioned in message {ent.message_index}, "
            f"but {why}: check the antecedent"
        ),
        check_id="antecedent_recency",
        check_version=RECENCY_VERSION,
        step="answer_opening" if answer else "later_rival",
    )
