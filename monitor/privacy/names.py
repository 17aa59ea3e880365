"""Person names in free text: :class:`NameFinder`'s cues (spaCy ``Matcher`` patterns: "my name is",
a greeting, a title, a sign-off, ...) and, where no cue introduces a name, :func:`lexicon_names`, which
reads the given names and surnames of Faker's person providers (:func:`name_lexicon`) with WordNet's
senses (``monitor.lexicon``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from monitor.lexicon import noun_classes, word_classes
from monitor.privacy.patterns import _STREET_TYPES

if TYPE_CHECKING:
    from spacy.language import Language

_TITLES = ["mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "dr", "dr.", "prof", "prof."]
# Matcher token patterns: dicts of attribute -> value or operator, as spaCy's Matcher.add types them.
# A capitalised word, letters or an apostrophe ("O'Brien"); a hyphenated name ("Anne-Marie", which the
# tokenizer splits at the hyphen) is joined back after the match (NameFinder.names).
_NAME_TOKEN: dict[str, Any] = {
    "IS_TITLE": True,
    "TEXT": {"REGEX": r"^[^\W\d_]+(?:['’][^\W\d_]+)?$"},
    "OP": "{1,3}",
}
_CUES: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    # id: (tokens before the name, tokens after it); the name is what lies between
    "my_name_is": ([{"LOWER": "my"}, {"LOWER": "name"}, {"LOWER": {"IN": ["is", "'s"]}}], []),
    "call_me": ([{"LOWER": "call"}, {"LOWER": "me"}], []),
    "this_is": ([{"LOWER": "this"}, {"LOWER": "is"}], [{"LOWER": {"IN": ["from", "here"]}}]),
    "i_am": ([{"LOWER": "i"}, {"LOWER": {"IN": ["am", "'m"]}}], [{"LOWER": "from"}]),
    "greeting": ([{"LOWER": {"IN": ["hi", "hello", "hey", "dear"]}}], [{"TEXT": {"IN": [",", "!"]}}]),
    "title": ([{"LOWER": {"IN": _TITLES}}], []),
    # a form field ("Name: Dana Reyes") and a sign-off ("Thanks, Dana", "Regards, Omar Haddad")
    "name_field": ([{"LOWER": {"IN": ["name", "customer", "contact"]}}, {"TEXT": ":"}], []),
    "signoff": (
        [
            {"LOWER": {"IN": ["thanks", "regards", "cheers", "best", "sincerely", "br"]}},
            {"TEXT": ","},
        ],
        [],
    ),
}


# Names with no cue: a given name of the lexicon, then a surname, or in a person's place in the sentence.
_WORD_RE = re.compile(r"[^\W\d_]+(?:['’](?![sS]\b)[^\W\d_]{2,})?(?:-[^\W\d_]+)*")
"""A word as names are written: letters, an apostrophe inside ("O'Connor"; not a contraction, "I'm", nor
a possessive, "Dana's") and hyphenated parts ("Anne-Marie")."""
_LATIN = re.compile(r"^[A-Za-zÀ-ɏ]+(?:['’-][A-Za-zÀ-ɏ]+)*$")
REPORTING_VERBS = frozenset(
    {"said", "says", "told", "tells", "asked", "asks", "wrote", "writes", "emailed", "called", "calls"}
    | {"mentioned", "mentions", "replied", "replies", "confirmed", "confirms", "reported", "reports"}
    | {"thinks", "thought", "wants", "wanted", "needs", "needed", "noticed", "added", "sent", "approved"}
    | {"explained", "suggested", "promised", "agreed", "insists", "insisted", "claims", "claimed"}
)
"""Verbs whose subject is a person: the reporting verbs of Quirk et al. (1985, 16.25), in the forms
chats use, and a few verbs of wanting and approving. "Ravi said the export finished" names a person."""
PERSON_COMPANY_WORDS = frozenset({"with", "let", "per", "can", "could", "will", "would", "did"})
"""Words before a given name that make it a person's when the name is neither a place nor a common word
(:func:`_ambiguous`): "spoke with David", "let Jennifer know", "per Michael", "can Lisa approve" (the
subject of a question after its auxiliary: Quirk et al. 1985, 11.5). Not "and": "Echo and Alexa" are
products as often as people."""
PERSON_OBJECT_WORDS = frozenset(
    {"ask", "tell", "email", "e-mail", "call", "cc", "contact", "thank", "message", "text", "ping", "remind"}
    | {"invite", "colleague", "manager", "boss", "wife", "husband", "partner", "son", "daughter", "friend"}
    | {"coworker", "co-worker", "teammate", "assistant", "brother", "sister", "mother", "father", "mom"}
    | {"dad", "mum", "supervisor", "customer", "client", "tenant", "landlord", "neighbour", "neighbor"}
)
"""Words after which a given name is a person's: verbs whose object is a person ("ask Tomasz", "cc
Chidi") and nouns of kinship and work roles in apposition ("my manager Ingrid"; Quirk et al. 1985,
17.65: close apposition)."""


@lru_cache(maxsize=1)
def name_lexicon() -> tuple[frozenset[str], frozenset[str]]:
    """(given names, surnames) in Latin script from the person providers of every locale ``faker`` ships
    (86 locales; about 21,000 given names and 20,000 surnames, from each locale's own sources as Faker
    documents them). Loaded once (about 0.5 s)."""
    import importlib
    import pkgutil

    import faker.providers.person as people

    given: set[str] = set()
    family: set[str] = set()
    for module in pkgutil.iter_modules(people.__path__):
        provider = importlib.import_module(f"{people.__name__}.{module.name}").Provider
        for attr in dir(provider):
            values = getattr(provider, attr)
            if not isinstance(values, (tuple, list, dict)):
                continue
            words = {v for v in values if isinstance(v, str) and _LATIN.match(v)}
            if attr.startswith(("first_name", "first_romanized")):
                given |= words
            elif attr.startswith(("last_name", "last_romanized")):
                family |= words
    return frozenset(given), frozenset(family)


@lru_cache(maxsize=1 << 14)
def _senses(word: str) -> tuple[frozenset[str], bool]:
    """WordNet's noun classes of ``word`` (lower case) and whether it is also a verb, adjective or
    adverb (``monitor.lexicon``)."""
    low = word.lower()
    classes = word_classes()
    return noun_classes(low, low), any(low in classes[p] for p in ("verb", "adj", "adv"))


def _ambiguous(word: str) -> bool:
    """Whether a given name is also a place or a common word in WordNet ("Jordan", "Georgia", "Grace",
    "Will"): then only a surname after it, or a person's place in the sentence, makes it a name. A word
    WordNet knows only as a person ("Dana", "Noah") is not ambiguous."""
    nouns, other = _senses(word)
    return other or bool(nouns - {"person"})


def _common(word: str) -> bool:
    """Whether ``word`` is a common word in WordNet: a verb, adjective or adverb, or a noun of a class
    other than a person, a place or a natural object ("Grace", "White", "Pepper"; not "Jordan",
    "O'Connor")."""
    nouns, other = _senses(word)
    return other or bool(nouns - {"person", "location", "object"})


def _stop(word: str) -> bool:
    """A function word ("My", "The"), which starts no name whatever a lexicon lists."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return word.lower() in STOP_WORDS


def _owns(text: str, at: int) -> bool:
    """Whether the possessive ending at ``at`` governs a noun phrase: a content word follows ("Dana's
    laptop"), not a function word ("Jerry's in the freezer aisle": a shop's or brand's name)."""
    m = re.match(r"\s+([^\W\d_][\w-]*)", text[at:])
    return m is not None and not _stop(m.group(1))


def _title_word(word: str) -> bool:
    """Whether the word after a title (Dr, Mr, ...) is a common word no surname list holds ("Dr
    Pepper"), so the title starts a product's name, not a person's."""
    return word not in name_lexicon()[1] and _common(word)


DETERMINERS = frozenset(
    {"the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "this", "that", "these", "those"}
    | {"every", "each", "any", "some", "no"}
)
"""A person's name takes no determiner (Quirk et al. 1985, 5.60): after one, a name is a brand or a
classifier ("a Louis Vuitton bag", "my Morgan Stanley account", "the Macy's order")."""


def _inside_a_name(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Whether ``words[i]`` follows a determiner, or continues a capitalised name that started before it
    mid-sentence ("Trader Joe's"): a brand's or an organisation's name, not a person's."""
    if i == 0:
        return False
    prev = words[i - 1]
    if prev.group().lower() in DETERMINERS:
        return True
    gap = text[prev.end() : words[i].start()]
    if gap != " " or not prev.group()[:1].isupper() or _stop(prev.group()):
        return False
    # mid-sentence: a word before the capitalised one, with no sentence end between
    before = text[: prev.start()].rstrip()
    return (
        bool(before) and before[-1] not in ".!?:;\n\"'(" and prev.group().lower() not in PERSON_OBJECT_WORDS
    )


def lexicon_names(text: str) -> list[tuple[int, str]]:
    """``(start, name)`` of the person names in ``text`` that no cue introduces, read with
    :func:`name_lexicon` and WordNet (:func:`_ambiguous`):

    - a given name and a capitalised word after it that is a surname no street type ends ("Omar Haddad";
      "Dana White" when the given name is not ambiguous; not "Charlotte Street"), or a word WordNet does
      not know that is no given name ("Sofia Marchetti"; not "Santa Clara") after an unambiguous given
      name;
    - a given name before ``'s`` that is not ambiguous ("Dana's laptop"; not "Georgia's capital");
    - a given name after a word of :data:`PERSON_OBJECT_WORDS` ("ask Tomasz", "my manager Ingrid") or
      before a verb of :data:`REPORTING_VERBS` ("Ravi said").
    """
    given, family = name_lexicon()
    words = list(_WORD_RE.finditer(text))
    found: list[tuple[int, str]] = []
    i = 0
    while i < len(words):
        w = words[i].group()
        if not w[0].isupper() or len(w) < 2 or _stop(w) or _inside_a_name(text, words, i):
            i += 1
            continue
        nxt = words[i + 1] if i + 1 < len(words) else None
        adjacent = nxt is not None and text[words[i].end() : nxt.start()] == " "
        second = nxt.group() if nxt is not None and adjacent and nxt.group()[:1].isupper() else ""
        second = "" if second.isupper() else second  # "Dell XPS": an acronym is no surname
        if second and not _stop(second):
            nouns, other = _senses(second)
            known = bool(nouns) or other
            street = re.fullmatch(_STREET_TYPES, second.lower()) is not None or "location" in nouns
            if w in given:
                full = second in family and not street and (not _common(second) or not _ambiguous(w))
                full = full or (not known and second not in given and second not in family and not _common(w))
            else:  # a given name the lexicon lacks ("Chidi"), before a surname it has ("Okafor")
                full = second in family and not known and not any(_senses(w))
            if full and nxt is not None:
                found.append((words[i].start(), text[words[i].start() : nxt.end()]))
                i += 2
                continue
        before = words[i - 1].group().lower() if i > 0 else ""
        if w not in given:
            if before in PERSON_OBJECT_WORDS and not any(_senses(w)):  # "cc Chidi"
                found.append((words[i].start(), w))
            i += 1
            continue
        after = text[words[i].end() : words[i].end() + 2]
        two_before = " ".join(x.group().lower() for x in words[max(0, i - 2) : i])
        then = nxt.group().lower() if nxt is not None else ""
        if (
            (after in ("'s", "’s") and not _ambiguous(w) and _owns(text, words[i].end() + 2))
            or before in PERSON_OBJECT_WORDS
            or (then in REPORTING_VERBS and not second)
            or (two_before in ("this is", "i am", "i'm", "i’m", "am i") and not _common(w))
            or (before in PERSON_COMPANY_WORDS and not second and not _ambiguous(w))
            or (then == "from" and not _ambiguous(w))  # "Steve from IT"
        ):
            found.append((words[i].start(), w.removesuffix("'s").removesuffix("’s")))
        i += 1
    return found


class NameFinder:
    """Finds person names in text with cue patterns (and ``PERSON`` entities of a trained pipeline).

    ``nlp``: a spaCy ``Language``; default ``spacy.blank("en")`` (tokenizer only, no download). A
    pipeline with an ``ner`` component adds its ``PERSON`` entities.
    """

    def __init__(self, nlp: Language | None = None, *, lexicon: bool = True) -> None:
        import spacy

        self.lexicon = lexicon
        from spacy.matcher import Matcher

        self.nlp = nlp if nlp is not None else spacy.blank("en")
        self.matcher = Matcher(self.nlp.vocab)
        self._shape: dict[int, tuple[int, int]] = {}
        for cue, (before, after) in _CUES.items():
            # a name may follow its cue after a line break or extra spaces ("Thanks,\nBob")
            gap = [{"IS_SPACE": True, "OP": "?"}]
            self.matcher.add(cue, [[*before, *gap, _NAME_TOKEN, *after]], greedy="LONGEST")
            self._shape[self.nlp.vocab.strings[cue]] = (len(before), len(after))

    def names(self, text: str) -> list[str]:
        """The names found in ``text``, in order of appearance, without repeats."""
        return [name for name, _cued in self.found(text)]

    def found(self, text: str) -> list[tuple[str, bool]]:
        """``(name, cued)`` for each name of :meth:`names`: ``cued`` when a cue or the NER model found
        it, not the lexicon alone. Only a cued name's single words are replaced wherever they recur
        (:meth:`Redactor.learn_names`): "Paris" of a "Paris Hilton" the lexicon read stays a city."""
        doc = self.nlp(text)
        found: list[tuple[int, str]] = []
        for match_id, start, end in self.matcher(doc):
            before, after = self._shape[match_id]
            first, last = start + before, end - after
            while first < last and doc[first].is_space:
                first += 1
            # join a hyphenated name the tokenizer split ("Anne" "-" "Marie") and the words after it
            words = last - first
            while (
                last + 1 < len(doc)
                and doc[last].text == "-"
                and doc[last].whitespace_ == ""
                and doc[last - 1].whitespace_ == ""
                and doc[last + 1].is_title
            ):
                last += 2
                while last < len(doc) and doc[last].is_title and doc[last].is_alpha and words < 3:
                    last += 1
                    words += 1
            span = doc[first:last]
            if len(span) and not (
                self.nlp.vocab.strings[match_id] == "title" and self.lexicon and _title_word(span[0].text)
            ):
                found.append((span.start_char, span.text))
        if "ner" in self.nlp.pipe_names:
            found.extend((e.start_char, e.text) for e in doc.ents if e.label_ == "PERSON")
        cued = {name for _pos, name in found}
        if self.lexicon:
            found.extend(lexicon_names(text))
        out: dict[str, bool] = {}
        for _pos, name in sorted(found):
            out.setdefault(name, name in cued)
        return list(out.items())


@lru_cache(maxsize=4)
def name_finder(model: str | None = None) -> NameFinder:
    """A process-wide :class:`NameFinder` on ``spacy.load(model)``, or on blank English when ``None``."""
    if model is None:
        return NameFinder()
    import spacy

    return NameFinder(spacy.load(model))
