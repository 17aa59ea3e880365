"""``intent_dropped``: what the user asks for in this turn must survive into the query (issue 3, §5).

The intent words are the content tokens of the latest message's request sentences other than referring
expressions (ordinals such as "second" in "the second one"), discourse fillers (rules/neutral.yaml
``fillers``) and neutral words. A sentence that is a reaction ("Sounds yummy!", "Oh wow.", "Thanks")
and no question or request is left out when another sentence remains (:func:`request_spans`). An intent
word is *kept* when the query has it by key or surface, by an alias group both texts hit, or as an
inflection/derivation (:func:`monitor.checks.nlp.shared_stem`).

Severity: high when at least 2 intent words and at least half of them are missing (the question
changed); low when every missing word is a framing word; medium otherwise.
"""

from __future__ import annotations

from typing import Any

from monitor.checks.base import Finding, alias_index, analyzer
from monitor.checks.nlp import alias_matches, shared_stem
from monitor.checks.references import ORDINAL_RE, QUESTION_START_RE
from monitor.checks.registry import register
from monitor.checks.rules import Rules
from monitor.checks.sentences import split_sentences
from monitor.record import RewriteRecord

VERSION = 3  # v3: reactions in the latest message are not intent (request sentences only)

INTERJECTIONS = frozenset(
    {
        "oh",
        "wow",
        "ok",
        "okay",
        "thanks",
        "thank",
        "great",
        "cool",
        "nice",
        "sounds",
        "interesting",
        "sure",
        "hmm",
        "ah",
        "awesome",
        "perfect",
        "yeah",
        "alright",
        "gotcha",
        "hi",
        "hello",
    }
)
"""First words that mark a reaction or greeting, not a request. Source: the interjections and response
forms of English conversation in Biber et al., *Longman Grammar of Spoken and Written English* (1999),
§14.3 ("inserts"); not taken from any data file. "No" and "yes" are left out: they open corrections
("No, I meant drinking alcohol."), which carry the intent."""


def request_spans(latest: str) -> list[tuple[int, int]]:
    """Character spans of the request sentences of ``latest``: every sentence that is not a reaction.

    A reaction asks nothing (no ``?`` and no question or imperative start, ``QUESTION_START_RE``) and is
    exclamatory, at most three words, or starts with one of :data:`INTERJECTIONS`. When every sentence is
    a reaction the whole message is returned (a follow-up such as "ok, the second one!" still asks).
    """
    sentences = split_sentences(latest)
    keep = []
    for s in sentences:
        words = s.text.split()
        asks = "?" in s.text or bool(QUESTION_START_RE.search(s.text))
        first = words[0].strip(",.!?").lower() if words else ""
        reaction = s.text.endswith("!") or len(words) <= 3 or first in INTERJECTIONS
        if asks or not reaction:
            keep.append((s.start, s.end))
    return keep or [(0, len(latest))]


@register("intent_dropped", version=VERSION, kinds=("intent_dropped",))
def check(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """One finding listing the latest message's intent words missing from the query.

    Evidence: ``missing`` [{text, lemma, start, end}] with spans in the LATEST message
    (``message_index: "latest"``), ``n_intent_words``, ``n_missing``. Never skips: it needs only the
    rewrite event. An empty query is left to ``not_a_query``.
    """
    if not record.query.strip():
        return []
    an = analyzer()
    latest = an.analyze(record.latest)
    query = an.analyze(record.query)
    index = alias_index(rules)
    q_groups = {g for g, _, _ in alias_matches(query, index)}
    aliased_tokens = {i for g, a, b in alias_matches(latest, index) if g in q_groups for i in range(a, b + 1)}
    referring = [m.span() for m in ORDINAL_RE.finditer(latest.text)]
    requests = request_spans(latest.text)
    skip = rules.filler_words | rules.neutral_words
    q_forms = [f for t in query.tokens if t.is_content for f in {t.key, t.lower}]
    intent: list[int] = []
    missing: list[dict[str, Any]] = []
    for i, t in enumerate(latest.tokens):
        if not t.is_content or t.key in skip or t.lower in skip:
            continue
        if any(s <= t.start < e for s, e in referring):
            continue
        if not any(s <= t.start < e for s, e in requests):
            continue
        intent.append(i)
        if t.key in query.vocab or t.lower in query.vocab or i in aliased_tokens:
            continue
        if any(shared_stem(form, qf) for form in {t.key, t.lower} for qf in q_forms if form[:2] == qf[:2]):
            continue
        missing.append(
            {
                "text": t.text,
                "lemma": t.key,
                "message_index": "latest",
                "start": t.start,
                "end": t.end,
                "framing": t.key in rules.framing_words,
            }
        )
    if not missing:
        return []
    n, m = len(intent), len(missing)
    if m >= 2 and 2 * m >= n:
        sev = "high"
    elif all(w["framing"] for w in missing):
        sev = "low"
    else:
        sev = "medium"
    words = ", ".join(f"'{w['text']}'" for w in missing)
    return [
        Finding(
            kind="intent_dropped",
            severity=sev,
            evidence={"missing": missing, "n_intent_words": n, "n_missing": m, "words": []},
            reason=f"the query lacks {m} of the {n} words the user asked with: {words}",
            check_id="intent_dropped",
            check_version=VERSION,
        )
    ]
