"""WordNet's relations found in analysed texts: a synonym (a shared synset, multi-word expressions
included), a coordinated antonym, an attribute, a derivationally related form. The word tables
themselves are :mod:`monitor.lexicon`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from monitor.checks.nlp.analysis import Analysis, Tok
from monitor.lexicon import MULTIWORD_MAX, antonyms, attributes, derivations, multiword_lemmas, synsets


def _synset_index(a: Analysis) -> dict[str, str]:
    """WordNet synset id -> the first form of ``a`` in it: content keys in text order, then the other forms
    of its vocabulary (surfaces, base forms) in sorted order, so the form named does not depend on string
    hashing. Not a stop word alone: "is" shares a synset with "cost" and "represent" (WordNet's senses of
    "be"); stop words count inside multi-word expressions (:func:`_multiword_index`). Memoised on the
    analysis."""
    got = a._memo.synsets
    if got is None:
        got = {}
        stop = _stop_words()
        for key in (*a.content_keys, *sorted(a.vocab - stop)):
            for sid in synsets(key):
                got.setdefault(sid, key)
        a._memo.synsets = got
    return got


@functools.cache
def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def _multiword_index(a: Analysis) -> dict[str, str]:
    """WordNet synset id -> the first multi-word expression of ``a`` in it ("gave up" as ``give_up``: the
    first word by key or surface, the rest by surface), for expressions of 2 to :data:`MULTIWORD_MAX`
    words. Built (with the tokens) only when a single-word lookup failed; memoised on the analysis."""
    got = a._memo.multiword
    if got is None:
        got = {}
        words = [t for t in a.tokens if not t.is_punct and not t.text.isspace()]
        for i, first in enumerate(words):
            for n in range(2, MULTIWORD_MAX + 1):
                if i + n > len(words):
                    break
                rest = "_".join(t.lower for t in words[i + 1 : i + n])
                for head in dict.fromkeys((first.key, first.lower)):
                    lemma = f"{head}_{rest}"
                    for sid in synsets(lemma):
                        got.setdefault(sid, " ".join(t.text for t in words[i : i + n]))
        a._memo.multiword = got
    return got


def synonym_in(forms: Iterable[str], analyses: Iterable[Analysis]) -> tuple[int, str] | None:
    """``(index of the analysis, its form)`` of the first form of ``analyses`` that shares a WordNet
    synonym set with one of ``forms`` (a word's forms: :func:`lemma_forms`), else None: a single token
    (a content key first, then the text's other forms, :func:`_synset_index`), else a multi-word
    expression of a text, stop words included ("gave up" for "quit": WordNet's ``give_up``).

    Synonymy only (a shared synset): never a hypernym or a co-hyponym, so "solar" is no synonym of
    "lunar" and "animal" none of "dog". Each analysis's synsets are indexed once (memoised on it)."""
    mine = sorted(frozenset().union(*(synsets(f) for f in forms)))
    if not mine:
        return None
    own = set(forms)
    texts = list(analyses)
    for ai, a in enumerate(texts):
        index = _synset_index(a)
        for sid in mine:
            other = index.get(sid)
            if other is not None and other not in own:
                return ai, other
    lemmas = {lemma for sid in mine for lemma in multiword_lemmas().get(sid, ())}
    if not lemmas:
        return None
    for ai, a in enumerate(texts):
        # A text can hold a multi-word lemma only if its vocabulary (every token's key and surface) has
        # each of the lemma's words: tested first, so a text's tokens are built only when one might match.
        if not any(all(part in a.vocab for part in lemma.split("_")) for lemma in lemmas):
            continue
        index = _multiword_index(a)
        for sid in mine:
            if sid in index:
                return ai, index[sid]
    return None


COORDINATORS = frozenset({"and", "or", "vs", "versus", "nor"})
"""Words that join two antonyms into one phrase ("advantages and disadvantages", "buying vs renting")."""
ARTICLES = frozenset({"a", "an", "the"})
"""What may stand between a coordinator and the second antonym ("an advantage or a disadvantage")."""


def antonym_pair(tokens: Sequence[Tok], i: int) -> Tok | None:
    """The token coordinated with ``tokens[i]`` that WordNet gives as its antonym ("advantages and
    disadvantages", "pros or cons", "strengths vs weaknesses"), else None. Coordinated antonyms ask
    about the whole scale the pair spans, what S. Jones (*Antonymy: A Corpus-Based Perspective*,
    Routledge 2002, ch. 4) calls their inclusive use; neither pole narrows the question."""
    t = tokens[i]
    poles = antonyms(t.key) | antonyms(t.lower)
    if not poles:
        return None

    def pole(j: int) -> Tok | None:
        return (
            tokens[j]
            if 0 <= j < len(tokens) and (tokens[j].key in poles or tokens[j].lower in poles)
            else None
        )

    # "X and Y", "X or a Y" after the word; "X and Y", "an X or Y" before it
    if i + 1 < len(tokens) and tokens[i + 1].lower in COORDINATORS:
        after = i + 3 if i + 2 < len(tokens) and tokens[i + 2].lower in ARTICLES else i + 2
        if (found := pole(after)) is not None:
            return found
    before = i - 2 if i >= 1 and tokens[i - 1].lower in ARTICLES else i - 1
    if before >= 1 and tokens[before].lower in COORDINATORS:
        return pole(before - 1)
    return None


def attribute_in(forms: Iterable[str], analyses: Iterable[Analysis]) -> tuple[int, str] | None:
    """``(index of the analysis, its key)`` of the first content token of ``analyses`` that WordNet's
    attribute pointer links to one of ``forms`` ("size" for "big"), else None."""
    linked = frozenset().union(*(attributes(f) for f in forms))
    if not linked:
        return None
    for ai, a in enumerate(analyses):
        if linked.isdisjoint(a.vocab):
            continue  # no token's key or surface is linked (``vocab`` holds them all): tokens not needed
        for t in a.tokens:
            if t.is_content and (t.key in linked or t.lower in linked):
                return ai, t.key
    return None


def derivation_in(forms: Iterable[str], analyses: Iterable[Analysis]) -> tuple[int, str] | None:
    """``(index of the analysis, its form)`` of the first token of ``analyses``, stop words included,
    whose key or surface WordNet links to one of ``forms`` as a derivationally related form ("death"
    for "died"), else None."""
    linked = frozenset().union(*(derivations(f) for f in forms))
    if not linked:
        return None
    for ai, a in enumerate(analyses):
        if linked.isdisjoint(a.vocab):
            continue  # ``vocab`` holds every token's key and surface: no token can match
        for t in a.tokens:
            if t.key in linked:
                return ai, t.key
            if t.lower in linked:
                return ai, t.lower
    return None
