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
3. **the rewriter** (:func:`_adjusted`): one step lower for a word the same prompt version adds in many
   conversations (``monitor.checks.profile``), and what the reviewers' verdicts learned
   (``monitor.checks.learned``).

Every word's evidence names the step that set its grade (``step``) and the grade its own step gave
(``signal``); the finding's ``step`` is its top word's. The span's severity is its highest word's.
The version history is in ``docs/checks.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from typing import Any

from monitor.checks.base import Finding, SkipCheck, alias_index, analyzer, transcript
from monitor.checks.learned import UNADJUSTED_SIGNALS, LearnedTable, rewriter_key, shifted
from monitor.checks.nlp import (
    Analysis,
    Tok,
    Transcript,
    Unit,
    alias_matches,
    antonym_pair,
    attribute_in,
    capitalised_token,
    derivation_in,
    find_stem_relative,
    one_edit,
    premodifier,
    synonym_in,
)
from monitor.checks.numbers import FRACTIONS, ORDINALS, QUERY_NUMBER_WORDS, number_values, value_at
from monitor.checks.profile import RewriterProfile
from monitor.checks.qualifiers import qualifiers_in
from monitor.checks.references import is_closing, is_meta_text, meta_tail_start
from monitor.checks.registry import register
from monitor.checks.rules import QualifierMatch, Rules
from monitor.checks.steps import Step
from monitor.lexicon import (
    base_forms,
    is_noun,
    is_verb,
    lemma_forms,
    noun_classes,
    only_pos,
    only_verb,
    unknown_word,
    zipf,
)
from monitor.record import RewriteRecord
from monitor.severity import SEVERITY_RANK

# v18: a pipeline of named steps; rarity alone grades nothing high (a rare noun restricting the query's
# head is high, another rare word medium); numbers written otherwise and number words; acronyms whose
# initials skip function words; lookups over every transcript token and multi-word WordNet lemmas; the
# surface form before a doubtful lookup lemma; the answer-type, sibling, cause and typo steps retired.
# v19: WordNet's derivational links ("death" for "died"); a noun naming an aspect in answer to an open
# request for more is one step lower; an aspect noun is medium as a modifier, low as a head, whatever
# its rarity. v20: an open request lowers no person or condition ("his wife", "the cancer"); an ordinal
# after "a" ("a second opinion") means "another", a content word rather than a number; "v2" for a received
# "version 2" is restated, low. Earlier versions: docs/checks.md.
VERSION = 20

# Output markup a rewriter leaves in its answer: a tag pair with a short content
# ("<budget:token_budget>199700</budget:token_budget>"), a lone tag, or a code fence. A search engine
# would not treat it as query words, so its words are neither supported nor added.
MARKUP_RE = re.compile(r"<([A-Za-z][\w.-]*(?::[\w.-]+)?)>[^<>\n]{0,40}</\1>|</?[A-Za-z][\w.:-]*\s*/?>|```\w*")
CHECK_ID = "added_content_word"

# Zipf below this = a rare, specific term. 4.4 is about 25 occurrences per million words: "stroke" 4.3,
# "literary" 4.3, "tier" 4.2 fall below; "career" 5.1, "music" 5.5 do not (wordfreq's own docs call < 3
# "rare"). Chosen while reading cast_audit_labels.jsonl and llm_word_labels.jsonl; since v18 it decides
# medium against low-or-medium, and high only with a noun's place in the query (restricting_noun);
# scripts/eval_checks.py reports the leave-one-rewriter-out figures over the grid 4.0 / 4.4 / 4.8.
RARE_ZIPF = 4.4
# A supported capitalised neighbour rarer than this is a name ("Peters"), so the unsupported capitalised
# word next to it is a name completion rather than a new entity.
NAME_ZIPF = 4.0
# WordNet's noun classes (lexicographer files, lexnames(5)) of what is said or done about a thing rather
# than a thing: acts, attributes, cognition, communication, feelings, motives, processes, relations,
# shapes. Not states (diseases and conditions are noun.state: "stroke"), nor people, places, artefacts,
# times, events, substances, groups or possessions: those name what the documents must be about.
ASPECT_CLASSES = frozenset(
    {"act", "attribute", "cognition", "communication", "feeling", "motive", "process", "relation", "shape"}
)
# Abstract nouns formed by derivational suffixes (Quirk et al., "A Comprehensive Grammar", App. I):
# they name a facet of something already in the question (involvement, significance, departure).
ABSTRACT_SUFFIXES = ("tion", "sion", "ment", "ness", "ity", "ance", "ence", "ship", "hood", "ism", "ure")
# The noun classes of a proper name WordNet lists (its capitalised lemmas, lower-cased in the index):
# people, places, groups. A capitalised word whose every noun sense is one of these is a name, not a
# common noun written with a capital ("Texas", "George"; not "Watch", "Model").
NAME_CLASSES = frozenset({"person", "location", "group"})
# A run of this many content words with no function word between them, in a query without a question
# mark, is a keyword list. Derived on the unlabelled traffic and logs (scripts/derive_from_traffic.py):
# the natural-language rewriters (MTRAG Mixtral and live Claude traffic, gpt-3.5 on QReCC and CAsT 2019,
# T5 on CAsT 2021, the CAsT 2020 organiser rewriter) write a run of 3+ in at most 3% of their queries,
# of 2+ in up to 7%; the keyword rewriters (the Claude expansion traffic, the CAsT 2019 baseline) in
# 47-54%. 3 is the shortest run that natural questions almost never hold.
KEYWORD_RUN = 3
# ... and at least this many of its words added (unsupported): a list of facets the rewriter added, not
# one word added to the user's own keywords, which is as likely a constraint ("best hiking trails winter").
KEYWORD_MIN_ADDED = 2
QUESTION_MARKS = ("?", "\uff1f", "\u00bf")
"""A question mark, full-width and inverted ones too: any of them outside markup makes a question."""
_ONE_STEP_LOWER = {"high": "medium", "medium": "low", "low": "low"}

_WN = "WordNet 3.0 (Princeton), shipped in monitor/data/wordnet and spacy-lookups-data"
_QUIRK = "Quirk et al., A Comprehensive Grammar of the English Language (1985)"
STEPS = (
    # what the word is (OWN_GRADE order)
    Step(
        "meta_text",
        "low",
        "not_a_query's meta-text and closing forms (monitor.checks.references)",
        "a word of a refusal, chatter, a trailing note or leaked turn, or of a rewrite of a message that "
        "asks nothing: not query text",
    ),
    Step(
        "name_completion",
        "low",
        f"{_QUIRK}, 17.65 (apposition) and 5.60 (proper names); {_WN} (proper-name classes)",
        "a capitalised word beside a logged name that completes it: a first name, a containing place "
        "('Bernadette Peters', 'Austin, Texas')",
    ),
    Step(
        "qualifier_value",
        "high",
        "rules/qualifiers.yaml (constraining kinds; seeds 003)",
        "a value of a constraining qualifier kind (a tier, region, year, demographic ...)",
    ),
    Step(
        "number",
        "high",
        f"{_QUIRK}, 6.63-6.66 (numerals)",
        "a number, date or version (digits or number words) whose value no received turn writes",
    ),
    Step(
        "number_restated",
        "low",
        f"{_QUIRK}, 6.63-6.66; Unicode vulgar fractions",
        "the value of a number a received turn writes otherwise ('7 ½' for '7.5', 'twenty' for '20', "
        "'v2' for 'version 2')",
    ),
    Step("framing", "low", "rules/neutral.yaml framing", "a framing word or general noun"),
    Step(
        "misspelling",
        "low",
        "Damerau, CACM 7 (1964): single-error typing slips",
        "a word WordNet does not know, one edit from a received word or an English contraction ('did't')",
    ),
    Step(
        "acronym",
        "low",
        f"{_QUIRK}, App. I.74-I.76 (acronyms and initialisms)",
        "an abbreviation or expansion of a received form; the initials may skip function words "
        "('Bureau of Labor Statistics' for 'BLS')",
    ),
    Step(
        "derivation",
        "low",
        f"{_QUIRK}, App. I (derivation); monitor.checks.nlp.shared_stem; {_WN} (derivational links)",
        "an inflection, derivation or spelling fix of any received word, stop words included; a "
        "derivation WordNet links ('death' for 'died')",
    ),
    Step(
        "synonym",
        "low",
        f"{_WN} (synsets, multi-word lemmas)",
        "shares a WordNet synset with a received word or multi-word expression ('quit' for 'gave up')",
    ),
    Step(
        "attribute",
        "low",
        f"{_WN} (attribute pointer)",
        "the noun of the quality a received adjective values ('size' for 'big')",
    ),
    Step(
        "antonym_pair",
        "low",
        f"{_WN} (antonym pointer); Jones, Antonymy (2002), ch. 4 (inclusive use)",
        "coordinated with its antonym ('pros and cons'): the pair spans the whole scale",
    ),
    Step(
        "proper_name",
        "high",
        f"{_QUIRK}, 5.60-5.66 (proper nouns)",
        "a new name: capitalised mid-sentence, or an acronym",
    ),
    Step(
        "abstract_noun",
        "low",
        f"{_QUIRK}, App. I.30-I.34 (abstract noun suffixes)",
        "an abstract noun formed by a derivational suffix (involvement, significance)",
    ),
    Step(
        "adverb",
        "low",
        f"{_QUIRK}, 8.87-8.122 (manner and viewpoint adjuncts); {_WN} word classes",
        "a word WordNet knows only as an adverb ('traditionally', 'statistically'): how or from which "
        "viewpoint, not what about",
    ),
    Step(
        "rare_verb",
        "medium",
        f"wordfreq Zipf < {RARE_ZIPF}; {_WN} word classes",
        "a rare word WordNet knows only as a verb: an action, not what is acted on",
    ),
    Step(
        "aspect_noun",
        "low (medium as a modifier)",
        f"{_WN} noun classes (lexnames)",
        "a noun every sense of which is an act, attribute, communication ...: what about the topic is asked",
    ),
    Step(
        "restricting_noun",
        "high",
        f"{_QUIRK}, 17.2-17.4 (pre- and postmodification restrict the head); wordfreq Zipf < {RARE_ZIPF}",
        "a rare noun that premodifies another noun or heads a prepositional phrase attached to one "
        "('halftime show', 'tips for beginners')",
    ),
    Step(
        "rare_term",
        "medium",
        f"wordfreq Zipf < {RARE_ZIPF}",
        "another rare word: rarity alone makes a word medium, never high",
    ),
    Step(
        "content_word", "medium", "the added-content-word check (seeds 000)", "any other added content word"
    ),
    # where it stands (PLACE_STEPS order)
    Step(
        "keyword_list",
        "one step lower",
        "keyword queries rank by juxtaposed terms rather than restrict (seeds 000); "
        f"{_WN} noun.person keeps an audience",
        f"a facet in a list of {KEYWORD_RUN}+ content words, {KEYWORD_MIN_ADDED}+ of them added, "
        "in a query without a question mark",
    ),
    Step(
        "question_frame",
        "one step lower",
        "Moldovan et al., ACL 2000 (question focus); Searle, Indirect speech acts (1975)",
        "the focus of a wh-phrase or the verb of a request frame ('What are the benefits of ...')",
    ),
    Step(
        "generic_head",
        "low",
        "Halliday and Hasan, Cohesion in English (1976), 6.4 (general nouns)",
        "a very common noun after a received modifier ('freelance work')",
    ),
    Step(
        "open_request",
        "one step lower",
        "Searle, Indirect speech acts (1975); Quirk et al. 1985, ch. 6 ('else' after a wh- or indefinite)",
        "a noun heading its own phrase, added to an open request for more ('What else did he do?', "
        "'Tell me more about X')",
    ),
    # the rewriter
    Step(
        "rewriter_style",
        "one step lower",
        "the rewriter profile learned from the store without labels (monitor.checks.profile)",
        "a word the same prompt version adds in many other conversations",
    ),
    Step(
        "learned",
        "moved by the verdicts",
        "the reviewers' verdicts on this rewriter (monitor.checks.learned)",
        "the grade the reviewers' dismissals or confirmations of the word set",
    ),
)


@dataclass(frozen=True, slots=True)
class Word:
    """What every grading step reads about one unsupported query word: the token, its index in the
    query's analysis ``q``, the text of its unit, the transcript, the rules, the query's qualifier
    matches, why it is meta text (or None) and whether it is written as a name."""

    tok: Tok
    index: int
    unit_text: str
    q: Analysis
    tr: Transcript
    rules: Rules
    quals: list[QualifierMatch]
    meta: str | None

    @property
    def capitalised(self) -> bool:
        """Capitalised mid-sentence, or an all-capitals word of two or more letters (an acronym)."""
        t = self.tok
        return t.mid_cap or (t.text.isupper() and len(t.text) >= 2 and t.text.isalpha())

    @property
    def zipf(self) -> float:
        """The word's rarity: the commoner of its surface and lemma (inflected forms, "visits", are rarer
        than their lemma without being more specific), and a transparent compound of two common words
        ("birthplace") as common as its rarer part."""
        z = max(zipf(self.tok.lower), zipf(self.tok.key))
        if z < RARE_ZIPF and (parts := _compound_parts(self.tok.lower)) is not None:
            z = min(zipf(parts[0]), zipf(parts[1]))
        return z


Grade = dict[str, Any]
"""What a step says of a word: ``severity``, ``why`` and any evidence of its own (``related``, ...)."""


def _meta_text(w: Word) -> Grade | None:
    return None if w.meta is None else {"severity": "low", "why": w.meta}


def _name_completion(w: Word) -> Grade | None:
    if not w.capitalised:
        return None
    neighbour = _name_neighbour(w)
    if neighbour is None:
        return None
    return {"severity": "low", "completes": neighbour, "why": f"completes the logged name '{neighbour}'"}


def _qualifier_value(w: Word) -> Grade | None:
    t = w.tok
    for qm in w.quals:
        if qm.constrains and qm.start < t.end and t.start < qm.end:
            if any(c.isdigit() for c in qm.text) and _received_value(w, qm):
                # "v2" for a received "version 2": the kind's patterns read both as one value
                return {
                    "severity": "low",
                    "step": "number_restated",
                    "qualifier_kind": qm.kind,
                    "value": qm.value,
                    "why": f"the {qm.kind} value {qm.value!r}, which a received turn writes otherwise",
                }
            return {
                "severity": "high",
                "qualifier_kind": qm.kind,
                "value": qm.value,
                "why": f"{qm.kind} value",
            }
    return None


def _received_value(w: Word, qm: QualifierMatch) -> bool:
    """Whether a received text holds a value of ``qm``'s kind that its patterns read as ``qm.value``."""
    want = (qm.kind, qm.value)
    return any((m.kind, m.value) == want for a in w.tr.analyses for m in qualifiers_in(a.text, w.rules))


def is_number(t: Tok) -> bool:
    """Whether ``t`` writes a number: a digit, a vulgar fraction ("½"), or a number word a query can add
    (:data:`monitor.checks.numbers.QUERY_NUMBER_WORDS`)."""
    return t.has_digit or t.lower in QUERY_NUMBER_WORDS or any(c in FRACTIONS for c in t.text)


def _number(w: Word) -> Grade | None:
    if not is_number(w.tok):
        return None
    if w.tok.lower in ORDINALS and w.index and w.q.tokens[w.index - 1].lower in ("a", "an"):
        # "a second opinion", "a third cat": after the indefinite article an ordinal means "another"
        # (an ordinal is a postdeterminer: Quirk et al. 1985, ch. 5), no position or count: a content word
        return None
    value = _restated_value(w)
    if value is not None:
        shown = int(value) if value == int(value) else value
        return {
            "severity": "low",
            "step": "number_restated",
            "value": value,
            "why": f"the number {shown}, which a received turn writes otherwise",
        }
    return {"severity": "high", "why": "number, date or version"}


def _restated_value(w: Word) -> float | None:
    """The value of the number ``w`` is part of, when a received turn writes the same value; None
    otherwise, and for a number inside a word of letters and digits ("A380", "eu-west-1": an
    identifier, which only its own spelling supports)."""
    unit = w.q.units[w.tok.unit]
    value = value_at(w.q.text, unit.start, unit.end) or value_at(w.q.text, w.tok.start, w.tok.end)
    if value is None:
        return None
    letters = re.sub(r"^v(?:er(?:sion)?)?\.?|(?:st|nd|rd|th|s|\.x)$", "", unit.text.lower())
    if re.search(r"[a-z]", letters) and w.tok.lower not in QUERY_NUMBER_WORDS:
        return None
    return value if any(value in number_values(a.text) for a in w.tr.analyses) else None


def _framing(w: Word) -> Grade | None:
    framing = w.rules.framing_words
    if w.tok.key in framing or w.tok.lower in framing:
        return {"severity": "low", "why": "framing or generic word"}
    return None


def _misspelling(w: Word) -> Grade | None:
    fixed = misspelling(w.tok, w.tr)
    if fixed is None:
        return None
    return {"severity": "low", "related": fixed, "why": f"a misspelling of '{fixed}'"}


def _acronym(w: Word) -> Grade | None:
    acro = _acronym_link(w)
    if acro is None:
        return None
    return {"severity": "low", "related": acro, "why": f"abbreviation or expansion of the logged '{acro}'"}


def _derivation(w: Word) -> Grade | None:
    for form in lemma_forms(w.tok.lower, w.tok.key):
        rel = find_stem_relative(form, w.tr.analyses)
        if rel is not None:
            return _related(rel, w.tr, "inflection/derivation of '{}' ({})")
    if not w.capitalised and (rel := derivation_in(lemma_forms(w.tok.lower, w.tok.key), w.tr.analyses)):
        return _related(rel, w.tr, "derivation of '{}' ({}; a WordNet derivational link)")
    return None


def _synonym(w: Word) -> Grade | None:
    if w.capitalised:
        return None
    forms = (*lemma_forms(w.tok.lower, w.tok.key), *_phrasal_forms(w))
    syn = synonym_in(forms, w.tr.analyses)
    if syn is None:
        return None
    return _related(syn, w.tr, "synonym of '{}' ({}; a WordNet synset)")


def _attribute(w: Word) -> Grade | None:
    if w.capitalised:
        return None
    att = attribute_in(lemma_forms(w.tok.lower, w.tok.key), w.tr.analyses)
    if att is None:
        return None
    # "how big" asked as "what size": the noun names the scale the received adjective is a point on
    return _related(att, w.tr, "the quality of '{}' ({}; a WordNet attribute link)")


def _antonym_pair(w: Word) -> Grade | None:
    pole = None if w.capitalised else antonym_pair(w.q.tokens, w.index)
    if pole is None:
        return None
    return {
        "severity": "low",
        "related": pole.text,
        "why": f"coordinated with its antonym '{pole.text}': the pair asks about the whole scale",
    }


def _proper_name(w: Word) -> Grade | None:
    if not w.capitalised:
        return None
    return {"severity": "high", "zipf": w.zipf, "why": "proper name (capitalised mid-sentence)"}


def _abstract_noun(w: Word) -> Grade | None:
    # The lemma too: a plural ("requirements", "capabilities") hides the suffix of its singular.
    if any(form.endswith(ABSTRACT_SUFFIXES) and len(form) >= 7 for form in (w.tok.lower, w.tok.key)):
        return {"severity": "low", "why": "abstract noun (derivational suffix)"}
    return None


def _adverb(w: Word) -> Grade | None:
    if only_pos(w.tok.lower, "adv") or (w.tok.lower.endswith("ly") and only_pos(w.tok.key, "adv")):
        return {"severity": "low", "why": "an adverb (WordNet): how or from which viewpoint, not what about"}
    return None


def _rare_verb(w: Word) -> Grade | None:
    z = w.zipf
    if z < RARE_ZIPF and only_verb(w.tok.key):
        # A rare verb names an action ("clarify", "debunk"); what narrows a search is what is acted on. A
        # common verb stays a content word: an invented goal is often one ("reducing" cholesterol).
        return {"severity": "medium", "zipf": z, "why": f"rare verb (zipf {z:.2f} < {RARE_ZIPF}; WordNet)"}
    return None


def _aspect_noun(w: Word) -> Grade | None:
    classes = noun_classes(w.tok.lower, w.tok.key)
    if not classes or not classes <= ASPECT_CLASSES or only_verb(w.tok.key):
        return None
    # Every sense an act, attribute, communication...: as the head of its phrase the word names an aspect
    # of the topic ("biography", "etymology", "career"), what about it is asked, not a new thing that
    # narrows it: low, however rare. As a modifier ("his *music* career", "*misconduct* investigations")
    # it restricts what its head refers to (Quirk et al. 1985, 17.2-17.4): medium, however common.
    z = w.zipf
    restricts = restricted_head(w.q, w.index)
    named = f"aspect noun (zipf {z:.2f}; WordNet: {', '.join(sorted(classes))})"
    if restricts is None:
        return {"severity": "low", "zipf": z, "classes": sorted(classes), "why": named}
    return {
        "severity": "medium",
        "zipf": z,
        "classes": sorted(classes),
        "restricts": restricts.text,
        "why": f"{named} restricting '{restricts.text}'",
    }


def _restricting_noun(w: Word) -> Grade | None:
    z = w.zipf
    if z >= RARE_ZIPF:
        return None
    head = restricted_head(w.q, w.index)
    if head is None:
        return None
    return {
        "severity": "high",
        "zipf": z,
        "restricts": head.text,
        "why": f"rare noun (zipf {z:.2f} < {RARE_ZIPF}) restricting '{head.text}'",
    }


def _rare_term(w: Word) -> Grade | None:
    z = w.zipf
    if z >= RARE_ZIPF:
        return None
    return {"severity": "medium", "zipf": z, "why": f"rare term (zipf {z:.2f} < {RARE_ZIPF})"}


def _content_word(w: Word) -> Grade | None:
    return {"severity": "medium", "zipf": w.zipf, "why": "content word that narrows the topic"}


OWN_GRADE: tuple[tuple[str, Callable[[Word], Grade | None]], ...] = (
    ("meta_text", _meta_text),
    ("name_completion", _name_completion),
    ("qualifier_value", _qualifier_value),
    ("number", _number),
    ("framing", _framing),
    ("misspelling", _misspelling),
    ("acronym", _acronym),
    ("derivation", _derivation),
    ("synonym", _synonym),
    ("attribute", _attribute),
    ("antonym_pair", _antonym_pair),
    ("proper_name", _proper_name),
    ("abstract_noun", _abstract_noun),
    ("adverb", _adverb),
    ("rare_verb", _rare_verb),
    ("aspect_noun", _aspect_noun),
    ("restricting_noun", _restricting_noun),
    ("rare_term", _rare_term),
    ("content_word", _content_word),
)
"""The steps of a word's own grade, in order: the first that applies sets it (a step may name another
step of the table as the one it applied, as ``number`` does ``number_restated``)."""


def own_grade(w: Word) -> dict[str, Any]:
    """The grade of ``w`` by what it is (:data:`OWN_GRADE`): ``{text, lemma, severity, signal, step, why,
    ...}``, where ``signal`` and ``step`` name the step that applied."""
    for step, fn in OWN_GRADE:
        got = fn(w)
        if got is not None:
            step = got.pop("step", step)
            return {"text": w.unit_text, "lemma": w.tok.key, **got, "signal": step, "step": step}
    raise AssertionError("content_word applies to every word")  # pragma: no cover


def _related(found: tuple[int, str], tr: Transcript, why: str) -> Grade:
    """The low grade of a word related to the transcript word ``found`` = (analysis index, key): ``why``
    is formatted with that word and where it was received."""
    ai, other = found
    return {
        "severity": "low",
        "related": other,
        "related_at": {"message_index": tr.labels[ai]},
        "why": why.format(other, _where(tr.labels[ai])),
    }


PREPOSITIONS = frozenset(
    "of for with in on about from among by to during without against between under over into at per via "
    "within across".split()
)
"""Prepositions that attach a noun phrase to the noun before it (Quirk et al. 1985, 9.7 and 17.37:
postmodification by a prepositional phrase)."""
DETERMINERS = frozenset(
    "a an the this that these those its their his her our my your some any each every".split()
)


def restricted_head(q: Analysis, i: int) -> Tok | None:
    """The noun that the noun ``q.tokens[i]`` restricts, else None: the content noun right after it,
    which it premodifies ("*halftime* show"), or the noun before a preposition that opens the phrase it
    heads ("tips for *beginners*", "cost of *antivirus* software"; determiners and premodifiers may
    stand between). Pre- and postmodifiers restrict what the head refers to (Quirk et al. 1985, 17.2-17.4);
    the head itself ("the *stint*", "a *jet*") names what is asked about, in the rewriter's own word.
    Word classes from WordNet."""
    toks = q.tokens
    t = toks[i]
    if not (is_noun(t.key) or is_noun(t.lower)):
        return None
    if i + 1 < len(toks) and premodifier(t) and _noun_head(toks, i + 1):
        return toks[i + 1]
    j = i - 1
    while j >= 0 and (toks[j].lower in DETERMINERS or (toks[j].is_content and premodifier(toks[j]))):
        j -= 1
    if j >= 1 and toks[j].lower in PREPOSITIONS:
        head = toks[j - 1]
        if head.is_content and (is_noun(head.key) or is_noun(head.lower)):
            return head
    return None


def _noun_head(toks: tuple[Tok, ...], j: int) -> bool:
    """Whether ``toks[j]`` reads as a noun heading the phrase before it: a content word WordNet knows as a
    noun and not as a verb, or as both when its phrase ends right after it (punctuation, the end, a
    preposition or a coordinator: "the halftime *show*?"). A noun-verb after a noun is otherwise read as
    the verb ("did the stroke *affect* his campaign"): without a tagger, the word after decides."""
    t = toks[j]
    if not t.is_content or not is_noun(t.key):
        return False
    if not is_verb(t.key):
        return True
    after = toks[j + 1] if j + 1 < len(toks) else None
    return after is None or after.is_punct or after.lower in PREPOSITIONS or after.lower in {"and", "or"}


def _phrasal_forms(w: Word) -> tuple[str, ...]:
    """The multi-word WordNet lemma the query word may open with the particle after it ("look into")."""
    toks = w.q.tokens
    if w.index + 1 < len(toks) and toks[w.index + 1].lower in PARTICLES:
        return (f"{w.tok.key}_{toks[w.index + 1].lower}",)
    return ()


PARTICLES = frozenset(
    "about after around at away back down for in into off on out over through to up with".split()
)
"""The adverb particles and prepositions of English phrasal and prepositional verbs (Quirk et al. 1985,
16.2-16.6)."""

# Common English negative contractions; a one-edit misspelling of one ("did't") is a typo, not content.
CONTRACTIONS = tuple(
    f"{w}n't" for w in "do does did is are was were has have had could would should must need".split()
) + ("can't", "won't")


def misspelling(t: Tok, tr: Transcript) -> str | None:
    """The word ``t`` misspells, else None: ``t`` (4+ characters) is unknown
    (:func:`monitor.lexicon.unknown_word`), and one substitution, insertion or deletion from a received
    word of the same first letter or from an English negative contraction ("did't"): Damerau's
    single-error classes (CACM 7, 1964), which cover most typing slips."""
    lower = t.lower
    if len(lower) < 4 or t.has_digit or not unknown_word(lower, t.key):
        return None
    if "'" in lower:
        return next((c for c in CONTRACTIONS if one_edit(lower, c)), None)
    for a in reversed(tr.analyses):
        for form in sorted(a.vocab):  # sorted: which spelling is named must not depend on hashing
            if (
                len(form) >= 4
                and form[0] == lower[0]
                and abs(len(form) - len(lower)) <= 1
                and form.isalpha()
                and one_edit(lower, form)
            ):
                return form
    return None


ACRONYM_SKIPPED = frozenset(
    {"of", "the", "and", "for", "in", "on", "at", "to", "a", "an", "&", "de", "du", "la"}
)
"""Function words an acronym's initials skip ("Bureau of Labor Statistics" is BLS, "Department of
Homeland Security" DHS): Quirk et al. 1985, App. I.74-I.76."""


def _initials(words: list[Tok]) -> str:
    return "".join(t.lower[0] for t in words if t.lower not in ACRONYM_SKIPPED)


def _acronym_link(w: Word) -> str | None:
    """The transcript form the word abbreviates or expands, else None.

    Abbreviation: the word (2-6 letters, at least two capitals) spells the initials of consecutive
    transcript words, function words skipped (:data:`ACRONYM_SKIPPED`: "IdC" ~ "Invasive Ductal
    Carcinoma", "BLS" ~ "Bureau of Labor Statistics"). Expansion: the word lies in a run of query words
    whose initials (function words skipped) spell an all-capitals transcript token ("seasonal affective
    disorder" ~ "SAD")."""
    text = w.tok.text
    if 2 <= len(text) <= 6 and text.isalpha() and sum(c.isupper() for c in text) >= 2:
        target = text.lower()
        for a in w.tr.analyses:
            if not any(c.isupper() for c in a.text):
                continue  # no capitalised word to start an expansion
            words = [t for t in a.tokens if t.text.isalpha()]
            for i, first in enumerate(words):
                if not first.text[:1].isupper() or first.lower[0] != target[0]:
                    continue
                got, j = "", i
                while j < len(words) and len(got) < len(target):
                    if words[j].lower not in ACRONYM_SKIPPED:
                        if words[j].lower[0] != target[len(got)]:
                            break
                        got += words[j].lower[0]
                    j += 1
                if got == target:
                    return " ".join(x.text for x in words[i:j])
    # expansion: the run of alphabetic query tokens holding the word, every window over it
    toks = w.q.tokens
    i = w.index
    lo = i
    while lo > 0 and toks[lo - 1].text.isalpha():
        lo -= 1
    hi = i
    while hi + 1 < len(toks) and toks[hi + 1].text.isalpha():
        hi += 1
    for start in range(lo, i + 1):
        if toks[start].lower in ACRONYM_SKIPPED:
            continue
        for end in range(max(i, start + 1), min(hi, start + 7) + 1):
            initials = _initials(list(toks[start : end + 1]))
            if len(initials) < 2:
                continue
            for a in w.tr.analyses:
                found = capitalised_token(a, initials)
                if found is not None:
                    return found
    return None


def _name_neighbour(w: Word) -> str | None:
    """The logged name the capitalised word completes, else None: a supported capitalised token right
    before or after it that is rare (:data:`NAME_ZIPF`: "Bernadette" beside the logged "Peters"), or,
    when the word is a name by WordNet (every noun sense a person, place or group, or no sense at all:
    "George", "Bernie"), one the transcript writes as a name (capitalised mid-sentence) beside it; or a
    place (WordNet noun.location) after a logged name and a comma, outside a list ("Austin, Texas": a
    containing place in apposition, Quirk et al. 1985, 17.65)."""
    toks = w.q.tokens
    i = w.index
    classes = noun_classes(w.tok.lower, w.tok.key)
    name_like = not classes or classes <= NAME_CLASSES
    for j in (i - 1, i + 1, i - 2):
        if not 0 <= j < len(toks):
            continue
        if j == i - 2 and not (toks[i - 1].text == "," and classes == {"location"} and _apposed(toks, i)):
            continue
        t = toks[j]
        if not (t.text[:1].isupper() and t.is_content and w.tr.holds(t.key, t.lower)):
            continue
        if zipf(t.lower) < NAME_ZIPF or (name_like and _written_as_name(t.lower, w.tr)):
            return t.text
    return None


LIST_MARKS = frozenset({",", "and", "or", "&"})


def _apposed(toks: tuple[Tok, ...], i: int) -> bool:
    """Whether the place ``toks[i]`` after "<name>," reads as an apposition ("Austin, Texas") rather than
    the next item of a list ("Norway, Sweden and Denmark"): no list mark before the name or after it."""
    before = toks[i - 3].text.lower() if i >= 3 else ""
    after = toks[i + 1].text.lower() if i + 1 < len(toks) else ""
    return before not in LIST_MARKS and after not in LIST_MARKS


def _written_as_name(lower: str, tr: Transcript) -> bool:
    """Whether some received text writes ``lower`` capitalised mid-sentence (as a name)."""
    for a in tr.analyses:
        if lower in a.vocab and any(t.mid_cap and t.lower == lower for t in a.tokens):
            return True
    return False


# Both parts of a transparent compound must be at least this common (zipf; ~30 per million words).
COMPOUND_PART_ZIPF = 4.5


def _compound_parts(word: str) -> tuple[str, str] | None:
    """Split ``word`` (8+ letters) into two common words of 4+ letters each, else None."""
    if len(word) < 8 or not word.isalpha():
        return None
    for i in range(4, len(word) - 3):
        a, b = word[:i], word[i:]
        if zipf(a) >= COMPOUND_PART_ZIPF and zipf(b) >= COMPOUND_PART_ZIPF:
            return a, b
    return None


def _where(label: int | str) -> str:
    return "latest message" if label == "latest" else f"message {label}"


# -- where the word stands ------------------------------------------------------------------------
def keyword_list_tokens(q: Analysis, added: Container[int]) -> frozenset[int]:
    """Start offsets of the query tokens inside a list of added facets: a run of :data:`KEYWORD_RUN` or
    more units each made only of content tokens (a hyphen or dot inside a unit does not break it), at least
    :data:`KEYWORD_MIN_ADDED` of them in ``added`` (indexes of units with an unsupported word), in a query
    with no question mark (:data:`QUESTION_MARKS`) outside markup. Empty for a question ("How did the
    stroke affect Bernie Sanders' campaign?")."""
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
        if len(run) >= KEYWORD_RUN and sum(u in added for u in run) >= KEYWORD_MIN_ADDED:
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


# A noun at least this common (wordfreq Zipf; 5.5 is about 300 per million words, the commonest 300 or so
# words of wordfreq's English list) is a general noun ("work", "system", "place", "group"): after a
# received modifier it names the kind of thing the modifier already picks out (Halliday and Hasan,
# "Cohesion in English", 1976, 6.4: general nouns). Tried at 5.0 and 5.5 on the labelled development files
# (all six in ../shared/data/labels): 5.0 lowered a labelled fabrication of mtrag_dev_sonnet45agg
# ("son"), 5.5 none; scripts/eval_checks.py reports the leave-one-rewriter-out figures over 5.0 / 5.5 / 6.0.
GENERIC_ZIPF = 5.5


def generic_head_of(q: Analysis, i: int, tr: Transcript) -> Tok | None:
    """The received modifier ``q.tokens[i]`` is the general head of, else None: the token is a noun at
    least :data:`GENERIC_ZIPF` common, ends its noun phrase (no content word after it), and follows a
    received, lower-case, unnumbered content word that is no plural ("freelance *work*", "alerting
    *systems*"; a plural before a noun is a subject rather than a modifier, "did any singles *come*":
    Quirk et al., "A Comprehensive Grammar", 17.108, premodifying nouns are normally singular)."""
    toks = q.tokens
    word = toks[i]
    if i == 0 or not is_noun(word.key) or max(zipf(word.lower), zipf(word.key)) < GENERIC_ZIPF:
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
the keyword list) or a state ("the *cancer*": a disease or condition, which :data:`ASPECT_CLASSES` leaves
out for the same reason)."""


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


# -- support --------------------------------------------------------------------------------------
def _holds(t: Tok, tr: Transcript) -> bool:
    """Whether some received text has ``t`` by key, lower-cased surface or a regular base form of the
    surface (:func:`monitor.lexicon.base_forms`: "taxes" is "tax" whatever the lookup lemma says)."""
    return tr.holds(t.key, t.lower) or any(tr.holds(b) for b in base_forms(t.lower))


def _supported_tokens(q: Analysis, tr: Transcript, rules: Rules) -> tuple[set[int], dict[int, str]]:
    """Indexes of query tokens the transcript supports, and token -> alias group name for alias hits."""
    supported: set[int] = set()
    for i, t in enumerate(q.tokens):
        if not t.is_content:
            continue
        if t.key in rules.neutral_words or t.lower in rules.neutral_words:
            supported.add(i)
        elif _holds(t, tr):
            supported.add(i)
    by_alias: dict[int, str] = {}
    index = alias_index(rules)
    hits = alias_matches(q, index)
    if hits:
        present = tr.alias_groups(index, among={g for g, _, _ in hits})
        for g, first, last in hits:
            if g in present:
                for i in range(first, last + 1):
                    if i not in supported:
                        supported.add(i)
                        by_alias[i] = index.groups[g]
    return supported, by_alias


def _candidate(t: Tok, tr: Transcript) -> bool:
    """Whether ``t`` is a word the check judges: a content token, or a number word no received text
    writes (spaCy's stop list holds the number words, so an added "three" is no content token)."""
    return t.is_content or (t.lower in QUERY_NUMBER_WORDS and not tr.holds(t.key, t.lower))


@register(
    CHECK_ID,
    family="added_words",
    version=VERSION,
    kinds=(CHECK_ID,),
    steps=STEPS,
    summary=(
        "a content word of the query that no received turn, alias group or neutral word "
        "supports: a possibly invented constraint"
    ),
)
def check(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """One finding per span of adjacent unsupported units of ``record.query``.

    Evidence: ``span`` {text, start, end}, ``words`` [{text, start, end, lemma, severity, signal, step,
    why, zipf?, ...}], ``n_messages``. The finding's ``step`` is its top word's. Skips when no message
    list was logged.
    """
    tr = transcript(record)
    q = analyzer().analyze(record.query)
    if not q.tokens:
        return []
    quals = qualifiers_in(q.text, rules)
    meta = _whole_query_meta(record)
    tail = meta_tail_start(q.text)
    # unit index -> graded word (one per unsupported unit; the unit's first unsupported token decides)
    graded: dict[int, dict[str, Any]] = {}
    unsupported = list(_unsupported_units(q, tr, rules))
    place = Place(
        keyword_list_tokens(q, {ui for ui, _, _ in unsupported}),
        question_frame_tokens(q),
        open_request(record.latest),
    )
    positions = {t.start: i for i, t in enumerate(q.tokens)}
    for ui, unit, bad in unsupported:
        words: list[dict[str, Any]] = []
        for t in bad:
            w = Word(t, positions[t.start], unit.text, q, tr, rules, quals, meta or _tail_meta(t, tail))
            # what the word is, then where it stands, then the rewriter
            info = placed(own_grade(w), w, place)
            learned = _learned_for(rules.learned, record, t.key)
            words.append(_adjusted(info, rules.profile, record.prompt_version, learned))
        top = max(words, key=_rank)
        best = {**top, "text": unit.text, "start": unit.start, "end": unit.end}
        if len(bad) > 1:
            best["parts"] = [{**g, "text": t.text} for t, g in zip(bad, words, strict=True)]
        graded[ui] = best
    out: list[Finding] = []
    run: list[int] = []
    for ui in sorted(graded) + [-2]:
        if run and ui == run[-1] + 1:
            run.append(ui)
            continue
        if run:
            out.append(_finding(run, graded, q, len(tr.analyses) - 1))
        run = [ui]
    return out


META_WHY = "word of meta text, see not_a_query"


def _whole_query_meta(record: RewriteRecord) -> str | None:
    """Why every word of the query is meta text rather than query text, or None: the query is a refusal
    or chatter, or the user's message asks nothing (thanks, a farewell), which not_a_query reports."""
    if is_meta_text(record.query):
        return META_WHY
    if is_closing(record.latest):
        return "the user's message asks nothing, see not_a_query"
    return None


def _tail_meta(word: Tok, tail: int | None) -> str | None:
    """:data:`META_WHY` when ``word`` lies in a trailing note or leaked turn starting at ``tail``."""
    return META_WHY if tail is not None and word.start >= tail else None


def _unsupported_units(q: Analysis, tr: Transcript, rules: Rules) -> Iterator[tuple[int, Unit, list[Tok]]]:
    """``(unit index, unit, its unsupported words)`` for each query unit with any (:func:`_candidate`), in
    order.

    Supported: a neutral word, a word of any received turn, a member of an alias group the transcript
    hits, a token inside markup (:data:`MARKUP_RE`), or a multi-token unit the transcript has whole.
    """
    supported, _ = _supported_tokens(q, tr, rules)
    toks = q.tokens
    # Each scan only where it can find something (most queries have no markup and no bound prefix):
    # this runs twice per rewrite, for the rewriter profile and for the check.
    for m in MARKUP_RE.finditer(q.text):
        s, e = m.span()
        supported.update(i for i, t in enumerate(toks) if s <= t.start < e)
    supported.update(i for i, t in enumerate(toks) if t.lower in BOUND_PREFIXES and _bound_prefix(q, i))
    for ui, unit in enumerate(q.units):
        bad = [
            t
            for i, t in enumerate(toks[unit.first : unit.last + 1], unit.first)
            if i not in supported and _candidate(t, tr)
        ]
        if not bad or (unit.last > unit.first and tr.holds(unit.text.lower())):
            continue
        yield ui, unit, bad


# Prefixes English writes before a hyphen (Quirk et al., "A Comprehensive Grammar", App. I.21-I.37):
# negative, reversative, pejorative, degree, attitude, locative, time and number prefixes. Bound: they
# modify the word after the hyphen and mean nothing alone.
BOUND_PREFIXES = frozenset(
    "non un in dis de anti counter pro co ex pre post re self semi sub super multi inter intra mid over "
    "under pseudo quasi neo mis mal".split()
)


def _bound_prefix(q: Analysis, i: int) -> bool:
    """Whether query token ``i`` is a bound prefix joined by a hyphen to the word after it in the same
    unit ("non" in "non-compliance"): the unit is graded by that word, as "compliance" is."""
    toks = q.tokens
    return (
        i + 2 < len(toks)
        and toks[i].lower in BOUND_PREFIXES
        and toks[i + 1].text == "-"
        and toks[i + 1].unit == toks[i].unit == toks[i + 2].unit
    )


def added_lemmas(record: RewriteRecord, rules: Rules) -> set[str]:
    """The keys (lower-cased lemmas) of ``record.query``'s words that nothing received supports: what the
    rewriter profile counts (``monitor.checks.profile``). Empty when no message list was logged."""
    try:
        tr = transcript(record)
    except SkipCheck:
        return set()
    q = analyzer().analyze(record.query)
    return {t.key for _, _, bad in _unsupported_units(q, tr, rules) for t in bad}


# Signals a rewriter's style may lower, and to what: common and rare content words. Never a number, a
# proper name, a name completion or a qualifier value (a constraint is a constraint whoever adds it).
STYLE_SIGNALS = {
    "content_word": "low",
    "rare_term": "low",
    "restricting_noun": "medium",
    "aspect_noun": "low",
}


def _learned_for(table: LearnedTable | None, record: RewriteRecord, lemma: str) -> dict[str, Any] | None:
    """The learned entry of ``lemma`` for ``record``'s rewriter as the word's ``learned`` evidence, or
    None when the table has none that moves a grade."""
    if table is None:
        return None
    entry = table.get(CHECK_ID, rewriter_key(record.prompt_version, record.model), lemma)
    if entry is None:
        return None
    keep = ("rewriter", "dismissed", "confirmed", "reviewers", "pinned", "steps")
    return {**{k: v for k, v in entry.as_dict().items() if k in keep}, "why": entry.why}


def _adjusted(
    info: dict[str, Any],
    profile: RewriterProfile | None,
    prompt_version: str | None,
    learned: dict[str, Any] | None,
) -> dict[str, Any]:
    """``info`` graded against the rewriter: its style step (:func:`_styled`), then the step the
    reviewers' verdicts learned (``learned``, the word's ``learned`` evidence; ``monitor.checks.learned``).

    A moved word keeps its own grade in ``graded`` {severity, signal, step, why} and the learned entry in
    ``learned``; its ``signal`` stays the style's or its own, so a number stays a number; its ``step`` is
    ``learned``."""
    out = _styled(info, profile, prompt_version)
    if learned is None or out["signal"] in UNADJUSTED_SIGNALS:
        return out
    own = out.get("graded") or out
    new = shifted(out["severity"], int(learned["steps"]), own["signal"])
    if new == out["severity"]:
        return out
    return {
        **out,
        "severity": new,
        "graded": _own(own),
        "step": "learned",
        "learned": learned,
        "why": f"{out['why']}; reviewers: {learned['why']}",
    }


def _styled(
    info: dict[str, Any], profile: RewriterProfile | None, prompt_version: str | None
) -> dict[str, Any]:
    """``info`` graded against ``profile``: one severity step lower when its lemma is the rewriter's style.

    ``info`` may already carry a style or learned step (a stored word graded again): both are undone
    first, so the result depends only on the word's own grade and on ``profile``. A styled word keeps
    that grade in ``graded`` {severity, signal, step, why}; its ``step`` is ``rewriter_style``."""
    base = _unstyled(info)
    if profile is None or base.get("signal") not in STYLE_SIGNALS:
        return base
    style = profile.style(prompt_version, base["lemma"])
    if style is None:
        return base
    return {
        **base,
        "severity": STYLE_SIGNALS[base["signal"]],
        "signal": "rewriter_style",
        "step": "rewriter_style",
        "graded": _own(base),
        "style": {"prompt_version": style.prompt_version, "others": style.others, "of": style.of},
        "why": f"{base['why']}, but {style.why}",
    }


def _own(info: dict[str, Any]) -> dict[str, Any]:
    """The grade ``info`` had before the rewriter's steps: what ``graded`` keeps."""
    return {k: info[k] for k in ("severity", "signal", "step", "why")}


def _unstyled(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` without its style and learned steps (itself when it has none)."""
    graded = info.get("graded")
    if graded is None:
        return info
    out = {k: v for k, v in info.items() if k not in ("graded", "style", "learned")}
    out.update(graded)
    return out


def restyle(finding: Finding, profile: RewriterProfile, prompt_version: str | None) -> Finding | None:
    """``finding`` (an ``added_content_word`` finding of this version) graded again against ``profile``,
    or None when no word's grade changes.

    What queue admission runs over a day's findings before it plans the day
    (``monitor.checks.store.restyle_findings``): the profile grows as rewrites arrive, so a rewrite
    checked early met a smaller profile than one checked late, and with several workers the order is
    the scheduler's. Graded again against the store's profile at admission, every finding of the day
    has the grade it would have had if the whole day had been checked at once. Only the style step is
    redone (the words' own grades need the transcript, which is not read again); a word's learned step
    is kept as it was graded (a new learned table re-grades only through a new check run)."""
    words: list[dict[str, Any]] = []
    for w in finding.evidence["words"]:
        if "parts" in w:
            parts = [_adjusted(p, profile, prompt_version, p.get("learned")) for p in w["parts"]]
            best: dict[str, Any] = max(parts, key=_rank)
            words.append(
                {
                    **best,
                    "text": w["text"],
                    "start": w["start"],
                    "end": w["end"],
                    "parts": parts,
                }
            )
        else:
            words.append(_adjusted(w, profile, prompt_version, w.get("learned")))
    if words == finding.evidence["words"]:
        return None
    return _assembled(words, finding.evidence["span"]["text"], finding.evidence["n_messages"])


# Signals of a constraint (a number, a name, a qualifier value): at equal severity they name the span's
# ``severity_signal``, so a year beside a rare word is what the alert reads (monitor.alerts.policy).
PRECISE_SIGNALS = frozenset({"number", "proper_name", "qualifier_value"})


def _rank(word: dict[str, Any]) -> tuple[int, bool]:
    return SEVERITY_RANK[word["severity"]], word["signal"] in PRECISE_SIGNALS


def _finding(run: list[int], graded: dict[int, dict[str, Any]], q: Analysis, n_messages: int) -> Finding:
    words = [graded[u] for u in run]
    return _assembled(words, q.text[words[0]["start"] : words[-1]["end"]], n_messages)


def _assembled(words: list[dict[str, Any]], span_text: str, n_messages: int) -> Finding:
    """The finding of one span: its graded ``words`` in order, the span's text, the messages received."""
    top = max(words, key=_rank)
    detail = ", ".join(f"'{w['text']}' ({w['why']})" for w in words)
    return Finding(
        kind=CHECK_ID,
        step=top["step"],
        severity=top["severity"],
        evidence={
            "span": {"text": span_text, "start": words[0]["start"], "end": words[-1]["end"]},
            "words": words,
            "severity_signal": top["signal"],
            "n_messages": n_messages,
        },
        reason=f"{detail}: in no received turn and no alias group",
        check_id=CHECK_ID,
        check_version=VERSION,
    )
