"""Lexical links between an unsupported word and the transcript: a misspelling, an acronym or its
expansion, a name the word completes, the particle of a phrasal verb."""

from __future__ import annotations

from monitor.checks.added_words.word import Word
from monitor.checks.nlp import Tok, Transcript, capitalised_token, one_edit
from monitor.lexicon import noun_classes, unknown_word, zipf

# A supported capitalised neighbour rarer than this is a name ("Peters"), so the unsupported capitalised
# word next to it is a name completion rather than a new entity.
NAME_ZIPF = 4.0
# The noun classes of a proper name WordNet lists (its capitalised lemmas, lower-cased in the index):
# people, places, groups. A capitalised word whose every noun sense is one of these is a name, not a
# common noun written with a capital ("Texas", "George"; not "Watch", "Model").
NAME_CLASSES = frozenset({"person", "location", "group"})


def phrasal_forms(w: Word) -> tuple[str, ...]:
    """The multi-word WordNet lemma the query word may open with the particle after it ("look into")."""
    toks = w.q.tokens
    if w.index + 1 < len(toks) and toks[w.index + 1].lower in PARTICLES:
        return (f"{w.tok.key}_{toks[w.index + 1].lower}",)
    return ()


PARTICLES = frozenset(
    "about after around at away back down for in into off on out over through to up with".split()
)
"""The adverb particles and prepositions of English phrasal and prepositional verbs (Quirk et al. 1985,
16.2-16.6)."""

# Common English negative contractions; a one-edit misspelling of one ("did't") is a typo, not content.
CONTRACTIONS = tuple(
    f"{w}n't" for w in "do does did is are was were has have had could would should must need".split()
) + ("can't", "won't")


def misspelling(t: Tok, tr: Transcript) -> str | None:
    """The word ``t`` misspells, else None: ``t`` (4+ characters) is unknown
    (:func:`monitor.lexicon.unknown_word`), and one substitution, insertion or deletion from a received
    word of the same first letter or from an English negative contraction ("did't"): Damerau's
    single-error classes (CACM 7, 1964), which cover most typing slips."""
    lower = t.lower
    if len(lower) < 4 or t.has_digit or not unknown_word(lower, t.key):
        return None
    if "'" in lower:
        return next((c for c in CONTRACTIONS if one_edit(lower, c)), None)
    for a in reversed(tr.analyses):
        for form in sorted(a.vocab):  # sorted: which spelling is named must not depend on hashing
            if (
                len(form) >= 4
                and form[0] == lower[0]
                and abs(len(form) - len(lower)) <= 1
                and form.isalpha()
                and one_edit(lower, form)
            ):
                return form
    return None


ACRONYM_SKIPPED = frozenset(
    {"of", "the", "and", "for", "in", "on", "at", "to", "a", "an", "&", "de", "du", "la"}
)
"""Function words an acronym's initials skip ("Bureau of Labor Statistics" is BLS, "Department of
Homeland Security" DHS): Quirk et al. 1985, App. I.74-I.76."""


def _initials(words: list[Tok]) -> str:
    return "".join(t.lower[0] for t in words if t.lower not in ACRONYM_SKIPPED)


def acronym_link(w: Word) -> str | None:
    """The transcript form the word abbreviates or expands, else None.

    Abbreviation: the word (2-6 letters, at least two capitals) spells the initials of consecutive
    transcript words, function words skipped (:data:`ACRONYM_SKIPPED`: "IdC" ~ "Invasive Ductal
    Carcinoma", "BLS" ~ "Bureau of Labor Statistics"). Expansion: the word lies in a run of query words
    whose initials (function words skipped) spell an all-capitals transcript token ("seasonal affective
    disorder" ~ "SAD")."""
    text = w.tok.text
    if 2 <= len(text) <= 6 and text.isalpha() and sum(c.isupper() for c in text) >= 2:
        target = text.lower()
        for a in w.tr.analyses:
            if not any(c.isupper() for c in a.text):
                continue  # no capitalised word to start an expansion
            words = [t for t in a.tokens if t.text.isalpha()]
            for i, first in enumerate(words):
                if not first.text[:1].isupper() or first.lower[0] != target[0]:
                    continue
                got, j = "", i
                while j < len(words) and len(got) < len(target):
                    if words[j].lower not in ACRONYM_SKIPPED:
                        if words[j].lower[0] != target[len(got)]:
                            break
                        got += words[j].lower[0]
                    j += 1
                if got == target:
                    return " ".join(x.text for x in words[i:j])
    # expansion: the run of alphabetic query tokens holding the word, every window over it
    toks = w.q.tokens
    i = w.index
    lo = i
    while lo > 0 and toks[lo - 1].text.isalpha():
        lo -= 1
    hi = i
    while hi + 1 < len(toks) and toks[hi + 1].text.isalpha():
        hi += 1
    for start in range(lo, i + 1):
        if toks[start].lower in ACRONYM_SKIPPED:
            continue
        for end in range(max(i, start + 1), min(hi, start + 7) + 1):
            initials = _initials(list(toks[start : end + 1]))
            if len(initials) < 2:
                continue
            for a in w.tr.analyses:
                found = capitalised_token(a, initials)
                if found is not None:
                    return found
    return None


def name_neighbour(w: Word) -> str | None:
    """The logged name the capitalised word completes, else None: a supported capitalised token right
    before or after it that is rare (:data:`NAME_ZIPF`: "Bernadette" beside the logged "Peters"), or,
    when the word is a name by WordNet (every noun sense a person, place or group, or no sense at all:
    "George", "Bernie"), one the transcript writes as a name (capitalised mid-sentence) beside it; or a
    place (WordNet noun.location) after a logged name and a comma, outside a list ("Austin, Texas": a
    containing place in apposition, Quirk et al. 1985, 17.65)."""
    toks = w.q.tokens
    i = w.index
    classes = noun_classes(w.tok.lower, w.tok.key)
    name_like = not classes or classes <= NAME_CLASSES
    for j in (i - 1, i + 1, i - 2):
        if not 0 <= j < len(toks):
            continue
        if j == i - 2 and not (toks[i - 1].text == "," and classes == {"location"} and _apposed(toks, i)):
            continue
        t = toks[j]
        if not (t.text[:1].isupper() and t.is_content and w.tr.holds(t.key, t.lower)):
            continue
        if zipf(t.lower) < NAME_ZIPF or (name_like and _written_as_name(t.lower, w.tr)):
            return t.text
    return None


LIST_MARKS = frozenset({",", "and", "or", "&"})


def _apposed(toks: tuple[Tok, ...], i: int) -> bool:
    """Whether the place ``toks[i]`` after "<name>," reads as an apposition ("Austin, Texas") rather than
    the next item of a list ("Norway, Sweden and Denmark"): no list mark before the name or after it."""
    before = toks[i - 3].text.lower() if i >= 3 else ""
    after = toks[i + 1].text.lower() if i + 1 < len(toks) else ""
    return before not in LIST_MARKS and after not in LIST_MARKS


def _written_as_name(lower: str, tr: Transcript) -> bool:
    """Whether some received text writes ``lower`` capitalised mid-sentence (as a name)."""
    for a in tr.analyses:
        if lower in a.vocab and any(t.mid_cap and t.lower == lower for t in a.tokens):
            return True
    return False
