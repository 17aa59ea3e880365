"""The analyzer: spaCy's tokenizer + lookup lemmas, each text's :class:`Analysis` cached by the text,
and the process-wide analyzer (:func:`get_analyzer`, :func:`use_model`).

Default pipeline: ``spacy.blank("en")`` with the ``lemma_lookup`` table of spacy-lookups-data (no model
download, deterministic, fast). A trained pipeline can be named instead (``Analyzer("en_core_web_sm")``);
its own ``token.lemma_`` is then used.
"""

from __future__ import annotations

import bisect
import operator
import re
import sys
from collections import OrderedDict
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, TypeVar

from monitor.checks.nlp.analysis import Analysis, Tok, Unit, analysis_bytes, token_bytes
from monitor.checks.nlp.stems import STEM_PREFIX
from monitor.lexicon import base_forms

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
rebuilt. Each of N check processes renews past its share, this over N but never below
:data:`MEMO_SURFACES` (:attr:`Analyzer.vocab_lexemes`)."""
CACHE_BYTES = 104 * 2**20
"""The analysis cache's budget in bytes (estimated as above): a conversation's messages are analysed
again for each of its later requests, so the cache must hold the conversations being checked (after the
check job, the shared logs' 14,094 texts are estimated at 68 MB), and no more: bounded by a count, long
passages from a backfill of texts that do not repeat filled 50,000 places with several gigabytes. It was
128 MiB until the per-message memos and the context cache (``monitor.ingest.store.records``) came, which
added 24 MB to a 60,000-event backfill's peak RSS: the cache gave that back, so the check job's memory
stays what it was (issue 18's 500 MB)."""


class Analyzer:
    """Tokenise + lemmatise texts, caching each analysis by its text.

    ``model``: ``None`` for the blank English tokenizer + lookup lemmatizer, or the name of an installed
    trained pipeline. ``cache_bytes``: the cache's budget (least recently used analyses go first; the
    estimate is :func:`analysis_bytes`), :data:`CACHE_BYTES` over ``share`` by default. ``share``: how
    many processes share the budgets (the check processes of ``monitor.worker.pool``, each handed one
    conversation in ``share``), so this one's vocabulary is also renewed past its share of
    :data:`VOCAB_LEXEMES` (:attr:`vocab_lexemes`). Not the memos (:data:`MEMO_SURFACES`): every process
    meets the common words (each of two met 22,159 surfaces on 100,000 events of the benchmark's corpus,
    the whole logs have 22,143), and a memo smaller than they are would be emptied again and again. Raises
    ``ValueError`` for a ``share`` below 1. Thread-safety: none; use one analyzer per worker.
    """

    def __init__(self, model: str | None = None, cache_bytes: int | None = None, *, share: int = 1) -> None:
        if share < 1:
            raise ValueError(f"share must be at least 1 (processes sharing the budgets), not {share}")
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
        self.vocab_lexemes = max(VOCAB_LEXEMES // share, MEMO_SURFACES) if model is None else None
        """Past how many lexemes the vocabulary is renewed: :data:`VOCAB_LEXEMES` over ``share``, what grows
        it being the words of one conversation (names, ids, numbers), but never below :data:`MEMO_SURFACES`:
        every process meets the common words, and below them it would be renewed again and again (the
        shared logs' 13,853 distinct texts, three copies each, uncached: no renewal on one process, 7 at a
        16th of the budget without this floor, 76 at a 64th, none with it). ``None`` for a trained
        pipeline (not renewed)."""
        self._cache_budget = CACHE_BYTES // share if cache_bytes is None else cache_bytes
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
            # the blank pipeline's branch: vocab_lexemes is None only for a trained one
            if self.vocab_lexemes is not None and len(self._vocab) > self.vocab_lexemes:
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


_DEFAULT: dict[str | None, Analyzer] = {}
_SELECTED: list[str | None] = [None]


def use_model(model: str | None, *, share: int | None = None) -> None:
    """Make ``model`` (a trained spaCy pipeline name, or ``None`` for blank English + lookup lemmas)
    the pipeline :func:`get_analyzer` returns by default.

    Loads it at once, so a missing pipeline fails at start-up: raises ``ConfigError`` naming it. With
    ``share`` the analyzer is built anew keeping that share of every budget (:class:`Analyzer`'s
    ``share``: a check worker process of ``monitor.worker.pool``, one of ``share``).
    """
    try:
        if share is not None:
            _DEFAULT[model] = Analyzer(model, share=share)
        elif model is not None:
            get_analyzer(model)
    except OSError as exc:
        from monitor.errors import ConfigError

        raise ConfigError(f"spacy_model {model!r} cannot be loaded (is it installed?): {exc}") from exc
    _SELECTED[0] = model


def release_analyses() -> int:
    """Empty the analysis cache of every analyzer this process built (:meth:`Analyzer.clear_cache`),
    building none: where the check processes did the analysing (``monitor.worker.pool``), this process
    built no analyzer (with the default model: a named one is loaded at start-up by :func:`use_model`),
    and building one only to empty it cost ``run`` about 0.8 s and 70 MB after its check phase (20,000
    non-repeating rewrites, ``--workers 2``). Returns how many analyses were let go."""
    let_go = 0
    for built in _DEFAULT.values():
        let_go += len(built._cache)
        built.clear_cache()
    return let_go


def analyzer_budgets() -> dict[str, int | None]:
    """The budgets of this process's default analyzer (:func:`get_analyzer`, which builds it when there is
    none: about 0.5 s): ``cache_bytes`` (estimated bytes of cached analyses) and ``vocab_lexemes``
    (:attr:`Analyzer.vocab_lexemes`; ``None`` for a trained pipeline), its share of :data:`CACHE_BYTES`
    and :data:`VOCAB_LEXEMES` (what a check process of ``monitor.worker.pool`` keeps)."""
    got = get_analyzer()
    return {"cache_bytes": got._cache_budget, "vocab_lexemes": got.vocab_lexemes}


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
