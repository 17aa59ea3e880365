"""The review dashboard: a thin router over four pages (run with ``rewrite-monitor dashboard``).

It resolves the reviewer (Streamlit OIDC login when configured, else ``reviewer_name`` and a
"running without auth" banner), then hands over to the page. Pages call the ``monitor`` service
layer only; writes happen in ``on_click`` callbacks. Transcripts appear on the page and nowhere else:
nothing here logs them.
"""

from __future__ import annotations

import keys
import streamlit as st
from artifacts import md
from resources import auth_configured, log_failure, reviewer

from monitor.errors import MonitorError
from monitor.settings import auth_missing, is_loopback

st.set_page_config(page_title="rewrite-monitor review", page_icon=":material/rate_review:", layout="wide")

# However the app was started (`rewrite-monitor dashboard`, or `streamlit run` with any options), a
# half-configured login is an error and a non-local bind needs a working one.
_auth_table = st.secrets.get("auth") if st.secrets.load_if_toml_exists() else None
if _auth_table is not None and auth_missing(_auth_table):
    st.error(
        "The [auth] table in .streamlit/secrets.toml is incomplete: it lacks "
        + ", ".join(auth_missing(_auth_table))
        + ". Complete it (Streamlit OIDC) or remove it to run locally without a login."
    )
    st.stop()
_address = str(st.get_option("server.address") or "")
if _auth_table is None and not is_loopback(_address):
    st.error(
        f"This server listens on {md(_address) or 'every interface'} without a login: start it with "
        "`rewrite-monitor dashboard` (127.0.0.1), or configure [auth] in .streamlit/secrets.toml."
    )
    st.stop()

try:
    st.session_state["reviewer"] = reviewer()
except MonitorError as exc:  # invalid settings: say which, and stop
    st.error(str(exc))
    st.stop()

# The pages are listed across the top and the page keeps its full width: with a sidebar, the Item page's
# rewrite, findings and form did not fit on one screen at 1280x720.
keys.install()

pages = [
    st.Page("views/queue.py", title="Queue", icon=":material/inbox:", default=True),
    st.Page("views/item.py", title="Item", icon=":material/fact_check:", url_path="item"),
    st.Page("views/overview.py", title="Overview", icon=":material/monitoring:", url_path="overview"),
    st.Page("views/eval_set.py", title="Eval set", icon=":material/checklist:", url_path="eval-set"),
]
page = st.navigation(pages, position="top")
if auth_configured():
    with st.container(horizontal=True, vertical_alignment="center"):
        st.caption(f"reviewer: **{md(st.session_state['reviewer'])}**")
        st.button("Log out", on_click=st.logout)
else:
    unauthenticated = (
        f"Running without auth: verdicts are signed as {md(repr(st.session_state['reviewer']))}, and this "
        "server listens on this machine only. Configure [auth] in .streamlit/secrets.toml to log in."
    )
    if page.url_path == "item":
        # one line on the Item page, whose rewrite, findings and Submit must fit the first screen
        st.caption(f":material/lock_open: {unauthenticated}")
    else:
        st.warning(unauthenticated, icon=":material/lock_open:")
try:
    page.run()
except MonitorError as exc:  # the store is unreachable or not migrated: say how to fix it
    st.error(str(exc))
except Exception as exc:  # a bug: Streamlit's handler would log its message, which may quote a transcript
    st.error(log_failure(f"The {page.title} page", exc))
