"""Overview page: finding rates per day and per prompt version with 95% interval bands, the queue's
depth and overdue count, reviewer throughput, the checks' precision per kind from verdicts, the
weighted estimate of bad rewrites in all traffic, the agreement between reviewers on blind second reviews,
what the verdicts taught this week, and the alerts raised."""

from __future__ import annotations

import altair as alt
import reads
import streamlit as st
from resources import database_url, now, settings

st.title("Overview")
s = settings()
since = st.date_input("Since (UTC day; empty: all time)", value=None, key="ov_since")
data = reads.overview(
    database_url(), reads.bucket(now(), minutes=reads.STATS_TTL // 60), s.queue_min_severity, since
)

with st.container(horizontal=True):
    st.metric("Open queue items", data["depth"])
    st.metric("Overdue", data["overdue"])
    st.metric("Verdicts, last 14 days", int(data["throughput"]["verdicts"].sum()))
    bad = data["estimates"].iloc[0] if len(data["estimates"]) else None
    if bad is not None and bad["value"] is not None and bad["value"] == bad["value"]:
        st.metric(
            "Bad rewrites in all traffic (weighted)",
            f"{bad['value']:.1%}",
            help="Horvitz–Thompson over the sampled strata: verdicts weighted by 1/π",
        )
    else:
        st.metric("Bad rewrites in all traffic (weighted)", "no verdicts yet")
if bad is not None and bad["value"] is not None and bad["value"] == bad["value"]:
    # the base beside the figure, not in a tooltip: 83% from 12 verdicts is not 83% from 1,200
    interval = f"95% CI {bad['lo']:.1%}–{bad['hi']:.1%}" if bad["lo"] == bad["lo"] else "no interval"
    st.caption(
        f"Bad rewrites: {bad['value']:.1%} ({interval}), from {int(bad['verdicts'])} verdicts on strata "
        f"covering {bad['coverage']:.1%} of the traffic"
        + ("; too little to go on" if bad["coverage"] < 0.5 or bad["verdicts"] < 30 else "")
        + "."
    )

# every kind a current check can report, not only those found so far: a kind that never fires is news
kinds = sorted(set(data["by_day"]["kind"]) | set(reads.finding_kinds()))
chosen = st.multiselect("Finding kinds", kinds, default=kinds, key="ov_kinds")
# One distinct colour per kind across both charts (Tableau 10, then Tableau 20 for more kinds), with
# the legend Altair draws beside each chart: the default palette's pale shades were hard to tell apart.
palette = alt.Scale(domain=kinds, scheme="tableau10" if len(kinds) <= 10 else "tableau20")
legend = alt.Legend(title="finding kind", symbolLimit=0)  # every kind, not the first 11
tooltip = [
    "group",
    "kind",
    "flagged",
    "checked",
    alt.Tooltip("per_1000", format=".1f"),
    alt.Tooltip("lo", format=".1f"),
    alt.Tooltip("hi", format=".1f"),
]

st.subheader(f"Finding rate per 1,000 checked rewrites, per day ({s.queue_min_severity} and above)")
by_day = data["by_day"][data["by_day"]["kind"].isin(chosen)]
if by_day.empty:
    st.caption("No findings yet.")
else:
    base = alt.Chart(by_day).encode(
        x=alt.X("group:T", title="day (UTC)", timeUnit="yearmonthdate"),
        color=alt.Color("kind:N", scale=palette, legend=legend),
    )
    # the band's colour without a legend of its own: the legend shows the lines' full colours
    band = (
        base.mark_area(opacity=0.15)
        .encode(color=alt.Color("kind:N", scale=palette, legend=None))
        .encode(y=alt.Y("lo:Q", title="per 1,000 (95% band)"), y2="hi:Q")
    )
    line = base.mark_line(point=True).encode(y="per_1000:Q", tooltip=tooltip)
    st.altair_chart(band + line)

st.subheader("Finding rate per prompt version")
by_prompt = data["by_prompt"][data["by_prompt"]["kind"].isin(chosen)]
if by_prompt.empty:
    st.caption("No findings yet.")
else:
    base = alt.Chart(by_prompt).encode(
        x=alt.X("group:N", title="prompt version"),
        xOffset="kind:N",
        color=alt.Color("kind:N", scale=palette, legend=legend),
    )
    bars = base.mark_rule(strokeWidth=2).encode(y=alt.Y("lo:Q", title="per 1,000 (95% interval)"), y2="hi:Q")
    points = base.mark_point(filled=True, size=60).encode(y="per_1000:Q", tooltip=tooltip)
    st.altair_chart(bars + points)

left, right = st.columns(2)
with left:
    st.subheader("Reviewer throughput (verdicts per day)")
    if data["throughput"].empty:
        st.caption("No verdicts in the last 14 days.")
    else:
        st.altair_chart(
            alt.Chart(data["throughput"])
            .mark_bar()
            .encode(
                x=alt.X("day:T", title="day (UTC)"),
                y="verdicts:Q",
                color="reviewer:N",
                tooltip=["day", "reviewer", "verdicts"],
            )
        )
with right:
    st.subheader("Checks' precision per kind (from verdicts)")
    if data["precision"].empty:
        st.caption("No verdicts yet.")
    else:
        st.dataframe(
            data["precision"],
            hide_index=True,
            column_config={
                "precision": st.column_config.NumberColumn(format="percent"),
                "lo": st.column_config.NumberColumn("95% CI low", format="percent"),
                "hi": st.column_config.NumberColumn("95% CI high", format="percent"),
            },
        )

st.subheader("Whole-traffic estimates (Horvitz–Thompson over the sampled strata)")
st.caption(
    "Each estimate with its 95% interval, the verdicts it rests on and the share of the traffic their "
    "strata cover (coverage): a figure from a few verdicts covering a sliver of the traffic says little."
)
st.dataframe(
    data["estimates"],
    hide_index=True,
    column_config={
        c: st.column_config.NumberColumn(format="percent") for c in ("value", "lo", "hi", "coverage")
    },
)

st.subheader("Agreement between reviewers (blind second reviews)")
if data["agreement"].empty:
    st.caption(
        "No item has two reviewers yet. Set `double_review_share` (e.g. 0.2) and a share of each day's "
        "sample is also reviewed blind by a second reviewer."
    )
else:
    st.caption(
        "Cohen's kappa (Krippendorff's alpha when an item has more than two reviewers): agreement beyond "
        "chance, 1 perfect, 0 no better than chance; with its 95% interval and the items it rests on. "
        f"{data['disagreements']} disagreements await adjudication (`rewrite-monitor stats --agreement`)."
    )
    st.dataframe(
        data["agreement"],
        hide_index=True,
        column_config={
            "value": st.column_config.NumberColumn(format="%.2f"),
            "lo": st.column_config.NumberColumn("95% CI low", format="%.2f"),
            "hi": st.column_config.NumberColumn("95% CI high", format="%.2f"),
            "raw agreement": st.column_config.NumberColumn(format="percent"),
        },
    )

st.subheader("Learned from the verdicts this week")
if data["learned"].empty:
    st.caption(f"Nothing learned in the last {reads.LEARNED_DAYS} days.")
else:
    moving = int((data["learned"]["effect"] != "none").sum())
    st.caption(
        f"{moving} of {len(data['learned'])} words grade differently for their rewriter: one step lower "
        "after enough dismissals, one higher after a confirmed fabrication (`rewrite-monitor rules learned`)."
    )
    st.dataframe(data["learned"], hide_index=True)

st.subheader("Alerts raised")
if data["alerts"].empty:
    st.caption("No alerts" + (f" since {since}" if since else "") + ".")
else:
    st.dataframe(data["alerts"], hide_index=True)
st.caption(f"Figures are cached for up to {reads.STATS_TTL // 60} minutes.")
