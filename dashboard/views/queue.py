"""Queue page: the reviewer's next item (claimed with the queue's lease), and the open items with
filters and counts. Claiming happens only in the button's callback."""

from __future__ import annotations

from datetime import date

import pandas as pd
import reads
import streamlit as st
from artifacts import md
from resources import (
    claim_filtered,
    database_url,
    db,
    flash,
    guarded,
    now,
    reads_changed,
    settings,
    show_flash,
)

from monitor.queue.sampling import STRATA
from monitor.queue.store import held_item
from monitor.queue.store.filters import NO_FILTERS, QueueFilters

PAGE_SIZE = 50


@guarded
def _claim_next(filters: QueueFilters) -> None:
    # within the filters the page showed (kept below as review_filters, for every next item)
    with db(writes=True) as session:
        row = claim_filtered(session)
    reads_changed()
    if row is None:
        which = " that matches these filters" if filters != NO_FILTERS else ""
        flash("info", f"Nothing left to review{which}.")
        return
    st.session_state["item_id"] = row.id
    st.session_state["goto_item"] = True


def _page(delta: int) -> None:
    st.session_state["queue_offset"] = max(0, st.session_state.get("queue_offset", 0) + delta)


def _reset_offset() -> None:
    st.session_state["queue_offset"] = 0


st.title("Review queue")
show_flash()
url, s, reviewer = database_url(), settings(), st.session_state["reviewer"]
opts = reads.options(url)

with st.container(horizontal=True, vertical_alignment="bottom"):
    kind = st.selectbox(
        "Finding kind", opts.kinds, index=None, placeholder="any", key="f_kind", on_change=_reset_offset
    )
    stratum = st.selectbox(
        "Severity", STRATA, index=None, placeholder="any", key="f_stratum", on_change=_reset_offset
    )
    prompt_version = st.selectbox(
        "Prompt version",
        opts.prompt_versions,
        index=None,
        placeholder="any",
        key="f_prompt",
        on_change=_reset_offset,
    )
    model = st.selectbox(
        "Model", opts.models, index=None, placeholder="any", key="f_model", on_change=_reset_offset
    )
    days = st.date_input(
        "Day (UTC)",
        value=[],  # a range with nothing chosen (Streamlit's typing lists no empty tuple)
        min_value=opts.first_day,
        max_value=opts.last_day,
        key="f_days",
        on_change=_reset_offset,
    )
    overdue_only = st.checkbox("Overdue only", key="f_overdue", on_change=_reset_offset)

day_from, day_to = (tuple(days) + (None, None))[:2] if days else (None, None)
filters = QueueFilters(
    kind,
    stratum,
    prompt_version,
    model,
    day_from if isinstance(day_from, date) else None,
    day_to if isinstance(day_to, date) else None,
    overdue_only,
)
# What "Review next", "Continue reviewing" and the list's links go on with: the filters shown now
st.session_state["review_filters"] = filters
with db() as session:
    held = held_item(session=session, reviewer=reviewer, now=now())
with st.container(border=True):
    if held is not None:
        st.markdown(
            f"You hold **{md(held.request_id)}** ({held.stratum}; {md(', '.join(held.kinds)) or 'control'}) "
            f"until {held.lease_expires_at:%H:%M} UTC."
        )
        if st.button("Continue reviewing", type="primary", shortcut="N"):
            st.session_state["item_id"] = held.id
            st.switch_page("views/item.py")
    else:
        st.markdown(
            "**Review next** claims the most severe, oldest open item"
            + (" these filters list" if filters != NO_FILTERS else "")
            + f" for you for {s.claim_lease_minutes:g} minutes, and the next one after each verdict."
        )
        st.button("Review next", type="primary", shortcut="N", on_click=_claim_next, args=(filters,))
if st.session_state.pop("goto_item", False):
    st.switch_page("views/item.py")

offset = st.session_state.get("queue_offset", 0)
page = reads.open_items(
    url,
    reads.bucket(now()),
    s.queue_min_severity,
    filters.kind,
    filters.stratum,
    filters.prompt_version,
    filters.model,
    filters.day_from,
    filters.day_to,
    filters.overdue_only,
    PAGE_SIZE,
    offset,
)

with st.container(horizontal=True):
    st.metric("Open items", page.total)
    st.metric("Overdue", page.overdue)
    for stratum_name in STRATA:
        st.metric(stratum_name.capitalize(), page.by_stratum.get(stratum_name, 0))

if not page.rows:
    st.info("No open items match these filters.")
else:
    table = pd.DataFrame(
        [
            {
                "request": f"item?request={r.request_id}",
                "severity": r.stratum,
                "kinds": ", ".join(r.kinds),
                "flagged words": ", ".join(r.words),
                "day": r.day,
                "due (UTC)": r.due_at,
                "overdue": r.overdue,
                "claimed by": r.claimed_by if r.state == "claimed" else "",
                "prompt version": r.prompt_version,
                "model": r.model,
            }
            for r in page.rows
        ]
    )
    st.dataframe(
        table,
        hide_index=True,
        column_config={
            "request": st.column_config.LinkColumn("request", display_text=r"item\?request=(.*)"),
            "due (UTC)": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm"),
        },
    )
    first, last = offset + 1, offset + len(page.rows)
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button("Previous", disabled=offset == 0, on_click=_page, args=(-PAGE_SIZE,))
        st.caption(f"items {first}–{last} of {page.total}")
        st.button("Next", disabled=last >= page.total, on_click=_page, args=(PAGE_SIZE,))
