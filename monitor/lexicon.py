"""The English lexicon the checks and the redactor read: WordNet 3.0's word classes, noun classes,
synonym sets and its attribute, antonym and derivation links, wordfreq's word frequencies, and the regular
inflections of English. Pure lookups on lower-case strings, each table loaded once per process.

Sources: WordNet 3.0's lemma index as spacy-lookups-data ships it (``en_lemma_index``, :func:`word_classes`),
the table ``monitor/data/wordnet`` (Princeton WordNet 3.0 via Debian's wordnet-base, built by
``scripts/build_wordnet.py``; Princeton's licence beside it) and the ``wordfreq`` package. A ground-floor
module: it imports nothing of the pipeline, so ``monitor.privacy`` and ``monitor.checks`` both read it
(the text analysis that tokenises and caches is ``monitor.checks.nlp``).
"""

from __future__ import annotations

import functools
from functools import lru_cache
from typing import Any


class FrequencyList:
    """wordfreq's English word list (its "large" list: 321,180 tokens in wordfreq 3.1.1, each in a
    frequency bucket one centibel wide), held as one sorted UTF-8 blob with its offsets and bucket
    numbers: 4.3 MB of objects and 5 MB of RSS once built and the heap trimmed (``monitor.worker.heap``:
    the check processes and the check job trim after each chunk and batch; 17 MB before a trim), where
    wordfreq's own dict of ``str`` keys takes 29 to 33 MB of RSS, trimmed or not, in each process that
    reads it (wordfreq 3.1.1), which every check process of ``monitor.worker.pool`` held: their peak on
    100,000 events of the benchmark's non-repeating corpus, ``--workers 2``, fell from 400 to 368 MB
    each. Building it briefly takes about 17 MB more than wordfreq's dict did (the sort's index list).

    ``buckets``: wordfreq's cBpack lists (``wordfreq.read_cBpack``), the tokens of bucket ``i`` occurring
    ``i`` centibels below a probability of 1; a token in two buckets has the later one, as in wordfreq's
    dict (``get_frequency_dict``). Lookups are a binary search over the blob, in Python (about 20
    comparisons): callers cache by word (:func:`zipf`)."""

    def __init__(self, buckets: list[list[str]]) -> None:
        from array import array
        from itertools import accumulate, chain, repeat

        tokens = list(chain.from_iterable(buckets))
        numbers = array("H", chain.from_iterable(repeat(i, len(bucket)) for i, bucket in enumerate(buckets)))
        # Sorted as str, which is the order of their UTF-8 bytes (the encoding keeps code point order);
        # wordfreq keeps each bucket in order, so the sort merges runs (0.1 s of a 0.25 s build).
        order = sorted(range(len(tokens)), key=tokens.__getitem__)
        ordered = [tokens[i] for i in order]
        self._blob = "".join(ordered).encode()
        self._offsets = array(
            "I", accumulate((len(t) if t.isascii() else len(t.encode()) for t in ordered), initial=0)
        )
        self._buckets = array("H", (numbers[i] for i in order))

    def __len__(self) -> int:
        return len(self._buckets)

    def centibels(self, token: str) -> int | None:
        """The bucket of ``token`` as centibels (0 or below), or ``None`` when the list lacks it."""
        key = token.encode("utf-8", "surrogatepass")  # a lone surrogate matches nothing, as in wordfreq
        blob, offsets = self._blob, self._offsets
        lo, hi = 0, len(self._buckets)
        while lo < hi:  # the first entry after every copy of key: the sort is stable, the last is kept
            mid = (lo + hi) // 2
            if key < blob[offsets[mid] : offsets[mid + 1]]:
                hi = mid
            else:
                lo = mid + 1
        if lo and blob[offsets[lo - 1] : offsets[lo]] == key:
            return -self._buckets[lo - 1]
        return None


@functools.cache
def frequency_list() -> FrequencyList:
    """wordfreq's English "large" list (its "best" for English), read once per process from the file
    wordfreq ships (``wordfreq.available_languages``, ``wordfreq.read_cBpack``) into a
    :class:`FrequencyList`; wordfreq's own cached dict is never built."""
    from wordfreq import available_languages, read_cBpack

    return FrequencyList(read_cBpack(available_languages("large")["en"]))


@lru_cache(maxsize=200_000)
def zipf(word: str) -> float:
    """wordfreq Zipf frequency of ``word`` in English (log10 per billion words + 3; 0.0 when unknown),
    equal to ``wordfreq.zipf_frequency(word, "en")``.

    Source: the ``wordfreq`` package: its tokenizer, number handling and English "large" list (its
    "best"), looked up in :func:`frequency_list` with the arithmetic of wordfreq 3.1.1's
    ``_word_frequency`` and ``zipf_frequency`` (a token missing from the list gives the whole word 0.0;
    the frequencies of several tokens combine as ``1/f = 1/f1 + 1/f2 + ...``; rounded to 3 significant
    digits, then to hundredths of a Zipf). Equality with wordfreq is tested over the whole list and the
    shared logs' words (``tests/test_lexicon.py``). ~7 is "the", ~3 a rare word.
    """
    import math

    from wordfreq import cB_to_freq, freq_to_zipf, zipf_to_freq
    from wordfreq.numbers import digit_freq, smash_numbers
    from wordfreq.tokens import lossy_tokenize

    table = frequency_list()
    floor = zipf_to_freq(0.0)  # what wordfreq returns for a word it lacks, Zipf 0
    unknown = round(freq_to_zipf(floor), 2)
    tokens = lossy_tokenize(word, "en")
    if not tokens:
        return unknown
    one_over = 0.0
    for token in tokens:
        smashed = smash_numbers(token)
        cb = table.centibels(smashed)
        if cb is None:
            return unknown
        freq = cB_to_freq(cb)
        if smashed != token:  # a digit sequence: wordfreq spreads the bucket of its 0s over the digits
            freq *= digit_freq(token)
        one_over += 1.0 / freq
    unrounded = max(1.0 / one_over, floor)
    rounded = round(unrounded, math.floor(-math.log(unrounded, 10)) + 3)
    return round(freq_to_zipf(rounded), 2)


@functools.cache
def word_classes() -> dict[str, frozenset[str]]:
    """Word class -> lemmas: WordNet 3.0's index of lemmas per part of speech (``noun``, ``verb``,
    ``adj``, ``adv``), as spacy-lookups-data ships it (``en_lemma_index``; Princeton's WordNet licence
    is in that package). Loaded once (about 0.1 s); keys are lower-case lemmas, multi-word entries
    joined by ``_``."""
    import gzip
    import json
    from importlib.resources import files

    raw = files("spacy_lookups_data").joinpath("data", "en_lemma_index.json.gz").read_bytes()
    table: dict[str, list[str]] = json.loads(gzip.decompress(raw))
    return {pos: frozenset(words) for pos, words in table.items()}


def is_noun(key: str) -> bool:
    """Whether ``key`` (a lower-case lemma) is a noun in WordNet (:func:`word_classes`)."""
    return key in word_classes()["noun"]


def only_verb(key: str) -> bool:
    """Whether ``key`` is a verb and no noun, adjective or adverb in WordNet (:func:`word_classes`)."""
    wc = word_classes()
    return key in wc["verb"] and not any(key in wc[pos] for pos in ("noun", "adj", "adv"))


def is_verb(key: str) -> bool:
    """Whether ``key`` (a lower-case lemma) is a verb in WordNet (:func:`word_classes`)."""
    return key in word_classes()["verb"]


TYPO_ZIPF = 3.0
"""A word rarer than this (wordfreq Zipf: about one in a million words; wordfreq's docs call < 3 rare)
that WordNet does not know may be a typing slip."""


def unknown_word(lower: str, key: str) -> bool:
    """Whether a token (lower-cased surface, lemma) is unknown: WordNet lists neither form in any word
    class and wordfreq finds the surface rarer than :data:`TYPO_ZIPF`. What a typing slip looks like
    (a rare real word is known to one of them)."""
    if zipf(lower) >= TYPO_ZIPF:
        return False
    wc = word_classes()
    return not any(lower in wc[pos] or key in wc[pos] for pos in wc)


def only_pos(key: str, pos: str) -> bool:
    """Whether ``key`` is a WordNet lemma of part of speech ``pos`` (``noun``, ``verb``, ``adj``, ``adv``)
    and of no other (:func:`word_classes`)."""
    wc = word_classes()
    return key in wc[pos] and not any(key in wc[p] for p in wc if p != pos)


# Regular inflectional endings of English and the base each leaves (Quirk et al. 1985, App. I.2-I.7 and
# 3.5: -s/-es plurals and third persons, -ies, -ed and -ing with a dropped e or a doubled consonant).
_ENDINGS = (
    ("ies", "y"),
    ("es", ""),
    ("s", ""),
    ("ied", "y"),
    ("ed", ""),
    ("ed", "e"),
    ("ing", ""),
    ("ing", "e"),
)


@functools.lru_cache(maxsize=200_000)
def base_forms(lower: str) -> tuple[str, ...]:
    """The regular base forms of a lower-cased surface that WordNet knows as a noun or verb: "taxes" ->
    ("tax",), "stopped" -> ("stop",), "studies" -> ("study",); empty for a word that is itself a lemma
    of that class or has no regular ending. The lookup lemmatizer's table maps some surfaces to another
    word ("taxes" -> "taxi", "better" -> "well"), so the surface's own base is tried too."""
    if len(lower) < 4 or not lower.isalpha():
        return ()
    wc = word_classes()
    nouns, verbs = wc["noun"], wc["verb"]
    out: list[str] = []
    for ending, repl in _ENDINGS:
        if not lower.endswith(ending):
            continue
        stem = lower[: -len(ending)]
        candidates = [stem + repl]
        if ending in ("ed", "ing") and len(stem) >= 3 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])  # "stopped" -> "stop"
        for base in candidates:
            if len(base) >= 3 and base != lower and (base in nouns or base in verbs) and base not in out:
                out.append(base)
    return tuple(out)


def lemma_forms(lower: str, key: str) -> tuple[str, ...]:
    """The forms to look a token up by, surface first: the lower-cased surface when WordNet knows it, then
    its regular base forms (:func:`base_forms`), then the lookup lemma ``key``. The lemma comes last
    because the lookup table maps some surfaces to another word ("taxes" -> "taxi", "better" -> "well")."""
    wc = word_classes()
    known = any(lower in wc[pos] for pos in wc)
    forms = [lower] if known else []
    forms.extend(base_forms(lower))
    forms.extend((key, lower))
    return tuple(dict.fromkeys(forms))


@functools.cache
def _wordnet() -> dict[str, Any]:
    """``monitor/data/wordnet/synsets.json.gz`` decoded, once for all of its tables (``synsets``,
    ``noun_classes``, ``attributes``, ``antonyms``, ``derivations``: lemma -> its items joined by spaces,
    as ``scripts/build_wordnet.py`` writes them): about 0.1 s and 22 MB of RSS after a heap trim."""
    import gzip
    import json
    from importlib.resources import files

    raw = files("monitor.data.wordnet").joinpath("synsets.json.gz").read_bytes()
    doc: dict[str, Any] = json.loads(gzip.decompress(raw))
    return doc


def _synset_table() -> dict[str, str]:
    table: dict[str, str] = _wordnet()["synsets"]
    return table


def _noun_class_table() -> dict[str, str]:
    table: dict[str, str] = _wordnet()["noun_classes"]
    return table


def _regular_plural(lower: str, key: str) -> bool:
    return lower in (key + "s", key + "es") or (key.endswith("y") and lower == key[:-1] + "ies")


@functools.lru_cache(maxsize=65536)
def noun_classes(lower: str, key: str) -> frozenset[str]:
    """WordNet 3.0 lexicographer classes of every noun sense of a token (``{"communication"}`` for
    "biography", ``{"act", "communication"}`` for "farewell"), empty when it is no noun.

    ``lower`` is the lower-cased surface, ``key`` its lemma: the surface is looked up when WordNet lists it
    as a noun, else the lemma when the surface is a regular plural of it ("testimonials"), so "killed"
    (lemma "kill", a noun too) is no noun. Source: ``monitor/data/wordnet`` (``lexnames(5)`` of
    Princeton WordNet 3.0, built by ``scripts/build_wordnet.py``)."""
    table = _noun_class_table()
    got = table.get(lower)
    if got is None and _regular_plural(lower, key):
        got = table.get(key)
    return frozenset(got.split()) if got else frozenset()


@functools.lru_cache(maxsize=65536)
def synsets(key: str) -> frozenset[str]:
    """Ids of the WordNet 3.0 synonym sets (of two or more lemmas) ``key`` belongs to, in any sense and
    part of speech; empty when it is in none. Source: ``monitor/data/wordnet`` (Princeton WordNet 3.0
    via Debian's wordnet-base, built by ``scripts/build_wordnet.py``); the table loads once, about 0.1 s."""
    return frozenset(_synset_table().get(key, "").split())


MULTIWORD_MAX = 3
"""The longest WordNet multi-word lemma looked for in a text, in words ("give up", "get rid of")."""


@functools.cache
def multiword_lemmas() -> dict[str, tuple[str, ...]]:
    """Synset id -> its lower-case multi-word lemmas of 2 to :data:`MULTIWORD_MAX` words ("give_up")."""
    out: dict[str, list[str]] = {}
    for lemma, sids in _synset_table().items():
        if "_" in lemma and lemma.count("_") < MULTIWORD_MAX:
            for sid in sids.split():
                out.setdefault(sid, []).append(lemma)
    return {sid: tuple(sorted(ls)) for sid, ls in out.items()}


@functools.lru_cache(maxsize=65536)
def attributes(key: str) -> frozenset[str]:
    """The lemmas WordNet 3.0 links to ``key`` by its attribute pointer: an adjective and the noun of the
    quality it values, both ways ("big" -> {"size"}, "size" -> {"big", "large", "little", "small"},
    "fast" -> {"fastness", "speed", "swiftness"}); empty for most words. Source: ``monitor/data/wordnet``
    (built by ``scripts/build_wordnet.py``)."""
    table: dict[str, str] = _wordnet().get("attributes", {})
    return frozenset(table.get(key, "").split())


@functools.lru_cache(maxsize=65536)
def antonyms(key: str) -> frozenset[str]:
    """The lemmas WordNet 3.0 links to ``key`` by its antonym pointer, both ways ("advantage" ->
    {"disadvantage"}, "pro" -> {"anti", "con"}); empty for most words. Source: ``monitor/data/wordnet``
    (built by ``scripts/build_wordnet.py``)."""
    table: dict[str, str] = _wordnet().get("antonyms", {})
    return frozenset(table.get(key, "").split())


@functools.lru_cache(maxsize=65536)
def derivations(key: str) -> frozenset[str]:
    """The lemmas WordNet 3.0 links to ``key`` by its *derivationally related form* pointer, both ways
    ("die" -> {"death", "dying"}, "found" -> {"foundation", "founder", "founding"}); empty for most words.
    What :func:`shared_stem` cannot see: a derivation that changes the stem's spelling ("die" / "death",
    "marry" / "marriage"). Source: ``monitor/data/wordnet`` (built by ``scripts/build_wordnet.py``)."""
    table: dict[str, str] = _wordnet().get("derivations", {})
    return frozenset(table.get(key, "").split())
