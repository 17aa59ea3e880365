"""``swapped_name`` (issue 14): a name the user wrote, replaced in the query by another name of the
transcript.
"""

from __future__ import annotations

import re

from monitor.checks.base import Finding, SkipCheck, message_texts
from monitor.checks.names import (
    mentions,
    names,
)
from monitor.checks.nlp import one_edit
from monitor.checks.registry import register
from monitor.checks.rules import Rules
from monitor.checks.steps import Step
from monitor.record import RewriteRecord

# -- a name the user wrote, swapped for another of the transcript (issue 14) -------------------------
SWAPPED_NAME_VERSION = 1
SWAPPED_STEPS = (
    Step(
        "name_swapped",
        "medium",
        "the rewrite rules (seeds 003): a name the user wrote is kept",
        "a name of several words the user wrote is replaced by another name of the transcript sharing a word",
    ),
)
TITLES = frozenset(
    {
        *(
            "mr",
            "mrs",
            "ms",
            "miss",
            "mx",
            "dr",
            "doctor",
            "prof",
            "professor",
            "sir",
            "dame",
            "lord",
            "lady",
        ),
        *("king", "queen", "prince", "princess", "emperor", "empress", "pope", "saint", "st", "president"),
        *("senator", "governor", "mayor", "judge", "justice", "general", "colonel", "captain", "lieutenant"),
        *("sergeant", "admiral", "father", "rev", "reverend", "bishop", "rabbi", "chancellor", "minister"),
        *("secretary", "ambassador", "jr", "sr"),
    }
)
"""Honorifics and titles written before or after a personal name (*The Chicago Manual of Style*, 17th
ed., 8.21-8.32, civil, military, religious and royal titles, and 10.16-10.19, their abbreviations): a
query that writes "Barack Obama" for the user's "President Obama", or "Charles III" for "King Charles",
completes the name, it does not swap it. Not fitted to any data file."""
_NAME_FUNCTION_WORDS = frozenset({"of", "the", "and", "&"})
_ROMAN_RE = re.compile(r"^[IVXLC]+$")


def soundex(word: str) -> str:
    """The American Soundex code of ``word`` (its first letter, then up to three digits for the
    consonant classes that follow, vowels and h/w/y dropped, adjacent repeats merged): "Tim" and "Tom"
    are T500, "Sean" and "Shaun" S500, "Mario" M600 and "Bruno" B650. Source: Russell's patent (US
    1,261,167, 1918) as the US National Archives code it; Knuth, *The Art of Computer Programming* 3,
    6.4. Only the letters of ``word`` count; "" when it has none."""
    letters = [c for c in word.lower() if "a" <= c <= "z"]
    if not letters:
        return ""
    codes = {
        c: str(d) for d, group in enumerate(("bfpv", "cgjkqsxz", "dt", "l", "mn", "r"), 1) for c in group
    }
    out, last = letters[0].upper(), codes.get(letters[0], "")
    for c in letters[1:]:
        code = codes.get(c, "")
        if code and code != last:
            out += code
        if c not in "hw":  # h and w do not separate two letters of one class; a vowel does
            last = code
    return (out + "000")[:4]


def same_name(a: str, b: str) -> bool:
    """Whether two differing words of two names spell one name: one edit apart, or the same Soundex code
    (:func:`soundex`: "Tom"/"Tim", "Marz"/"Mars", "Sean"/"Shaun"). A word with a digit or a Roman numeral
    is an exact part of a name ("Model 3", "Henry VIII"): any difference is another thing."""
    if any(c.isdigit() for c in a + b) or _ROMAN_RE.match(a) or _ROMAN_RE.match(b):
        return False
    return one_edit(a.lower(), b.lower()) or soundex(a) == soundex(b)


def short_form(word: str, others: list[str]) -> bool:
    """Whether ``word`` abbreviates words of ``others``: their initials ("LA" of "Los Angeles", "NY" of
    "New York"), a beginning of one of them ("Man" of "Manchester"), or its letters in order within one
    that starts with the same letter ("St" of "Saint", "Mt" of "Mount")."""
    low = word.lower().rstrip(".")
    if not low or _ROMAN_RE.match(word) or any(c.isdigit() for c in word):
        return False  # "VII" does not abbreviate "VIII", nor "3" "30"
    initials = "".join(o[0].lower() for o in others)
    if len(low) >= 2 and low in initials:
        return True
    for o in others:
        ol = o.lower()
        if ol == low or not ol.startswith(low[0]):
            continue
        if ol.startswith(low) or re.fullmatch(".*?".join(map(re.escape, low)) + ".*", ol):
            return True
    return False


def _swap(user: str, named: str, query: str) -> tuple[list[str], list[str]] | None:
    """The words that tell the user's name ``user`` from the query's ``named`` when the two share a word
    and the rest is another name: (the user's words, the query's words); None when it is the same name
    written otherwise. Not a swap: a title added or left out (:data:`TITLES`), a short form
    (:func:`short_form`), a spelling (:func:`same_name`), or a word of the user's name that the query
    still writes elsewhere: the user ran two names together ("Adele Vegas" for "Adele ... in Las
    Vegas"), or the query's name was cut at an initial ("Samuel L" of "Samuel L. Jackson")."""
    uw = [w for w in user.split() if w.lower() not in _NAME_FUNCTION_WORDS]
    qw = [w for w in named.split() if w.lower() not in _NAME_FUNCTION_WORDS]
    shared = {w.lower() for w in uw} & {w.lower() for w in qw}
    u_only = [w for w in uw if w.lower() not in shared and w.lower().rstrip(".") not in TITLES]
    q_only = [w for w in qw if w.lower() not in shared and w.lower().rstrip(".") not in TITLES]
    if not shared or not u_only or not q_only:
        return None
    if any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", query, re.IGNORECASE) for w in u_only):
        return None
    if any(short_form(a, q_only) for a in u_only) or any(short_form(b, u_only) for b in q_only):
        return None
    if any(same_name(a, b) for a in u_only for b in q_only):
        return None
    return u_only, q_only


@register(
    "swapped_name",
    family="antecedents",
    version=SWAPPED_NAME_VERSION,
    kinds=("wrong_antecedent",),
    steps=SWAPPED_STEPS,
    summary="a name the user wrote replaced by another name of the transcript",
)
def check_swapped_name(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """``wrong_antecedent`` (medium) when a name of several words the latest message writes is missing
    from the query, and in its place the query writes another name of the transcript that shares a word
    with it (:func:`_swap`): "Is Mario Mars performed at the Bowery Ballroom?" made "Did Bruno Mars
    perform at the Bowery Ballroom?" after a conversation about Bruno Mars; "Prince Harry" made "Prince
    William"; "Model 3" made "Model S". The user named the entity; the rewrite resolved it to the one the
    conversation had, a different referent, which the labelling rules call a wrong antecedent. The same
    name written otherwise is no swap: "President Obama" as "Barack Obama", "LA Lakers" as "Los Angeles
    Lakers", "Tim Hanks" corrected to "Tom Hanks".

    Measured on a fresh store of the shared logs: it fires on 2 of 3,385 rewrites, both labelled
    ``wrong_antecedent`` (the same turn in ``mtrag_dev_sonnet45agg_labels.jsonl`` and
    ``mtrag_dev_sonnet4live_labels.jsonl``); too few to say more than that.

    Evidence: ``expected`` and ``named`` (the user's name and the query's, which a verdict's assertions
    start from), ``user_name`` {text, start, end} (in the latest message), ``substituted`` {text, start,
    end (in the query), message_index (0-based) of its last mention}, ``words`` (the substituted name).
    Skips without a message list, or when the latest message writes no name of several words.
    """
    texts = message_texts(record)
    own = [n for n in names(record.latest) if len(n.text.split()) >= 2]
    if not own:
        raise SkipCheck("the latest message writes no name of several words")
    out: list[Finding] = []
    for n in own:
        if mentions(n.text, record.query):
            continue
        for m in names(record.query):
            if mentions(m.text, record.latest) or (swap := _swap(n.text, m.text, record.query)) is None:
                continue
            # The whole name, not its last word as last_mention allows: "Peter Mars" is no name of a
            # conversation about Bruno Mars, and an unheard name is added_content_word's to judge.
            at = next((i for i in range(len(texts) - 1, -1, -1) if mentions(m.text, texts[i])), None)
            if at is None:
                continue
            out.append(
                Finding(
                    kind="wrong_antecedent",
                    severity="medium",
                    evidence={
                        "expected": n.text,
                        "named": m.text,
                        "user_name": {"text": n.text, "start": n.start, "end": n.end},
                        "substituted": {"text": m.text, "start": m.start, "end": m.end, "message_index": at},
                        "words": [{"text": m.text, "start": m.start, "end": m.end}],
                    },
                    reason=(
                        f"the user wrote '{n.text}', but the query names '{m.text}' in its place (last "
                        f"named in message {at}): '{' '.join(swap[0])}' is not '{' '.join(swap[1])}'; check "
                        "the antecedent"
                    ),
                    check_id="swapped_name",
                    check_version=SWAPPED_NAME_VERSION,
                    step="name_swapped",
                )
            )
            break
    return out
