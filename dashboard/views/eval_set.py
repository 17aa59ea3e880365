"""Eval set page: the regression cases built from verdicts, filtered by label and date (the export
itself is ``rewrite-monitor export``)."""

from __future__ import annotations

import pandas as pd
import reads
import streamlit as st
from resources import database_url

from monitor.verdicts import LABELS

PAGE_SIZE = 50


def _page(delta: int) -> None:
    st.session_state["cases_offset"] = max(0, st.session_state.get("cases_offset", 0) + delta)


def _reset() -> None:
    st.session_state["cases_offset"] = 0


st.title("Eval set")
with st.container(horizontal=True, vertical_alignment="bottom"):
    label = st.selectbox("Label", LABELS, index=None, placeholder="any", key="cases_label", on_change=_reset)
    since = st.date_input("Verdict since (UTC)", value=None, key="cases_since", on_change=_reset)
    superseded = st.checkbox("Include superseded versions", key="cases_superseded", on_change=_reset)

offset = st.session_state.get("cases_offset", 0)
rows, total = reads.cases(database_url(), label, since, superseded, PAGE_SIZE, offset)
st.metric("Cases", total)
if not rows:
    st.info("No regression cases match. Cases are built from verdicts (rewrite-monitor export writes them).")
else:
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "case": c.case_key[:12],
                    "version": c.version,
                    "superseded": c.superseded,
                    "label": c.label,
                    "artifact": c.artifact,
                    "source request": c.source_request_id,
                    "latest": c.latest,
                    "expected query": c.expected_query,
                    "must include": ", ".join(c.must_include),
                    "must not include": ", ".join(c.must_not_include),
                    "messages": len(c.messages),
                    "reviewer": c.reviewer,
                    "verdict at (UTC)": c.verdict_at,
                    "prompt version": c.prompt_version,
                    "model": c.model,
                }
                for c in rows
            ]
        ),
        hide_index=True,
    )
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button("Previous", disabled=offset == 0, on_click=_page, args=(-PAGE_SIZE,))
        st.caption(f"cases {offset + 1}–{offset + len(rows)} of {total}")
        st.button("Next", disabled=offset + len(rows) >= total, on_click=_page, args=(PAGE_SIZE,))
