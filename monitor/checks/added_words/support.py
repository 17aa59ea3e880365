"""What the transcript supports: the query words nothing received supports, grouped by unit.

A query word is supported by a neutral word, a word of any received turn (by key, surface or base form),
an alias group the transcript hits, markup around it, or a bound prefix before a hyphen; what is left is
what the grading steps grade (:func:`unsupported_units`) and what the rewriter profile counts
(:func:`added_lemmas`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from monitor.checks.base import SkipCheck, alias_index, analyzer, transcript
from monitor.checks.nlp import Analysis, Tok, Transcript, Unit, alias_matches
from monitor.checks.numbers import QUERY_NUMBER_WORDS
from monitor.checks.rules import Rules
from monitor.lexicon import base_forms
from monitor.record import RewriteRecord

# Output markup a rewriter leaves in its answer: a tag pair with a short content
# ("<budget:token_budget>199700</budget:token_budget>"), a lone tag, or a code fence. A search engine
# would not treat it as query words, so its words are neither supported nor added.
MARKUP_RE = re.compile(r"<([A-Za-z][\w.-]*(?::[\w.-]+)?)>[^<>\n]{0,40}</\1>|</?[A-Za-z][\w.:-]*\s*/?>|```\w*")


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


def unsupported_units(q: Analysis, tr: Transcript, rules: Rules) -> Iterator[tuple[int, Unit, list[Tok]]]:
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
    return {t.key for _, _, bad in unsupported_units(q, tr, rules) for t in bad}
