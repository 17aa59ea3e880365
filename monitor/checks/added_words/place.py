"""Where the word stands: the steps that move a word's own grade by its place in the query
(:data:`PLACE_STEPS`): a facet in a keyword list, a word of the question's frame, a general noun after a
received modifier, an aspect named for an open request for more."""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import Any

from monitor.checks.added_words import tuned
from monitor.checks.added_words.phrases import DETERMINERS, restricted_head
from monitor.checks.added_words.support import MARKUP_RE
from monitor.checks.added_words.word import Word
from monitor.checks.nlp import Analysis, Tok, Transcript, premodifier
from monitor.lexicon import is_noun, is_verb, noun_classes, only_verb, zipf

# A keyword list (a run of tuned.KEYWORD_RUN content words) needs at least this many of its words added
# (unsupported): a list of facets the rewriter added, not one word added to the user's own keywords,
# which is as likely a constraint ("best hiking trails winter").
KEYWORD_MIN_ADDED = 2
QUESTION_MARKS = ("?", "\uff1f", "\u00bf")
"""A question mark, full-width and inverted ones too: any of them outside markup makes a question."""
_ONE_STEP_LOWER = {"high": "medium", "medium": "low", "low": "low"}


def keyword_list_tokens(q: Analysis, added: Container[int]) -> frozenset[int]:
    """Start offsets of the query tokens inside a list of added facets: a run of
    :data:`tuned.KEYWORD_RUN` or more units each made only of content tokens (a hyphen or dot inside a
    unit does not break it), at least :data:`KEYWORD_MIN_ADDED` of them in ``added`` (indexes of units
    with an unsupported word), in a query with no question mark (:data:`QUESTION_MARKS`) outside markup.
    Empty for a question ("How did the stroke affect Bernie Sanders' campaign?")."""
    bare = MARKUP_RE.sub(" ", q.text)
    if any(m in bare for m in QUESTION_MARKS):
        return frozenset()
    out: set[int] = set()
    run: list[int] = []
    for ui, unit in [*enumerate(q.units), (-1, None)]:
        if unit is not None:
            toks = q.tokens[unit.first : unit.last + 1]
            words = [t for t in toks if not t.is_punct]
            if words and all(t.is_content for t in words):
                run.append(ui)
                continue
        if len(run) >= tuned.KEYWORD_RUN and sum(u in added for u in run) >= KEYWORD_MIN_ADDED:
            out.update(t.start for u in run for t in q.tokens[q.units[u].first : q.units[u].last + 1])
        run = []
    return frozenset(out)


# Signals a keyword list lowers one step: words that name what about the topic is listed. Never a
# number, a name, a name completion or a qualifier value (a constraint is a constraint in any register).
FACET_SIGNALS = frozenset({"content_word", "rare_term", "restricting_noun", "rare_verb", "aspect_noun"})


# The frame of a question: the words that say what kind of answer is asked, before what it is asked
# about. A wh-phrase's head noun ("What are the *benefits* of ...", "What *advantages* does ...") is the
# question's focus (Moldovan et al., "The structure and performance of an open-domain question answering
# system", ACL 2000), and "Is there a *cost* to ...", "How can I *avoid* ...", "Can you *guide* me ...",
# "How to *obtain* ..." are request frames with a first/second-person or generic subject (Searle, "Indirect
# speech acts", 1975). A rewriter that turns a yes/no question into a wh-question or an indirect request into
# a direct one adds such a word without adding anything the documents must be about.
# The patterns were checked against the unlabelled traffic (scripts/derive_from_traffic.py): of the
# openings the three MTRAG rewriters write where the user did not, "what are", "what is", "how to", "how
# do", "could you", "can you", "can I", "are there" are the commonest, and since v18 the "is/are there"
# frame takes no determiner too ("Are there regional differences in ..."): the re-derivation issue 31 asks.
_SENTENCE_START = r"(?:^|(?<=[.?!]\s))"
QUESTION_FRAME_RES = tuple(
    re.compile(_SENTENCE_START + body, re.IGNORECASE)
    for body in (
        r"(?:what|which)\s+(?:is|are|was|were)\s+(?:the\s+|some\s+|any\s+|an?\s+)?"
        r"(?P<f>(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:of|to|for|in|on|about|behind|between)\b",
        r"(?:what|which)\s+(?P<f>(?:[\w-]+\s+)?[\w-]+)\s+"
        r"(?:do|does|did|is|are|was|were|can|could|should|would|will|have|has|had)\b",
        r"(?:is|are|was|were)\s+there\s+(?:an?\s+|any\s+|some\s+)?(?P<f>(?:[\w-]+\s+)?[\w-]+)\s+"
        r"(?:to|for|of|in|on|with|that)\b",
        r"(?:(?:how|why|where|when|what)\s+)?(?:can|could|do|does|should|would|will|might|may)\s+"
        r"(?:i|you|we|someone|one|people)\s+(?:me\s+)?(?P<f>[\w-]+)",
        r"how\s+to\s+(?P<f>[\w-]+)",
    )
)
# Signals the frame lowers one step: common words, rare verbs and aspect nouns. A rare term, a number, a
# name, a name completion or a qualifier value is no frame word wherever it stands.
FRAME_SIGNALS = frozenset({"content_word", "rare_verb", "aspect_noun"})


def question_frame_tokens(q: Analysis) -> frozenset[int]:
    """Start offsets of the query tokens in a question frame (:data:`QUESTION_FRAME_RES`): the focus of a
    wh-phrase ("benefits" in "What are the potential benefits of being a veteran ...?") or the verb of a
    request frame ("avoid" in "How can I avoid missing ...?"). Empty when no sentence opens with one."""
    bare = MARKUP_RE.sub(" ", q.text)
    spans = [m.span("f") for rx in QUESTION_FRAME_RES for m in rx.finditer(bare)]
    if not spans:
        return frozenset()
    return frozenset(t.start for t in q.tokens if any(s <= t.start < e for s, e in spans))


def generic_head_of(q: Analysis, i: int, tr: Transcript) -> Tok | None:
    """The received modifier ``q.tokens[i]`` is the general head of, else None: the token is a noun at
    least :data:`tuned.GENERIC_ZIPF` common, ends its noun phrase (no content word after it), and follows a
    received, lower-case, unnumbered content word that is no plural ("freelance *work*", "alerting
    *systems*"; a plural before a noun is a subject rather than a modifier, "did any singles *come*":
    Quirk et al., "A Comprehensive Grammar", 17.108, premodifying nouns are normally singular)."""
    toks = q.tokens
    word = toks[i]
    if i == 0 or not is_noun(word.key) or max(zipf(word.lower), zipf(word.key)) < tuned.GENERIC_ZIPF:
        return None
    if i + 1 < len(toks) and toks[i + 1].is_content:
        return None
    prev = toks[i - 1]
    return prev if premodifier(prev) and tr.holds(prev.key, prev.lower) else None


# An open request for more: the user asks what else there is about a topic and leaves the aspect to the
# answerer ("What else did he do?", "Anything else interesting?", "Tell me more about X.", "Are there any
# other interesting aspects about this article?"). Such a question is what Searle ("Indirect speech acts",
# 1975) calls a request whose content the hearer completes: a rewrite that names aspects ("his upbringing,
# education and rise to fame") enumerates what was asked for rather than narrowing it. The forms are the
# grammar of "else" (Quirk et al. 1985, ch. 6: "else" after an indefinite or wh-pronoun) and of "more" as
# the object of a telling or asking verb; ``scripts/derive_from_traffic.py`` counts them in every rewriter's
# traffic (part 3).
OPEN_REQUEST_RE = re.compile(
    r"\b(?:what|who|where|how|anything|something|anyone|anybody)\s+else\b"
    r"|\bany\s+other\s+(?:[\w-]+\s+){0,2}?(?:aspects?|facts?|information|details?|things?|points?)\b"
    r"|\b(?:tell|show|give)\s+(?:me|us)\s+(?:some\s+|a\s+(?:bit|little)\s+)?more\b"
    r"|\b(?:more|further|additional|other)\s+(?:details?|information|facts)\b",
    re.IGNORECASE,
)


def open_request(latest: str) -> bool:
    """Whether ``latest`` (the user's message) is an open request for more about its topic
    (:data:`OPEN_REQUEST_RE`)."""
    return OPEN_REQUEST_RE.search(latest) is not None


# Signals an open request lowers one step: a common or rare noun, or an aspect noun, heading its own
# phrase. A modifier restricts its head ("his *music* career"), a name, number or qualifier value is a
# constraint, and an adjective or verb says something of the topic the user did not: none is an aspect.
OPEN_SIGNALS = frozenset({"content_word", "rare_term", "aspect_noun"})
OPEN_KEEPS = frozenset({"person", "state"})
"""WordNet noun classes an open request never lowers: a person ("his *wife*": an audience or a role, as in
the keyword list) or a state ("the *cancer*": a disease or condition, which
:data:`grade.ASPECT_CLASSES` leaves out for the same reason)."""


@dataclass(frozen=True, slots=True)
class Place:
    """What the place steps read about the query as a whole: the starts of its tokens in a keyword list
    (:func:`keyword_list_tokens`) and in a question frame (:func:`question_frame_tokens`), and whether
    the latest message is an open request for more (:func:`open_request`)."""

    listed: frozenset[int]
    frame: frozenset[int]
    open_request: bool = False


def _keyword_list(info: dict[str, Any], w: Word, place: Place) -> dict[str, Any] | None:
    """One step lower in a keyword list, for a facet's signal (:data:`FACET_SIGNALS`), unless the word
    has a person sense (WordNet's noun.person: an audience, a role: "beginners", "son")."""
    if w.tok.start not in place.listed or info["signal"] not in FACET_SIGNALS:
        return None
    if "person" in noun_classes(w.tok.lower, w.tok.key):
        return None
    return _one_step_lower(info, "keyword_list", "a facet in a keyword list")


def _question_frame(info: dict[str, Any], w: Word, place: Place) -> dict[str, Any] | None:
    """One step lower in a question frame, for a frame word's signal (:data:`FRAME_SIGNALS`)."""
    if w.tok.start not in place.frame or info["signal"] not in FRAME_SIGNALS:
        return None
    return _one_step_lower(info, "question_frame", "but in the question's frame, so one step lower")


def _generic_head(info: dict[str, Any], w: Word, place: Place) -> dict[str, Any] | None:
    """Low for a common content word at medium that is the general head of a received modifier
    (:func:`generic_head_of`)."""
    if info["signal"] != "content_word" or info["severity"] != "medium":
        return None
    modifier = generic_head_of(w.q, w.index, w.tr)
    if modifier is None:
        return None
    why = f"but a general noun after the received '{modifier.text}', so low"
    return {**info, "severity": "low", "head_of": modifier.text, "why": f"{info['why']}; {why}"}


def _open_aspect(info: dict[str, Any], w: Word, place: Place) -> dict[str, Any] | None:
    """One step lower for a noun heading its own phrase (:data:`OPEN_SIGNALS`, no noun it restricts)
    when the latest message is an open request for more (:func:`open_request`)."""
    if not place.open_request or info["signal"] not in OPEN_SIGNALS or w.capitalised:
        return None
    t, toks = w.tok, w.q.tokens
    if not is_noun(t.key) or only_verb(t.key) or restricted_head(w.q, w.index) is not None:
        return None
    if noun_classes(t.lower, t.key) & OPEN_KEEPS:
        return None  # a person or a condition is what the documents must be about, not an aspect
    if is_verb(t.key) and not (w.index > 0 and toks[w.index - 1].lower in DETERMINERS):
        return None  # a noun-verb without a determiner before it reads as the verb ("did he *win* a Tony")
    return _one_step_lower(info, "open_request", "an aspect named for an open request for more")


PLACE_STEPS: tuple[tuple[str, Callable[[dict[str, Any], Word, Place], dict[str, Any] | None]], ...] = (
    ("keyword_list", _keyword_list),
    ("question_frame", _question_frame),
    ("generic_head", _generic_head),
    ("open_request", _open_aspect),
)
"""The steps of a word's place in the query, in order: each may move the grade its predecessors left
(returning the new grade, or None to leave it); the last that moved it is the word's ``step``."""


def placed(info: dict[str, Any], w: Word, place: Place) -> dict[str, Any]:
    """``info`` (a word's own grade) moved by the place steps that apply (:data:`PLACE_STEPS`)."""
    for step, fn in PLACE_STEPS:
        got = fn(info, w, place)
        if got is not None and got["severity"] != info["severity"]:
            info = {**got, "step": step}
    return info


def _one_step_lower(info: dict[str, Any], flag: str, why: str) -> dict[str, Any]:
    """``info`` one severity step lower, marked ``flag`` and with ``why`` added to its reason."""
    lower = _ONE_STEP_LOWER[info["severity"]]
    return {**info, "severity": lower, flag: True, "why": f"{info['why']}; {why}"}
