"""``intent_dropped``: what the user asks for in this turn must survive into the query (issue 3, §5).

The intent words are the content tokens of the latest message's request sentences other than referring
expressions (ordinals such as "second" in "the second one"), discourse fillers (rules/neutral.yaml
``fillers``), the words of request frames and discourse markers (:data:`FRAME_RE`: "can you clarify",
"are you able to", "speaking of") and neutral words. Only request clauses count
(:func:`request_spans`): when the message asks a question, a statement beside it is an aside ("I just
check my credit score via credit karma.") unless it corrects the request or describes the user; a
reaction ("Sounds yummy!", "Oh wow.", "Thanks") is left out when another clause remains. An intent word
is *kept* when the query has it by key or surface, by an alias group both texts hit, as an
inflection/derivation (:func:`monitor.checks.nlp.shared_stem`), as a synonym (a shared WordNet synset,
:func:`monitor.checks.nlp.synonym_in`: "famous" kept as "notable"; a verb with its particle, "looking
at" kept as "consider", :func:`_verb_forms`), as a derivation WordNet links ("die" as "death",
:func:`monitor.checks.nlp.derivation_in`), as an abbreviation the query spells
out (:func:`spelled_out`: "SAD", "NY", "msg", "vs"), or as a typing slip the query spells right
(:func:`misspelling_of`: "clpud" for "cloud").

The head noun of a definite, demonstrative or possessive noun phrase ("the country", "this article",
"the band's history") is the user's pointer to something in the conversation: a rewrite is expected to
replace it with what it points to. When the query names something the latest message does not (a
capitalised word or a number), such a missing head is *resolved*, not dropped: it does not count toward
the severity, and a finding whose missing words are all resolved or framing words is low, with a hint
to check the antecedent (a wrong antecedent looks exactly like this, so it is never suppressed).

Severity: high when at least 2 intent words and at least half of them are missing (the question
changed); low when every missing word is a framing word or a resolved pointer, or when the one word lost
from a request of two or more is no noun in WordNet, no name and no number (a verb, adjective or adverb:
the request's nouns, what it asks about, all survived, so the wording changed: "how do I protect my
account?" -> "how do I safeguard my account?"; "help" is a noun too, so "does it help?" is not one),
unless it qualifies the noun after it (:func:`_reworded`); medium otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from monitor.checks.base import Finding, alias_index, analyzer, message_texts
from monitor.checks.learned import rewriter_key
from monitor.checks.nlp import (
    Analysis,
    Tok,
    alias_matches,
    attribute_in,
    derivation_in,
    one_edit,
    premodifier,
    shared_stem,
    synonym_in,
)
from monitor.checks.numbers import number_values, value_at
from monitor.checks.references import ORDINAL_RE, POINTER_DETERMINERS
from monitor.checks.registry import register
from monitor.checks.request_clauses import rejected_spans, request_spans
from monitor.checks.rules import Rules
from monitor.checks.sentences import AUXILIARIES, BARE_VERB_AUXILIARIES
from monitor.checks.steps import Step
from monitor.lexicon import base_forms, is_noun, is_verb, unknown_word, word_classes
from monitor.record import RewriteRecord

# v3: reactions in the latest message are not intent (request sentences only). v4: request frames and
# discourse markers are not intent; a pointer noun phrase replaced by a name is resolved (low, with a
# hint); an abbreviation the query spells out and a WordNet synonym are kept. v5: one lost verb,
# adjective or adverb of a longer request is low. v6: a statement beside a question is an aside
# (corrections and the user described aside), clauses end at a stop before a lower-case word, and a
# typing slip the query spells right is kept. v7: an adjective kept as the noun of its quality ("how
# big" / "what size", WordNet's attribute link); a participle after a pointer's head ends the phrase ("the
# man known for"); the main verb of an inverted question is read as a verb ("how did her husband help").
# v8: the reviewers' verdicts on a lost word for this rewriter (monitor.checks.learned): a dismissed word
# counts as framing, a confirmed drop keeps the finding at medium at least. v9: a verb before a particle
# is kept as a synonym of its multi-word verb ("looking at" as "consider", WordNet's ``look_at``). v10:
# synonymy among lower-case WordNet lemmas only (a capitalised lemma is a name: scripts/build_wordnet.py).
# v11: one lost word whose place the query fills with function words only was low; v12 withdraws it: the
# function words include the main verbs "have" and "be", so "which countries ban guns" asked as "which
# countries have guns" read as a rewording. v13: a discourse marker or reaction that opens a clause
# ("Changing the subject a little bit,", "In other words,", "I see,", "this sounds complicated,") is no
# intent; a latest word is kept by a regular base form ("taxes" for the query's "tax"), by its value
# ("3" as "three"), and by a spelling fix whose first letter differs ("talso" as "also"); the rejected half
# of a correction ("No, not information about its acquisition.") and the noun of a metalinguistic frame
# ("the term X") are no intent, nor is an echo question opened by an interjection beside another question.
# v14: a latest word is kept by a WordNet derivational link ("die" as "death").
VERSION = 14


FRAME_RE = re.compile(
    r"\b(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(?:clarify|explain|help|show|share|give)\b"
    r"|\b(?:are|were)\s+you\s+able\s+to\b"
    r"|\bdo\s+you\s+(?:think|know|suppose)\b"
    r"|\bi\s*(?:am|'m|’m|was)\s+(?:just\s+)?wondering\b"
    r"|\bi\s+(?:want|would\s+like|'d\s+like|’d\s+like)\s+to\s+(?:understand|know|learn|ask)\b"
    r"|\bexcuse\s+me\b|\bspeaking\s+(?:about|of)\b|\bapart\s+from\b|\bby\s+the\s+way\b"
    r"|\blet(?:'s|’s|\s+us)\s+talk\s+about\b|\b(?:maybe|perhaps|possibly)\b"
    r"|\bthe\s+(?:term|word|phrase|expression|acronym|abbreviation|concept\s+of)\b",
    re.IGNORECASE,
)
"""Words that frame a request or mark discourse rather than state what is asked; their content words are
not intent. Sources: the query-preparatory request strategies of the Cross-Cultural Speech Act
Realization Project (Blum-Kulka, House and Kasper, *Cross-Cultural Pragmatics: Requests and Apologies*,
1989: "can you", "are you able to", "do you think", "I was wondering"); the discourse markers of topic
shift of Fraser, "What are discourse markers?" (*Journal of Pragmatics* 31, 1999: "speaking of", "by the
way", "apart from"); the politeness formula "excuse me" (Biber et al. 1999, 14.3); hedges of degree of
truth ("maybe", "perhaps", "possibly": Quirk et al. 1985, ch. 8, content disjuncts); the metalinguistic
nouns that name the expression after them ("explain the term financial fiduciary": Quirk et al. 1985,
17.69, appositives of naming). Not taken from any data file."""

MARKER_WORDS = (
    r"by\s+the\s+way|btw|incidentally|speaking\s+of|on\s+(?:an|another|a\s+(?:different|side|related|separate))\s+note"
    r"|\w+ing\s+(?:the\s+)?(?:subject|topic|topics|gears)|to\s+change\s+the\s+(?:subject|topic)|moving\s+on"
    r"|one\s+(?:more|last|other)\s+(?:thing|question)|(?:a\s+)?(?:quick|new|different|another|next|last|side)"
    r"\s+question|another\s+thing|in\s+other\s+words|that\s+is\s+to\s+say|in\s+(?:that|any)\s+case"
    r"|i\s+see|i\s+understand|got\s+it|i\s+get\s+it|(?:this|that|it)\s+(?:sounds|seems|looks)\b"
)
DISCOURSE_MARKER_RE = re.compile(
    r"(?:^|(?<=[.?!;:])\s*|\s(?=(?:and|but|so)\s))\s*(?:(?:ok(?:ay)?|alright|well|so|and|but|also|now|oh)\W+)*"
    rf"(?P<marker>(?:{MARKER_WORDS})(?:[^,:;.?!\n]{{0,40}}?[,:;]|\b))",
    re.IGNORECASE,
)
"""A discourse marker or reaction that opens a clause, up to the comma or colon that sets it off (at
most a few words on): a topic-change marker ("By the way,", "Changing the subject a little bit,", "One
more thing:", "Quick question:"), a reformulation or inference marker ("In other words,", "In that
case,"), a backchannel ("I see,", "Got it,") or an evaluative reaction ("this sounds complicated,").
It says how the request relates to the talk, not what is asked, so its words are no intent. Sources:
Fraser, "What are discourse markers?" (Journal of Pragmatics 31, 1999: topic-change, elaborative and
inferential markers); Schiffrin, *Discourse Markers* (1987); Biber et al. (1999), 14.3 (inserts). Not
taken from any data file."""


def pointer_heads(tokens: Sequence[Tok]) -> set[int]:
    """Indexes of the head nouns of pointer noun phrases in ``tokens`` (see :data:`POINTER_DETERMINERS`).

    Without a parser the phrase is read off the token run: after the determiner, number words and
    ordinals are skipped, then the run of content tokens up to the first other token is the phrase and
    its last token the head ("the maximum retention period" -> "period"); "of" and another content run
    continue it ("the second kind of graph" -> "kind", "graph"). After an auxiliary ("did the band go",
    "how did the game come about") a verb ends the phrase: the head is the noun before it (word classes
    from WordNet, :func:`monitor.lexicon.word_classes`)."""
    heads: set[int] = set()
    for i, t in enumerate(tokens):
        if t.lower not in POINTER_DETERMINERS:
            continue
        after_aux = i > 0 and any(x.lower in BARE_VERB_AUXILIARIES for x in tokens[max(0, i - 3) : i])
        j = i + 1
        while j < len(tokens) and (
            tokens[j].lower in NUMBER_WORDS or ORDINAL_WORD_RE.fullmatch(tokens[j].lower)
        ):
            j += 1
        while j < len(tokens):
            last = None
            while j < len(tokens) and tokens[j].is_content:
                last = j
                j += 1
            if last is None:
                break
            if (
                last > i + 1
                and tokens[last - 1].is_content
                and is_noun(tokens[last - 1].key)
                and ((after_aux and is_verb(tokens[last].key)) or _participle(tokens[last]))
            ):
                last -= 1
            heads.add(last)
            if j + 1 < len(tokens) and tokens[j].lower == "of" and tokens[j + 1].is_content:
                j += 1
                continue
            break
    return heads


def _participle(t: Tok) -> bool:
    """Whether ``t`` ends a noun phrase as a participle after its head ("the man known for", "the city
    founded in"): its surface is an inflected form (not the lemma) that WordNet knows as an adjective
    or verb and not as a noun."""
    wc = word_classes()
    return t.lower != t.key and t.lower not in wc["noun"] and (t.lower in wc["adj"] or is_verb(t.key))


NUMBER_WORDS = frozenset(
    {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "both", "other", "same", "whole"}
)
ORDINAL_WORD_RE = re.compile(
    r"first|second|third|fourth|fifth|sixth|last|next|former|latter|previous|\d+(?:st|nd|rd|th)"
)


def spelled_out(word: str, query: Analysis) -> bool:
    """Whether ``word`` (a token of the latest message) is an abbreviation ``query`` spells out.

    Initials: 2-5 letters, at least two of them capitals ("NY", "SAD", "VMs" with a plural s), matching the
    first letters of consecutive query words ("New York", "virtual machines"). Contraction: a
    lower-case word of 2-4 letters whose letters appear in order in one longer query word with the same
    first letter ("msg" in "messages", "vs" in "versus"); the usual ways English abbreviates (Quirk et al.
    1985, App. I: acronyms, clippings and contractions)."""
    core = word[:-1] if len(word) > 2 and word.endswith("s") and word[:-1].isupper() else word
    words = [t.lower for t in query.tokens if t.text.isalpha()]
    if 2 <= len(core) <= 5 and core.isalpha() and sum(c.isupper() for c in core) >= 2:
        target = core.lower()
        n = len(target)
        return any(all(words[i + k][0] == target[k] for k in range(n)) for i in range(len(words) - n + 1))
    if 2 <= len(word) <= 4 and word.isalpha() and word.islower():
        return any(len(w) > len(word) and w[0] == word[0] and _in_order(word, w) for w in words)
    return False


def misspelling_of(word: Tok, query: Analysis) -> str | None:
    """The query word that ``word`` (a latest-message token) misspells, else ``None``: ``word`` is
    alphabetic and unknown (:func:`monitor.lexicon.unknown_word`), and one substitution, insertion or
    deletion from a query word of four or more letters ("clpud" -> "cloud"), of the same first
    letter unless the slip is a fifth or later letter's worth ("talso" -> "also"): Damerau's
    single-error classes (*CACM* 7, 1964), which cover most typing slips. A rewrite that fixes the
    spelling kept the word."""
    lower = word.lower
    if not lower.isalpha() or len(lower) < 4 or not unknown_word(lower, word.key):
        return None
    for t in query.tokens:
        if (
            t.lower.isalpha()
            and len(t.lower) >= 4
            and (t.lower[0] == lower[0] or len(lower) >= 5)
            and abs(len(t.lower) - len(lower)) <= 1
            and one_edit(lower, t.lower)
        ):
            return t.text
    return None


def _in_order(short: str, long: str) -> bool:
    it = iter(long)
    return all(c in it for c in short)


VERB_CONTEXT = AUXILIARIES | frozenset("i you he she it we they to".split())
"""Words after which a word is a verb: auxiliaries and modals, subject pronouns, infinitive "to"."""


def _reworded(latest: Analysis, word: dict[str, Any]) -> bool:
    """Whether the lost latest-message ``word`` (a ``missing`` entry) reads as a rewording rather than
    a lost part of the question: WordNet knows it as a verb, adjective or adverb and as no noun (or
    as a verb, after a subject pronoun or an auxiliary: "does it offer"), it is no name or number, and
    it does not qualify the noun right after it ("previous legislation" is a dropped qualifier). A
    word put in its place ("how big" -> "how old") is added_content_word's to report; a word WordNet
    does not know ("clpud") may be a noun and is not judged here."""
    i, t = next((i, t) for i, t in enumerate(latest.tokens) if t.start == word["start"])
    wc = word_classes()
    forms = (t.key, t.lower)
    before = next((x.lower for x in reversed(latest.tokens[:i]) if x.lower.strip()), "")
    # After a subject pronoun or an auxiliary a word that is a noun too is used as a verb ("does it
    # offer", "we are talking", "to check"): it is judged as one (Quirk et al. 1985, 3.21 and 10.2).
    as_verb = (before in VERB_CONTEXT or _after_inverted_subject(latest.tokens, i)) and any(
        f in wc["verb"] for f in forms
    )
    if t.mid_cap or t.has_digit or (not as_verb and any(f in wc["noun"] for f in forms)):
        return False
    if not any(f in wc[pos] for f in forms for pos in ("verb", "adj", "adv")):
        return False
    after = latest.tokens[i + 1] if i + 1 < len(latest.tokens) else None
    attributive = after is not None and after.is_content and is_noun(after.key)
    return not (attributive and any(f in wc["adj"] for f in forms))


def _after_inverted_subject(tokens: Sequence[Tok], i: int) -> bool:
    """Whether token ``i`` is the main verb of a question inverted around a bare-verb auxiliary ("how did
    her husband help?", "what did critics think of it?"): a bare-verb auxiliary opens its clause, a
    subject of at most four words (nouns, adjectives and function words) lies between, and no content
    word follows ``i`` before the clause ends or a preposition (so "did the company release notes" and
    "can you clarify the breed" are not read as one). Quirk et al. 1985, 11.5 (subject-operator
    inversion)."""
    j = i - 1
    while j >= 0 and not tokens[j].is_punct:
        if tokens[j].lower in BARE_VERB_AUXILIARIES:
            break
        j -= 1
    if j < 0 or tokens[j].is_punct or j >= i - 1:
        return False
    # What lies between is a subject: at most four words, no coordinator or infinitive, its content
    # words nouns or adjectives ("can you clarify the breed": "clarify" is the verb, "breed" its object).
    subject = tokens[j + 1 : i]
    wc = word_classes()
    if len(subject) > 4 or any(t.lower in ("to", "and", "or", "but") for t in subject):
        return False
    if any(t.is_content and not (is_noun(t.key) or t.lower in wc["adj"]) for t in subject):
        return False
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    return after is None or not after.is_content


PARTICLES = frozenset(
    {
        "about",
        "after",
        "around",
        "at",
        "away",
        "back",
        "down",
        "for",
        "in",
        "into",
        "off",
        "on",
        "out",
        "over",
        "through",
        "to",
        "up",
        "with",
    }
)
"""The adverb particles and prepositions of English phrasal and prepositional verbs ("look at", "find
out", "look into"): Quirk et al., *A Comprehensive Grammar of the English Language* (1985), 16.2-16.6.
Not taken from any data file."""


def _verb_forms(tokens: Sequence[Tok], i: int) -> tuple[str, ...]:
    """The forms under which ``tokens[i]`` may have a WordNet synonym: its key and surface and, before a
    particle (:data:`PARTICLES`), the multi-word verb WordNet lists ("looking at" -> ``look_at``, whose
    synsets hold "consider": "which bank should I start looking at" asked as "which bank should I
    consider")."""
    t = tokens[i]
    forms = [t.key, t.lower]
    if i + 1 < len(tokens) and tokens[i + 1].lower in PARTICLES:
        forms.append(f"{t.key}_{tokens[i + 1].lower}")
    return tuple(dict.fromkeys(forms))


CHECK_ID = "intent_dropped"
INTENT_SEED = "background chapter on the rewrite rules (seeds 003): a rewrite keeps what the user asks for"
STEPS = (
    Step(
        "question_changed",
        "high",
        INTENT_SEED,
        "at least two of the request's words and at least half of them are missing: the question changed",
    ),
    Step("words_missing", "medium", INTENT_SEED, "a word of the request clauses is missing from the query"),
    Step(
        "framing_or_pointer",
        "low",
        "Halliday and Hasan 1976, ch. 2 (reference); rules/neutral.yaml framing",
        "every missing word is a framing word or a pointer the query replaced by a name",
    ),
    Step(
        "reworded",
        "low",
        "WordNet 3.0 word classes: the request's nouns all survived",
        "the one word lost from a longer request is a verb, adjective or adverb (a rewording)",
    ),
    Step(
        "confirmed_by_reviewers",
        "medium",
        "the reviewers' verdicts on this rewriter (monitor.checks.learned)",
        "a low finding kept at medium: the reviewers confirmed this rewriter drops the word",
    ),
)


@register(
    CHECK_ID,
    family="intent",
    version=VERSION,
    kinds=(CHECK_ID,),
    steps=STEPS,
    summary="words of the latest message's request clauses are missing from the query",
)
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
    referring += [m.span() for m in FRAME_RE.finditer(latest.text)]
    referring += [m.span("marker") for m in DISCOURSE_MARKER_RE.finditer(latest.text)]
    referring += rejected_spans(latest.text)
    requests = request_spans(latest.text)
    heads = pointer_heads(latest.tokens)
    latest_forms = {f for t in latest.tokens for f in (t.key, t.lower)}
    # The query names something the latest message does not: what a pointer was replaced with.
    rewriter = rewriter_key(record.prompt_version, record.model)
    names_new = any(
        (t.mid_cap or t.has_digit) and t.key not in latest_forms and t.lower not in latest_forms
        for t in query.tokens
    )
    skip = rules.filler_words | rules.neutral_words
    q_forms = [f for t in query.tokens if t.is_content for f in {t.key, t.lower}]

    def q_values() -> frozenset[float]:
        return number_values(query.text)

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
        if any(b in query.vocab for b in base_forms(t.lower)):
            continue  # "taxes" (whose lookup lemma is "taxi") kept as "tax"
        if t.has_digit and (v := value_at(latest.text, t.start, t.end)) is not None and v in q_values():
            continue  # "option 3" kept as "the third option"
        if any(shared_stem(form, qf) for form in {t.key, t.lower} for qf in q_forms if form[:2] == qf[:2]):
            continue
        if spelled_out(t.text, query) or synonym_in(_verb_forms(latest.tokens, i), [query]) is not None:
            continue
        if attribute_in((t.key, t.lower), [query]) is not None:
            continue  # "how big" asked as "what size": the adjective and the noun of its scale
        if derivation_in((t.key, t.lower), [query]) is not None:
            continue  # "when did he die" kept as "date of his death"
        if misspelling_of(t, query) is not None:
            continue
        word: dict[str, Any] = {
            "text": t.text,
            "lemma": t.key,
            "message_index": "latest",
            "start": t.start,
            "end": t.end,
            "framing": t.key in rules.framing_words,
            "pointer": names_new and i in heads,
        }
        learned = rules.learned.get(CHECK_ID, rewriter, t.key) if rules.learned is not None else None
        if learned is not None:
            # dismissed for this rewriter: its paraphrase of the word, read as framing; confirmed: a
            # drop the reviewers have seen it make
            word["learned"] = {"steps": learned.steps, "why": learned.why}
            word["framing"] = word["framing"] or learned.steps < 0
        missing.append(word)
    if not missing:
        return []
    n, m = len(intent), len(missing)
    # A resolved pointer is what a good rewrite does: it counts neither as asked nor as lost.
    lost = [w for w in missing if not w["pointer"]]
    n_asked = n - (m - len(lost))
    if len(lost) >= 2 and 2 * len(lost) >= n_asked:
        sev, step = "high", "question_changed"
    elif all(w["framing"] or w["pointer"] for w in missing):
        sev, step = "low", "framing_or_pointer"
    elif len(lost) == 1 and n_asked >= 2 and _reworded(latest, lost[0]):
        # One verb, adjective or adverb lost while every noun of the request survived: the question's
        # object is intact and the wording changed ("protect my account" -> "safeguard my account").
        sev, step = "low", "reworded"
    else:
        sev, step = "medium", "words_missing"
    if sev == "low" and any(w.get("learned", {}).get("steps", 0) > 0 for w in missing):
        sev, step = "medium", "confirmed_by_reviewers"
    words = ", ".join(f"'{w['text']}'" for w in missing)
    reason = f"the query lacks {m} of the {n} words the user asked with: {words}"
    for w in missing:
        if "learned" in w:
            reason += f"; reviewers on '{w['text']}': {w['learned']['why']}"
    pointers = [w["text"] for w in missing if w["pointer"]]
    if pointers:
        reason += (
            f"; {', '.join(repr(x) for x in pointers)} pointed back into the conversation and the query names"
            " something new instead: check the antecedent"
        )
    return [
        Finding(
            kind="intent_dropped",
            severity=sev,
            evidence={"missing": missing, "n_intent_words": n, "n_missing": m, "words": []},
            reason=reason,
            check_id="intent_dropped",
            check_version=VERSION,
            step=step,
        )
    ]


# -- replaced_term: the asked head swapped for the one an answer gave --------------------------------
REPLACED_ID = "replaced_term"
# v2: medium, and a compound after a definite article or a demonstrative is left alone ("the premium
# option" made "the premium plan": the answer's name for what the user points at).
REPLACED_VERSION = 2
REPLACED_STEPS = (
    Step(
        "answer_head",
        "medium",
        "co-hyponym substitution (Cruse, Lexical Semantics, 1986, ch. 6); the answer's term may be a synonym",
        "the query keeps the modifier of the user's compound and swaps its head for one only an answer said",
    ),
)


def replaced_heads(latest: Analysis, query: Analysis) -> list[tuple[Tok, Tok, Tok]]:
    """``(modifier, asked head, query head)`` for each compound of the latest message ("passing *yards*")
    whose modifier the query keeps before another noun ("passing *touchdowns*") while the asked head is
    gone (by key, inflection, synonym or spelling-out) and the latest message lacks the query's head. A
    compound after a pointing determiner (:data:`POINTER_DETERMINERS`: "the premium option") is left
    out: the query may name what it points at. Only the words of the two texts: whether the new head came
    from an answer is the caller's test."""
    lt = [t for t in latest.tokens if not t.is_punct]
    qt = [t for t in query.tokens if not t.is_punct]
    pointed = {i + 1 for i, t in enumerate(lt) if t.lower in POINTER_DETERMINERS}
    latest_forms = {f for t in lt for f in (t.key, t.lower)}
    q_forms = [f for t in qt if t.is_content for f in (t.key, t.lower)]
    out = []
    for i, (m, h) in enumerate(zip(lt, lt[1:], strict=False)):
        if i in pointed or not (premodifier(m) and is_noun(m.key) and h.is_content and is_noun(h.key)):
            continue
        if h.key in query.vocab or h.lower in query.vocab:
            continue
        if any(shared_stem(f, qf) for f in (h.key, h.lower) for qf in q_forms):
            continue
        if spelled_out(h.text, query) or synonym_in((h.key, h.lower), [query]) is not None:
            continue
        for qm, qh in zip(qt, qt[1:], strict=False):
            if qm.lower != m.lower or not qh.is_content or not is_noun(qh.key):
                continue
            if qh.key in latest_forms or qh.lower in latest_forms or shared_stem(qh.key, h.key):
                continue
            out.append((m, h, qh))
    return out


@register(
    REPLACED_ID,
    family="intent",
    version=REPLACED_VERSION,
    kinds=(REPLACED_ID,),
    steps=REPLACED_STEPS,
    summary="the head of the user's compound swapped for one only an answer said",
)
def check_replaced(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``replaced_term``: the query keeps the modifier of a compound the user asked about and swaps its
    head for a noun only an assistant turn said ("How many passing yards did he throw?" made "What was
    his record for passing touchdowns?" after an answer about touchdowns). Every word of the query is
    received, so ``added_content_word`` is silent, but the query asks for what the answer already gave
    instead of what the user asked: a co-hyponym swap, the fabrication pattern of issue 13 (solar for
    lunar). Medium, with a hint: the answer's term may also name the same thing ("collision insurance"
    asked as "collision coverage"), which no word list tells apart; the reviewer decides.

    Evidence: ``words`` [{text, start, end}] (the new head, query spans), ``asked`` {text, start, end,
    message_index: "latest"} (the user's compound), ``said_at`` {message_index} (the assistant turn).
    Skips when no message list was logged (whether a user said the word cannot be told)."""
    message_texts(record)  # skips without a message list
    assert record.context is not None and record.context.messages is not None
    messages = record.context.messages
    an = analyzer()
    found = replaced_heads(an.analyze(record.latest), an.analyze(record.query))
    if not found:
        return []
    out = []
    for m, h, qh in found:
        said = None
        for i, msg in enumerate(messages):
            if qh.key in (vocab := an.analyze(msg.content).vocab) or qh.lower in vocab:
                if msg.role == "user":
                    said = None
                    break
                said = i if said is None else said
        if said is None:
            continue
        asked = f"{m.text} {h.text}"
        out.append(
            Finding(
                kind=REPLACED_ID,
                severity="medium",
                evidence={
                    "words": [{"text": qh.text, "start": qh.start, "end": qh.end}],
                    "asked": {"text": asked, "start": m.start, "end": h.end, "message_index": "latest"},
                    "said_at": {"message_index": said},
                },
                reason=f"the query asks for '{m.text} {qh.text}' where the user asked for '{asked}'; "
                f"'{qh.text}' comes from an assistant turn (message {said}), no user said it: check that "
                "they name the same thing",
                check_id=REPLACED_ID,
                check_version=REPLACED_VERSION,
                step="answer_head",
            )
        )
    return out
