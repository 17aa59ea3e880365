"""The rewriter profile: how often a prompt version adds a lemma across unrelated conversations.

Learned without labels from the store (``added_lemmas``, filled by the check job before it grades a
batch): a lemma one rewriter adds in many conversations about different things is its style ("career"
for a prompt that asks for informative rewrites); a lemma it adds once is specific to the conversation,
and is what a fabrication looks like. ``added_content_word`` grades a style word one step lower and says
so in its evidence, with the figure. Numbers, dates, versions, new proper names and constraining
qualifier values are never demoted (``monitor.checks.added_words``).

Thresholds: a lemma is style when the rewriter added it in at least :data:`STYLE_MIN_OTHERS` *other*
conversations and in at least :data:`STYLE_MIN_SHARE` of its other conversations, whichever asks more.
5 is the usual smallest count read as a pattern rather than chance (Cochran's rule of thumb for
expected counts, Biometrics 1954); one in a thousand keeps a word that a large deployment's rewriter
adds in 5 of 100,000 conversations specific. Both were then measured on the labelled development
files (``evaluate``, figures in the issue notes): 2 and 3 other conversations also demoted labelled
fabrications of the gpt-3.5 files (``llm_word_labels.jsonl``, ``qrecc_audit_labels.jsonl``, the only
rewriter there with enough conversations to show a profile), 5 did not; a share of 1% undid most of the
gain there, and no share below 5 in 1,096 (its conversations) can be told apart on these files, so the
share is not fitted to them. On the 24-conversation MTRAG files and on CAsT no value changes anything.

Pure: the check job loads a :class:`RewriterProfile` from the store and hands it to the checks on the
rules (``Rules.with_profile``). The profile grows with the store, so a rewrite checked early meets a
smaller profile than one checked late; queue admission therefore grades each day it plans again against
the store's profile (``monitor.checks.added_words.restyle``, only the style step is redone), and a day's
queue does not depend on the order its rewrites were checked in. A day no longer admitted keeps the
grades of its last admission; ``check --recheck`` grades everything again. A store upgraded to
migration 0006 with rewrites already checked learns their lemmas only through ``check --recheck``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

STYLE_MIN_OTHERS = 5
STYLE_MIN_SHARE = 0.001


@dataclass(frozen=True, slots=True)
class Style:
    """Why a lemma is the rewriter's style: added in ``others`` of the ``of`` other conversations of
    ``prompt_version``."""

    prompt_version: str
    others: int
    of: int

    @property
    def why(self) -> str:
        return (
            f"the rewriter's style: prompt version {self.prompt_version!r} adds it in {self.others:,} of its "
            f"{self.of:,} other conversations"
        )


@dataclass(frozen=True, slots=True)
class RewriterProfile:
    """Per prompt version (``""`` when none was logged): ``conversations`` is how many conversations it
    rewrote; ``added[(prompt_version, lemma)]`` in how many of them it added ``lemma``. Both count the
    conversation being checked (the check job records its lemmas before grading it)."""

    conversations: Mapping[str, int] = field(default_factory=dict)
    added: Mapping[tuple[str, str], int] = field(default_factory=dict)

    def style(self, prompt_version: str | None, lemma: str) -> Style | None:
        """A :class:`Style` when ``lemma`` is ``prompt_version``'s style (see the module doc), else None."""
        pv = prompt_version or ""
        n = self.added.get((pv, lemma), 0)
        others, of = n - 1, self.conversations.get(pv, 0) - 1
        if others >= STYLE_MIN_OTHERS and of > 0 and others / of >= STYLE_MIN_SHARE:
            return Style(pv, others, of)
        return None
