"""``added_content_word``: query content words that nothing the rewriter received supports.

A query content token (see :mod:`monitor.checks.nlp`), or a number word (spaCy files those under its
stop words), is *supported* when its key (lower-cased lemma), lower-cased surface or a regular base form
of the surface occurs in any logged message (user or assistant) or the latest message, when it lies
inside an alias-group member whose group has any member in the transcript (rules/aliases.yaml), or when
it is a neutral word (rules/neutral.yaml ``neutral``). Unsupported words are reported per span of
adjacent units ("free tier", "eu-west-1"), one finding per span.

Each unsupported word is graded by a pipeline of named steps (:data:`STEPS`; ``docs/checks.md``'s step
table is generated from it):

1. **what the word is** (:data:`OWN_GRADE`, the first step that applies sets the grade): meta text, a
   name completing a logged name, a qualifier value, a number (or the same number written otherwise), a
   framing word, a misspelling, an acronym or expansion, a derivation, a synonym, the noun of a logged
   adjective's quality, an antonym pair, a proper name, an abstract noun, an adverb, a rare verb, an
   aspect noun, a rare noun restricting the query's head, another rare word, any other content word.
   A word is high only for what it is: a new name, number, date, version, value of a constraining
   qualifier kind, or a rare noun that restricts the noun it modifies or is attached to. Rarity alone
   makes a word medium, never high.
2. **where it stands** (:data:`PLACE_STEPS`): a facet in a keyword list and a word of the question's
   frame are one step lower; a general noun after a received modifier is low; a noun naming an aspect
   in answer to an open request for more ("What else did he do?") is one step lower.
3. **the rewriter** (:func:`rewriter.adjusted`): one step lower for a word the same prompt version adds
   in many conversations (``monitor.checks.profile``), and what the reviewers' verdicts learned
   (``monitor.checks.learned``).

Every word's evidence names the step that set its grade (``step``) and the grade its own step gave
(``signal``); the finding's ``step`` is its top word's. The span's severity is its highest word's.
The version history is in ``docs/checks.md``.

The modules, in the order a word goes through them: ``support`` (what the transcript supports), ``word``
(what the steps read of a word), ``grade`` (:data:`OWN_GRADE`, with the lexical ``links`` and the noun
``phrases`` it reads), ``place`` (:data:`PLACE_STEPS`), ``rewriter`` (style and learned steps,
:func:`restyle`), ``findings`` (a span's finding) and ``spans`` (the registered :func:`check`); ``spec``
holds the id, version and step table. The constants chosen on labelled files live in ``tuned`` and are
read there at call time: set them on ``monitor.checks.added_words.tuned`` (``scripts/eval_checks.py``
does), not on this package, whose ``RARE_ZIPF``, ``KEYWORD_RUN`` and ``GENERIC_ZIPF`` are copies.
"""

from __future__ import annotations

from monitor.checks.added_words.findings import PRECISE_SIGNALS
from monitor.checks.added_words.grade import (
    ABSTRACT_SUFFIXES,
    ASPECT_CLASSES,
    OWN_GRADE,
    is_number,
    own_grade,
)
from monitor.checks.added_words.links import (
    ACRONYM_SKIPPED,
    CONTRACTIONS,
    LIST_MARKS,
    NAME_CLASSES,
    NAME_ZIPF,
    PARTICLES,
    misspelling,
)
from monitor.checks.added_words.phrases import DETERMINERS, PREPOSITIONS, restricted_head
from monitor.checks.added_words.place import (
    FACET_SIGNALS,
    FRAME_SIGNALS,
    KEYWORD_MIN_ADDED,
    OPEN_KEEPS,
    OPEN_REQUEST_RE,
    OPEN_SIGNALS,
    PLACE_STEPS,
    QUESTION_FRAME_RES,
    QUESTION_MARKS,
    Place,
    generic_head_of,
    keyword_list_tokens,
    open_request,
    placed,
    question_frame_tokens,
)
from monitor.checks.added_words.rewriter import STYLE_SIGNALS, restyle
from monitor.checks.added_words.spans import META_WHY, check
from monitor.checks.added_words.spec import CHECK_ID, STEPS, VERSION
from monitor.checks.added_words.support import BOUND_PREFIXES, MARKUP_RE, added_lemmas
from monitor.checks.added_words.tuned import GENERIC_ZIPF, KEYWORD_RUN, RARE_ZIPF
from monitor.checks.added_words.word import COMPOUND_PART_ZIPF, Grade, Word

__all__ = [
    "ABSTRACT_SUFFIXES",
    "ACRONYM_SKIPPED",
    "ASPECT_CLASSES",
    "BOUND_PREFIXES",
    "CHECK_ID",
    "COMPOUND_PART_ZIPF",
    "CONTRACTIONS",
    "DETERMINERS",
    "FACET_SIGNALS",
    "FRAME_SIGNALS",
    "GENERIC_ZIPF",
    "Grade",
    "KEYWORD_MIN_ADDED",
    "KEYWORD_RUN",
    "LIST_MARKS",
    "MARKUP_RE",
    "META_WHY",
    "NAME_CLASSES",
    "NAME_ZIPF",
    "OPEN_KEEPS",
    "OPEN_REQUEST_RE",
    "OPEN_SIGNALS",
    "OWN_GRADE",
    "PARTICLES",
    "PLACE_STEPS",
    "PRECISE_SIGNALS",
    "PREPOSITIONS",
    "Place",
    "QUESTION_FRAME_RES",
    "QUESTION_MARKS",
    "RARE_ZIPF",
    "STEPS",
    "STYLE_SIGNALS",
    "VERSION",
    "Word",
    "added_lemmas",
    "check",
    "generic_head_of",
    "is_number",
    "keyword_list_tokens",
    "misspelling",
    "open_request",
    "own_grade",
    "placed",
    "question_frame_tokens",
    "restricted_head",
    "restyle",
]
