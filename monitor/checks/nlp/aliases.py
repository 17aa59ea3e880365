"""Alias groups matched in analysed texts: members as token-key sequences (:class:`AliasIndex`),
matched on unit boundaries (:func:`alias_matches`).
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass

from monitor.checks.nlp.analysis import Analysis, Tok
from monitor.checks.nlp.analyzer import Analyzer


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
