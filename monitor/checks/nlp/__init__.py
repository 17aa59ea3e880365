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

The modules, each importing only those above it:

- :mod:`~monitor.checks.nlp.analysis`: :class:`Tok`, :class:`Unit`, :class:`Analysis` and its memory
  estimate; the token tests :func:`premodifier` and :func:`capitalised_token`;
- :mod:`~monitor.checks.nlp.stems`: :func:`shared_stem`, :func:`one_edit`, :func:`find_stem_relative`;
- :mod:`~monitor.checks.nlp.analyzer`: :class:`Analyzer`, its cache and memo bounds (``CACHE_BYTES``,
  ``MEMO_SURFACES``, ``VOCAB_LEXEMES``: read where they are defined, so set them there), and the
  process-wide analyzer (:func:`get_analyzer`, :func:`use_model`);
- :mod:`~monitor.checks.nlp.relations`: WordNet's relations in analysed texts (:func:`synonym_in`,
  :func:`antonym_pair`, :func:`attribute_in`, :func:`derivation_in`);
- :mod:`~monitor.checks.nlp.aliases`: alias groups matched on unit boundaries (:func:`alias_matches`);
- :mod:`~monitor.checks.nlp.transcript`: the analysed input of a rewrite (:class:`Transcript`).

This package re-exports what the checks use, so they import from ``monitor.checks.nlp``.
"""

from __future__ import annotations

from monitor.checks.nlp.aliases import AliasIndex, alias_matches, build_alias_index
from monitor.checks.nlp.analysis import Analysis, Tok, Unit, capitalised_token, premodifier
from monitor.checks.nlp.analyzer import _DEFAULT as _DEFAULT  # benchmarks/budget.py reads the built analyzers
from monitor.checks.nlp.analyzer import Analyzer, get_analyzer, release_analyses, use_model
from monitor.checks.nlp.relations import antonym_pair, attribute_in, derivation_in, synonym_in
from monitor.checks.nlp.stems import STEM_PREFIX, find_stem_relative, one_edit, shared_stem
from monitor.checks.nlp.transcript import Transcript, build_transcript

__all__ = [
    "STEM_PREFIX",
    "AliasIndex",
    "Analysis",
    "Analyzer",
    "Tok",
    "Transcript",
    "Unit",
    "alias_matches",
    "antonym_pair",
    "attribute_in",
    "build_alias_index",
    "build_transcript",
    "capitalised_token",
    "derivation_in",
    "find_stem_relative",
    "get_analyzer",
    "one_edit",
    "premodifier",
    "release_analyses",
    "shared_stem",
    "synonym_in",
    "use_model",
]
