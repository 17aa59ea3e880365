"""Item page: one request's evidence in artifact order (chat state, transcript, rewrite, retrieval and
answer, findings), then the verdict form. Writes (claim, verdict, skip, release, alias proposal) run
in ``on_click`` callbacks through the queue service, which refuses a verdict on a claim someone else
has taken over."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import NoReturn

import artifacts
import pandas as pd
import reads
import streamlit as st
from resources import (
    claim_filtered,
    database_url,
    db,
    flash,
    guarded,
    now,
    reads_changed,
    review_filters,
    review_scope,
    settings,
    show_flash,
)

from monitor.cases.store import no_case_why
from monitor.checks.store import FindingRow, list_findings
from monitor.errors import AmbiguousRequestError, ProposalError, QueueError
from monitor.ingest.store.records import get_record_view
from monitor.queue.store import (
    claim,
    get_item,
    held_item,
    item_for_request,
    keep_verdict,
    release,
    renew,
    reopen,
    reviewable_count,
    skip,
)
from monitor.queue.store.filters import QueueFilters
from monitor.review.evidence import Suggestion, choose_terms, prefill, suggestions
from monitor.review.evidence import corrected_query as evidence_corrected_query
from monitor.review.proposals import clean_members
from monitor.review.store import (
    ReviewProgress,
    latest_verdict,
    propose_alias,
    record_verdict,
    review_progress,
    verdicts_since,
)
from monitor.verdicts import ARTIFACTS, FINE_LABELS, LABELS, nothing_to_assert, term_origins

ss = st.session_state


# -- callbacks (every write of this page) -----------------------------------------------------------
def _lease() -> timedelta:
    return timedelta(minutes=settings().claim_lease_minutes)


def _whole_page() -> NoReturn:
    """End a callback of the verdict form with a run of the whole page: the form is a fragment, whose
    widgets otherwise rerun only the form, and a new item (or a claim lost) changes the title, the
    evidence and the progress line too."""
    st.rerun()


def _next_item() -> None:
    """Claim the reviewer's next item among those the Queue page's filters listed when "Review next" was
    pressed there (every item, without), or show the finished-queue screen when none is left."""
    with db(writes=True) as session:
        row = claim_filtered(session)
    st.query_params.clear()
    if row is None:
        ss.pop("item_id", None)
        ss["queue_done"] = True
    else:
        ss["item_id"] = row.id


@guarded
def _take_next() -> None:
    """ "Review next" where the item on screen is not the reviewer's to judge (someone else's claim, a
    lost claim, a finished item, a request outside the queue)."""
    _next_item()


def _flip_order() -> None:
    """The transcript's order toggled: remembered for every item of the session."""
    ss["transcript_newest_first"] = not ss.get("transcript_newest_first", False)


def _scope_words(f: QueueFilters) -> str:
    """The Queue page's filters that "Review next" keeps to, in words ("" for none)."""
    days = f"days {f.day_from or '…'} to {f.day_to or '…'}" if f.day_from or f.day_to else ""
    parts = [
        f"{f.kind} findings" if f.kind else "",
        f"{f.stratum} stratum" if f.stratum else "",
        f"prompt version {f.prompt_version}" if f.prompt_version else "",
        f"model {f.model}" if f.model else "",
        days,
        "overdue" if f.overdue_only else "",
    ]
    return ", ".join(p for p in parts if p)


def _history() -> list[int]:
    """Items this browser session gave a verdict on, newest last (what "Previous item" goes back to)."""
    history: list[int] = ss.setdefault("history", [])
    return history


def _again(item_id: int) -> bool:
    """Whether ``item_id`` was reopened with "Previous item": a new verdict replaces the reviewer's own."""
    return ss.get("again_item") == item_id


@guarded
def _previous(current: int | None) -> None:
    """Give the current item back (an undone one keeps its verdict) and reopen the last one judged."""
    history = _history()
    if not history:
        flash("info", "Nothing to go back to in this session yet.")
        return
    try:
        with db(writes=True) as session:
            if current is not None:
                if _again(current):
                    keep_verdict(session=session, item_id=current, reviewer=ss["reviewer"], now=now())
                else:
                    release(session=session, item_id=current, reviewer=ss["reviewer"], now=now())
            reopen(session=session, item_id=history[-1], reviewer=ss["reviewer"], now=now(), lease=_lease())
            earlier = latest_verdict(session=session, item_id=history[-1], reviewer=ss["reviewer"])
    except QueueError as exc:
        flash("error", f"Cannot go back: {exc}.")
        return
    if earlier is not None:
        # The form starts from the verdict being changed: its label, artifact and note, and its terms
        # (restored as the form draws, where the label's suggestions are known). The query field is
        # drawn with a value and keeps it: set here too, Streamlit warns.
        i, label = earlier.queue_item_id, earlier.label
        ss[f"label_{i}"] = label
        ss[f"artifact_{i}"] = None if label in FINE_LABELS else earlier.artifact
        ss[f"note_{i}"] = earlier.note or ""
        ss[f"restore_{i}"] = earlier
    reads_changed()
    ss["item_id"] = ss["again_item"] = history.pop()
    ss.pop("queue_done", None)
    st.query_params.clear()
    _whole_page()


@guarded
def _claim(item_id: int) -> None:
    try:
        with db(writes=True) as session:
            claim(session=session, item_id=item_id, reviewer=ss["reviewer"], now=now(), lease=_lease())
    except QueueError as exc:
        flash("error", f"Not claimed: {exc}.")
        return
    reads_changed()
    ss["item_id"] = item_id


def _accept_all(key: str, offered: tuple[Suggestion, ...]) -> None:
    """ "Accept all suggestions" (key A): every suggested term of the form's label, accepted."""
    ss[key] = list(offered)


@guarded
def _submit(item_id: int, request_id: str, logged_query: str, offered: tuple[Suggestion, ...]) -> None:
    label, artifact = ss.get(f"label_{item_id}"), ss.get(f"artifact_{item_id}")
    if label is None:
        flash("error", "Choose a label first.")
        return
    if label in FINE_LABELS:
        artifact = "none"  # a fine rewrite has no wrong artifact, whatever was clicked before
    if artifact is None:
        flash("error", "Choose the first wrong artifact.")
        return
    corrected = ss.get(f"query_{item_id}", "").strip() or None
    # a suggested term is stored only when accepted (its pill, or A for all); typed terms always
    chosen = choose_terms(
        ss.get(f"accept_{item_id}_{label}") or (),
        artifacts.split_terms(ss.get(f"include_{item_id}_{label}", "")),
        artifacts.split_terms(ss.get(f"exclude_{item_id}_{label}", "")),
        offered=offered,
    )
    must, must_not = chosen.must_include, chosen.must_not_include
    missing = nothing_to_assert(
        label,
        artifact,
        corrected=evidence_corrected_query(corrected, logged_query) is not None,
        must_include=must,
        must_not_include=must_not,
    )
    if missing and ss.get(f"warned_{item_id}") != (label, artifact):
        # said once, next to Submit; a second Submit of the same label stores the verdict (it still counts
        # in the rates and precision) without a regression case
        ss[f"warned_{item_id}"] = (label, artifact)
        hint = " (none of the suggested terms is accepted: A accepts them all)" if offered else ""
        flash("error", f"Not stored yet: {missing}{hint}. Submit again to store the verdict without a case.")
        return
    members: list[str] = []
    if label == "false_alarm_synonym" and ss.get(f"alias_{item_id}", "").strip():
        members = clean_members(artifacts.split_terms(ss[f"alias_{item_id}"]))
        if len(members) < 2:
            flash("error", "An alias group needs at least two distinct members, separated by commas.")
            return
    try:
        with db(writes=True) as session:
            verdict_id = record_verdict(
                session=session,
                item_id=item_id,
                reviewer=ss["reviewer"],
                label=label,
                artifact=artifact,
                now=now(),
                corrected_query=corrected,
                must_include=must,
                must_not_include=must_not,
                note=ss.get(f"note_{item_id}", "").strip() or None,
                lease=_lease(),
                again=_again(item_id),
                accepted=chosen,
            )
            why = no_case_why(session=session, verdict_id=verdict_id)
            if members:
                propose_alias(
                    session=session,
                    queue_item_id=item_id,
                    proposer=ss["reviewer"],
                    members=members,
                    now=now(),
                    note=f"false alarm on a synonym (verdict {verdict_id})",
                )
    except (QueueError, ProposalError) as exc:
        ss[f"typed_{item_id}"] = _typed(item_id, label)  # this click's text, not the last render's
        flash(
            "error", f"Verdict not stored: {exc}. Nothing was overwritten; what you typed is shown to copy."
        )
        reads_changed()
        _whole_page()
    reads_changed()
    _history().append(item_id)
    ss.pop("again_item", None)
    alias = " and an alias proposal" if members else ""
    uncased = f" (no regression case: {why})" if why else ""
    flash("success", f"Stored verdict {label} ({artifact}){alias} for {request_id}{uncased}.")
    _next_item()
    _whole_page()


@guarded
def _skip(item_id: int) -> None:
    try:
        with db(writes=True) as session:
            if _again(item_id):
                keep_verdict(session=session, item_id=item_id, reviewer=ss["reviewer"], now=now())
            else:
                skip(session=session, item_id=item_id, reviewer=ss["reviewer"], now=now())
    except QueueError as exc:
        flash("error", f"Not skipped: {exc}.")
        return
    reads_changed()
    flash("info", "Skipped.")
    _next_item()
    _whole_page()


@guarded
def _release(item_id: int) -> None:
    try:
        with db(writes=True) as session:
            if _again(item_id):
                keep_verdict(session=session, item_id=item_id, reviewer=ss["reviewer"], now=now())
            else:
                release(session=session, item_id=item_id, reviewer=ss["reviewer"], now=now())
    except QueueError as exc:
        flash("error", f"Not released: {exc}.")
        return
    reads_changed()
    flash("info", "Released: the item is back in the queue.")
    ss.pop("item_id", None)
    ss["goto_queue"] = True
    _whole_page()


def _renew_every() -> timedelta:
    """How often an open Item page renews its claim: a third of the lease, so two missed beats still
    leave it held. A closed tab stops renewing, and the claim then expires after the lease as before."""
    return _lease() / 3


@st.fragment(run_every=_renew_every())
def _keep_claim(item_id: int) -> None:
    """Renew this reviewer's claim while the page is open (issue 16, part 5); a claim lost meanwhile
    (expired and taken by someone else) reruns the page, which then shows what the reviewer typed.

    A fragment also runs with every full page run (a new item, a claim lost): a renewal younger than
    half the interval is not repeated, so those runs write nothing."""
    at = now()
    renewed = ss.setdefault("renewed_at", {})
    if item_id in renewed and at - renewed[item_id] < _renew_every() / 2:
        return
    with db(writes=True) as session:
        held = renew(session=session, item_id=item_id, reviewer=ss["reviewer"], now=at, lease=_lease())
    renewed[item_id] = at
    if not held:
        flash("warning", "Your claim on this item was lost (it expired and someone else took it).")
        st.rerun(scope="app")


# (A bare string here would be drawn on the page: Streamlit's "magic" writes expression statements.)
# The label radio's order: the fine labels first, so that the commonest verdicts ("ok", a false alarm on
# a synonym) are the number keys 1 and 2 (dashboard/keys.py).
FORM_LABELS = (*FINE_LABELS, *(x for x in LABELS if x not in FINE_LABELS))


def _typed(item_id: int, label: str | None) -> dict[str, str]:
    """What the reviewer typed or accepted in the form of ``item_id`` (label-keyed terms under their
    label)."""
    keys = {
        "query": f"query_{item_id}",
        "accepted": f"accept_{item_id}_{label}",
        "include": f"include_{item_id}_{label}",
        "exclude": f"exclude_{item_id}_{label}",
        "note": f"note_{item_id}",
        "alias": f"alias_{item_id}",
    }
    typed = {name: str(ss.get(key) or "") for name, key in keys.items()}
    typed["accepted"] = ", ".join(str(x) for x in ss.get(keys["accepted"]) or ())
    return typed


@st.fragment
def _verdict_form(
    i: int, request_id: str, logged_query: str, findings: list[FindingRow], progress: ReviewProgress | None
) -> None:
    """The verdict form of item ``i``: buttons first, then label, first wrong artifact, terms and note.

    A fragment, so that a click on a radio (which enables Submit) reruns this form only, not the page
    with its evidence and store reads (issue 16: the app's waiting per item). Every callback that
    opens another item or changes this one's claim ends in ``st.rerun()`` (:func:`_whole_page`), which
    makes the interaction rerun the whole page instead."""
    if progress is not None and progress.needed > 1:
        st.caption(
            f"Blind second review: reviewer {progress.given + 1} of {progress.needed}; the other "
            "verdicts stay hidden until the item is done."
        )
    # The buttons come before the radios so that Submit is on the first screen with the rewrite and
    # the findings (1280x720); the radios' values are read from the session state to enable it.
    label, artifact = ss.get(f"label_{i}"), ss.get(f"artifact_{i}")
    ready = label is not None and (label in FINE_LABELS or artifact is not None)
    offered = suggestions(prefill(label, findings))
    show_flash(("error", "warning"))
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button(
            "Submit and next",
            type="primary",
            shortcut="Ctrl+Enter",
            on_click=_submit,
            args=(i, request_id, logged_query, offered),
            disabled=not ready,
        )
        st.button("Skip", shortcut="Ctrl+Shift+S", on_click=_skip, args=(i,))
        st.button("Release", shortcut="Ctrl+Shift+L", on_click=_release, args=(i,))
        if _history():
            st.button("Previous item", shortcut="Ctrl+Shift+P", on_click=_previous, args=(i,))
        if not ready:
            st.caption(
                "Choose a label" + ("" if label is None else " and the first wrong artifact") + " to submit."
            )
    st.radio("Label", FORM_LABELS, index=None, horizontal=True, key=f"label_{i}")
    # The suggested terms follow the label, right under it (monitor.review.evidence, as the terminal
    # review): keyed by it, so choosing another label offers that label's; none for ok and false
    # alarms. Only accepted ones are stored (issue 35: prefilled terms went into the cases unread).
    _suggested_terms(i, label, offered)
    st.radio("First wrong artifact", ARTIFACTS, index=None, horizontal=True, key=f"artifact_{i}")
    st.text_input(
        "Corrected standalone query (stored only when it differs from the logged one)",
        value=logged_query,
        key=f"query_{i}",
    )
    with st.container(horizontal=True):
        st.text_input("Must include, typed (comma-separated)", key=f"include_{i}_{label}")
        st.text_input("Must not include, typed (comma-separated)", key=f"exclude_{i}_{label}")
    st.text_area("Note", key=f"note_{i}", height=68)
    if label == "false_alarm_synonym":
        flagged = ", ".join(prefill("fabricated_constraint", findings).must_not_include)
        st.text_input(
            "Propose alias (comma-separated members; stored for review, rules/ is never edited)",
            placeholder=flagged,
            key=f"alias_{i}",
        )
    # kept outside the widgets, whose state Streamlit drops once the form is no longer drawn
    ss[f"typed_{i}"] = _typed(i, label)


def _restore_terms(i: int, label: str | None, offered: tuple[Suggestion, ...]) -> None:
    """Going back to a verdict ("Previous item"): its terms in the form of its label, once, before the
    widgets draw (``monitor.verdicts.term_origins``); an accepted term no longer suggested (the findings
    changed), and every term of a verdict from before migration 0014, comes back as typed."""
    earlier = ss.get(f"restore_{i}")
    if earlier is None or earlier.label != label:
        return
    del ss[f"restore_{i}"]
    took, _ = term_origins(earlier.must_include, earlier.must_not_include, earlier.accepted_terms) or ({}, {})
    accepted = [s for s in offered if s.term in took.get(s.field, ())]
    for field, key in (
        ("must_include", f"include_{i}_{label}"),
        ("must_not_include", f"exclude_{i}_{label}"),
    ):
        kept = {s.term for s in accepted if s.field == field}
        ss[key] = ", ".join(t for t in getattr(earlier, field) if t not in kept)
    if offered:
        ss[f"accept_{i}_{label}"] = accepted


def _suggested_terms(i: int, label: str | None, offered: tuple[Suggestion, ...]) -> None:
    """The terms the findings suggest for ``label`` (``offered``), as pills the reviewer clicks to accept
    one, and "Accept all suggestions" (key A); nothing when there are none."""
    _restore_terms(i, label, offered)
    if not offered:
        return
    key = f"accept_{i}_{label}"
    with st.container(horizontal=True, vertical_alignment="bottom"):
        st.pills(
            "Suggested terms: stored only when accepted (click one, or A for all)",
            offered,
            selection_mode="multi",
            format_func=str,
            key=key,
        )
        st.button("Accept all suggestions", on_click=_accept_all, args=(key, offered), key=f"accept_all_{i}")


# -- the page ---------------------------------------------------------------------------------------
if ss.pop("goto_queue", False):
    st.switch_page("views/queue.py")
# a confirmation as a toast (the next item opens in its place); errors next to the buttons, below
show_flash(("success", "info"), toast=True)
reviewer, at = ss["reviewer"], now()
request = st.query_params.get("request")
today = datetime.combine(at.date(), time.min, tzinfo=at.tzinfo)
if ss.get("queue_done") and not request and "item_id" not in ss:
    with db() as session:
        given = verdicts_since(session=session, reviewer=reviewer, since=today)
    st.title("Queue done")
    scope = _scope_words(review_filters())
    within = f" within the Queue page's filters ({artifacts.md(scope)})" if scope else ""
    st.success(
        f"All items processed: nothing is left in the queue for {artifacts.md(reviewer)}{within}. "
        f"{given} items judged today."
    )
    with st.container(horizontal=True):
        if _history():
            st.button("Previous item", shortcut="Ctrl+Shift+P", on_click=_previous, args=(None,))
        st.page_link("views/queue.py", label="Back to the queue", icon=":material/inbox:")
        st.page_link("views/overview.py", label="Overview", icon=":material/monitoring:")
    st.stop()
ss.pop("queue_done", None)
with db() as session:
    if request:
        item = item_for_request(session=session, request_id=request, now=at)
    elif "item_id" in ss:
        item = get_item(session=session, item_id=ss["item_id"], now=at)
    else:
        item = held_item(session=session, reviewer=reviewer, now=at)
    request_id = request or (item.request_id if item else None)
    if request_id is None:
        st.info("No item open. Take the next one from the queue.")
        st.page_link("views/queue.py", label="Go to the queue", icon=":material/inbox:")
        st.stop()
    conv_id = item.conv_id if item else None
    try:
        view = get_record_view(session=session, request_id=request_id, conv_id=conv_id)
    except AmbiguousRequestError as exc:
        st.error(artifacts.md(exc.with_hint("open it from the queue")))
        st.stop()
    findings = list_findings(
        session=session, checks=reads.current_checks(), request_id=request_id, conv_id=conv_id
    )
    verdict = latest_verdict(session=session, item_id=item.id) if item else None
    progress = review_progress(session=session, item_id=item.id, reviewer=reviewer) if item else None
    given_today = verdicts_since(session=session, reviewer=reviewer, since=today)
    left = reviewable_count(session=session, reviewer=reviewer, now=at, **review_scope())
if view is None:
    st.error(f"No request {artifacts.md(repr(request_id))} in the store.")
    st.stop()

rec, ctx = view.record, view.context
st.html(artifacts.STYLE)
st.title(artifacts.md(view.request_id))
meta = [f"conversation {view.conv_id}"]
if rec is not None:
    meta += [
        f"turn {rec.turn}",
        f"{rec.ts:%Y-%m-%d %H:%M:%S} UTC" if rec.ts else "",
        rec.model or "",
        rec.prompt_version or "",
    ]
if item is not None:
    meta += [f"queue item {item.id}", f"{item.stratum} stratum", f"π = {item.inclusion_prob:.3g}"]
mine = item is not None and item.state == "claimed" and item.claimed_by == reviewer
if mine and item is not None:
    # an item reopened to change its verdict is among those judged today already
    position = given_today + (0 if _again(item.id) else 1)
    # first on the line: where the reviewer is in the day's work
    meta.insert(0, f"**Item {position} of {position + left} today** ({left} more in the queue for you)")
    if _again(item.id):
        meta.insert(1, "changing your verdict: a new one replaces it, the old one is kept")
scope = _scope_words(review_filters())
if scope:
    meta.append(f"next items: only {scope} (the Queue page's filters)")
st.caption(" · ".join(m if m.startswith("**Item ") else artifacts.md(m) for m in meta if m))

# One screen (issue 16, part 2): the evidence a reviewer reads (chat state, transcript, retrieval and
# answer) on the left, scrolling on its own; the rewrite, the findings and the verdict form on the right,
# in view while the left side scrolls.
evidence_col, focus_col = st.columns([4, 6], gap="medium")
with evidence_col, st.container(key="rm-evidence"):
    # 1. chat state
    st.subheader("1. Chat state")
    if ctx is None:
        st.warning("No ctx_input logged: the chat-state checks were skipped.")
    else:
        gap = artifacts.gap_message(ctx)
        if gap:
            st.error(artifacts.md(gap), icon=":material/warning:")
        with st.container(horizontal=True):
            st.metric("Messages received", ctx.n_messages)
            st.metric(
                "Client showed", ctx.client_turn_count if ctx.client_turn_count is not None else "not logged"
            )
            st.metric("User turns", ctx.roles.get("user", 0))
            st.metric("Assistant turns", ctx.roles.get("assistant", 0))
            st.metric("Monotonic", {True: "yes", False: "no", None: "not logged"}[ctx.monotonic])
        st.markdown(f"Digest: {artifacts.md(artifacts.digest_status(ctx))}")
        for f in findings:
            if f.kind == "session_mismatch":
                st.warning(f"session\\_mismatch: {artifacts.md(f.reason)}")
        for other in artifacts.other_requests(findings):
            st.page_link(
                "views/item.py",
                label=f"Open the other request {artifacts.md(other)}",
                query_params={"request": other},
            )

    # 2. transcript
    n_msgs = len(ctx.messages) if ctx is not None and ctx.messages is not None else 0
    # the order is the reviewer's, kept for the session (the widget's own state would be dropped on
    # the pages that do not draw it)
    newest = ss.setdefault("transcript_newest_first", False)
    order = "newest first" if newest else "oldest first"
    st.subheader(f"2. Transcript ({n_msgs} messages received, {order})")
    st.toggle("Newest first", value=newest, key=f"newest_{view.request_id}", on_change=_flip_order)
    st.html(artifacts.transcript_html(ctx, findings, newest_first=newest))

    # 4. retrieval and answer
    st.subheader("4. Retrieval and answer")
    if view.hits:
        st.dataframe(
            pd.DataFrame(
                [{k: h.get(k) for k in ("rank", "doc_id", "score", "title")} for h in view.hits],
                columns=["rank", "doc_id", "score", "title"],
            ),
            hide_index=True,
        )
    else:
        st.caption("Retrieval not logged.")
    if view.answer is not None:
        st.markdown("**Answer**")
        st.text(view.answer.get("text", ""))
        if view.answer.get("citations"):
            st.caption("citations: " + ", ".join(artifacts.md(c) for c in view.answer["citations"]))
    else:
        st.caption("Answer not logged.")

with focus_col, st.container(key="rm-focus"):
    # 3. rewrite
    st.subheader("3. Rewrite")
    if rec is None:
        st.warning("No rewrite logged for this request.")
    else:
        st.markdown("**Latest message**")
        with st.container(key="rm-latest-box"):
            st.html(artifacts.latest_html(rec.latest, findings))
        st.markdown("**Query**" + ("" if rec.rewritten else " (not rewritten: the latest message as is)"))
        with st.container(key="rm-query-box"):
            st.html(artifacts.query_html(rec.query, findings))
        st.html(artifacts.legend_html())
        if rec.resolved:
            st.markdown(
                "**Resolved:** "
                + "; ".join(
                    f"{artifacts.md(r.surface)} → {artifacts.md(r.antecedent)}"
                    + (f" (turn {r.turn})" if r.turn is not None else "")
                    for r in rec.resolved
                )
            )
        if rec.dropped:
            st.markdown(
                "**Dropped:** "
                + "; ".join(
                    f"{artifacts.md(d)} :red-badge[constraining qualifier]" if flagged else artifacts.md(d)
                    for d, flagged in artifacts.constraining_dropped(rec.dropped, findings)
                )
            )

    # findings, in plain words
    st.subheader("Findings")
    if findings:
        estimates = reads.step_calibration(database_url()).for_findings(
            rec.prompt_version if rec else None, rec.model if rec else None, findings
        )
        st.html(artifacts.findings_html(findings, estimates))
    else:
        st.caption("No findings (a control item, or the checks found nothing).")

    # verdict: no heading of its own, so that the form's buttons fit on the first screen
    claimable_here = False
    kept = ss.get(f"typed_{item.id}") if item is not None and not mine else None
    if kept and any(kept.values()):
        st.warning("You no longer hold this item. What you typed was not stored; copy it from here:")
        st.code("\n".join(f"{name}: {text}" for name, text in kept.items() if text), language=None)
    if item is None:
        st.info("This request is not in the review queue.")
    elif item.state == "done" and progress is not None and progress.needed > 1 and not progress.settled:
        st.warning(
            f"{progress.given} reviewers judged this item and disagree: it awaits an adjudicator "
            "(`rewrite-monitor stats --agreement` lists it; `rewrite-monitor verdict ... --adjudicate`)."
        )
    elif item.state == "done":
        v = verdict
        st.success(
            f"Reviewed by {artifacts.md(v.reviewer)}: {artifacts.md(v.label)} ({artifacts.md(v.artifact)})."
            if v
            else "Done."
        )
        if progress is not None and progress.given > 1:
            st.caption(
                f"{progress.given} reviewers judged this item; `rewrite-monitor stats --agreement` lists "
                "disagreements and how to adjudicate them."
            )
    elif item.state == "skipped":
        st.info("Skipped by a reviewer.")
    elif progress is not None and progress.mine and progress.given < progress.needed:
        # blind: neither who else reviews it nor what anyone said
        st.info(
            f"You gave this item's first verdict; it awaits a second reviewer ({progress.given} of "
            f"{progress.needed} so far). Its regression case is made once the reviewers agree or an "
            "adjudicator decides."
        )
    elif (
        not mine
        and item.state == "claimed"
        and item.lease_expires_at
        and item.lease_expires_at >= at.replace(tzinfo=None)
    ):
        st.warning(f"Claimed by {artifacts.md(item.claimed_by)} until {item.lease_expires_at:%H:%M} UTC.")
    elif not mine:
        st.button("Claim to review", type="primary", on_click=_claim, args=(item.id,))
        claimable_here = True
    else:
        if item.lease_expires_at and item.lease_expires_at < at.replace(tzinfo=None):
            st.warning(
                f"Your claim expired at {item.lease_expires_at:%H:%M} UTC; "
                "submitting claims it again if nobody else has."
            )
        _verdict_form(item.id, view.request_id, rec.query if rec else "", findings, progress)
        _keep_claim(item.id)

if not mine and not claimable_here:
    # no form and nothing to claim here: the next item is one key away all the same (a lost claim
    # left no way on); where "Claim to review" shows, N is that button's (dashboard/keys.py)
    st.button("Review next", shortcut="N", on_click=_take_next)
# an error or warning the form did not show (no form: the item is someone else's, done or skipped)
show_flash(("error", "warning"))
