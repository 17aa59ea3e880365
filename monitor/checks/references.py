"""References: ``unresolved_reference``, ``antecedent_not_in_input``, ``not_a_query`` (issue 3, section 4).

Referring expressions are found in the latest message by the regexes of
:mod:`monitor.checks.reference_patterns` (pronouns, demonstratives, ordinals and bare definites such as
"the second one"/"the enterprise one", and elliptical follow-ups such as "why not?" or "and for
staging?"). Logged ``resolved`` arrays are empty in every real source, so an expression counts as
unresolved only when the *query* still carries it (or is the latest message unchanged), never merely
because ``resolved`` is empty.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from monitor.checks.base import Finding, SkipCheck, analyzer, message_texts
from monitor.checks.nlp import Tok, find_stem_relative
from monitor.checks.reference_patterns import (
    ACCEPTANCE,
    ANTICIPATORY_IT_RE,
    CLARIFICATION_RE,
    CLAUSE_BREAK_RE,
    CLOSING_RE,
    COMPLETED_RE,
    CONTINUATION_RE,
    CORRECTION_RE,
    ELLIPSIS_RE,
    INSERT_RE,
    META_RE,
    META_TAIL_RE,
    NEUTER,
    ORDINAL_RE,
    PERSONAL,
    PLURAL,
    POINTER_DETERMINERS,
    POSSESSIVES,
    PRONOUN_RE,
    QUESTION_START_RE,
    SAME_AS_RE,
    SAME_PAIR_RE,
    TIME_SPAN_RE,
)
from monitor.checks.registry import register
from monitor.checks.rules import Rules
from monitor.checks.sentences import split_sentences
from monitor.checks.steps import Step
from monitor.lexicon import is_noun, is_verb, only_verb, word_classes
from monitor.record import RewriteRecord
from monitor.text import match_key

__all__ = [
    "VERSION",
    "UNRESOLVED_VERSION",
    "NOT_A_QUERY_VERSION",
    "MAX_WORDS",
    "FRAGMENT_WORDS",
    "RULES_SEED",
    "UNRESOLVED_STEPS",
    "ANTECEDENT_STEPS",
    "NOT_A_QUERY_STEPS",
    "is_closing",
    "meta_tail_start",
    "is_meta_text",
    "not_a_reference",
    "dependent_fragment",
    "check_unresolved",
    "check_antecedent",
    "check_not_a_query",
    "check",
    # the patterns other families have always imported from here (now in reference_patterns)
    "ELLIPSIS_RE",
    "INSERT_RE",
    "ORDINAL_RE",
    "POINTER_DETERMINERS",
    "PRONOUN_RE",
    "QUESTION_START_RE",
    "SAME_PAIR_RE",
    "TIME_SPAN_RE",
]

VERSION = 1
# v2: no reference at all (the acronym "IT", anticipatory "it", a conjunction "that", "the last couple
# of years"), or one the query resolves itself (an "of" phrase naming something new, "A and B the same",
# a pronoun whose antecedent the query names in an earlier clause). v3: a follow-up fragment passed through
# unchanged (:func:`dependent_fragment`: "Advise", "Good decisions", "No, I meant the Lotus."). v4: a
# fragment counts only when an earlier turn holds one of its words ("Bitcoin price" after sourdough is a
# new topic); corrections and continuers ("Tell me more", "Examples?") count whatever their words.
# v5: a possessive whose antecedent the query names before it in the same clause ("How can employers
# support their staff?"), and an elliptical follow-up the query restates as a full question ("What
# about the cost of X?" made "What is the cost of X?"), are resolved. v6: an ordinal or definite is
# completed by any postmodifier after its head, not only an "of" phrase right after it ("the first episode
# of the 4th season", "the first fighter to hold the record", "the first colony established by England"),
# and "the same as X" is a comparison, no reference.
UNRESOLVED_VERSION = 6
# not_a_query v2: sentences split without breaking on abbreviations and initials. v3: nor on a quoted
# "!" or "?" inside a sentence (the quote "A horse, my kingdom for a horse!" in a question). v4: a query
# made of a message that asks nothing (thanks, a greeting, a farewell: :func:`is_closing`). v5: several
# sentences only when the latest message has fewer (a two-part question kept as two parts is a query).
# v6: a question to the assistant about what it meant (:data:`CLARIFICATION_RE`).
NOT_A_QUERY_VERSION = 6


# Longer than this many words reads as an expansion, not a search query. Source: issue 3 ("longer
# than a bound"); 60 is about 3x the longest gold rewrite in the CAsT manual rewrites.
MAX_WORDS = 60


def is_closing(latest: str) -> bool:
    """True when ``latest`` asks nothing: only thanks, greetings, farewells and response forms
    (:data:`CLOSING_RE`: "ok bye", "Thanks!", "great, thank you"), not a lone acceptance ("ok", which may
    accept an offer: :data:`ACCEPTANCE`)."""
    if CLOSING_RE.match(latest) is None:
        return False
    words = {m.group(0).lower() for m in INSERT_RE.finditer(latest)}
    return not words <= ACCEPTANCE


def meta_tail_start(query: str) -> int | None:
    """Offset in ``query`` where a trailing note, code fence or leaked speaker turn begins (see
    :data:`META_TAIL_RE`), or None when the whole text is the query."""
    m = META_TAIL_RE.search(query)
    return m.start() if m else None


def is_meta_text(query: str) -> bool:
    """True when ``query`` is a refusal, chatter or carries a meta note (see :data:`META_RE`)."""
    return bool(META_RE.search(query))


def _adds_content(record: RewriteRecord) -> bool:
    """Does the query carry a content word the latest message lacks (i.e. something was substituted)?"""
    an = analyzer()
    latest = an.analyze(record.latest)
    return any(
        t.is_content and t.key not in latest.vocab and t.lower not in latest.vocab
        for t in an.analyze(record.query).tokens
    )


def _find_in_query(phrase: str, query: str) -> tuple[int, int] | None:
    m = re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", query, re.IGNORECASE)
    return m.span() if m else None


def not_a_reference(latest: str, cls: str, text: str, start: int) -> bool:
    """Whether a match of the regexes of :mod:`monitor.checks.reference_patterns` in ``latest`` at
    ``start`` is no reference at all: the acronym "IT", an anticipatory "it", a "that" after a noun or
    adjective (a relative or conjunction), a time adverbial ("the last couple of years"), "the same" in a
    comparison with "as" ("Is it the same as X?": what is unresolved there is "it")."""
    if cls == "ordinal_or_definite":
        low = " ".join(text.lower().split())
        if low == "the same as" or (low == "the same" and SAME_AS_RE.match(latest, start + len(text))):
            return True  # "the same as X": a comparison whose standard is the "as" phrase, no reference
        return any(m.start() <= start < m.end() for m in TIME_SPAN_RE.finditer(latest))
    if cls != "pronoun":
        return False
    low = text.lower()
    if text.isupper() and len(text) > 1 and not latest.isupper():
        return True
    if low == "it":
        return any(m.start() <= start < m.end() for m in ANTICIPATORY_IT_RE.finditer(latest))
    if low == "that":
        before = re.findall(r"[\w'-]+", latest[:start])
        if before:
            prev = before[-1].lower()
            return (
                prev in ("so", "such", "now")
                or prev in word_classes()["adj"]
                or (is_noun(prev) and not is_verb(prev))
            )
    return False


def _resolved_in_query(latest: str, query: str, cls: str, text: str, span: tuple[int, int]) -> bool:
    """Whether the query itself supplies what the expression at ``span`` points to: an ordinal or
    definite completed by a postmodifier after its head (:data:`COMPLETED_RE`) or a "same" comparing two
    things the query names ("A and
    B the same"), or a pronoun whose antecedent the query states in an earlier clause ("How do I become
    an agent, and does it pay?": a noun for "it", a plural noun for "they", a name for "he"/"she")."""
    if cls == "ordinal_or_definite":
        done = COMPLETED_RE.match(query, span[1])
        if done is not None:
            # the postmodifier to the clause's end: it must name something the latest message did not
            # ("the first stage of IdC"; not "the second type of disease" for "the second type").
            tail = re.split(r"[,;?.!]", query[done.end() :], maxsplit=1)[0]
            an = analyzer()
            said = an.analyze(latest).vocab
            toks = an.analyze(tail).tokens
            if any(
                t.is_content and t.key not in said and t.lower not in said and _names_new(toks, i)
                for i, t in enumerate(toks)
            ):
                return True
        sentence_start = max((m.end() for m in re.finditer(r"[?.!]", query[: span[0]])), default=0)
        return "same" in text.lower() and SAME_PAIR_RE.search(query, sentence_start, span[1]) is not None
    if cls != "pronoun":
        return False
    if not_a_reference(query, cls, query[span[0] : span[1]], span[0]):
        return True  # the query's own "it" or "that" here is anticipatory or a conjunction
    low = text.lower()
    if low in POSSESSIVES:
        # A possessive may take its antecedent from its own clause ("How can employers support their
        # staff?"): it stands for the subject or an earlier noun there (Quirk et al. 1985, 6.28).
        start = max((m.end() for m in re.finditer(r"[?.!;]", query[: span[0]])), default=0)
        earlier = [t for t in analyzer().analyze(query[start : span[0]]).tokens if t.is_content]
        if _names_antecedent(low, earlier):
            return True
    breaks = [m.start() for m in CLAUSE_BREAK_RE.finditer(query, 0, span[0])]
    if not breaks:
        return False
    earlier = [t for t in analyzer().analyze(query[: breaks[-1]]).tokens if t.is_content]
    return _names_antecedent(low, earlier)


def _names_new(toks: Sequence[Tok], i: int) -> bool:
    """Whether ``toks[i]`` (a content token the latest message lacks) names something of its own: a name or
    a number, or a common word outside a definite noun phrase. A lower-case word after "the" or a
    demonstrative ("in *the list*", "of *that table*") points back into the conversation like the ordinal it
    completes (Halliday and Hasan 1976, ch. 2: the definite article refers back), so it completes nothing."""
    t = toks[i]
    if t.mid_cap or t.has_digit or t.text[:1].isupper():
        return True
    return not any(x.lower in POINTER_DETERMINERS for x in toks[max(0, i - 2) : i])


def _names_antecedent(low: str, earlier: list[Tok]) -> bool:
    """Whether ``earlier`` (content tokens before the pronoun ``low``) holds a candidate antecedent: a name
    for "he"/"she", a plural noun for "they", a noun or a name for "it"."""
    if low in PERSONAL:
        return any(t.mid_cap for t in earlier)
    if low in PLURAL:
        return any(is_noun(t.key) and t.lower != t.key for t in earlier)
    if low in NEUTER:
        return any(is_noun(t.key) or t.mid_cap for t in earlier)
    return False


FRAGMENT_WORDS = 2
"""A follow-up of at most this many content words, with no question form, is a fragment: a noun phrase
or a lone verb that only the conversation completes ("Advise", "Good decisions", "Clusters")."""


def dependent_fragment(record: RewriteRecord, rules: Rules) -> tuple[str, list[str]] | None:
    """What kind of follow-up ``record.latest`` is, if only the conversation completes it, with the words
    of it an earlier turn holds: ``("correction", [])`` (:data:`CORRECTION_RE`), ``("continuation", [])``
    (:data:`CONTINUATION_RE`, or a lone verb: "Advise"), ``("fragment", words)`` for a message with no
    question mark or opener, not a closing, of at most :data:`FRAGMENT_WORDS` content words, one of which
    (or an inflection of it) an earlier message holds ("Good decisions" after answers about decisions).
    None otherwise: a fragment none of whose words the conversation holds is a new topic ("Bitcoin
    price"), complete as it stands. Halliday and Hasan (*Cohesion in English*, 1976, ch. 4): an
    elliptical item presupposes the structure the earlier turns supply."""
    latest = record.latest
    if CORRECTION_RE.search(latest):
        return "correction", []
    if CONTINUATION_RE.fullmatch(latest):
        return "continuation", []
    if "?" in latest or QUESTION_START_RE.search(latest) or is_closing(latest):
        return None
    content = [
        t for t in analyzer().analyze(latest).tokens if t.is_content and t.key not in rules.filler_words
    ]
    if not 0 < len(content) <= FRAGMENT_WORDS:
        return None
    if len(content) == 1 and only_verb(content[0].key):
        return "continuation", []
    ctx = record.context
    if ctx is None or ctx.messages is None:
        return None  # which words the conversation holds cannot be told
    earlier = [analyzer().analyze(m.content) for m in ctx.messages]
    held = [
        t.text
        for t in content
        if any(t.key in a.vocab or t.lower in a.vocab for a in earlier)
        or find_stem_relative(t.lower, earlier) is not None
    ]
    return ("fragment", held) if held else None


RULES_SEED = (
    "background chapter on the rewrite rules (seeds 003): a standalone query resolves every reference"
)
UNRESOLVED_STEPS = (
    Step(
        "query_unchanged",
        "high",
        RULES_SEED,
        "the latest message has a referring expression and the query is that message unchanged",
    ),
    Step(
        "ordinal_kept",
        "high",
        "Quirk et al. 1985, 5.33 and 6.55 (ordinals and substitute 'one'); " + RULES_SEED,
        "the query keeps an ordinal or bare definite of the latest message ('the second one', 'the latter')",
    ),
    Step(
        "pronoun_kept",
        "medium",
        "Quirk et al. 1985, 6.1-6.17 (personal and demonstrative pronouns); " + RULES_SEED,
        "the query keeps a pronoun or demonstrative of the latest message and adds nothing in its place",
    ),
    Step(
        "ellipsis_kept",
        "medium",
        "Halliday and Hasan 1976, ch. 4 (ellipsis); " + RULES_SEED,
        "an elliptical follow-up ('what about ...?', 'why not?') whose query adds nothing",
    ),
    Step(
        "dependent_fragment",
        "medium",
        "Halliday and Hasan 1976, ch. 4; Schegloff 1982 (continuers); Schegloff et al. 1977 (repair)",
        "a correction, continuer or fragment repeating an earlier word, passed through unchanged",
    ),
)
ANTECEDENT_STEPS = (
    Step(
        "antecedent_unreceived",
        "high",
        "the structured rewrite record (seeds 003): a resolved antecedent comes from the input",
        "a logged resolved antecedent is in no message the rewriter received",
    ),
    Step(
        "antecedent_elsewhere",
        "medium",
        "the structured rewrite record (seeds 003): resolved[].turn names where the antecedent is",
        "a logged resolved antecedent is not in the turn its entry names",
    ),
)
NOT_A_QUERY_STEPS = (
    Step(
        "empty",
        "high",
        "the structured rewrite record (seeds 003): a rewrite is a query",
        "the query is empty",
    ),
    Step(
        "meta_text",
        "high",
        "refusal and chatter forms of LLM rewriters (shared/data/README.md, caveat 4)",
        "a refusal, chatter or meta note instead of a query",
    ),
    Step(
        "extra_sentences",
        "medium",
        "a search query is one request (seeds 003)",
        "more sentences of three or more words than the latest message, and at least two",
    ),
    Step("too_long", "medium", "about 3x the longest CAsT manual rewrite", f"longer than {MAX_WORDS} words"),
    Step(
        "clarification_request",
        "medium",
        "Purver 2004 (clarification requests)",
        "a question to the assistant about what it meant ('what do you mean by ...?')",
    ),
    Step(
        "closing_rewritten",
        "medium",
        "Biber et al. 1999, 14.3 (inserts)",
        "words the latest message lacks, when that message asks nothing (thanks, a farewell)",
    ),
    Step(
        "declarative_answer",
        "medium",
        "Quirk et al. 1985, 11.1 (declarative vs interrogative)",
        "a declarative sentence of 8+ words ending in a full stop, where the user asked a question",
    ),
)


@register(
    "unresolved_reference",
    family="references",
    version=UNRESOLVED_VERSION,
    kinds=("unresolved_reference",),
    steps=UNRESOLVED_STEPS,
    summary=(
        "a pronoun, ordinal or ellipsis survived into the query, or a follow-up only the "
        "conversation completes passed through unchanged"
    ),
)
def check_unresolved(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """A referring expression of the latest message that the query still needs the conversation for.

    Fires when the query equals the latest message (high), keeps an ordinal/bare definite (high), or
    keeps a pronoun / an elliptical form while adding no content word the latest lacks (medium); a
    follow-up that only the conversation completes (:func:`dependent_fragment`: a correction, a
    continuer, a fragment repeating an earlier word) passed through unchanged is medium (class
    ``fragment``, its ``form`` in the word's evidence); matches
    that are no reference (:func:`not_a_reference`) or that the query resolves itself
    (:func:`_resolved_in_query`) are left out.
    Evidence: ``words`` (spans in the query), ``latest_spans`` (spans in the latest message).
    """
    latest, query = record.latest, record.query
    if not query.strip():
        return []  # an empty query is not_a_query's finding
    unchanged = match_key(query, punctuation=True) == match_key(latest, punctuation=True)
    exprs: list[tuple[str, str, int, int]] = []  # (class, text, start, end) in latest
    if ELLIPSIS_RE.search(latest):
        exprs.append(("ellipsis", latest.strip(), latest.find(latest.strip()), len(latest.rstrip())))
    for m in ORDINAL_RE.finditer(latest):
        if not not_a_reference(latest, "ordinal_or_definite", m.group(0), m.start()):
            exprs.append(("ordinal_or_definite", m.group(0), *m.span()))
    for m in PRONOUN_RE.finditer(latest):
        if not any(s <= m.start() < e for _, _, s, e in exprs) and not not_a_reference(
            latest, "pronoun", m.group(0), m.start()
        ):
            exprs.append(("pronoun", m.group(0), *m.span()))
    dependent = None
    if not exprs and unchanged and _earlier_user_turn(record):
        dependent = dependent_fragment(record, rules)
    if dependent is not None:
        stripped = latest.strip()
        exprs.append(("fragment", stripped, latest.find(stripped), len(latest.rstrip())))
    if not exprs:
        return []
    adds = None if unchanged else _adds_content(record)
    words: list[dict[str, Any]] = []
    latest_spans: list[dict[str, Any]] = []
    severity, step = "medium", ""
    for cls, text, s, e in exprs:
        if cls == "fragment":
            fired, sev, how = True, "medium", "dependent_fragment"
        elif unchanged:
            fired, sev, how = True, "high", "query_unchanged"
        elif cls == "ordinal_or_definite":
            fired, sev, how = _find_in_query(text, query) is not None, "high", "ordinal_kept"
        elif cls == "ellipsis":
            # restated as a full question, the follow-up stands alone even when it adds no word
            fired, sev, how = not adds and ELLIPSIS_RE.search(query) is not None, "medium", "ellipsis_kept"
        else:
            fired, sev, how = (not adds) and _find_in_query(text, query) is not None, "medium", "pronoun_kept"
        if not fired:
            continue
        whole = (len(query) - len(query.lstrip()), len(query.rstrip()))
        span = whole if cls in ("ellipsis", "fragment") else _find_in_query(text, query)
        if span is None or _resolved_in_query(latest, query, cls, text, span):
            continue
        if any(w["start"] <= span[0] < w["end"] for w in words):
            continue
        words.append({"text": query[span[0] : span[1]], "start": span[0], "end": span[1], "class": cls})
        latest_spans.append({"message_index": "latest", "start": s, "end": e, "text": text})
        if not step or (sev == "high" and severity != "high"):
            severity, step = sev, how
    if not words:
        return []
    what = ", ".join(f"'{w['text']}'" for w in words)
    why = "the query is the latest message unchanged" if unchanged else "the query still contains it"
    if dependent is not None:
        form, held = dependent
        words[0]["form"] = form
        what_it = {"correction": "what it corrects", "continuation": "what it goes on about"}.get(
            form, "what it asks"
        )
        reason = f"the follow-up {what} is the query unchanged: only the conversation says {what_it}"
        if held:
            reason += f" (it repeats {', '.join(repr(w) for w in held)} from an earlier turn)"
    else:
        reason = f"referring expression {what} is unresolved: {why}"
    return [
        Finding(
            kind="unresolved_reference",
            severity=severity,
            evidence={
                "words": words,
                "latest_spans": latest_spans,
                "query_unchanged": unchanged,
                "resolved_logged": len(record.resolved),
            },
            reason=reason,
            check_id="unresolved_reference",
            check_version=UNRESOLVED_VERSION,
            step=step,
        )
    ]


def _earlier_user_turn(record: RewriteRecord) -> bool:
    """Whether the conversation had a user turn before the latest: logged in the message list, or, with
    no list logged, implied by a turn number above 1."""
    ctx = record.context
    if ctx is not None and ctx.messages is not None:
        return any(m.role == "user" for m in ctx.messages)
    return record.turn > 1


@register(
    "antecedent_not_in_input",
    family="references",
    version=VERSION,
    kinds=("antecedent_not_in_input",),
    steps=ANTECEDENT_STEPS,
    summary="a logged resolved antecedent is in no message the rewriter received",
)
def check_antecedent(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """Each ``resolved[].antecedent`` must occur (case-insensitive) in some received message (high when
    in none), and in the message its ``turn`` names when it names one (medium). ``turn`` is read as the
    1-based position in ``context.messages``. Skips when no resolution or no message list was logged."""
    if not record.resolved:
        raise SkipCheck("no resolved entries logged")
    texts = message_texts(record)
    lowered = [t.lower() for t in texts]
    out: list[Finding] = []
    for r in record.resolved:
        ante = r.antecedent.strip().lower()
        where = [i for i, t in enumerate(lowered) if ante and ante in t]
        if ante and ante in record.latest.lower():
            where.append(-1)
        span = _find_in_query(r.antecedent, record.query)
        words = [{"text": record.query[span[0] : span[1]], "start": span[0], "end": span[1]}] if span else []
        if not where:
            out.append(
                Finding(
                    kind="antecedent_not_in_input",
                    severity="high",
                    evidence={
                        "surface": r.surface,
                        "antecedent": r.antecedent,
                        "turn": r.turn,
                        "words": words,
                        "n_messages": len(texts),
                    },
                    reason=f"antecedent '{r.antecedent}' of '{r.surface}' is in no message "
                    "the rewriter received",
                    check_id="antecedent_not_in_input",
                    check_version=VERSION,
                    step="antecedent_unreceived",
                )
            )
        elif r.turn is not None and 1 <= r.turn <= len(texts) and (r.turn - 1) not in where:
            found = [i for i in where if i >= 0]
            out.append(
                Finding(
                    kind="antecedent_not_in_input",
                    severity="medium",
                    evidence={
                        "surface": r.surface,
                        "antecedent": r.antecedent,
                        "turn": r.turn,
                        "words": words,
                        "found_in": [
                            {
                                "message_index": i,
                                "start": lowered[i].find(ante),
                                "end": lowered[i].find(ante) + len(ante),
                            }
                            for i in found
                        ],
                    },
                    reason=f"antecedent '{r.antecedent}' is not in turn {r.turn} that the resolution names",
                    check_id="antecedent_not_in_input",
                    check_version=VERSION,
                    step="antecedent_elsewhere",
                )
            )
    return out


def _long_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (:func:`split_sentences`) of three or more words: shorter ones ("What?",
    "Thanks.") are interjections or fragments, not a second statement."""
    return [s.text for s in split_sentences(text) if len(s.text.split()) >= 3]


@register(
    "not_a_query",
    family="references",
    version=NOT_A_QUERY_VERSION,
    kinds=("not_a_query",),
    steps=NOT_A_QUERY_STEPS,
    summary="the query is empty, meta text, chatter or an answer instead of a search query",
)
def check_not_a_query(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """The query is empty (high), meta text/chatter (high), more sentences than the latest message (and
    at least two) or longer than :data:`MAX_WORDS` words (medium), a question to the assistant about
    what it meant (:data:`CLARIFICATION_RE`, medium), a query with words the latest
    message lacks when that message asks nothing (:func:`is_closing`: "ok bye" made "User farewell or
    conversation ending"; medium), or a declarative sentence of 8+ words ending in a full stop when the
    user asked a question (medium: it reads as an answer)."""
    q = record.query
    signals: list[str] = []
    steps: list[str] = []  # the step of each signal, in the same order
    sev = "medium"
    ev: dict[str, Any] = {"n_words": len(q.split())}
    if not q.strip():
        signals.append("empty query")
        steps.append("empty")
        sev = "high"
    else:
        m = META_RE.search(q)
        if m:
            signals.append(f"meta text or chatter ('{m.group(0).strip()}')")
            steps.append("meta_text")
            ev["words"] = [{"text": m.group(0), "start": m.start(), "end": m.end()}]
            sev = "high"
        sentences = _long_sentences(q)
        ev["n_sentences"] = len(sentences)
        # A user who asks in two sentences ("What is the origin of funny cars? Why do they call them
        # that?") gets a two-sentence query from a faithful rewriter; only sentences beyond the user's
        # own are the rewriter's chatter or an answer (the labelling rule for two-part turns and turns
        # kept as they are, ../shared/data/README.md, MTRAG conventions).
        if len(sentences) >= 2 and len(sentences) > len(_long_sentences(record.latest)):
            signals.append(f"{len(sentences)} sentences")
            steps.append("extra_sentences")
        if len(q.split()) > MAX_WORDS:
            signals.append(f"{len(q.split())} words (> {MAX_WORDS})")
            steps.append("too_long")
        clarification = CLARIFICATION_RE.search(q)
        if clarification and not CLARIFICATION_RE.search(record.latest):
            # the user's own "what do you mean by ...?" kept is the user's question, not the rewriter's
            signals.append(f"a question to the assistant about its own words ('{clarification.group(0)}')")
            steps.append("clarification_request")
        if is_closing(record.latest) and _adds_content(record):
            signals.append("the user's message asks nothing (thanks, a greeting or a farewell)")
            steps.append("closing_rewritten")
        if (
            not signals
            and q.rstrip().endswith(".")
            and len(q.split()) >= 8
            and not QUESTION_START_RE.search(q)
            and "?" in record.latest
        ):
            signals.append("a declarative sentence where the user asked a question")
            steps.append("declarative_answer")
    if not signals:
        return []
    ev["signals"] = signals
    step = steps[0]  # the high signals (empty, meta text) are looked for first: the first set the grade
    return [
        Finding(
            kind="not_a_query",
            severity=sev,
            evidence=ev,
            reason="the rewrite is not a search query: " + "; ".join(signals),
            check_id="not_a_query",
            check_version=NOT_A_QUERY_VERSION,
            step=step,
        )
    ]


def check(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """All reference findings of ``record`` (skipped sub-checks contribute nothing)."""
    from monitor.checks.registry import run_family

    return run_family(record, rules, "references")
