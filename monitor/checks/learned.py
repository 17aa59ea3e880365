"""Learned word evidence: what the reviewers' verdicts say about a word one rewriter adds (issue 15).

Every rewriter has a style: a keyword-expansion prompt adds "historically" or "research" to half its
queries, and a list fitted in advance cannot know which words. The reviewers already say so, one
verdict at a time. For each (finding kind, rewriter, lemma) this module keeps two counts, read from the
verdicts by ``monitor.review.store.learned_table``:

- **dismissed**: items flagged with the word whose newest verdict says the rewrite was fine (``ok`` or
  ``false_alarm_synonym``);
- **confirmed**: items whose newest verdict is the fabrication (``fabricated_constraint``, for
  ``added_content_word``) or the drop (``dropped_constraint``, for ``intent_dropped``) and names the word
  in its assertion terms, or names no word at all (the item's label then speaks for its flagged words).

The false-alarm rate *p* of the word for that rewriter gets a Beta posterior (the Beta-Binomial model;
Gelman et al., "Bayesian Data Analysis", 3rd ed., sections 2.4 and 5.3). Its prior is pooled from the
same rewriter's other reviewed items of the kind: Beta(2m, 2(1 - m)), where m = (D + 1) / (D + C + 2) is
the Laplace-smoothed share of dismissals among the verdicts on the items where the word was *not*
flagged (D dismissed, C confirmed; an item counts once however many words it flagged, so two words of
one item do not vouch for each other), at the weight of two verdicts: the weight of the uniform prior
Beta(1, 1), which it is for a rewriter with no other verdicts. A rewriter whose added words the
reviewers nearly always dismiss (a keyword-expansion prompt) needs fewer dismissals of a word before it
counts as style than one whose words are often real inventions: partial pooling, as in Gelman's chapter
5. The posterior is Beta(2m + dismissed, 2(1 - m) + confirmed). The word's grade moves by
:attr:`WordEvidence.steps`:

- one step lower once the posterior's 5% quantile (a one-sided 95% lower bound) passes 0.5 and the
  word itself was dismissed at least once (the pool alone never demotes a word nobody has judged): the
  verdicts make it more likely a false alarm than not, even at the cautious end;
- two steps lower once that bound passes 0.75 (three false alarms to one real problem) **and** at least
  two reviewers dismissed it: one reviewer alone never takes a word more than one step down;
- one step *higher* after any confirmed fabrication or drop: the reviewers have seen this rewriter
  invent the word, and a confirmation also undoes any demotion (nothing is learned that hides a real
  invention once a reviewer has named it);
- what an operator pinned (``rules learned pin``), whatever the counts; a reset (``rules learned reset``)
  forgets the verdicts before it.

For a rewriter with no other verdicts (m = 1/2, the uniform prior) the bound after d dismissals is
0.05^(1/(d+1)): 0.47 at 3, 0.55 at 4, so the first step comes with the 4th dismissal, the second with
the 10th. When 86% of its other items were dismissed (m = 0.86) the first step comes with the 1st
dismissal (bound 0.58) and the second with the 4th (0.78). None of these figures was fitted to the
labelled files; ``scripts/simulate_review.py`` measures what they do.

Numbers, dates, versions, new proper names and values of constraining qualifier kinds are never
demoted below medium (:data:`PROTECTED_SIGNALS`): a constraint is a constraint whoever adds it. The
table's :attr:`LearnedTable.hash` is part of the rules' identity (``Rules.with_learned``), so a finding
records the table it was graded with, and a change of the table re-grades only through a new check run.
Pure: standard library only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from math import exp, lgamma, log, log1p
from typing import Any

PRIOR_WEIGHT = 2.0
"""Verdicts' worth of the pooled prior: the weight of the uniform Beta(1, 1)."""
LOWER_QUANTILE = 0.05
"""The posterior quantile read as the lower bound: a one-sided 95% credible bound."""
ONE_STEP_BOUND = 0.5
"""Lower bound from which a word is one step lower: more likely a false alarm than not."""
TWO_STEP_BOUND = 0.75
"""Lower bound from which a word is two steps lower (with :data:`TWO_STEP_REVIEWERS`)."""
TWO_STEP_REVIEWERS = 2
"""Distinct reviewers among the dismissals needed for the second step."""
PROTECTED_SIGNALS = frozenset({"number", "proper_name", "qualifier_value"})
"""Signals of ``added_content_word`` a learned step never takes below medium."""
UNADJUSTED_SIGNALS = frozenset({"meta_text"})
"""Signals never adjusted: the words of a refusal or a note are judged by ``not_a_query``."""
KINDS = ("added_content_word", "intent_dropped")
"""The finding kinds whose words are learned."""
LEVELS = ("low", "medium", "high")


def beta_cdf(x: float, a: float, b: float) -> float:
    """P(X <= x) for X ~ Beta(a, b), a, b > 0: the regularized incomplete beta function I_x(a, b).

    Evaluated by its continued fraction (Abramowitz and Stegun 26.5.8) with the modified Lentz method,
    on the side of ``x`` where it converges fast (26.5.2: I_x(a, b) = 1 - I_{1-x}(b, a)). Accurate to
    about 1e-12. Raises ``ValueError`` for a or b not above 0.
    """
    if a <= 0 or b <= 0:
        raise ValueError(f"Beta parameters must be above 0, got ({a}, {b})")
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - beta_cdf(1.0 - x, b, a)
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x))
    return front * _continued_fraction(x, a, b) / a


def _continued_fraction(x: float, a: float, b: float) -> float:
    tiny = 1e-300

    def guard(v: float) -> float:
        return v if abs(v) > tiny else tiny

    c, d = 1.0, 1.0 / guard(1.0 - (a + b) * x / (a + 1))
    h = d
    for m in range(1, 1000):
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        for term in (even, odd):
            d = 1.0 / guard(1.0 + term * d)
            c = guard(1.0 + term / c)
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def beta_quantile(q: float, a: float, b: float) -> float:
    """The ``q`` quantile of Beta(a, b), by bisection of :func:`beta_cdf` to 1e-12."""
    lo, hi = 0.0, 1.0
    while hi - lo > 1e-12:
        mid = (lo + hi) / 2
        if beta_cdf(mid, a, b) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def rewriter_key(prompt_version: str | None, model: str | None) -> str:
    """Whose style a word is learned for: the prompt version when logged, else the model, else ``""``."""
    return prompt_version or model or ""


@dataclass(frozen=True, slots=True)
class WordEvidence:
    """The verdicts on one (kind, rewriter, lemma) and what they do to the word's grade.

    ``reviewers`` counts the distinct reviewers among the dismissals; ``pinned`` is an operator's fixed
    step (None: learned); ``last_at`` is the newest verdict counted (naive UTC), None when none;
    ``others`` is the pool of the prior: (dismissed, confirmed) counted over the rewriter's other
    reviewed items of the kind, those where this word was not flagged (``learned_table`` fills it).
    """

    kind: str
    rewriter: str
    lemma: str
    dismissed: int = 0
    confirmed: int = 0
    reviewers: int = 0
    pinned: int | None = None
    last_at: datetime | None = None
    others: tuple[int, int] = (0, 0)

    @property
    def prior(self) -> tuple[float, float]:
        """The pooled prior Beta's (alpha, beta): mean (D + 1) / (D + C + 2) of :attr:`others`, weight
        :data:`PRIOR_WEIGHT`."""
        d, c = self.others
        m = (d + 1) / (d + c + 2)
        return PRIOR_WEIGHT * m, PRIOR_WEIGHT * (1 - m)

    @property
    def posterior(self) -> tuple[float, float]:
        """The posterior Beta's (alpha, beta) of the false-alarm rate."""
        a, b = self.prior
        return a + self.dismissed, b + self.confirmed

    @property
    def mean(self) -> float:
        """The posterior mean false-alarm rate."""
        a, b = self.posterior
        return a / (a + b)

    @property
    def lower_bound(self) -> float:
        """The posterior's :data:`LOWER_QUANTILE` quantile of the false-alarm rate."""
        return beta_quantile(LOWER_QUANTILE, *self.posterior)

    @property
    def learned_steps(self) -> int:
        """The step the verdicts alone imply: +1, 0, -1 or -2 (see the module doc)."""
        if self.confirmed:
            return 1
        if not self.dismissed:
            return 0
        bound = self.lower_bound
        if bound >= TWO_STEP_BOUND and self.reviewers >= TWO_STEP_REVIEWERS:
            return -2
        return -1 if bound >= ONE_STEP_BOUND else 0

    @property
    def steps(self) -> int:
        """The step applied to the word's grade: the operator's pin, else :attr:`learned_steps`."""
        return self.pinned if self.pinned is not None else self.learned_steps

    @property
    def effect(self) -> str:
        """The step in words: ``"two steps lower"``, ``"one step lower"``, ``"none"`` or
        ``"one step higher"``."""
        return {-2: "two steps lower", -1: "one step lower", 0: "none", 1: "one step higher"}[self.steps]

    @property
    def why(self) -> str:
        """What the verdicts said, for the finding's evidence."""
        total = self.dismissed + self.confirmed
        who = f"{self.reviewers} reviewer{'s' if self.reviewers != 1 else ''}"
        said = (
            f"confirmed {self.confirmed} of {total} times"
            if self.confirmed
            else f"dismissed {self.dismissed} of {total} times"
        )
        text = f"{said} for {self.rewriter or 'an unnamed rewriter'!r}"
        if not self.confirmed and self.dismissed:
            text += f" by {who}"
        if self.pinned is not None:
            text += f"; pinned by an operator to {self.effect}"
        return text

    def as_dict(self) -> dict[str, object]:
        """Plain data for ``--json`` and the finding's evidence (posterior figures rounded to 3 places)."""
        return {
            "kind": self.kind,
            "rewriter": self.rewriter,
            "lemma": self.lemma,
            "dismissed": self.dismissed,
            "confirmed": self.confirmed,
            "reviewers": self.reviewers,
            "others_dismissed": self.others[0],
            "others_confirmed": self.others[1],
            "posterior_mean": round(self.mean, 3),
            "lower_bound": round(self.lower_bound, 3),
            "pinned": self.pinned,
            "steps": self.steps,
            "effect": self.effect,
            "last_at": self.last_at.isoformat() if self.last_at is not None else None,
        }


@dataclass(frozen=True, slots=True)
class LearnedTable:
    """Learned :class:`WordEvidence` keyed by (kind, rewriter, lemma); empty on a fresh store."""

    entries: Mapping[tuple[str, str, str], WordEvidence] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: Iterable[WordEvidence]) -> LearnedTable:
        """The table of ``entries`` (a later entry of the same key replaces an earlier one)."""
        return cls({(e.kind, e.rewriter, e.lemma): e for e in entries})

    def get(self, kind: str, rewriter: str, lemma: str) -> WordEvidence | None:
        """The entry of ``lemma`` for ``rewriter`` under ``kind`` when it moves the grade, else None."""
        e = self.entries.get((kind, rewriter, lemma))
        return e if e is not None and e.steps else None

    @property
    def effective(self) -> list[WordEvidence]:
        """The entries that move a grade, in key order."""
        return [self.entries[k] for k in sorted(self.entries) if self.entries[k].steps]

    @property
    def hash(self) -> str:
        """sha256 (16 hex) of the effective steps; ``""`` when nothing moves a grade, so a store without
        verdicts keeps the rules' own hash. The counts are left out: a verdict that changes no step
        changes no finding's grade."""
        steps = [[e.kind, e.rewriter, e.lemma, e.steps] for e in self.effective]
        if not steps:
            return ""
        return hashlib.sha256(json.dumps(steps).encode()).hexdigest()[:16]


def flagged_words(
    evidence: Mapping[str, Any],
) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any] | None]]:
    """Each word a finding of a learned kind flagged, with the span unit it is a part of (None for a
    whole unit or a lost word): ``added_content_word``'s ``words`` and their ``parts``,
    ``intent_dropped``'s ``missing``. What reads the learned steps back walks findings through this."""
    for w in evidence.get("words") or []:
        if isinstance(w, Mapping):
            parts = w.get("parts")
            if parts:
                yield from ((p, w) for p in parts if isinstance(p, Mapping))
            else:
                yield w, None
    for w in evidence.get("missing") or []:
        if isinstance(w, Mapping):
            yield w, None


def learned_steps(evidence: Mapping[str, Any]) -> list[int]:
    """The learned steps recorded on a finding's words (:func:`flagged_words`), in order."""
    return [
        int(w["learned"]["steps"])
        for w, _unit in flagged_words(evidence)
        if isinstance(w.get("learned"), Mapping)
    ]


def shifted(severity: str, steps: int, signal: str) -> str:
    """``severity`` moved ``steps`` levels (clamped to low..high); a :data:`PROTECTED_SIGNALS` word at
    medium or above stays at medium or above."""
    rank = LEVELS.index(severity)
    floor = 1 if signal in PROTECTED_SIGNALS and rank >= 1 else 0
    return LEVELS[max(floor, min(len(LEVELS) - 1, rank + steps))]
