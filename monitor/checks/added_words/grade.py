"""What the word is: the steps of an unsupported word's own grade (:data:`OWN_GRADE`), the first that
applies sets it (:func:`own_grade`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from monitor.checks.added_words import tuned
from monitor.checks.added_words.links import acronym_link, misspelling, name_neighbour, phrasal_forms
from monitor.checks.added_words.phrases import restricted_head
from monitor.checks.added_words.word import Grade, Word
from monitor.checks.nlp import (
    Tok,
    Transcript,
    antonym_pair,
    attribute_in,
    derivation_in,
    find_stem_relative,
    synonym_in,
)
from monitor.checks.numbers import FRACTIONS, ORDINALS, QUERY_NUMBER_WORDS, number_values, value_at
from monitor.checks.qualifiers import qualifiers_in
from monitor.checks.rules import QualifierMatch
from monitor.lexicon import lemma_forms, noun_classes, only_pos, only_verb

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


def _meta_text(w: Word) -> Grade | None:
    return None if w.meta is None else {"severity": "low", "why": w.meta}


def _name_completion(w: Word) -> Grade | None:
    if not w.capitalised:
        return None
    neighbour = name_neighbour(w)
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
    acro = acronym_link(w)
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
    forms = (*lemma_forms(w.tok.lower, w.tok.key), *phrasal_forms(w))
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
    if z < tuned.RARE_ZIPF and only_verb(w.tok.key):
        # A rare verb names an action ("clarify", "debunk"); what narrows a search is what is acted on. A
        # common verb stays a content word: an invented goal is often one ("reducing" cholesterol).
        return {
            "severity": "medium",
            "zipf": z,
            "why": f"rare verb (zipf {z:.2f} < {tuned.RARE_ZIPF}; WordNet)",
        }
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
    if z >= tuned.RARE_ZIPF:
        return None
    head = restricted_head(w.q, w.index)
    if head is None:
        return None
    return {
        "severity": "high",
        "zipf": z,
        "restricts": head.text,
        "why": f"rare noun (zipf {z:.2f} < {tuned.RARE_ZIPF}) restricting '{head.text}'",
    }


def _rare_term(w: Word) -> Grade | None:
    z = w.zipf
    if z >= tuned.RARE_ZIPF:
        return None
    return {"severity": "medium", "zipf": z, "why": f"rare term (zipf {z:.2f} < {tuned.RARE_ZIPF})"}


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


def _where(label: int | str) -> str:
    return "latest message" if label == "latest" else f"message {label}"
