"""The word patterns of the reference checks (:mod:`monitor.checks.references`), as regexes and word
sets: referring expressions and the forms that are no reference, elliptical, corrective and continuing
follow-ups, meta text, clarification requests and closings. The other families that read these forms
(intent, scope, chat state, qualifiers, antecedents) share them.
"""

from __future__ import annotations

import re

# Personal/possessive pronouns and demonstratives that point back into the conversation.
# Not "there" (mostly existential) and not "one" alone (mostly a numeral or generic pronoun).
PRONOUN_RE = re.compile(
    r"\b(it|its|they|them|their|theirs|he|him|his|she|her|hers|this|that|these|those)\b", re.IGNORECASE
)
# Ordinals and bare definites: "the second one", "the second cluster", "the latter", "the enterprise one".
ORDINAL_RE = re.compile(
    r"\bthe\s+(?:first|second|third|fourth|fifth|sixth|last|former|latter|previous|"
    r"aforementioned|above|same|other)(?:\s+(?!of\b|to\b|and\b|in\b|on\b)[a-z][\w-]*)?\b"
    r"|\bthe\s+[\w-]+\s+ones?\b",
    re.IGNORECASE,
)
# Not references (Quirk et al. 1985): anticipatory "it" of an extraposed clause ("is it true that",
# "it is possible to", 18.33); "that" as a conjunction or relative after a word it attaches to ("true
# that", "the car that"), i.e. any "that" preceded by a word and not followed by a noun-phrase end;
# time adverbials built on "the last"/"the past" ("the last couple of years", "the past decade": they
# count back from now, 7.41); and an ordinal or definite the query completes with an "of" phrase
# ("the last Emperor of the Byzantine Empire") or a "same ... as" comparison.
ANTICIPATORY_IT_RE = re.compile(
    r"\bit\s+(?:is|was|'s|would\s+be|will\s+be|seems|seemed)\s+(?:\w+\s+){0,2}?(?:that|to|whether|if|how)\b"
    r"|\b(?:is|was|would|will|does|did)\s+it\s+(?:\w+\s+){0,2}?(?:that|to|whether|if)\b",
    re.IGNORECASE,
)
TIME_SPAN_RE = re.compile(
    r"\bthe\s+(?:last|past|previous|next|coming)\s+(?:(?:couple|few)(?:\s+of)?\s+|\d+\s+|several\s+)?"
    r"(?:years?|months?|weeks?|days?|decades?|centur(?:y|ies))\b",
    re.IGNORECASE,
)
# What completes an ordinal or definite in the query: after up to two words of its head ("the first
# *episode*", "the first three *canonical gospels*"), a postmodifier (Quirk et al. 1985, ch. 17): a
# prepositional phrase, a to-infinitive ("the first fighter *to hold* ..."), a participle ("the first
# colony *established by* ...") or a relative clause.
SAME_AS_RE = re.compile(r"\s+as\b", re.IGNORECASE)
COMPLETED_RE = re.compile(
    r"(?:\s+(?!(?:of|as|in|on|at|for|from|among|by|to|with|during|between|that|who|which|whose)\b)[\w'-]+){0,2}?"
    r"\s+(?:of|as|in|on|at|for|from|among|by|to|with|during|between|that|who|which|whose|[a-z]+ed)\b",
    re.IGNORECASE,
)
SAME_PAIR_RE = re.compile(r"\b(?:and|between)\b[^?.!]*\bthe\s+same\b", re.IGNORECASE)
CLAUSE_BREAK_RE = re.compile(r"[,;?.!]|\b(?:and|or|but)\b", re.IGNORECASE)
# Third-person pronouns and the words that can be their antecedent inside the query itself.
PERSONAL = frozenset({"he", "him", "his", "she", "her", "hers"})
PLURAL = frozenset({"they", "them", "their", "theirs"})
NEUTER = frozenset({"it", "its"})

# Elliptical follow-ups: the predicate is missing, so only a rewrite that restores it stands alone.
ELLIPSIS_RE = re.compile(
    r"^\s*(?:(?:and|but|or|so)\s+)?(?:what|how)\s+about\b"
    r"|^\s*(?:and|or|but)\s+(?:for|in|on|with|about|at|if|what\s+if|then)\b"
    r"|^\s*(?:why|why\s+not|how\s+so|really|and\s+then|then\s+what|what\s+else|"
    r"how\s+come|such\s+as|like\s+what|which\s+ones?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)

# Meta text and chatter instead of a query. Sources: the refusal/meta patterns of gpt-3.5 rewriters
# described in shared/data/README.md (caveat 4) and the chatter the issue names ("Sure! Here is...").
META_RE = re.compile(
    r"^\s*(?:sure|certainly|of course|okay,? here|here is|here's|here are|as an ai|i'm sorry|i am sorry|"
    r"sorry|i cannot|i can't|unfortunately|rewritten (?:query|question)\s*:|"
    r"standalone (?:query|question)\s*:|"
    r"query\s*:|answer\s*:)"
    r"|decontextuali[sz]"
    r"|\bno (?:clear |specific )?(?:information|mention|referent|reference|context)\b.{0,40}"
    r"\b(?:context|conversation|provided|given|about|in the)\b"
    r"|\b(?:the|this) (?:given |provided )?context (?:does not|doesn't|provided|given)\b"
    r"|\bnot (?:enough|sufficient) (?:context|information)\b"
    r"|\bcannot be (?:answered|determined|rewritten)\b"
    r"|\((?:note|this|the question|the query|assuming|it is)\b[^)]*\)",
    re.IGNORECASE,
)
# A clarification request about the addressee's own words ("Can you clarify what you mean by 'weak
# understanding metrics'?"): a move of the dialogue addressed to the assistant, not a question about the
# world a search can answer (Purver, "The theory and use of clarification requests in dialogue", 2004).
CLARIFICATION_RE = re.compile(
    r"\b(?:what|which)\s+(?:do|did|does)\s+you\s+mean\b|\bwhat\s+you\s+(?:mean|meant)\b",
    re.IGNORECASE,
)
QUESTION_START_RE = re.compile(
    r"^\s*(?:what|who|whom|whose|which|when|where|why|how|is|are|was|were|do|does|"
    r"did|can|could|should|would|will|has|have|had|may|might|shall|must|any|tell|"
    r"list|name|describe|explain|give|find|compare|in what|for what)\b",
    re.IGNORECASE,
)


# Where an answer stops being the query: a later line that opens a code fence, a chat-template speaker
# label ("Human:", "Assistant:": the turn format of chat-tuned models, which some leak), or the model's
# own note about its rewrite ("This rewritten query:", "Note:", "Explanation:"). Not fitted to any file.
META_TAIL_RE = re.compile(
    r"\n\s*(?:```|(?:human|assistant|user|system)\s*:|(?:note|explanation|reasoning|rationale)\s*:"
    r"|this (?:rewritten |standalone |revised )?(?:query|question|rewrite)\b)",
    re.IGNORECASE,
)


# A message that asks nothing: only inserts of spoken English (Biber et al., Longman Grammar of Spoken
# and Written English (1999), 14.3: greetings and farewells, thanks, response forms, interjections), as in
# "ok bye", "thanks!", "great, thank you". Not fitted to any data file.
INSERT_RE = re.compile(
    r"(?:ok(?:ay)?|alright|all right|thanks?(?: you)?(?: (?:so|very) much)?|thx|ty|cheers|bye|goodbye|"
    r"good bye|bye bye|see you|hello|hi|hey|great|cool|nice|perfect|awesome|excellent|wonderful|"
    r"got it|i see|noted|understood|wow|oh|ah|hmm+)",
    re.IGNORECASE,
)
CLOSING_RE = re.compile(rf"^\W*(?:{INSERT_RE.pattern}(?:\W+|$))+$", re.IGNORECASE)
# Acceptance forms: alone they may accept an offer the assistant made ("Would you like the prices?"
# "ok"), which is a request, so a message of these alone is not a closing.
ACCEPTANCE = frozenset({"ok", "okay", "alright", "all right"})


POINTER_DETERMINERS = frozenset({"the", "this", "that", "these", "those"})
"""Determiners that make the noun phrase itself point back into the conversation: the definite article
and the demonstratives (Halliday and Hasan, *Cohesion in English*, 1976, ch. 2: reference). A
possessive ("its uptime", "his religion") points with the pronoun, not with the noun after it, so the
noun is asked about (``intent_dropped`` keeps it as intent)."""


POSSESSIVES = frozenset({"its", "their", "his", "her"})
"""Possessive determiners: unlike a personal pronoun, one may corefer with the subject of its own clause."""


CORRECTION_RE = re.compile(r"^\W*(?:(?:no|sorry|oops|actually|wait)\W+)*i\s+(?:meant|mean)\b", re.IGNORECASE)
"""A message that corrects the user's previous one ("No, I meant the Lotus.", "I meant medicare"): what
it corrects is only in the conversation."""
CONTINUATION_RE = re.compile(
    r"^\W*(?:(?:can|could|would)\s+you\s+)?(?:please\s+)?"
    r"(?:tell\s+me\s+more|go\s+on|keep\s+going|continue|elaborate|say\s+more|how|in\s+what\s+way"
    r"|explain(?:\s+(?:further|more|that|this|it))?|more(?:\s+(?:details?|info(?:rmation)?|examples?))?"
    r"|(?:any\s+)?examples?|give\s+(?:me\s+)?(?:an?\s+|some\s+)?examples?)"
    r"(?:\s+please)?\W*$",
    re.IGNORECASE,
)
"""A request to go on with the topic before it ("Tell me more", "Go on", "Examples?", "Can you explain
further?", "How?"): a continuer (Schegloff, "Discourse as an interactional achievement", 1982), whose
topic is the previous turn's."""
