"""What the rewriter received, analysed: :class:`Transcript` and :func:`build_transcript`."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from monitor.checks.nlp.aliases import AliasIndex, _may_match, alias_matches
from monitor.checks.nlp.analysis import Analysis
from monitor.checks.nlp.analyzer import Analyzer


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
