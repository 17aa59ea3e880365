"""The analysis of one text and what is read off its tokens: :class:`Tok`, :class:`Unit`,
:class:`Analysis` (built by :class:`monitor.checks.nlp.analyzer.Analyzer`), the memory an analysis is
estimated to hold, and the token tests :func:`premodifier` and :func:`capitalised_token`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from spacy.tokens import Token


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


class _TokenBuilder(Protocol):
    """Who builds an analysis's tokens on first use: the :class:`monitor.checks.nlp.analyzer.Analyzer`
    that made it. Named by what :meth:`Analysis._build` calls, so this module does not import the
    analyzer's, which imports it."""

    def _tokens(
        self, norm: str, rows: Sequence[tuple[str, int, bool, Token | None]]
    ) -> tuple[list[Tok], list[Unit]]: ...

    def _charge(self, analysis: Analysis, extra: int) -> None: ...


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
    _analyzer: _TokenBuilder | None = None
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


def analysis_bytes(text: str) -> int:
    """The estimated memory of the analysis of ``text`` before its tokens are built, in bytes
    (:data:`ANALYSIS_BYTES_PER_CHAR`)."""
    return ANALYSIS_BYTES_FIXED + ANALYSIS_BYTES_PER_CHAR * len(text)


def token_bytes(text: str) -> int:
    """The estimated memory the tokens and units of ``text`` add to its analysis, in bytes
    (:data:`TOKEN_BYTES_FIXED`, :data:`TOKEN_BYTES_PER_CHAR`)."""
    return TOKEN_BYTES_FIXED + TOKEN_BYTES_PER_CHAR * len(text)


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
