"""The Item page's evidence as HTML fragments and plain values, in artifact order.

Pure functions of a :class:`monitor.ingest.store.records.RecordView` and its findings (no Streamlit, no
database), mirroring ``monitor.cli.render`` (the terminal ``show``). Every piece of logged text is
HTML-escaped before it is marked up: transcripts are untrusted input.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from monitor.checks.base import FABRICATION_KINDS
from monitor.record import ContextInput, transcript_digest
from monitor.text import split_terms as text_split_terms

if TYPE_CHECKING:
    from monitor.checks.store import FindingRow
    from monitor.stats.calibration import Estimate

ADDED_TITLE = "in no turn, in no alias group"
"""Hover text of an added content word: why the check flagged it."""
MISSING_SHOWN = 20
"""At most this many missing-turn placeholders are drawn; a longer gap is summarised in one row."""

CHAT_STATE_KINDS = (
    "window_truncated",
    "missing_assistant_turns",
    "non_monotonic",
    "digest_mismatch",
    "roles_mismatch",
    "session_mismatch",
)

STYLE = """<style>
/* Drawn once per page (st.html); the fragments below only carry the classes. */
.rm-msg {margin: 0 0 .4rem 0; padding: .3rem .6rem; border-left: 3px solid #9aa0a6;}
.rm-user {border-color: #1a73e8;}
.rm-assistant {border-color: #188038;}
.rm-missing {border-color: #d93025; color: #d93025; font-style: italic;}
.rm-role {font-weight: 600; margin-right: .4rem;}
mark.rm-added {background: #f28b82; padding: 0 .15rem;}
mark.rm-added-medium {background: #fdd663; padding: 0 .15rem;}
mark.rm-word {background: #d7aefb; padding: 0 .15rem;}
.rm-legend {font-size: .8rem; color: #5f6368; margin: .2rem 0 .4rem 0;}
.rm-legend mark {margin: 0 .3rem 0 .6rem;}
.rm-finding {margin: 0 0 .2rem 0; font-size: .9rem;}
.rm-sev {display: inline-block; min-width: 4.2rem; font-weight: 600;}
.rm-sev-high {color: #c5221f;} .rm-sev-medium {color: #b06000;} .rm-sev-low {color: #5f6368;}
.rm-kind {color: #5f6368; font-size: .8rem;}
.rm-real {color: #5f6368; font-size: .8rem; margin-right: .3rem; border-bottom: 1px dotted #9aa0a6;}
/* One screen (issue 16): each column scrolls on its own, so the rewrite, the findings and the form
   stay in view while the reviewer reads the transcript beside them. */
.st-key-rm-evidence, .st-key-rm-focus {max-height: calc(100vh - 9rem); overflow-y: auto; padding-top: .3rem;
  padding-right: .4rem;}
[data-testid="stMainBlockContainer"] {padding-top: 3.6rem;}
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] {gap: .5rem;}
[data-testid="stMainBlockContainer"] h1 {padding: 0; font-size: 1.7rem;}
.st-key-rm-evidence h3, .st-key-rm-focus h3 {font-size: 1.1rem; padding: .1rem 0 0 0;}
.st-key-rm-focus p {margin-bottom: .15rem;}
.st-key-rm-focus [data-testid="stRadio"] label p {font-size: .88rem;}
.st-key-rm-focus [data-testid="stRadio"] [role="radiogroup"] {gap: 0 .9rem;}
/* one line per finding; the whole reason on hover */
.rm-finding {white-space: nowrap; overflow: hidden; text-overflow: ellipsis;}
/* Issue 35: the rewrite, the first findings and Submit on the first screen at 1280x720. A long latest
   message or query (a keyword expansion of 100 words) scrolls in its own box; findings past the first
   three fold under "N more" (key F). */
.st-key-rm-latest-box {max-height: 4.8em; overflow-y: auto;}
.st-key-rm-query-box {max-height: 4.9em; overflow-y: auto;}
details.rm-more summary {cursor: pointer; font-size: .85rem; color: #1a73e8;}
</style>"""

LEGEND = (
    ("rm-added", "added word, high"),
    ("rm-added-medium", "added word, medium or low"),
    ("rm-word", "named by a finding"),
)
"""The highlight colours and what each means, as (CSS class, meaning): :func:`legend_html`."""


# Every ASCII punctuation character CommonMark lets a backslash escape (spec 2.4), so none of them can
# open an image, a link, emphasis, a heading, an HTML tag, an entity, a Streamlit directive (":red[...]",
# ":material/x:") or math ("$...$"). Newlines become spaces: a caption or title is one line.
_MD_ESCAPE_RE = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")
# GFM's autolink literals ("https://x", "www.x.y", "a@b.c") are found in the text after the escapes
# are undone (the browser test showed it), so a zero-width space breaks each trigger instead.
_AUTOLINK_RE = re.compile(r"(?i)(?<=[a-z0-9+.-]:)(?=//)|(?<=\bwww)(?=\.)|(?<=@)")
ZWSP = "\u200b"


def md(value: object) -> str:
    """``value`` as literal text inside Markdown (``st.title``, ``st.caption``, ``st.markdown``, alert
    boxes, link labels): the one door for logged text into an element that renders Markdown.

    Logged fields (request and conversation ids, model, prompt version, resolved and dropped entries,
    citations, reasons, URL parameters) are written by whoever produced the log line; without this a
    ``![x](https://host/pixel)`` in a request id would make the reviewer's browser fetch that URL."""
    text = _AUTOLINK_RE.sub(ZWSP, " ".join(str(value).split()))
    return _MD_ESCAPE_RE.sub(r"\\\1", text)


@dataclass(frozen=True, slots=True)
class Span:
    """Characters ``start`` to ``end`` (Python slice) of one text, to mark with ``css`` and ``title``."""

    start: int
    end: int
    css: str
    title: str


def mark(text: str, spans: Iterable[Span]) -> str:
    """``text`` HTML-escaped, with each span wrapped in ``<mark class=... title=...>``.

    Spans out of range are ignored; overlapping spans keep the first one that starts (by position).
    """
    out, pos = [], 0
    for s in sorted(spans, key=lambda s: (s.start, -s.end)):
        if s.start < pos or s.end > len(text) or s.start >= s.end:
            continue
        out.append(html.escape(text[pos : s.start]))
        marked = html.escape(text[s.start : s.end])
        out.append(f'<mark class="{s.css}" title="{html.escape(s.title)}">{marked}</mark>')
        pos = s.end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def word_spans(text: str, words: Iterable[str], css: str = "rm-word", title: str = "") -> list[Span]:
    """Spans of each of ``words`` where it occurs in ``text`` as a whole word, ignoring case."""
    spans = []
    for w in {w for w in words if w.strip()}:
        for m in re.finditer(rf"(?<!\w){re.escape(w)}(?!\w)", text, flags=re.IGNORECASE):
            spans.append(Span(m.start(), m.end(), css, title or f"a word the checks refer to: {w}"))
    return spans


# -- 1. chat state ---------------------------------------------------------------------------------
def gap_message(ctx: ContextInput) -> str | None:
    """The window gap in words, or ``None`` when the counts agree or the client count was not logged.

    ``client_turn_count > n_messages``: "the rewriter never saw 7 turns" (the user saw more than the
    rewriter); the reverse: "the rewriter saw 2 turns the user never saw".
    """
    shown, seen = ctx.client_turn_count, ctx.n_messages
    if shown is None or shown == seen:
        return None
    if shown > seen:
        gap = shown - seen
        return f"the rewriter never saw {gap} turn{'s' if gap != 1 else ''}"
    gap = seen - shown
    return f"the rewriter saw {gap} turn{'s' if gap != 1 else ''} the user never saw"


def digest_status(ctx: ContextInput) -> str:
    """``matches``, ``DOES NOT match``, or why it cannot be checked (no digest or no message list)."""
    if ctx.digest is None:
        return "not logged"
    if ctx.messages is None:
        return f"{ctx.digest} (no message list to compare)"
    ok = transcript_digest(ctx.messages) == ctx.digest
    return f"{ctx.digest}: {'matches the messages' if ok else 'DOES NOT match the messages'}"


def other_requests(findings: Sequence[FindingRow]) -> list[str]:
    """Request ids that session-mismatch findings point to (to link to), in order, without repeats."""
    out: list[str] = []
    for f in findings:
        other = f.evidence.get("other_request_id") if f.kind == "session_mismatch" else None
        if other and other not in out:
            out.append(str(other))
    return out


# -- 2. transcript ---------------------------------------------------------------------------------
def _message_spans(index: int, content: str, findings: Sequence[FindingRow], words: set[str]) -> list[Span]:
    spans = word_spans(content, words)
    for f in findings:
        stated = f.evidence.get("stated_at")
        for loc in stated if isinstance(stated, list) else [stated] if isinstance(stated, dict) else []:
            if loc.get("message_index") == index and isinstance(loc.get("start"), int):
                spans.append(Span(loc["start"], loc["end"], "rm-word", f"{f.kind}: stated here"))
    return spans


def transcript_html(
    ctx: ContextInput | None, findings: Sequence[FindingRow], *, newest_first: bool = False
) -> str:
    """The messages the rewriter received, oldest first, role-labelled, with the words the findings
    name highlighted; preceded by one row per turn the client showed but the rewriter never received.

    The unseen turns are the oldest ones (a window keeps the latest), so they come first. With
    ``newest_first`` the same rows in the reverse order: the turn the rewrite was made from at the top.
    """
    if ctx is None:
        return "<p>no ctx_input logged: what the rewriter received is unknown</p>"
    words = {w for f in findings for w in f.words}
    rows: list[str] = []
    unseen = max(0, (ctx.client_turn_count or 0) - ctx.n_messages)
    for i in range(min(unseen, MISSING_SHOWN)):
        rows.append(
            f'<div class="rm-msg rm-missing">turn {i + 1}: missing (the client showed it, '
            "the rewriter never received it)</div>"
        )
    if unseen > MISSING_SHOWN:
        rows.append(f'<div class="rm-msg rm-missing">… {unseen - MISSING_SHOWN} more missing turns</div>')
    if ctx.messages is None:
        rows.append(f"<p>{html.escape(ctx.missing_messages())} (signals only)</p>")
        return "\n".join(reversed(rows) if newest_first else rows)
    # the turn the rewrite was made from: the Item page keeps it in view on opening (dashboard/keys.py)
    latest_user = max((i for i, m in enumerate(ctx.messages) if m.role == "user"), default=None)
    for i, m in enumerate(ctx.messages):
        role = html.escape(m.role)
        body = mark(m.content, _message_spans(i, m.content, findings, words))
        css = f"rm-msg rm-{role}" + (" rm-latest-user" if i == latest_user else "")
        rows.append(f'<div class="{css}"><span class="rm-role">[{i}] {role}</span>{body}</div>')
    return "\n".join(reversed(rows) if newest_first else rows)


# -- 3. rewrite ------------------------------------------------------------------------------------
def query_spans(findings: Sequence[FindingRow]) -> list[Span]:
    """Spans of the query to highlight: each added content word (hover: why it was flagged), each
    conflicting qualifier value and each replaced term."""
    spans = []
    for f in findings:
        if f.kind not in FABRICATION_KINDS:
            continue
        for w in f.evidence.get("words", []):
            if not (isinstance(w.get("start"), int) and isinstance(w.get("end"), int)):
                continue
            if f.kind == "added_content_word":
                css = "rm-added" if w.get("severity", f.severity) == "high" else "rm-added-medium"
                title = ADDED_TITLE + (f" ({w['why']})" if w.get("why") else "")
            else:
                css, title = "rm-added", f"{f.kind}: {f.reason}"
            spans.append(Span(w["start"], w["end"], css, title))
    return spans


NAMED_IN_QUERY = ("unresolved_reference", "not_a_query", "wrong_antecedent")
"""Kinds whose evidence ``words`` are spans of the query: the reference left unresolved, the meta text,
the name put in place of a reference."""


def query_html(query: str, findings: Sequence[FindingRow]) -> str:
    """The logged query, escaped, with the added words marked, and the words of the kinds in
    :data:`NAMED_IN_QUERY` (an unresolved reference, meta text, a doubtful antecedent) marked too."""
    spans = query_spans(findings)
    for f in findings:
        if f.kind not in NAMED_IN_QUERY:
            continue
        for w in f.evidence.get("words", []):
            if isinstance(w, dict) and isinstance(w.get("start"), int) and isinstance(w.get("end"), int):
                spans.append(Span(w["start"], w["end"], "rm-word", f"{f.kind}: {f.reason}"))
    return f"<p>{mark(query, spans)}</p>" if query else "<p>(empty query)</p>"


def legend_html() -> str:
    """What the highlight colours mean (:data:`LEGEND`), one line."""
    items = "".join(f'<mark class="{css}">{html.escape(meaning)}</mark>' for css, meaning in LEGEND)
    return f'<div class="rm-legend">Highlights:{items}</div>'


def findings_html(
    findings: Sequence[FindingRow], estimates: Mapping[tuple[str, str], Estimate] | None = None
) -> str:
    """The findings, most severe first, in plain words: the severity, what the kind means
    (``monitor.review.evidence.PLAIN_KINDS``, the id beside it) and the reason with word frequencies
    said as "about 1 in 51,000 words" (``plain_reason``), the first :data:`FINDINGS_SHOWN` open and the
    rest folded under "N more findings"; with ``estimates``
    (``Calibration.for_findings``), how often the finding's step was a real problem on this
    rewriter by the verdicts so far ("real 0.60" after the severity; the interval and the verdicts on
    hover). Escaped: reasons quote logged words, and a rewriter's name is
    logged text too."""
    from monitor.review.evidence import PLAIN_KINDS, plain_reason

    rank = {"high": 0, "medium": 1, "low": 2}
    rows = []
    for n, f in enumerate(sorted(findings, key=lambda f: rank.get(f.severity, 3))):
        if n == FINDINGS_SHOWN:
            more = len(findings) - FINDINGS_SHOWN
            plural = "s" if more > 1 else ""
            rows.append(f'<details class="rm-more"><summary>{more} more finding{plural}</summary>')
        sev = html.escape(f.severity)
        plain = html.escape(PLAIN_KINDS.get(f.kind, f.kind.replace("_", " ")))
        reason = html.escape(plain_reason(f.reason))
        est = (estimates or {}).get((f.kind, f.step or ""))
        # right after the severity: a line is cut at the column's width, and reasons are long
        learned = (
            f'<span class="rm-real" title="real on this rewriter: {html.escape(est.describe())}">'
            f"real {est.mean:.2f}</span> "
            if est is not None
            else ""
        )
        rows.append(
            f'<div class="rm-finding" title="{reason}"><span class="rm-sev rm-sev-{sev}">{sev}</span> '
            f'{learned}<b>{plain}</b> <span class="rm-kind">({html.escape(f.kind)})</span>: {reason}</div>'
        )
    if len(findings) > FINDINGS_SHOWN:
        rows.append("</details>")
    return "\n".join(rows)


FINDINGS_SHOWN = 3
"""Findings shown open on the Item page (most severe first); the rest fold under "N more" (issue 35: the
first three and Submit on the first screen at 1280x720)."""


def constraining_dropped(dropped: Sequence[str], findings: Sequence[FindingRow]) -> list[tuple[str, bool]]:
    """Each ``dropped`` entry with whether a live constraining qualifier was dropped with it (a
    ``dropped_qualifier`` finding that the rewriter's own ``dropped`` lists)."""
    values = [
        str(v).casefold()
        for f in findings
        if f.kind == "dropped_qualifier"
        for v in (f.evidence.get("value"), (f.evidence.get("stated_at") or {}).get("text"))
        if v
    ]
    return [(d, any(v in d.casefold() for v in values)) for d in dropped]


# -- verdict form terms ----------------------------------------------------------------------------
def split_terms(text: str) -> list[str]:
    """Comma-separated terms from a form field: ``monitor.text.split_terms`` (normalised, empty and
    repeated ones dropped, order kept)."""
    return text_split_terms(text)


def latest_html(latest: str, findings: Sequence[FindingRow]) -> str:
    """The latest user message, escaped, with the words the query lost (``intent_dropped``) marked."""
    spans = [
        Span(w["start"], w["end"], "rm-word", "intent_dropped: the query lacks this word")
        for f in findings
        if f.kind == "intent_dropped"
        for w in f.evidence.get("missing", [])
        if isinstance(w, dict) and w.get("message_index") == "latest" and isinstance(w.get("start"), int)
    ]
    return f"<p>{mark(latest, spans)}</p>"
