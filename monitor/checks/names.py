"""Capitalised names in a text, and where a text mentions one: what the recency check compares.

A *name* is a run of capitalised words ("Byzantine Empire", "Hennessey Venom GT", "Model 3", "Bank of
America"): words that start with a capital letter, joined by spaces, with "of" or "of the" allowed inside
and numbers allowed after the first word. A run is cut at a possessive ("Ai Otsuka's Love Piece" holds
two names, the possessor and the thing), and leading function words are dropped ("The Venom GT" ->
"Venom GT"). At the start of a sentence a capital says nothing, so there a leading verb is dropped
("Describe Netflix" -> "Netflix") and a single word is a name only when the dictionary lacks it
("Netflix" is one, "However" is not). Runs of more than :data:`MAX_NAME_WORDS` words are headings or
titles ("Hot Rod News Comparing Vintage and Modern"), not names.

Pure regular expressions over the text, with WordNet's word classes (:func:`monitor.lexicon.word_classes`)
and the lookup lemmas of :func:`monitor.checks.base.analyzer`; no model. Without a model nothing tells a
person from a place or a product, so a name's kind is not known here: only its number (:func:`is_plural`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from monitor.checks.base import analyzer
from monitor.lexicon import only_verb, word_classes
from monitor.text import match_key

MAX_NAME_WORDS = 4
"""The longest name kept, in words besides "of"/"the": "Red Hat OpenShift", "African Traditional
Medicine", "Bank of America"; longer capitalised runs are headings and titles. Chosen on reading the
passages of ``cast2021.jsonl``, whose headings run to five capitalised words and more ("Hot Rod News
Comparing Vintage and Modern Funny Cars"); not tuned on any label file."""

_WORD = r"[A-Z][\w&'’]*(?:-[A-Z0-9][\w&'’]*)*(?![\w-])"
# A run of capitalised words; "DNA-based" is no name word (a lower-case part after a hyphen).
_RUN_RE = re.compile(rf"(?<![\w'’-]){_WORD}(?:[ \t]+(?:of[ \t]+(?:the[ \t]+)?)?(?:{_WORD}|[0-9]+(?![\w-])))*")
_POSSESSIVE_RE = re.compile(r"['’]s?$")
# What may stand between a sentence's end (or a line break, a colon) and its first word: quotes,
# brackets, list bullets and numbers, markdown emphasis.
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;\n])[\s\"'“‘(*#>\-–•\d]*$")
_LOWER_WORD_RE = re.compile(r"(?<![\w-])[a-z][\w'’-]*")


@dataclass(frozen=True, slots=True)
class Name:
    """One name in a text: ``text`` as written (a trailing possessive removed), ``[start, end)`` in it."""

    text: str
    start: int
    end: int


@functools.cache
def stop_words() -> frozenset[str]:
    """spaCy's English stop words (the analyzer's; imported on first use, as spaCy is slow to import)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def _acronym(word: str) -> bool:
    return len(word) > 1 and word.isupper()


def dictionary_word(word: str) -> bool:
    """Whether ``word`` (any case) or its lookup lemma is a WordNet lemma of any class or a stop word."""
    low = word.lower()
    key = analyzer().lemma(word, low).lower()
    classes = word_classes()
    return low in stop_words() or any(form in classes[pos] for pos in classes for form in (low, key))


@functools.lru_cache(maxsize=8192)
def names(text: str) -> tuple[Name, ...]:
    """The names in ``text`` in order (see the module docstring). Memoised: a conversation's messages are
    read again for each of its later requests."""
    out: list[Name] = []
    for run in _RUN_RE.finditer(text):
        # A possessive ends a name: "Ai Otsuka's Love Piece" is Ai Otsuka and Love Piece.
        pieces: list[list[tuple[int, str]]] = [[]]
        for w in re.finditer(r"\S+", run.group(0)):
            word = _POSSESSIVE_RE.sub("", w.group(0))
            pieces[-1].append((run.start() + w.start(), word))
            if word != w.group(0):
                pieces.append([])
        initial = _SENTENCE_START_RE.search(text, 0, run.start()) is not None
        for words in pieces:
            got = _name(text, words, initial)
            if got is not None:
                out.append(got)
            initial = False
    return tuple(out)


def _name(text: str, words: list[tuple[int, str]], initial: bool) -> Name | None:
    """The name a run of capitalised ``words`` (offset, word) holds, or None (see the module docstring)."""
    while words and not _acronym(words[0][1]):
        low = words[0][1].lower()
        if low in stop_words() or (initial and only_verb(low)):
            words, initial = words[1:], False
        else:
            break
    while words and words[-1][1] in ("of", "the"):
        words = words[:-1]
    if not words or not words[0][1][:1].isupper():
        return None
    if sum(w not in ("of", "the") for _, w in words) > MAX_NAME_WORDS:
        return None
    if len(words) == 1:
        word = words[0][1]
        if len(word) < 2 or (initial and not _acronym(word) and dictionary_word(word)):
            return None
    start, end = words[0][0], words[-1][0] + len(words[-1][1])
    return Name(text[start:end], start, end)


@functools.lru_cache(maxsize=8192)
def text_key(text: str) -> str:
    """:func:`monitor.text.match_key` of ``text``, memoised (messages repeat across requests)."""
    return match_key(text)


@functools.lru_cache(maxsize=8192)
def _lower_words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _LOWER_WORD_RE.findall(text))


def mention_at(name: str, text: str) -> int | None:
    """Where ``text`` mentions ``name``, case aside, as whole words, in the singular or the plural ("funny
    cars" mentions "Funny Car"; "Funny Cars" mentions "Funny Car"): the offset of the first mention in
    :func:`text_key` of ``text``, or None."""
    key = match_key(name)
    hay = text_key(text)
    if not key:
        return None
    return _whole_words_at(hay, key)


def _whole_words_at(hay: str, key: str) -> int | None:
    """The first offset of ``key`` in ``hay`` with no word character (``\\w``: a letter, digit or
    underscore) before it nor after it, or after an ``s`` or ``es`` ending; None when there is none.

    What the pattern ``(?<!\\w)key(?:e?s)?(?!\\w)`` finds, by a substring search and a look at the
    characters around each occurrence: compiling that pattern once per name cost more than all its
    searches (the shared logs' checks ask for 522 names, issue 18). A character is a word character
    when it is alphanumeric or ``_``, as the regex engine decides it."""
    start = hay.find(key)
    while start >= 0:
        if start == 0 or not _word_char(hay[start - 1]):
            end = start + len(key)
            if hay.startswith("es", end) and not _word_char_at(hay, end + 2):
                return start
            if hay.startswith("s", end) and not _word_char_at(hay, end + 1):
                return start
            if not _word_char_at(hay, end):
                return start
        start = hay.find(key, start + 1)
    return None


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _word_char_at(text: str, i: int) -> bool:
    return i < len(text) and _word_char(text[i])


def mentions(name: str, text: str) -> bool:
    """Whether ``text`` mentions ``name`` (:func:`mention_at`)."""
    return mention_at(name, text) is not None


def distinctive(name: str, texts: Iterable[str]) -> bool:
    """Whether ``name`` names something rather than being a capitalised common word: several words, an
    acronym, a word the dictionary lacks ("Netflix"), or a word ``texts`` never write in lower case
    ("Italy"; not "Emperor" when an answer says "the emperor")."""
    words = name.split()
    if len(words) > 1 or _acronym(words[0]) or not dictionary_word(words[0]):
        return True
    low = words[0].lower()
    return not any(low in _lower_words(t) for t in texts)


def is_plural(name: str) -> bool:
    """Whether ``name`` reads as plural: its last word a regular plural of its lookup lemma ("Funny Cars",
    "Romans"), or a word the dictionary lacks that ends in a plural "s" ("Gigafactories"). Acronyms and
    dictionary words ending in "s" ("Christmas", "Lotus") are singular."""
    last = name.split()[-1]
    if _acronym(last):
        return False
    low = last.lower()
    key = analyzer().lemma(last, low).lower()
    if key != low:
        return low in (key + "s", key + "es") or (key.endswith("y") and low == key[:-1] + "ies")
    return low.endswith("s") and not low.endswith(("ss", "us", "is")) and not dictionary_word(last)
