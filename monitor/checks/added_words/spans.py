"""The registered check: each unsupported word graded by what it is, where it stands and the rewriter,
one finding per span of adjacent unsupported units."""

from __future__ import annotations

from typing import Any

from monitor.checks.added_words.findings import assembled, rank
from monitor.checks.added_words.grade import own_grade
from monitor.checks.added_words.place import (
    Place,
    keyword_list_tokens,
    open_request,
    placed,
    question_frame_tokens,
)
from monitor.checks.added_words.rewriter import adjusted, learned_for
from monitor.checks.added_words.spec import CHECK_ID, STEPS, VERSION
from monitor.checks.added_words.support import unsupported_units
from monitor.checks.added_words.word import Word
from monitor.checks.base import Finding, analyzer, transcript
from monitor.checks.nlp import Analysis, Tok
from monitor.checks.qualifiers import qualifiers_in
from monitor.checks.references import is_closing, is_meta_text, meta_tail_start
from monitor.checks.registry import register
from monitor.checks.rules import Rules
from monitor.record import RewriteRecord


@register(
    CHECK_ID,
    family="added_words",
    version=VERSION,
    kinds=(CHECK_ID,),
    steps=STEPS,
    summary=(
        "a content word of the query that no received turn, alias group or neutral word "
        "supports: a possibly invented constraint"
    ),
)
def check(record: RewriteRecord, rules: Rules) -> list[Finding]:
    """One finding per span of adjacent unsupported units of ``record.query``.

    Evidence: ``span`` {text, start, end}, ``words`` [{text, start, end, lemma, severity, signal, step,
    why, zipf?, ...}], ``n_messages``. The finding's ``step`` is its top word's. Skips when no message
    list was logged.
    """
    tr = transcript(record)
    q = analyzer().analyze(record.query)
    if not q.tokens:
        return []
    quals = qualifiers_in(q.text, rules)
    meta = _whole_query_meta(record)
    tail = meta_tail_start(q.text)
    # unit index -> graded word (one per unsupported unit; the unit's first unsupported token decides)
    graded: dict[int, dict[str, Any]] = {}
    unsupported = list(unsupported_units(q, tr, rules))
    place = Place(
        keyword_list_tokens(q, {ui for ui, _, _ in unsupported}),
        question_frame_tokens(q),
        open_request(record.latest),
    )
    positions = {t.start: i for i, t in enumerate(q.tokens)}
    for ui, unit, bad in unsupported:
        words: list[dict[str, Any]] = []
        for t in bad:
            w = Word(t, positions[t.start], unit.text, q, tr, rules, quals, meta or _tail_meta(t, tail))
            # what the word is, then where it stands, then the rewriter
            info = placed(own_grade(w), w, place)
            learned = learned_for(rules.learned, record, t.key)
            words.append(adjusted(info, rules.profile, record.prompt_version, learned))
        top = max(words, key=rank)
        best = {**top, "text": unit.text, "start": unit.start, "end": unit.end}
        if len(bad) > 1:
            best["parts"] = [{**g, "text": t.text} for t, g in zip(bad, words, strict=True)]
        graded[ui] = best
    out: list[Finding] = []
    run: list[int] = []
    for ui in sorted(graded) + [-2]:
        if run and ui == run[-1] + 1:
            run.append(ui)
            continue
        if run:
            out.append(_finding(run, graded, q, len(tr.analyses) - 1))
        run = [ui]
    return out


META_WHY = "word of meta text, see not_a_query"


def _whole_query_meta(record: RewriteRecord) -> str | None:
    """Why every word of the query is meta text rather than query text, or None: the query is a refusal
    or chatter, or the user's message asks nothing (thanks, a farewell), which not_a_query reports."""
    if is_meta_text(record.query):
        return META_WHY
    if is_closing(record.latest):
        return "the user's message asks nothing, see not_a_query"
    return None


def _tail_meta(word: Tok, tail: int | None) -> str | None:
    """:data:`META_WHY` when ``word`` lies in a trailing note or leaked turn starting at ``tail``."""
    return META_WHY if tail is not None and word.start >= tail else None


def _finding(run: list[int], graded: dict[int, dict[str, Any]], q: Analysis, n_messages: int) -> Finding:
    words = [graded[u] for u in run]
    return assembled(words, q.text[words[0]["start"] : words[-1]["end"]], n_messages)
