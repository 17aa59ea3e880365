"""Terminal rendering of one request's four artifacts in review order, with the checks' evidence.

Order: chat state (what the rewriter received versus what the client showed), the transcript, the
rewrite (added words highlighted by their character spans), retrieval, answer, then the findings.
This is the one place that prints transcript text, because reading it is the point of ``show``.

Logged text is data, never terminal input or Rich markup: every string from a log goes through
:func:`visible` (control characters shown as ``\\u001b`` escapes, so an ``ESC [2J`` in a message
cannot clear the reviewer's screen or retitle the window) and into a ``Text`` (so ``[red]`` or
``[link=...]`` in a message is shown as typed, not styled or turned into a hyperlink).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from monitor.ingest.store.records import RecordView
from monitor.record import transcript_digest
from monitor.text import _visible_with_offsets, visible

if TYPE_CHECKING:
    from monitor.checks.store import FindingRow
    from monitor.ingest.store.quarantine import QuarantineRow
    from monitor.stats.calibration import Estimate

MESSAGE_CHARS = 600
"""Longer messages are cut in the terminal view (the passages of some transcripts run to pages)."""
COMPACT_HEAD = 100
"""In the compact view (``review``), characters kept from the start of a collapsed passage."""
COMPACT_LAST_HEAD = 300
"""... and from the start of the latest answer, which the follow-up most often refers to."""
COMPACT_WINDOW = 60
"""... and on each side of a flagged word inside it, so the reviewer sees the word in its sentence."""


def compact_passage(
    text: str, words: Iterable[str], *, head: int = COMPACT_HEAD, window: int = COMPACT_WINDOW
) -> str:
    """``text`` collapsed to its first ``head`` characters and ``window`` characters around each
    case-insensitive, whole-word occurrence of ``words``, the cuts marked "…" and the hidden length
    said at the end ("(+1,234 chars)"). A text no longer than what would be shown comes back whole."""
    spans = [(0, head)]
    for w in words:
        if not w.strip():
            continue
        for m in re.finditer(rf"(?<!\w){re.escape(w)}(?!\w)", text, re.IGNORECASE):
            spans.append((max(0, m.start() - window), min(len(text), m.end() + window)))
    spans.sort()
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    shown = sum(min(end, len(text)) - start for start, end in merged)
    if shown >= len(text):
        return text
    parts = [text[start:end].strip() for start, end in merged if start < len(text)]
    out = " … ".join(parts)
    hidden = len(text) - shown
    return f"{out} … (+{hidden:,} chars)"


def safe_text(value: object, style: str = "") -> Text:
    """Logged ``value`` (any type; ``None`` is empty) as a ``Text``: no markup, no control characters."""
    return Text(visible("" if value is None else str(value)), style=style)


def _safe_join(values: Iterable[object], sep: str = ", ") -> str:
    return sep.join(visible(str(v)) for v in values)


def _state(view: RecordView) -> RenderableType:
    ctx = view.context
    if ctx is None:
        return Panel("no ctx_input logged: the chat-state checks were skipped", title="1. chat state")
    lines = Text()
    seen, shown = ctx.n_messages, ctx.client_turn_count
    lines.append(f"messages the rewriter received: {seen}")
    if shown is None:
        lines.append("   client-rendered turns: not logged\n")
    elif shown > seen:
        lines.append(f"   client showed {shown}: ", style="")
        lines.append(f"the rewriter never saw {shown - seen} turns\n", style="bold red")
    elif shown < seen:
        lines.append(f"   client showed {shown}: ", style="")
        lines.append(f"the rewriter saw {seen - shown} turns the user never saw\n", style="bold red")
    else:
        lines.append(f"   client showed {shown}\n")
    lines.append(f"roles: user {ctx.roles.get('user', 0)}, assistant {ctx.roles.get('assistant', 0)}")
    if ctx.roles.get("user", 0) and not ctx.roles.get("assistant", 0):
        lines.append("  (no assistant turns)", style="yellow")
    lines.append(f"\nmonotonic timestamps: {ctx.monotonic if ctx.monotonic is not None else 'not logged'}")
    if ctx.digest is not None and ctx.messages is None:
        lines.append(f"\ndigest {visible(ctx.digest)}: not verifiable ({ctx.missing_messages()})")
    if ctx.digest is not None and ctx.messages is not None:
        ok = transcript_digest(ctx.messages) == ctx.digest
        lines.append(f"\ndigest {visible(ctx.digest)}: ")
        lines.append(
            "matches the messages" if ok else "DOES NOT match the messages", style="" if ok else "bold red"
        )
    return Panel(lines, title="1. chat state")


def _transcript(view: RecordView, words: set[str], compact: bool = False) -> RenderableType:
    ctx = view.context
    if ctx is None:
        return Panel("the message list was not logged", title="2. transcript")
    if ctx.messages is None:
        return Panel(ctx.missing_messages(), title="2. transcript")
    table = Table.grid(padding=(0, 1))
    last = max((i for i, m in enumerate(ctx.messages) if m.role != "user"), default=-1)
    for i, m in enumerate(ctx.messages):
        if compact and m.role != "user":
            # An older answer matters for the words it shares with the rewrite; the latest answer is
            # what the follow-up most often refers to, so more of it stays. The user's turns stay whole.
            body = compact_passage(m.content, words, head=COMPACT_LAST_HEAD if i == last else COMPACT_HEAD)
        elif len(m.content) <= MESSAGE_CHARS:
            body = m.content
        else:
            body = m.content[:MESSAGE_CHARS] + f"… (+{len(m.content) - MESSAGE_CHARS} chars)"
        text = safe_text(body)
        for w in words:
            text.highlight_words([visible(w)], style="bold magenta", case_sensitive=False)
        table.add_row(safe_text(f"[{i}] {m.role}", style="cyan" if m.role == "user" else "green"), text)
    return Panel(table, title=f"2. transcript ({len(ctx.messages)} messages, oldest first)")


def _rewrite(view: RecordView, findings: Sequence[FindingRow]) -> RenderableType:
    rec = view.record
    if rec is None:
        return Panel("no rewrite logged for this request", title="3. rewrite")
    shown, where = _visible_with_offsets(rec.query)
    query = Text(shown or "(empty query)")
    last = len(rec.query)
    for f in findings:
        if f.kind != "added_content_word":
            continue
        style = {"high": "bold white on red", "medium": "black on yellow"}.get(f.severity, "underline")
        for w in f.evidence.get("words", []):
            if isinstance(w.get("start"), int) and isinstance(w.get("end"), int):
                # Spans index the logged query; an escaped control character is longer when shown.
                start, end = (where[min(max(x, 0), last)] for x in (w["start"], w["end"]))
                query.stylize(style, start, end)
    body = Text()
    body.append("latest: ", style="bold")
    body.append(visible(rec.latest) + "\n")
    body.append("query:  ", style="bold")
    body.append(query)
    if rec.resolved:
        body.append(
            "\nresolved: "
            + "; ".join(
                f"{visible(r.surface)} -> {visible(r.antecedent)} (turn {r.turn})" for r in rec.resolved
            )
        )
    if rec.dropped:
        body.append("\ndropped: " + _safe_join(rec.dropped, "; "), style="yellow")
    meta = _safe_join(x for x in (rec.model, rec.prompt_version) if x)
    # A str title is read as Rich markup; a Text title is not.
    return Panel(body, title=Text(f"3. rewrite ({meta})" if meta else "3. rewrite"))


def _retrieval(view: RecordView) -> RenderableType:
    if not view.hits:
        return Panel("not logged", title="4. retrieval")
    table = Table("rank", "doc id", "score", "title")
    for h in view.hits:
        table.add_row(
            safe_text(h.get("rank")),
            safe_text(h.get("doc_id")),
            safe_text(h.get("score", "")),
            safe_text(h.get("title") or ""),
        )
    return Panel(table, title="4. retrieval")


def _answer(view: RecordView) -> RenderableType:
    if view.answer is None:
        return Panel("not logged", title="5. answer")
    cites = view.answer.get("citations") or []
    return Panel(
        safe_text(view.answer.get("text", "")) + safe_text(f"\ncitations: {cites}" if cites else ""),
        title="5. answer",
    )


def _findings(
    findings: Sequence[FindingRow],
    compact: bool = False,
    estimates: Mapping[tuple[str, str], Estimate] | None = None,
) -> RenderableType:
    """The findings, reasons in plain words (``monitor.review.evidence.plain_reason``: word frequencies
    as "about 1 in 51,000 words"); ``compact`` keeps the medium and high ones and says how many low ones
    it left out (a keyword-expansion query can have dozens, which pushed the rewrite off the screen).
    With ``estimates`` (``Calibration.for_findings``), a last column says how often the
    finding's step was a real problem on this rewriter by the verdicts so far."""
    from monitor.review.evidence import plain_reason

    if not findings:
        return Panel("no findings", title="findings")
    shown = [f for f in findings if not compact or f.severity in ("medium", "high")]
    columns = ["severity", "kind", "step", "words", "reason"]
    if estimates:
        columns.append("real, by the verdicts")
    table = Table(*columns)
    for f in shown:
        cells = [
            safe_text(f.severity),
            safe_text(f.kind),
            safe_text(f.step or "-"),
            safe_text(", ".join(f.words) or "-"),
            safe_text(plain_reason(f.reason)),
        ]
        if estimates:
            est = estimates.get((f.kind, f.step or ""))
            cells.append(safe_text(est.describe() if est is not None else "-"))
        table.add_row(*cells)
    hidden = len(findings) - len(shown)
    title = "findings" + (f" ({hidden} low ones hidden; v shows them)" if hidden else "")
    return Panel(table, title=Text(title))


def render_record(
    view: RecordView,
    findings: Sequence[FindingRow],
    *,
    compact: bool = False,
    estimates: Mapping[tuple[str, str], Estimate] | None = None,
) -> list[RenderableType]:
    """Rich renderables for ``show``: header, then the artifacts in review order, then the findings.
    ``compact`` (``review``'s default view) collapses older assistant passages to their start and the
    lines around the flagged words (:func:`compact_passage`); ``estimates`` as :func:`_findings` takes
    them."""
    words = {w for f in findings for w in f.words}
    rec = view.record
    header = safe_text(f"{view.request_id}  conversation {view.conv_id}", style="bold")
    if rec is not None:
        header.append(f"  turn {rec.turn}  {rec.ts.isoformat() if rec.ts else ''}", style="")
    return [
        header,
        _state(view),
        _transcript(view, words, compact),
        _rewrite(view, findings),
        (
            Text("4. retrieval and 5. answer: not logged", style="dim")
            if compact and not view.hits and view.answer is None
            else Group(_retrieval(view), _answer(view))
        ),
        _findings(findings, compact, estimates),
    ]


def quarantine_table(rows: Sequence[QuarantineRow], *, excerpt: bool, resolution: bool = False) -> Table:
    """The ``quarantine`` listing: file, line, reason, detail, with ``resolution`` the row's resolution
    ("open", "stored" or "dismissed") and, with ``excerpt``, the first 120 characters of each line.
    ``rows`` are ``QuarantineRow``; every cell is a ``Text`` made with :func:`visible`, because an
    excerpt is a raw log line (markup and escape sequences included)."""
    table = Table(
        "file",
        "line",
        "reason",
        "detail",
        *(["resolution"] if resolution else []),
        *(["excerpt"] if excerpt else []),
    )
    for r in rows:
        extra = [safe_text(r.resolution or "open")] if resolution else []
        extra += [safe_text((r.excerpt or "")[:120])] if excerpt else []
        table.add_row(
            safe_text(r.origin), safe_text(r.line_no), safe_text(r.reason), safe_text(r.detail), *extra
        )
    return table
