"""Token analysis shared by the checks: spaCy tokenizer + lookup lemmas, cached per text.

Default pipeline: ``spacy.blank("en")`` with the ``lemma_lookup`` table of spacy-lookups-data (no model
download, deterministic, fast). A trained pipeline can be named instead (``Analyzer("en_core_web_sm")``);
its own ``token.lemma_`` is then used.

What a *content token* is (same definition as the candidates of ``llm_word_labels.jsonl``, see
``shared/data/README.md``): not a spaCy stop word by surface or lemma, not punctuation, space or
currency, and containing a letter or a digit. The *key* of a token is its lower-cased lemma; the
lookup table is case-sensitive, so a token is looked up lower-cased first (``Keys`` -> ``key``).

Throughput: the checks analyse every message a rewriter received, and consecutive requests of one
conversation share all but the newest one or two messages, so :meth:`Analyzer.analyze` keeps an LRU of
analyses keyed by the text. Per record, spaCy then runs only over new text.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
import sys
from collections import OrderedDict
from collections.abc import Collection, Container, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from monitor.lexicon import (
    MULTIWORD_MAX,
    antonyms,
    attributes,
    base_forms,
    derivations,
    multiword_lemmas,
    synsets,
)

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.lexeme import Lexeme
    from spacy.tokens import Token

_V = TypeVar("_V")

# Same-length replacements only, so character offsets into the normalised text are offsets into the
# original. Why: logged text mixes typographic and ASCII punctuation ("2000–08" vs "2000-08",
# "Sanders’" vs "Sanders'"), which would otherwise split or merge tokens differently.
_NORMALISE = str.maketrans(
    {
        "\u2013": "-",
        "\u2014": "-",
        "\u2011": "-",
        "\u2212": "-",
        "\u2019": "'",
        "\u2018": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00a0": " ",
    }
)

# A unit: word characters joined by hyphen, dot or slash with no space ("eu-west-1", "3.2", "v2.1",
# "customer-managed"). spaCy splits "eu-west-1" into "eu - west-1"; alias and added-word spans must
# treat it as one word. Every match starts a word (a match ends where its word does, and one that
# started inside a word would have started at the word's start), so the lookbehind changes no match;
# it spares the search a try at every letter of every word (0.30 s -> 0.12 s over the shared logs' texts).
_UNIT_RE = re.compile(r"(?<!\w)\w+(?:[-./]\w+)+")
# What every ``_UNIT_RE`` match holds, as a pattern that starts with a character class, which the regex
# engine scans for quickly: a text without it (nine in ten) has no unit to search for (0.07 s -> 0.01 s
# over the shared logs' texts).
_UNIT_HINT_RE = re.compile(r"[-./]\w")
_SPLIT_RE = re.compile(r"[^\w]+")
_SENT_END = {".", "?", "!", ":", ";", '"', "\n"}
_ALNUM_RE = re.compile(r"[^\W_]", re.UNICODE)
# The parts of a surface's memoised contributions (:meth:`Analyzer._contributions`).
_WORDS, _STEM_PAIRS, _CONTENT_KEY = (operator.itemgetter(i) for i in range(3))
# Prefix length for the "shares a stem" test; 5 is the value of the naive check the labels describe.
STEM_PREFIX = 5


class Tok(NamedTuple):
    """One token: surface ``text``, ``lower``, ``key`` (lower-cased lemma), char span ``[start, end)``.

    ``unit`` is the index of the unit (hyphen/dot-joined word) the token belongs to; ``mid_cap`` is true
    for a capitalised token that does not start a sentence (a proper-name signal).

    A named tuple rather than a frozen dataclass: as immutable and hashable, and built three times
    faster (a frozen dataclass's ``__init__`` sets each of its twelve fields through
    ``object.__setattr__``), which mattered because the check job builds a ``Tok`` for every token of
    half its texts (issue 18).
    """

    text: str
    lower: str
    key: str
    start: int
    end: int
    ws: bool
    is_stop: bool
    is_punct: bool
    is_content: bool
    has_digit: bool
    mid_cap: bool
    unit: int


class Unit(NamedTuple):
    """A word as a reader sees it: tokens ``[first, last]`` joined without spaces by - . / (or one token).

    A named tuple for the reason :class:`Tok` is one."""

    first: int
    last: int
    start: int
    end: int
    text: str


@dataclass(slots=True)
class _AnalysisMemo:
    """What :func:`alias_matches`, :func:`_may_match`, :func:`synonym_in` and :func:`capitalised_token`
    derive from one analysis, once."""

    alias: dict[int, tuple[tuple[int, int, int], ...]] = field(default_factory=dict)
    """:func:`alias_matches` results by ``id`` of the :class:`AliasIndex`."""
    possible: dict[int, frozenset[int]] = field(default_factory=dict)
    """:func:`_possible_groups` by ``id`` of the :class:`AliasIndex`."""
    synsets: dict[str, str] | None = None
    """WordNet synset id -> the first form in it (:func:`synonym_in`)."""
    multiword: dict[str, str] | None = None
    """WordNet synset id -> the first multi-word expression in it (:func:`synonym_in`)."""
    capitals: dict[str, str] | None = None
    """Lower-cased form -> the first all-capitals token written so (:func:`capitalised_token`)."""


@dataclass(slots=True)
class Analysis:
    """The analysis of one text: the lookup sets used for support tests, then tokens and units.

    ``vocab`` holds every token's key and lower-cased surface (stop words included, as in the label
    README's candidate definition), plus the surface stripped of a trailing dot (the tokenizer keeps
    ``y.`` in "x and y." as one token). ``stems`` maps the first :data:`STEM_PREFIX` letters of each
    alphabetic content key/surface to the full forms, for the derivation test. ``content_keys`` serves
    the synonym test.

    :attr:`tokens` and :attr:`units` are built on first use from the tokenizer's offsets kept in
    ``_spans`` (an ``(n, 3)`` array of start, length, trailing space): many texts are earlier messages
    of a conversation, which the checks mostly look up in ``vocab`` and ``stems`` (the check job on the
    shared logs builds the tokens of 6,393 of its 14,094 distinct texts).
    """

    text: str
    vocab: frozenset[str]
    stems: dict[str, tuple[str, ...]]
    content_keys: tuple[str, ...]
    """The keys of the content tokens, each once, in text order."""
    _spans: Any = None
    """The tokenizer's ``to_array([IDX, LENGTH, SPACY])`` until the tokens are built, then None."""
    _analyzer: Analyzer | None = None
    """Who builds the tokens (its per-surface memo); None once built."""
    _built: tuple[tuple[Tok, ...], tuple[Unit, ...]] | None = None
    nbytes: int = 0
    """Estimated memory of this analysis (:func:`analysis_bytes`, plus :func:`token_bytes` once the
    tokens are built)."""
    cached: bool = False
    """Whether the analyzer's cache holds it (and so counts its bytes)."""
    _memo: _AnalysisMemo = field(default_factory=_AnalysisMemo)

    @property
    def tokens(self) -> tuple[Tok, ...]:
        """The tokens, in text order (built on first use)."""
        return (self._built or self._build())[0]

    @property
    def units(self) -> tuple[Unit, ...]:
        """The units, in text order (built on first use, with the tokens)."""
        return (self._built or self._build())[1]

    def _build(self) -> tuple[tuple[Tok, ...], tuple[Unit, ...]]:
        assert self._analyzer is not None and self._spans is not None  # set until built
        analyzer = self._analyzer
        rows = [(self.text[i : i + n], i, bool(sp), None) for i, n, sp in self._spans.tolist()]
        toks, units = analyzer._tokens(self.text, rows)
        built = (tuple(toks), tuple(units))
        self._built, self._spans, self._analyzer = built, None, None
        analyzer._charge(self, token_bytes(self.text))
        return built


ANALYSIS_BYTES_PER_CHAR = 21
"""Memory one analysis holds per character of its text before its tokens are built (the normalised
text, its vocabulary, stems and content keys, the tokenizer's offsets). Measured with tracemalloc over
the second half of the shared logs' 14,094 distinct texts, the memos warm, as two halves by length
(3,523 texts of 115,769 characters: 5.95 MB; 3,524 of 412,386: 11.98 MB), solved for a fixed and a
per-character part: 20.3 bytes a character."""
ANALYSIS_BYTES_FIXED = 1024
"""What an analysis holds whatever its length (the objects, the empty sets and tuples): 1,021 bytes,
measured as above."""
TOKEN_BYTES_PER_CHAR = 49
"""What building its tokens and units adds per character of the text: 43.2 bytes, measured as above
(5.63 MB and 18.44 MB more) while :class:`Tok` and :class:`Unit` were slotted dataclasses; as named
tuples they hold 12% more (53.2 against 47.5 bytes a character, measured both ways on the same 14,202
texts of the shared logs with tracemalloc), so 48.4."""
TOKEN_BYTES_FIXED = 224
"""What building its tokens and units adds whatever its length: 178 bytes, measured as above, and 37 more
as named tuples (measured as :data:`TOKEN_BYTES_PER_CHAR`)."""
MEMO_SURFACES = 50_000
"""How many surfaces each of the analyzer's per-surface memos (properties, contributions) holds before it
is emptied and fills again: together they hold 629 bytes a surface (tracemalloc, 60,000 random words:
249 + 380), so at most about 31 MB. The shared logs have 22,143 surfaces; a long backfill's vocabulary
keeps growing (numbers, names, ids), and emptying rather than freezing a full memo keeps the words now in
use. Both are pure functions of the surface (given the lemma memo, which is kept: :meth:`Analyzer.lemma`)."""
VOCAB_LEXEMES = 200_000
"""spaCy's vocabulary keeps a lexeme for every surface its tokenizer has met, and it is never pruned:
about 420 bytes a surface (tracemalloc over 100,000 new random words: 50.6 MB, of which 8.9 MB the lemma
memo). Past this many lexemes (about 84 MB) the analyzer builds its blank pipeline again (0.15 s), so a
long backfill's growing vocabulary does not grow the process. A trained pipeline (``spacy_model``) is not
rebuilt."""
CACHE_BYTES = 104 * 2**20
"""The analysis cache's budget in bytes (estimated as above): a conversation's messages are analysed
again for each of its later requests, so the cache must hold the conversations being checked (after the
check job, the shared logs' 14,094 texts are estimated at 68 MB), and no more: bounded by a count, long
passages from a backfill of texts that do not repeat filled 50,000 places with several gigabytes. It was
128 MiB until the per-message memos and the context cache (``monitor.ingest.store.records``) came, which
added 24 MB to a 60,000-event backfill's peak RSS: the cache gave that back, so the check job's memory
stays what it was (issue 18's 500 MB)."""


def analysis_bytes(text: str) -> int:
    """The estimated memory of the analysis of ``text`` before its tokens are built, in bytes
    (:data:`ANALYSIS_BYTES_PER_CHAR`)."""
    return ANALYSIS_BYTES_FIXED + ANALYSIS_BYTES_PER_CHAR * len(text)


def token_bytes(text: str) -> int:
    """The estimated memory the tokens and units of ``text`` add to its analysis, in bytes
    (:data:`TOKEN_BYTES_FIXED`, :data:`TOKEN_BYTES_PER_CHAR`)."""
    return TOKEN_BYTES_FIXED + TOKEN_BYTES_PER_CHAR * len(text)


class Analyzer:
    """Tokenise + lemmatise texts, caching each analysis by its text.

    ``model``: ``None`` for the blank English tokenizer + lookup lemmatizer, or the name of an installed
    trained pipeline. ``cache_bytes``: the cache's budget (least recently used analyses go first; the
    estimate is :func:`analysis_bytes`), :data:`CACHE_BYTES` by default. Thread-safety: none; use one
    analyzer per worker.
    """

    def __init__(self, model: str | None = None, cache_bytes: int | None = None) -> None:
        import spacy  # local import: spaCy is slow to import and only the checks need it

        if model is None:
            nlp, table = _blank_english()
            self._lemma_table: dict[str, str] | None = {}
            self._table: dict[str, str] | None = table
            self._nlp_full: Language | None = None
        else:
            nlp = spacy.load(model)
            self._lemma_table = None
            self._table = None
            self._nlp_full = nlp
        self.model = model or "blank:en+lookup"
        from spacy.attrs import IDX, LENGTH, SPACY

        self._tokenizer = nlp.tokenizer
        self._vocab = nlp.vocab
        self.renewals = 0
        """How many times the tokenizer was built anew (:data:`VOCAB_LEXEMES`)."""
        self._attrs = [IDX, LENGTH, SPACY]
        self._stop = frozenset(nlp.Defaults.stop_words)
        # text -> its analysis (which carries its estimated bytes). Keyed by the text itself, not a
        # digest of it: a string caches its hash, so each message of a long conversation, looked up by
        # every family of every later request, costs a dict probe instead of encoding and hashing it
        # again; the key is the analysis's own text unless normalising changed it (then counted).
        self._cache: OrderedDict[str, Analysis] = OrderedDict()
        self._cache_budget = CACHE_BYTES if cache_bytes is None else cache_bytes
        self.cache_bytes = 0
        """The estimated bytes the cached analyses hold now."""
        # A trained pipeline lemmatises in context, so its per-surface memo would be wrong: off there.
        self._lex_memo: dict[str, tuple[str, str, bool, bool, bool, bool, bool, bool]] = {}
        self._contrib_memo: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...], str]] = {}
        self.hits = 0
        self.misses = 0

    def lemma(self, text: str, lower: str) -> str:
        """Lookup lemma: the lower-cased surface is looked up first, then the surface as written."""
        assert self._lemma_table is not None and self._table is not None
        got = self._lemma_table.get(lower)
        if got is None:
            table = self._table
            got = table.get(lower) or (table.get(text) if text != lower else None) or lower
            # Never emptied (about 90 bytes a form): what it returns for a lower-cased form is what the
            # first spelling met gave ("CDs" -> "CD" unless "cds" came first), so a memo that forgot would
            # change the keys of a long-running process.
            self._lemma_table[lower] = got
        return got

    def clear_cache(self) -> None:
        """Forget every cached analysis (:data:`CACHE_BYTES` of them at most). For a one-shot process
        between its check phase and work that analyses nothing, so that work reuses the memory."""
        self._cache.clear()
        self.cache_bytes = 0

    def analyze(self, text: str) -> Analysis:
        """Return the (cached) analysis of ``text``. Cost: a dict lookup when seen before."""
        cached = self._cache.get(text)
        if cached is not None:
            self.hits += 1
            self._cache.move_to_end(text)
            return cached
        self.misses += 1
        got = self._analyze(text)
        if got.text is not text:
            got.nbytes += sys.getsizeof(text)  # the key is a second string
        got.cached = True
        self._cache[text] = got
        self.cache_bytes += got.nbytes
        # Tokens built since the last call were charged to their analyses (:meth:`_charge`): the
        # budget is enforced here, so it can be overrun by one transcript's tokens at most.
        while self.cache_bytes > self._cache_budget and len(self._cache) > 1:
            _, old = self._cache.popitem(last=False)
            old.cached = False
            self.cache_bytes -= old.nbytes
        return got

    def cached_texts(self) -> list[str]:
        """The (normalised) texts whose analyses the cache holds, least recently used first."""
        return [a.text for a in self._cache.values()]

    def _charge(self, analysis: Analysis, extra: int) -> None:
        """Count ``extra`` bytes more for ``analysis`` (its tokens were built), in the cache's total too
        while the cache holds it."""
        analysis.nbytes += extra
        if analysis.cached:
            self.cache_bytes += extra

    def _props(self, surface: str) -> tuple[str, str, bool, bool, bool, bool, bool, bool]:
        """:meth:`_lexeme_props` of ``surface`` with the lookup lemmatizer, memoised
        (:data:`MEMO_SURFACES`)."""
        got = self._lex_memo.get(surface)
        if got is None:
            got = self._lexeme_props(surface, self._vocab[surface])
            _remember(self._lex_memo, surface, got)
        return got

    def _lexeme_props(
        self, surface: str, t: Token | Lexeme
    ) -> tuple[str, str, bool, bool, bool, bool, bool, bool]:
        """Context-free properties of a token text (memoised per surface: vocabularies repeat).

        ``t`` is the spaCy ``Token`` (trained pipeline: its contextual lemma is used) or the ``Lexeme``.
        """
        lower = surface.lower()
        if self._nlp_full is not None:
            from spacy.tokens import Token

            assert isinstance(t, Token)  # a trained pipeline passes its tokens, never a bare Lexeme
            key = t.lemma_.lower() or lower
        else:
            key = self.lemma(surface, lower).lower()
        is_space = surface.isspace()
        has_alnum = bool(_ALNUM_RE.search(surface))
        is_punct = t.is_punct or t.is_currency or (not is_space and not has_alnum)
        is_stop = lower in self._stop or key in self._stop
        is_content = has_alnum and not is_stop and not is_punct and not is_space
        return (
            lower,
            key,
            is_space,
            is_punct,
            is_stop,
            has_alnum,
            is_content,
            any(c.isdigit() for c in surface),
        )

    def _contributions(
        self, lower: str, key: str, is_content: bool
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], str]:
        """What one token adds to its text's ``vocab`` (key, surface, glued parts, regular base forms),
        ``stems`` (every alphabetic form) and ``content_keys`` (its key, or "" for a token that is no
        content token): a pure function of its lower-cased surface, key and whether it is a content
        token."""
        words = [key, lower]
        if not lower.isalnum() and len(lower) > 1:
            # Tokenizer artefacts glue words to punctuation ("(IDC)Infiltrating", "y."): the
            # parts are words the reader saw, so they support a query word too.
            for part in _SPLIT_RE.split(lower):
                if part:
                    words.append(part)
                    words.append(self.lemma(part, part).lower() if self._nlp_full is None else part)
        # A regular base form of the surface ("taxes" -> "tax"): the lookup lemma may be another word's
        # ("taxi"), and a reader sees the surface.
        words.extend(base_forms(lower))
        pairs: list[tuple[str, str]] = []
        # Every alphabetic token, stop words included ("became" derives "becoming"): the stem test is
        # a lookup of what the reader saw, not of what the content test keeps.
        for form in (key, lower):
            if len(form) >= STEM_PREFIX and form.isalpha():
                pairs.append((form[:STEM_PREFIX], form))
        return tuple(words), tuple(pairs), key if is_content else ""

    def _contribute(self, surface: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], str]:
        """:meth:`_contributions` of ``surface`` with the lookup lemmatizer, memoised
        (:data:`MEMO_SURFACES`)."""
        lower, key, _sp, _pu, _st, _al, is_content, _di = self._props(surface)
        got = self._contributions(lower, key, is_content)
        _remember(self._contrib_memo, surface, got)
        return got

    def _analyze(self, text: str) -> Analysis:
        # An ASCII text (most: the test is a flag of the string) has nothing to normalise: translating
        # it anyway walked every character.
        norm = text if text.isascii() else text.translate(_NORMALISE)
        if norm == text:
            norm = text  # one string for the cache's key and the analysis, not two equal ones
        vocab: set[str] = set()
        stems: dict[str, set[str]] = {}
        content: list[str]
        if self._nlp_full is not None:
            # A trained pipeline lemmatises in context: its tokens are built at once, and each distinct
            # surface contributes what its last token says.
            rows = [(t.text, t.idx, bool(t.whitespace_), t) for t in self._nlp_full(norm)]
            toks, units = self._tokens(norm, rows)
            for tk in {tk.text: tk for tk in toks}.values():
                words, stem_pairs, _key = self._contributions(tk.lower, tk.key, tk.is_content)
                vocab.update(words)
                for prefix, form in stem_pairs:
                    stems.setdefault(prefix, set()).add(form)
            content = [t.key for t in toks if t.is_content]
            joined = [(un.start, un.end) for un in units if un.first != un.last]
            spans = None
        else:
            if len(self._vocab) > VOCAB_LEXEMES:
                self._renew_tokenizer()
            # Bulk attribute arrays instead of a Python Token object per token: the tokenizer keeps
            # every token as an exact substring, so the text is a slice (halves the cost per text).
            spans = self._tokenizer(norm).to_array(self._attrs)
            offsets = spans.tolist()
            contrib_memo = self._contrib_memo
            distinct = dict.fromkeys([norm[i : i + n] for i, n, _sp in offsets])
            # A surface whose contributions are known had its properties (and so its lemma) computed
            # before; the others: every new surface's lemma before any glued part's, because
            # :meth:`lemma` remembers what the first spelling of a lower-cased form gave ("CDs" -> "CD"
            # unless "cds" came first).
            new = [surface for surface in distinct if surface not in contrib_memo]
            if new:
                lex = self._lex_memo
                for surface in new:
                    if surface not in lex:
                        self._props(surface)
            # Each distinct surface contributes the same strings wherever it occurs: once per text
            # suffices, in order of first occurrence (so ``content_keys`` is in text order). Gathered
            # first, then merged by the set and tuple builders rather than a step per surface.
            contribs = [contrib_memo.get(surface) or self._contribute(surface) for surface in distinct]
            vocab.update(chain.from_iterable(map(_WORDS, contribs)))
            for stem_pairs in filter(None, map(_STEM_PAIRS, contribs)):
                for prefix, form in stem_pairs:
                    stems.setdefault(prefix, set()).add(form)
            content = list(filter(None, map(_CONTENT_KEY, contribs)))
            joined = _joined_units(norm, offsets)
        for start, end in joined:
            vocab.add(norm[start:end].lower())
        got_analysis = Analysis(
            norm,
            frozenset(vocab),
            {k: tuple(sorted(v)) for k, v in stems.items()},
            tuple(dict.fromkeys(content)),
            _spans=spans,
            _analyzer=self if spans is not None else None,
            nbytes=analysis_bytes(norm),
        )
        if spans is None:
            got_analysis._built = (tuple(toks), tuple(units))
            got_analysis.nbytes += token_bytes(norm)
        return got_analysis

    def _renew_tokenizer(self) -> None:
        """A fresh blank pipeline's tokenizer and vocabulary in place of ones grown past
        :data:`VOCAB_LEXEMES`: built as at start-up, so every token and property is the same."""
        nlp, self._table = _blank_english()
        self._tokenizer, self._vocab = nlp.tokenizer, nlp.vocab
        self.renewals += 1

    def _tokens(
        self, norm: str, rows: Sequence[tuple[str, int, bool, Token | None]]
    ) -> tuple[list[Tok], list[Unit]]:
        """The tokens and units of ``norm`` from its tokenizer ``rows`` (surface, start, trailing space,
        the spaCy token of a trained pipeline or None)."""
        unit_of = _unit_index(norm, [(i, i + len(surface)) for surface, i, _ws, _t in rows])
        toks: list[Tok] = []
        prev_text = ""
        lex = self._lex_memo
        for i, (surface, idx, ws, t) in enumerate(rows):
            if t is None:
                props = lex.get(surface) or self._props(surface)
            else:
                props = self._lexeme_props(surface, t)
            lower, key, is_space, is_punct, is_stop, has_alnum, is_content, has_digit = props
            sent_start = i == 0 or prev_text in _SENT_END or "\n" in prev_text
            mid_cap = (not sent_start) and surface[:1].isupper() and has_alnum and lower != "i"
            toks.append(
                Tok(
                    surface,
                    lower,
                    key,
                    idx,
                    idx + len(surface),
                    ws,
                    is_stop,
                    is_punct,
                    is_content,
                    has_digit,
                    mid_cap,
                    unit_of[i],
                )
            )
            if not is_space:
                prev_text = surface
        # Each unit once, from its first and last token (unit numbers rise by one from token to token
        # or stay): most units are one token, whose text is its surface.
        units: list[Unit] = []
        first = 0
        for i in range(1, len(toks) + 1):
            if i == len(toks) or unit_of[i] != unit_of[first]:
                a, b = toks[first], toks[i - 1]
                units.append(Unit(first, i - 1, a.start, b.end, a.text if a is b else norm[a.start : b.end]))
                first = i
        return toks, units


def _blank_english() -> tuple[Language, dict[str, str]]:
    """``spacy.blank("en")`` and the lookup lemmatizer's table: spacy-lookups-data's English
    ``lemma_lookup`` (surface -> lemma, 41,582 entries), read as the lemmatizer reads it.

    Why not the lemmatizer itself (``add_pipe("lemmatizer", config={"mode": "lookup"})``, then
    ``initialize()``), as before: only its table was ever used, and building it re-keyed every entry
    by its spaCy string hash into a ``Table`` (about 0.07 s of every start-up, issue 18), whose every
    lookup then hashes the key again. The plain dict gives the same answer for every key
    (``tests/checks/test_nlp.py`` compares them), the pipeline's tokenizer is the same."""
    import spacy
    from spacy.util import load_language_data, registry

    nlp = spacy.blank("en")
    table = load_language_data(registry.lookups.get("en")["lemma_lookup"])
    assert isinstance(table, dict)  # load_language_data is typed as returning a dict or a list
    return nlp, table


def _remember(memo: dict[str, _V], key: str, value: _V) -> None:
    """``memo[key] = value``, the memo emptied first when it holds :data:`MEMO_SURFACES` entries."""
    if len(memo) >= MEMO_SURFACES:
        memo.clear()
    memo[key] = value


def _unit_spans(text: str) -> list[tuple[int, int]]:
    """The character spans of the ``_UNIT_RE`` matches of ``text``; none without a joining character
    before a word character (:data:`_UNIT_HINT_RE`), which most texts lack."""
    if _UNIT_HINT_RE.search(text) is None:
        return []
    return [m.span() for m in _UNIT_RE.finditer(text)]


def _joined_units(text: str, offsets: list[list[int]]) -> list[tuple[int, int]]:
    """Character spans of the units of two or more tokens (the tokens inside one ``_UNIT_RE`` match),
    in order, from the tokenizer's ``offsets`` (start, length, trailing space): what :func:`_unit_index`
    joins, without a step per token."""
    out: list[tuple[int, int]] = []
    starts: list[int] | None = None
    for lo, hi in _unit_spans(text):
        if starts is None:
            starts = [o[0] for o in offsets]
        first = bisect.bisect_left(starts, lo)
        last = first
        # tokens are contiguous and in order: those inside the match follow the first one at or after it
        while last < len(offsets) and offsets[last][0] + offsets[last][1] <= hi:
            last += 1
        if last - first >= 2:
            out.append((offsets[first][0], offsets[last - 1][0] + offsets[last - 1][1]))
    return out


def _unit_index(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """Map each token (by char span) to a unit number; tokens inside one ``_UNIT_RE`` match share it."""
    out: list[int] = []
    joined = _unit_spans(text)
    j = 0
    n_units = 0
    current: tuple[int, int] | None = None
    for start, end in spans:
        while j < len(joined) and joined[j][1] <= start:
            j += 1
        span = joined[j] if j < len(joined) and joined[j][0] <= start and end <= joined[j][1] else None
        if span is not None and span == current:
            out.append(n_units - 1)
            continue
        out.append(n_units)
        n_units += 1
        current = span
    return out


def shared_stem(word: str, other: str) -> bool:
    """True when ``word`` and ``other`` look like inflections/derivations of one stem.

    Rule: a common prefix of at least :data:`STEM_PREFIX` letters that covers all but at most 3 letters
    of the shorter word (involvement/involved, popularity/popular, creation/created); two words of one
    length of 6+ letters that differ in their last two letters only, a verb and noun whose ending
    alternates (advise/advice, devise/device: Quirk et al. 1985, App. I.31, conversion with a voicing
    change); or, for words of 7+ letters, one edit apart (a spelling fix: beginnings/beginings). Source:
    the derivation and spelling-fix classes of the label README's "benign" rubric; the 3-letter slack is
    the longest common English inflectional ending ("-ing") that a derivation replaces.
    """
    if word == other:
        return True
    n = 0
    for a, b in zip(word, other, strict=False):
        if a != b:
            break
        n += 1
    shorter = min(len(word), len(other))
    if n >= STEM_PREFIX and n >= shorter - 3:
        return True
    if len(word) == len(other) >= 6 and n >= len(word) - 2:
        return True
    return shorter >= 7 and abs(len(word) - len(other)) <= 1 and one_edit(word, other)


def one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one substitution, or by one inserted or deleted
    character (``a`` and ``b`` of equal length or one apart; equal strings are not one edit apart
    unless their lengths differ)."""
    if len(a) > len(b):
        a, b = b, a
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1 :]


def find_stem_relative(word: str, analyses: Iterable[Analysis]) -> tuple[int, str] | None:
    """First ``(analysis index, form)`` whose content word shares a stem with ``word``, else ``None``."""
    if len(word) < STEM_PREFIX or not word.isalpha():
        return None
    prefix = word[:STEM_PREFIX]
    for i, a in enumerate(analyses):
        for form in a.stems.get(prefix, ()):
            if shared_stem(word, form):
                return i, form
    # One-edit spelling fixes and alternating endings can differ inside the prefix; only worth the scan
    # for longer words.
    if len(word) >= 6:
        for i, a in enumerate(analyses):
            for forms in a.stems.values():
                for form in forms:
                    if abs(len(form) - len(word)) <= 1 and form[:2] == word[:2] and shared_stem(word, form):
                        return i, form
    return None


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


def premodifier(t: Tok) -> bool:
    """Whether ``t`` can premodify a noun as the user typed it: a lower-case, unnumbered content word that
    is no plural (a capitalised word is a name, and premodifying nouns are normally singular, so a plural
    before a noun is its subject: "did any singles come"; Quirk et al. 1985, 17.108)."""
    return (
        t.is_content
        and t.text[:1].isalpha()
        and not t.text[:1].isupper()
        and not t.has_digit
        and not (t.lower != t.key and t.lower.endswith("s"))
    )


def capitalised_token(a: Analysis, lower: str) -> str | None:
    """The first all-capitals token of ``a`` ("SAD", "IBM") whose lower-cased form is ``lower``, as
    written, else None. The all-capitals tokens are indexed once, memoised on the analysis (an acronym's
    expansion is looked up in every text of a transcript), and only for a text whose ``vocab`` (every
    token's lower-cased form) has ``lower``."""
    if lower not in a.vocab:
        return None
    got = a._memo.capitals
    if got is None:
        got = {}
        for t in a.tokens:
            if t.text.isupper():
                got.setdefault(t.lower, t.text)
        a._memo.capitals = got
    return got.get(lower)


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


_DEFAULT: dict[str | None, Analyzer] = {}
_SELECTED: list[str | None] = [None]


def use_model(model: str | None) -> None:
    """Make ``model`` (a trained spaCy pipeline name, or ``None`` for blank English + lookup lemmas)
    the pipeline :func:`get_analyzer` returns by default.

    Loads it at once, so a missing pipeline fails at start-up: raises ``ConfigError`` naming it.
    """
    if model is not None:
        try:
            get_analyzer(model)
        except OSError as exc:
            from monitor.errors import ConfigError

            raise ConfigError(f"spacy_model {model!r} cannot be loaded (is it installed?): {exc}") from exc
    _SELECTED[0] = model


def get_analyzer(model: str | None = None) -> Analyzer:
    """The process-wide analyzer for ``model`` (default: the one chosen by :func:`use_model`).

    Built on first use; building costs about 0.5 s.
    """
    key = model if model is not None else _SELECTED[0]
    got = _DEFAULT.get(key)
    if got is None:
        got = Analyzer(key)
        _DEFAULT[key] = got
    return got


@dataclass(frozen=True, slots=True)
class AliasIndex:
    """Alias group members as token-key sequences, indexed by first key, for unit-safe matching.

    ``groups[i]`` is the group name; ``by_first[key]`` lists ``(group index, key sequence)``;
    ``firsts`` holds the keys of ``by_first``, for a set test against a text's vocabulary.
    """

    groups: tuple[str, ...]
    by_first: dict[str, tuple[tuple[int, tuple[str, ...]], ...]]
    firsts: frozenset[str]


def build_alias_index(groups: Iterable[tuple[str, Iterable[str]]], analyzer: Analyzer) -> AliasIndex:
    """Tokenise every member with ``analyzer``; punctuation other than - . / is dropped from sequences."""
    names: list[str] = []
    by_first: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    for gi, (name, members) in enumerate(groups):
        names.append(name)
        for m in members:
            seq = tuple(t.key for t in analyzer.analyze(m).tokens if _alias_token(t))
            if seq:
                by_first.setdefault(seq[0], []).append((gi, seq))
    return AliasIndex(tuple(names), {k: tuple(v) for k, v in by_first.items()}, frozenset(by_first))


def _alias_token(t: Tok) -> bool:
    return not t.text.isspace() and (not t.is_punct or t.text in {"-", ".", "/"})


def _may_match(a: Analysis, index: AliasIndex, groups: Container[int] | None = None) -> bool:
    """Whether every key of some member (of ``groups``, or of any group) is in ``a.vocab``: else no member
    of them matches in ``a`` (``vocab`` holds every token's key and surface), which is then known without
    building its tokens (most earlier messages of a conversation never need theirs)."""
    possible = _possible_groups(a, index)
    return bool(possible) if groups is None else any(g in groups for g in possible)


def _possible_groups(a: Analysis, index: AliasIndex) -> frozenset[int]:
    """The groups of ``index`` with a member whose every key is in ``a.vocab``, memoised on ``a``: each
    earlier message is asked again by every later request of its conversation."""
    got = a._memo.possible.get(id(index))
    if got is None:
        vocab = a.vocab
        got = frozenset(
            gi
            for first in vocab & index.firsts
            for gi, seq in index.by_first[first]
            if all(k in vocab for k in seq[1:])
        )
        a._memo.possible[id(index)] = got
    return got


def alias_matches(a: Analysis, index: AliasIndex) -> tuple[tuple[int, int, int], ...]:
    """All ``(group index, first token, last token)`` occurrences of alias members in ``a`` (memoised).

    A token matches a sequence element by key or by lower-cased surface. A match must start and end on
    unit boundaries, so "eu" inside "eu-west-1" does not match a member "EU".
    """
    memo_key = id(index)
    got = a._memo.alias.get(memo_key)
    if got is not None:
        return got
    if not _may_match(a, index):
        a._memo.alias[memo_key] = ()
        return ()
    toks = [i for i, t in enumerate(a.tokens) if _alias_token(t)]
    out: list[tuple[int, int, int]] = []
    for pos, ti in enumerate(toks):
        t = a.tokens[ti]
        cands = index.by_first.get(t.key, ()) + (index.by_first.get(t.lower, ()) if t.lower != t.key else ())
        for gi, seq in cands:
            if pos + len(seq) > len(toks):
                continue
            ok = True
            for j, want in enumerate(seq):
                tj = a.tokens[toks[pos + j]]
                if tj.key != want and tj.lower != want:
                    ok = False
                    break
            if not ok:
                continue
            first, last = ti, toks[pos + len(seq) - 1]
            u_first, u_last = a.units[a.tokens[first].unit], a.units[a.tokens[last].unit]
            if u_first.first == first and u_last.last == last:
                out.append((gi, first, last))
    got = tuple(out)
    a._memo.alias[memo_key] = got
    return got


@dataclass(frozen=True, slots=True)
class Transcript:
    """What the rewriter received, analysed: the logged messages then the latest user message.

    ``labels[i]`` is the message index (0-based) or ``"latest"``; ``roles[i]`` the role.
    """

    analyses: tuple[Analysis, ...]
    labels: tuple[int | str, ...]
    roles: tuple[str, ...]

    def find(self, key: str, lower: str | None = None) -> int | str | None:
        """Label of the first text whose vocabulary holds ``key`` (or ``lower``), else ``None``."""
        for a, label in zip(self.analyses, self.labels, strict=True):
            if key in a.vocab or (lower is not None and lower in a.vocab):
                return label
        return None

    def holds(self, key: str, lower: str | None = None) -> bool:
        """Whether some text's vocabulary holds ``key`` (or ``lower``): :meth:`find` is not None.

        Newest text first: a query's words are mostly the latest message's or the answer before it, so
        a long conversation is read back only for a word it may not hold."""
        for a in reversed(self.analyses):
            if key in a.vocab or (lower is not None and lower in a.vocab):
                return True
        return False

    def alias_groups(self, index: AliasIndex, among: Collection[int] | None = None) -> frozenset[int]:
        """Indexes of alias groups (of ``among``, when given) with at least one member present in the
        transcript. A text that cannot hold a member of ``among`` is not matched (nor its tokens built)."""
        out: set[int] = set()
        for a in self.analyses:
            if among is not None and not _may_match(a, index, among):
                continue
            out.update(g for g, _, _ in alias_matches(a, index) if among is None or g in among)
        return frozenset(out)


def build_transcript(analyzer: Analyzer, messages: Iterable[tuple[str, str]], latest: str) -> Transcript:
    """Analyse ``(role, content)`` messages and ``latest`` (each analysis cached by its text)."""
    pairs = list(messages)
    analyze = analyzer.analyze
    analyses = [analyze(content) for _, content in pairs]
    analyses.append(analyze(latest))
    return Transcript(tuple(analyses), (*range(len(pairs)), "latest"), (*(role for role, _ in pairs), "user"))
