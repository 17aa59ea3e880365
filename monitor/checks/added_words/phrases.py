"""Where a noun stands in its noun phrase: the head it restricts (:func:`restricted_head`), read
without a tagger from word classes and the words around it."""

from __future__ import annotations

from monitor.checks.nlp import Analysis, Tok, premodifier
from monitor.lexicon import is_noun, is_verb

PREPOSITIONS = frozenset(
    "of for with in on about from among by to during without against between under over into at per via "
    "within across".split()
)
"""Prepositions that attach a noun phrase to the noun before it (Quirk et al. 1985, 9.7 and 17.37:
postmodification by a prepositional phrase)."""
DETERMINERS = frozenset(
    "a an the this that these those its their his her our my your some any each every".split()
)


def restricted_head(q: Analysis, i: int) -> Tok | None:
    """The noun that the noun ``q.tokens[i]`` restricts, else None: the content noun right after it,
    which it premodifies ("*halftime* show"), or the noun before a preposition that opens the phrase it
    heads ("tips for *beginners*", "cost of *antivirus* software"; determiners and premodifiers may
    stand between). Pre- and postmodifiers restrict what the head refers to (Quirk et al. 1985, 17.2-17.4);
    the head itself ("the *stint*", "a *jet*") names what is asked about, in the rewriter's own word.
    Word classes from WordNet."""
    toks = q.tokens
    t = toks[i]
    if not (is_noun(t.key) or is_noun(t.lower)):
        return None
    if i + 1 < len(toks) and premodifier(t) and _noun_head(toks, i + 1):
        return toks[i + 1]
    j = i - 1
    while j >= 0 and (toks[j].lower in DETERMINERS or (toks[j].is_content and premodifier(toks[j]))):
        j -= 1
    if j >= 1 and toks[j].lower in PREPOSITIONS:
        head = toks[j - 1]
        if head.is_content and (is_noun(head.key) or is_noun(head.lower)):
            return head
    return None


def _noun_head(toks: tuple[Tok, ...], j: int) -> bool:
    """Whether ``toks[j]`` reads as a noun heading the phrase before it: a content word WordNet knows as a
    noun and not as a verb, or as both when its phrase ends right after it (punctuation, the end, a
    preposition or a coordinator: "the halftime *show*?"). A noun-verb after a noun is otherwise read as
    the verb ("did the stroke *affect* his campaign"): without a tagger, the word after decides."""
    t = toks[j]
    if not t.is_content or not is_noun(t.key):
        return False
    if not is_verb(t.key):
        return True
    after = toks[j + 1] if j + 1 < len(toks) else None
    return after is None or after.is_punct or after.lower in PREPOSITIONS or after.lower in {"and", "or"}
