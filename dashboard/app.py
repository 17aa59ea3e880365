"""The review dashboard: a thin router over four pages (run with ``rewrite-monitor dashboard``).

It resolves the reviewer (Streamlit OIDC login when configured, else ``reviewer_name`` and a
"running without auth" banner), then hands over to the page. Pages call the ``monitor`` service
layer only; writes happen in ``on_click`` callbacks. Transcripts appear on the page and nowhere else:
nothing here logs them.
"""

from __future__ import annotations

import streamlit as st
from resources import auth_configured, log_failure, reviewer

from monitor.errors import MonitorError

st.set_page_config(page_title="rewrite-monitor review", page_icon=":material/rate_review:", layout="wide")

try:
    st.session_state["reviewer"] = reviewer()
except MonitorError as exc:  # invalid settings: say which, and stop
    st.error(str(exc))
    st.stop()

with st.sidebar:
    st.caption(f"reviewer: **{st.session_state['reviewer']}**")
    if auth_configured():
        st.button("Log out", on_click=st.logout)
if not auth_configured():
    st.warning(
        f"Running without auth: verdicts are signed as {st.session_state['reviewer']!r} (reviewer_name, else "
        "your login) and the server listens on 127.0.0.1 only. Configure [auth] in .streamlit/secrets.toml "
        "to log in.",
        icon=":material/lock_open:",
    )

pages = [
    st.Page("views/queue.py", title="Queue", icon=":material/inbox:", default=True),
    st.Page("views/item.py", title="Item", icon=":material/fact_check:", url_path="item"),
    st.Page("views/overview.py", title="Overview", icon=":material/monitoring:", url_path="overview"),
    st.Page("views/eval_set.py", title="Eval set", icon=":material/checklist:", url_path="eval-set"),
]
page = st.navigation(pages)
try:
    page.run()
except MonitorError as exc:  # the store is unreachable or not migrated: say how to fix it
    st.error(str(exc))
except Exception as exc:  # a bug: Streamlit's handler would log its message, which may quote a transcript
    st.error(log_failure(f"The {page.title} page", exc))
