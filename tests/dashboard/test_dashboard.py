"""The review dashboard under Streamlit's AppTest, on a SQLite store seeded through ingest, the checks
and the queue (the same path as ``rewrite-monitor run``).

The seeded store: three follow-ups of 2024-03-04, each checked and queued (all overdue by now):

- ``c1_2``: the client showed 9 turns, the rewriter received 2 ("never saw 7 turns"); the query adds
  "enterprise plan" (in no turn, no alias group: high); retrieval and answer logged.
- ``c3_2``: the query adds "Kubernetes" (high).
- ``c2_2``: a clean rewrite with a medium finding only (``antecedent_not_in_input``).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from monitor.cli.main import app as cli_app
from monitor.queue.store import claim
from monitor.review.evidence import Suggestion
from monitor.review.store import record_verdict
from monitor.store.engine import make_engine, session_factory, upgrade
from monitor.store.models import AliasProposal, QueueItem, RegressionCase, Verdict
from tests.helpers import seed_dashboard_store, shown

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
TIMEOUT = 30  # seconds per AppTest run; the first run imports spaCy-free pages but pandas and altair


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dash") / "template.db"
    seed_dashboard_store(f"sqlite:///{path}")
    return path


@pytest.fixture
def store(template_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh copy of the seeded store, configured for the app through the environment (as the
    ``dashboard`` command does); the reviewer is ``bob`` unless a test says otherwise."""
    path = tmp_path / "store.db"
    shutil.copy(template_db, path)
    url = f"sqlite:///{path}"
    monkeypatch.setenv("REWRITE_MONITOR_DATABASE_URL", url)
    monkeypatch.setenv("REWRITE_MONITOR_REVIEWER_NAME", "bob")
    monkeypatch.delenv("REWRITE_MONITOR_CONFIG", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    return url


@pytest.fixture
def db(store: str) -> Iterator[Session]:
    """A session on the test's store, to check what the app wrote (and to act as another reviewer)."""
    engine = make_engine(store)
    with session_factory(engine)() as session:
        yield session
    engine.dispose()


def fresh(session: Session) -> Session:
    """``session`` with its read transaction ended, so it sees what the app committed since (a SQLite
    WAL reader keeps the snapshot its transaction began with)."""
    session.rollback()
    return session


def item_id(session: Session, request_id: str) -> int:
    return session.scalars(select(QueueItem.id).where(QueueItem.request_id == request_id)).one()


def start() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    return at.run()


def button(at: AppTest, label: str) -> object:
    return next(b for b in at.button if b.label == label)


def htmls(at: AppTest) -> list[str]:
    """The pages' own HTML blocks, without the key script every page carries (dashboard/keys.py)."""
    return [h.proto.body for h in at.get("html") if not h.proto.body.lstrip().startswith("<script>")]


def item_caption(at: AppTest) -> str:
    """The Item page's line under the title ("**Item 1 of 3 today** ... · conversation ...")."""
    return next(c.value for c in at.caption if c.value.startswith("**Item "))


def open_next_item(at: AppTest) -> AppTest:
    """Click "Review next" on the Queue page (claims, then switches to the Item page)."""
    return button(at, "Review next").click().run()


# -- Queue ------------------------------------------------------------------------------------------
def test_queue_page_counts_open_items_and_lists_them_in_review_order(store: str) -> None:
    at = start()
    assert not at.exception
    assert shown(at.title[0].value) == "Review queue"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {
        "Open items": "3",
        "Overdue": "3",
        "High": "2",
        "Medium": "1",
        "Low": "0",
        "Control": "0",
    }
    table = at.dataframe[0].value
    assert list(table["request"]) == ["item?request=c1_2", "item?request=c3_2", "item?request=c2_2"]
    assert list(table["severity"]) == ["high", "high", "medium"]
    assert shown(at.warning[0].value).startswith("Running without auth: verdicts are signed as 'bob'")


def test_queue_filters_narrow_the_list_and_the_counts(store: str) -> None:
    at = start()
    at.selectbox(key="f_kind").set_value("window_truncated").run()
    assert list(at.dataframe[0].value["request"]) == ["item?request=c1_2"]
    assert {m.label: m.value for m in at.metric}["Open items"] == "1"
    at.selectbox(key="f_kind").set_value(None)
    at.selectbox(key="f_stratum").set_value("medium").run()
    assert list(at.dataframe[0].value["request"]) == ["item?request=c2_2"]
    at.selectbox(key="f_stratum").set_value(None)
    at.selectbox(key="f_prompt").set_value("ctx-v1")
    at.checkbox(key="f_overdue").check().run()
    assert {m.label: m.value for m in at.metric}["Open items"] == "3"


# -- Item -------------------------------------------------------------------------------------------
def test_review_next_claims_the_most_severe_item_and_shows_its_evidence_in_order(
    store: str, db: Session
) -> None:
    at = open_next_item(start())
    assert not at.exception
    assert shown(at.title[0].value) == "c1_2"
    # one screen: the evidence on the left, the rewrite, findings and form on the right
    assert [h.value for h in at.subheader] == [
        "1. Chat state",
        "2. Transcript (2 messages received, oldest first)",
        "4. Retrieval and answer",
        "3. Rewrite",
        "Findings",
    ]
    assert shown(at.error[0].value) == "the rewriter never saw 7 turns"
    transcript, latest, query = htmls(at)[:3]  # the page's <style> block comes last
    assert transcript.count("missing (the client showed it, the rewriter never received it)") == 7
    assert (
        transcript.index("turn 7: missing") < transcript.index("[0] user") < transcript.index("[1] assistant")
    )
    assert (
        'Frankfurt and <mark class="rm-word" title="a word the checks refer to: Dublin">Dublin</mark>.'
        in transcript
    )
    assert latest == "<p>What&#x27;s the uptime SLA on the second one?</p>"
    assert query == (
        "<p>What is the uptime SLA for the Dublin region on the "
        '<mark class="rm-added" title="in no turn, in no alias group (plan_tier value)">enterprise</mark> '
        '<mark class="rm-added-medium" '
        'title="in no turn, in no alias group (content word that narrows the topic)">plan</mark>?</p>'
    )
    hits = at.dataframe[0].value
    assert hits.to_dict("records") == [
        {"rank": 1, "doc_id": "doc-sla", "score": 0.82, "title": "Dublin SLA"},
        {"rank": 2, "doc_id": "doc-eu", "score": 0.71, "title": "EU regions"},
    ]
    assert at.text[0].value == "99.95% [1]"
    legend, findings = htmls(at)[3:5]
    assert legend.startswith(
        '<div class="rm-legend">Highlights:<mark class="rm-added">added word, high</mark>'
    )
    # most severe first, each kind in plain words beside its id, frequencies in words
    assert re.findall(r"<b>([^<]+)</b> <span class=\"rm-kind\">\(([a-z_]+)\)", findings) == [
        ("added word", "added_content_word"),
        ("truncated window", "window_truncated"),
        ("antecedent in no turn", "antecedent_not_in_input"),
    ]
    assert "zipf" not in findings
    # beside each rewrite finding, what the verdicts taught of its step (none yet: the shipped prior);
    # the chat-state kinds judge the logging, which no verdict speaks to
    # (after the severity, where the cut of a long line cannot reach it; the interval on hover)
    learned = re.findall(
        r'<span class="rm-real" title="real on this rewriter: ([^"]+)">real (\d\.\d\d)</span> '
        r'<b>[^<]+</b> <span class="rm-kind">\(([a-z_]+)\)',
        findings,
    )
    assert [k for _, _, k in learned] == ["added_content_word", "antecedent_not_in_input"]
    assert all(t.endswith("prior only (no verdict on this step for ctx-v1)") for t, _, _ in learned)
    assert all(t.startswith(f"{mean} (") for t, mean, _ in learned)
    item = db.get_one(QueueItem, item_id(db, "c1_2"))
    assert (item.state, item.claimed_by) == ("claimed", "bob")
    # the form starts from the logged query and, once a label says what is wrong, suggests its terms
    # (monitor.review.evidence): the added words as must-not-include for a fabrication, nothing for ok;
    # a suggestion is stored only when accepted, so none is accepted and the typed fields start empty
    i = item.id
    assert (
        at.text_input(key=f"query_{i}").value
        == "What is the uptime SLA for the Dublin region on the enterprise plan?"
    )
    assert (at.text_input(key=f"include_{i}_None").value, at.text_input(key=f"exclude_{i}_None").value) == (
        "",
        "",
    )
    assert len(at.pills) == 0
    at.radio(key=f"label_{i}").set_value("fabricated_constraint").run()
    (offered,) = at.pills
    assert (offered.options, offered.value) == (["must not: enterprise", "must not: plan"], [])
    assert at.text_input(key=f"include_{i}_fabricated_constraint").value == ""
    assert at.text_input(key=f"exclude_{i}_fabricated_constraint").value == ""
    at.radio(key=f"label_{i}").set_value("ok").run()
    assert (len(at.pills), at.text_input(key=f"exclude_{i}_ok").value) == (0, "")


def test_verdict_is_stored_with_exactly_the_submitted_fields_then_the_next_item_opens(
    store: str, db: Session
) -> None:
    at = open_next_item(start())
    i = item_id(db, "c1_2")
    at.radio(key=f"artifact_{i}").set_value("rewrite")
    at.radio(key=f"label_{i}").set_value("fabricated_constraint").run()
    at.text_input(key=f"query_{i}").input("What is the uptime SLA for the Dublin region?")
    at.text_input(key=f"include_{i}_fabricated_constraint").input("Dublin, uptime SLA")
    at.text_input(key=f"exclude_{i}_fabricated_constraint").input("enterprise")
    at.text_area(key=f"note_{i}").input("the user never named a plan")
    at = button(at, "Submit and next").click().run()
    assert not at.exception
    assert shown(at.toast[0].value) == "Stored verdict fabricated_constraint (rewrite) for c1_2."
    v = fresh(db).scalars(select(Verdict)).one()
    assert (
        v.queue_item_id,
        v.request_id,
        v.reviewer,
        v.artifact,
        v.label,
        v.corrected_query,
        v.must_include,
        v.must_not_include,
        v.note,
    ) == (
        i,
        "c1_2",
        "bob",
        "rewrite",
        "fabricated_constraint",
        "What is the uptime SLA for the Dublin region?",
        ["Dublin", "uptime SLA"],
        ["enterprise"],
        "the user never named a plan",
    )
    assert db.get_one(QueueItem, i).state == "done"
    assert shown(at.title[0].value) == "c3_2"  # the next item, already claimed for bob
    assert db.get_one(QueueItem, item_id(db, "c3_2")).claimed_by == "bob"


def test_progress_previous_item_and_the_finished_queue(store: str, db: Session) -> None:
    """Issue 16, part 4: "item i of N", going back to change a verdict (a new version, the old kept),
    and a finished-queue screen instead of an empty form."""
    at = open_next_item(start())
    first = item_id(db, "c1_2")
    assert item_caption(at).startswith("**Item 1 of 3 today** (2 more in the queue for you) · ")
    at.radio(key=f"label_{first}").set_value("ok").run()
    at = button(at, "Submit and next").click().run()
    assert shown(at.title[0].value) == "c3_2"
    assert item_caption(at).startswith("**Item 2 of 3 today** (1 more in the queue for you) · ")
    at = button(at, "Previous item").click().run()
    assert not at.exception
    assert shown(at.title[0].value) == "c1_2"
    assert any("changing your verdict" in c.value for c in at.caption)
    # the form starts from the verdict being changed, without Streamlit's default-value warning
    assert at.radio(key=f"label_{first}").value == "ok"
    assert [shown(w.value) for w in at.warning if not shown(w.value).startswith("Running without auth")] == []
    # c3_2 went back to the queue; c1_2 is claimed again by bob
    states = {i.request_id: (i.state, i.claimed_by) for i in fresh(db).scalars(select(QueueItem))}
    assert states["c3_2"] == ("pending", None) and states["c1_2"] == ("claimed", "bob")
    at.radio(key=f"artifact_{first}").set_value("rewrite")
    at.radio(key=f"label_{first}").set_value("fabricated_constraint").run()
    at = button(at, "Accept all suggestions").click().run()
    at = button(at, "Submit and next").click().run()
    labels = fresh(db).scalars(
        select(Verdict.label).where(Verdict.queue_item_id == first).order_by(Verdict.id)
    )
    assert list(labels) == ["ok", "fabricated_constraint"]  # appended, never overwritten
    for _ in range(2):  # c3_2, then c2_2
        i = item_id(db, shown(at.title[0].value))
        at.radio(key=f"label_{i}").set_value("ok").run()
        at = button(at, "Submit and next").click().run()
    assert shown(at.title[0].value) == "Queue done"
    assert shown(at.success[-1].value) == (
        "All items processed: nothing is left in the queue for bob. 3 items judged today."
    )
    assert [b.label for b in at.button] == ["Previous item"]


def test_ok_needs_no_artifact_and_a_missing_label_is_refused(store: str, db: Session) -> None:
    at = open_next_item(start())
    i = item_id(db, "c1_2")
    # Submit stays disabled until the form is valid, and says what it waits for
    assert button(at, "Submit and next").disabled
    assert "Choose a label to submit." in [c.value for c in at.caption]
    at.radio(key=f"label_{i}").set_value("dropped_constraint").run()
    assert button(at, "Submit and next").disabled
    assert "Choose a label and the first wrong artifact to submit." in [c.value for c in at.caption]
    assert fresh(db).scalars(select(Verdict)).all() == []
    at.radio(key=f"label_{i}").set_value("ok").run()
    assert not button(at, "Submit and next").disabled
    button(at, "Submit and next").click().run()
    v = fresh(db).scalars(select(Verdict)).one()
    assert (v.label, v.artifact) == ("ok", "none")


def test_two_reviewers_in_two_browsers_never_get_the_same_item(
    store: str, db: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REWRITE_MONITOR_REVIEWER_NAME", "alice")
    alice = start()
    monkeypatch.setenv("REWRITE_MONITOR_REVIEWER_NAME", "bob")
    bob = start()
    alice = open_next_item(alice)
    bob = open_next_item(bob)
    assert (shown(alice.title[0].value), shown(bob.title[0].value)) == ("c1_2", "c3_2")
    claims = {
        i.request_id: i.claimed_by
        for i in fresh(db).scalars(select(QueueItem).where(QueueItem.state == "claimed"))
    }
    assert claims == {"c1_2": "alice", "c3_2": "bob"}
    # bob opening alice's item by its link sees who holds it, and gets no form
    bob.query_params["request"] = "c1_2"
    bob = bob.run()
    assert shown(bob.warning[-1].value).startswith("Claimed by alice until ")
    assert [b.label for b in bob.button if b.label == "Submit and next"] == []


def test_a_verdict_on_an_expired_claim_taken_by_someone_else_is_refused(store: str, db: Session) -> None:
    at = open_next_item(start())
    i = item_id(db, "c1_2")
    at.radio(key=f"artifact_{i}").set_value("rewrite")
    at.radio(key=f"label_{i}").set_value("fabricated_constraint").run()
    at = button(at, "Accept all suggestions").click().run()
    # bob's lease runs out (renewed at a time long past), and alice takes the item over
    past = datetime.now(UTC) - timedelta(hours=1)
    # the page renewed bob's claim as it drew the form: end this session's older read first
    claim(session=fresh(db), item_id=i, reviewer="bob", now=past, lease=timedelta(minutes=10))
    claim(session=db, item_id=i, reviewer="alice", now=datetime.now(UTC), lease=timedelta(minutes=10))
    at.text_area(key=f"note_{i}").set_value("the enterprise plan is in no turn")
    at = button(at, "Submit and next").click().run()
    assert shown(at.error[-1].value) == (
        f"Verdict not stored: queue item {i} is claimed by alice. Nothing was overwritten; "
        "what you typed is shown to copy."
    )
    assert fresh(db).scalars(select(Verdict)).all() == []
    item = db.get_one(QueueItem, i, populate_existing=True)
    assert (item.state, item.claimed_by) == ("claimed", "alice")
    assert shown(at.warning[-1].value).startswith("Claimed by alice until ")
    # issue 16, part 5: the typed text survives the lost claim, to copy
    assert "You no longer hold this item. What you typed was not stored; copy it from here:" in [
        shown(w.value) for w in at.warning
    ]
    kept = at.code[0].value
    assert "note: the enterprise plan is in no turn" in kept
    assert "query: What is the uptime SLA for the Dublin region on the enterprise plan?" in kept
    assert "accepted: must not: enterprise, must not: plan" in kept


def test_skip_and_release(store: str, db: Session) -> None:
    at = open_next_item(start())
    at = button(at, "Skip").click().run()
    assert shown(at.info[0].value) == "Skipped."
    assert shown(at.title[0].value) == "c3_2"
    at = button(at, "Release").click().run()
    assert shown(at.title[0].value) == "Review queue"
    assert shown(at.info[0].value) == "Released: the item is back in the queue."
    states = {i.request_id: (i.state, i.claimed_by) for i in fresh(db).scalars(select(QueueItem))}
    assert states == {"c1_2": ("skipped", "bob"), "c3_2": ("pending", None), "c2_2": ("pending", None)}


def test_false_alarm_on_a_synonym_proposes_an_alias_and_the_cli_prints_it_as_yaml(
    store: str, db: Session
) -> None:
    at = open_next_item(start())
    i = item_id(db, "c1_2")
    at.radio(key=f"label_{i}").set_value("false_alarm_synonym").run()
    # a suggestion only: nothing is proposed unless the reviewer types it
    alias = at.text_input(key=f"alias_{i}")
    assert (alias.value, alias.placeholder) == ("", "enterprise, plan")
    at.text_input(key=f"alias_{i}").input("enterprise plan,  business   tier, Enterprise Plan")
    at = button(at, "Submit and next").click().run()
    assert (
        shown(at.toast[0].value)
        == "Stored verdict false_alarm_synonym (none) and an alias proposal for c1_2."
    )
    proposal = fresh(db).scalars(select(AliasProposal)).one()
    verdict = db.scalars(select(Verdict)).one()
    assert (proposal.queue_item_id, proposal.request_id, proposal.proposer, proposal.members) == (
        i,
        "c1_2",
        "bob",
        ["enterprise plan", "business tier"],
    )
    when = proposal.created_at
    result = CliRunner().invoke(cli_app, ["--database-url", store, "rules", "proposals"])
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "# Alias groups proposed by reviewers (rewrite-monitor rules proposals).\n"
        "# Review each one, then paste it under `groups:` in rules/aliases.yaml.\n"
        f"  # proposal {proposal.id} by bob on {when:%Y-%m-%d %H:%M} UTC, "
        f"from queue item {i} (request c1_2)\n"
        f"  - name: proposed-{proposal.id}-enterprise-plan\n"
        "    members: [enterprise plan, business tier]\n"
        f"    note: false alarm on a synonym (verdict {verdict.id})\n"
    )


def test_an_ok_with_the_form_untouched_stores_no_terms_no_query_and_no_alias(store: str, db: Session) -> None:
    """Before, an untouched `ok` stored the logged query as the "corrected" one and the flagged words as
    must-not-include, and a false alarm filed the prefilled words as an alias proposal."""
    at = open_next_item(start())
    i = item_id(db, "c1_2")
    at.radio(key=f"label_{i}").set_value("ok").run()
    at = button(at, "Submit and next").click().run()
    assert not at.exception
    v = fresh(db).scalars(select(Verdict)).one()
    assert (v.label, v.corrected_query, v.must_include, v.must_not_include) == ("ok", None, [], [])
    assert db.scalars(select(AliasProposal)).all() == []


def test_an_alias_of_one_member_is_refused_before_anything_is_stored(store: str, db: Session) -> None:
    at = open_next_item(start())
    i = item_id(db, "c1_2")
    at.radio(key=f"label_{i}").set_value("false_alarm_synonym").run()
    at.text_input(key=f"alias_{i}").input("enterprise")
    at = button(at, "Submit and next").click().run()
    refused = "An alias group needs at least two distinct members, separated by commas."
    assert shown(at.error[-1].value) == refused
    assert fresh(db).scalars(select(Verdict)).all() == []
    assert db.scalars(select(AliasProposal)).all() == []


# -- Overview and Eval set ----------------------------------------------------------------------------
def test_overview_draws_rates_with_bands_and_the_estimates(store: str, db: Session) -> None:
    now = datetime.now(UTC)
    for request_id, label, artifact in (("c1_2", "fabricated_constraint", "rewrite"), ("c3_2", "ok", "none")):
        record_verdict(
            session=db,
            item_id=item_id(db, request_id),
            reviewer="carol",
            label=label,
            artifact=artifact,
            now=now,
        )
    at = start()
    at.switch_page("views/overview.py").run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Open queue items"] == "1"
    assert metrics["Overdue"] == "1"
    assert metrics["Verdicts, last 14 days"] == "2"
    # high stratum: 2 verdicts of 2 items, 1 bad; medium stratum has none -> the estimate speaks for high only
    assert metrics["Bad rewrites in all traffic (weighted)"] == "50.0%"
    # the base beside the figure: 2 verdicts on the high stratum, 2 of the 3 items in the day's sample
    base = next(c.value for c in at.caption if c.value.startswith("Bad rewrites: "))
    assert base.startswith("Bad rewrites: 50.0% (95% CI ")
    assert base.endswith("from 2 verdicts on strata covering 66.7% of the traffic; too little to go on.")
    # every kind a check can report is offered, found or not
    offered = at.multiselect(key="ov_kinds").options
    assert {"wrong_antecedent", "qualifier_conflict", "added_content_word"} <= set(offered)
    charts = at.get("vega_lite_chart")
    assert len(charts) == 3  # rates per day, per prompt version, throughput
    precision = at.dataframe[0].value
    assert precision.set_index("kind")[["verdicts", "confirmed"]].to_dict("index") == {
        "added_content_word": {"verdicts": 2, "confirmed": 1},
        "antecedent_not_in_input": {"verdicts": 2, "confirmed": 1},
        "window_truncated": {"verdicts": 1, "confirmed": 1},
    }
    # what the two verdicts taught this week: the words c1_2's fabrication verdict confirmed (it names
    # none: its medium+ words, one step higher), and c3_2's word dismissed once (a rewriter with no
    # other verdicts needs four), listed after what moves a grade
    learned = next(f.value for f in at.dataframe if "word" in f.value.columns)
    assert learned[["word", "dismissed", "confirmed", "effect"]].values.tolist() == [
        ["enterprise", 0, 1, "one step higher"],
        ["plan", 0, 1, "one step higher"],
        ["kubernetes", 1, 0, "none"],
    ]


def test_overview_shows_the_agreement_of_blind_second_reviews(store: str, db: Session) -> None:
    """Two items each judged by carol then dave: (fabricated, fabricated) and (ok, fabricated).
    Label: p_o = 1/2; carol fab 1, ok 1; dave fab 2; p_e = (1*2 + 1*0)/4 = 1/2; kappa = 0.
    SE = sqrt(0.5*0.5 / (2 * 0.25)) = 0.7071: 0 -/+ 1.386, clipped to (-1, 1)."""
    for request_id in ("c1_2", "c3_2"):
        db.execute(update(QueueItem).where(QueueItem.request_id == request_id).values(reviews_needed=2))
    db.commit()
    now = datetime.now(UTC)
    for request_id, first in (("c1_2", "fabricated_constraint"), ("c3_2", "ok")):
        for reviewer, label in (("carol", first), ("dave", "fabricated_constraint")):
            record_verdict(
                session=db,
                item_id=item_id(db, request_id),
                reviewer=reviewer,
                label=label,
                artifact="none" if label == "ok" else "rewrite",
                now=now,
            )
    at = start()
    at.switch_page("views/overview.py").run()
    assert not at.exception
    table = next(f.value for f in at.dataframe if "rating" in f.value.columns)
    label = table.set_index("rating").loc["label"]
    assert (label["statistic"], label["value"], label["raw agreement"], label["items"]) == (
        "cohen_kappa",
        0.0,
        0.5,
        2,
    )
    assert (label["lo"], label["hi"]) == (-1.0, 1.0)
    assert "1 disagreements await adjudication" in " ".join(c.value for c in at.caption)


def test_the_first_reviewer_of_a_blind_second_review_sees_no_form_and_no_verdict(
    store: str, db: Session
) -> None:
    db.execute(update(QueueItem).where(QueueItem.request_id == "c1_2").values(reviews_needed=2))
    db.commit()
    record_verdict(
        session=db,
        item_id=item_id(db, "c1_2"),
        reviewer="bob",
        label="fabricated_constraint",
        artifact="rewrite",
        now=datetime.now(UTC),
    )
    at = start().switch_page("views/item.py")
    at.query_params["request"] = "c1_2"
    at = at.run()
    assert not at.exception
    infos = " ".join(i.value for i in at.info)
    assert "You gave this item's first verdict; it awaits a second reviewer (1 of 2 so far)" in infos
    assert not [r for r in at.radio if r.label == "Label"]


def _verdict_with_case(session: Session, request_id: str, label: str, minute: int) -> None:
    """A verdict through the shared service, which builds the regression case (issue 7)."""
    record_verdict(
        session=session,
        item_id=item_id(session, request_id),
        reviewer="dana",
        label=label,
        artifact="rewrite",
        now=datetime(2024, 3, 7, 9, minute, tzinfo=UTC),
        corrected_query="What is the uptime SLA for the Dublin region?",
        must_include=["Dublin"],
        must_not_include=["enterprise"],
    )


def test_eval_set_lists_current_cases_and_filters_them(store: str, db: Session) -> None:
    _verdict_with_case(db, "c1_2", "fabricated_constraint", 0)
    _verdict_with_case(db, "c3_2", "dropped_constraint", 1)
    # c2_2 has c1_2's transcript and latest message: another label makes it another case
    _verdict_with_case(db, "c2_2", "wrong_antecedent", 2)
    # a later review replaced c2_2's case (the versioning itself is issue 7's and tested there)
    case = db.scalars(select(RegressionCase).where(RegressionCase.source_request_id == "c2_2")).one()
    case.superseded_at = datetime(2024, 3, 8)
    db.commit()
    at = start()
    at.switch_page("views/eval_set.py").run()
    assert not at.exception
    assert at.metric[0].value == "2"
    table = at.dataframe[0].value
    assert list(table["source request"]) == ["c3_2", "c1_2"]  # newest verdict first
    assert list(table["must not include"]) == ["enterprise", "enterprise"]
    at.selectbox(key="cases_label").set_value("fabricated_constraint").run()
    assert list(at.dataframe[0].value["source request"]) == ["c1_2"]
    at.selectbox(key="cases_label").set_value(None)
    at.checkbox(key="cases_superseded").check().run()
    assert at.metric[0].value == "3"
    assert list(at.dataframe[0].value["superseded"]) == [True, False, False]


def test_every_page_renders_on_an_empty_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    upgrade(url)
    monkeypatch.setenv("REWRITE_MONITOR_DATABASE_URL", url)
    monkeypatch.setenv("REWRITE_MONITOR_REVIEWER_NAME", "bob")
    at = start()
    assert shown(at.info[0].value) == "No open items match these filters."
    at = open_next_item(at)
    assert shown(at.info[0].value) == "Nothing left to review."
    for page in ("views/item.py", "views/overview.py", "views/eval_set.py"):
        at.switch_page(page).run()
        assert not at.exception, page
    assert shown(at.info[0].value).startswith("No regression cases match.")


def test_an_unmigrated_store_says_how_to_fix_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWRITE_MONITOR_DATABASE_URL", f"sqlite:///{tmp_path / 'new.db'}")
    at = start()
    assert "rewrite-monitor db upgrade" in shown(at.error[0].value)


def test_a_failing_page_logs_where_but_never_the_transcript(
    store: str, db: Session, caplog: pytest.LogCaptureFixture
) -> None:
    from monitor.store.models import Event

    # a stored ctx_input altered by hand: its validation error would echo the transcript
    ctx = db.scalars(select(Event).where(Event.request_id == "c1_2", Event.kind == "ctx_input")).one()
    ctx.raw = {**ctx.raw, "n_messages": "private words of the user"}
    db.commit()
    at = open_next_item(start())
    assert shown(at.error[0].value) == (
        "The Item page failed (ValidationError); the server log says where. Nothing was stored."
    )
    logged = [r.getMessage() for r in caplog.records if r.name == "rewrite_monitor.dashboard"]
    assert len(logged) == 1 and logged[0].startswith("The Item page failed: ValidationError at ")
    assert "private words" not in caplog.text and "CMK" not in caplog.text


def test_a_non_local_bind_without_a_login_is_refused_however_the_app_was_started(store: str) -> None:
    """`streamlit run dashboard/app.py --server.address 0.0.0.0` skips the command's check: the app
    itself refuses to serve, and draws no page."""
    from streamlit import config

    before = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    try:
        at = start()
    finally:
        config.set_option("server.address", before)
    assert [shown(e.value) for e in at.error] == [
        "This server listens on 0.0.0.0 without a login: start it with `rewrite-monitor dashboard` "
        "(127.0.0.1), or configure [auth] in .streamlit/secrets.toml."
    ]
    assert not at.title


def test_an_incomplete_auth_table_is_a_clear_error(store: str) -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback", "client_id": "id"}
    at.run()
    assert [e.value for e in at.error] == [
        "The [auth] table in .streamlit/secrets.toml is incomplete: it lacks cookie_secret, client_secret, "
        "server_metadata_url. Complete it (Streamlit OIDC) or remove it to run locally without a login."
    ]


def test_review_next_keeps_to_the_queue_pages_filters_item_after_item(store: str, db: Session) -> None:
    """Issue 35, part 3: every filter of the Queue page holds for the whole session of "Review next",
    not only for its first item; the count "item i of N" and the finished screen say so."""
    at = start()
    at.selectbox(key="f_stratum").set_value("medium").run()
    at = open_next_item(at)
    # the medium item only, though the two high ones come first in review order
    assert shown(at.title[0].value) == "c2_2"
    caption = shown(item_caption(at))
    assert caption.startswith("**Item 1 of 1 today** (0 more in the queue for you) · ")
    assert "next items: only medium stratum (the Queue page" in caption
    i = item_id(db, "c2_2")
    at.radio(key=f"label_{i}").set_value("ok").run()
    at = button(at, "Submit and next").click().run()
    assert shown(at.title[0].value) == "Queue done"
    assert shown(at.success[-1].value).startswith(
        "All items processed: nothing is left in the queue for bob within the Queue page's filters "
        "(medium stratum)."
    )
    states = {q.request_id: q.state for q in fresh(db).scalars(select(QueueItem))}
    assert states == {"c1_2": "pending", "c3_2": "pending", "c2_2": "done"}


def test_an_item_that_is_not_the_reviewers_still_offers_review_next(store: str, db: Session) -> None:
    """Issue 35, part 3: a page without a form (the item someone else holds) has a "Review next"."""
    claim(
        session=db,
        item_id=item_id(db, "c1_2"),
        reviewer="alice",
        now=datetime.now(UTC),
        lease=timedelta(minutes=30),
    )
    db.commit()
    at = start().switch_page("views/item.py")
    at.query_params["request"] = "c1_2"
    at = at.run()
    assert any(shown(w.value).startswith("Claimed by alice until") for w in at.warning)
    at = button(at, "Review next").click().run()
    assert not at.exception
    assert shown(at.title[0].value) == "c3_2"  # the next one alice does not hold
    assert fresh(db).get_one(QueueItem, item_id(db, "c3_2")).claimed_by == "bob"


def test_the_transcript_reads_newest_first_on_request_and_stays_so(store: str, db: Session) -> None:
    """Issue 35, part 1: a toggle puts the turn the rewrite was made from at the top, for every item
    after it in the session."""
    at = open_next_item(start())
    assert "2. Transcript (2 messages received, oldest first)" in [h.value for h in at.subheader]
    transcript = htmls(at)[0]
    assert transcript.index("[0] user") < transcript.index("[1] assistant")
    # the last user message received is marked: the page keeps it in view on opening
    assert '<div class="rm-msg rm-user rm-latest-user"><span class="rm-role">[0] user</span>' in transcript
    i = item_id(db, "c1_2")
    at = at.toggle(key="newest_c1_2").set_value(True).run()
    assert "2. Transcript (2 messages received, newest first)" in [h.value for h in at.subheader]
    transcript = htmls(at)[0]
    order = [transcript.index(x) for x in ("[1] assistant", "[0] user", "turn 1: missing")]
    assert order == sorted(order)
    at.radio(key=f"label_{i}").set_value("ok").run()
    at = button(at, "Submit and next").click().run()
    assert shown(at.title[0].value) == "c3_2"
    assert any(h.value.endswith("newest first)") for h in at.subheader)


def test_previous_item_brings_back_the_accepted_and_typed_terms(store: str, db: Session) -> None:
    """Found by a newcomer: going back to change a verdict showed its label but no terms, so a second
    Submit replaced the case with none. The accepted suggestions and the typed terms come back."""
    at = open_next_item(start())
    i = item_id(db, "c1_2")
    at.radio(key=f"artifact_{i}").set_value("rewrite")
    at.radio(key=f"label_{i}").set_value("fabricated_constraint").run()
    at = at.pills[0].set_value([Suggestion("must_not_include", "plan")]).run()
    at.text_input(key=f"include_{i}_fabricated_constraint").input("Dublin")
    at = button(at, "Submit and next").click().run()
    assert shown(at.title[0].value) == "c3_2"
    at = button(at, "Previous item").click().run()
    assert shown(at.title[0].value) == "c1_2"
    assert [str(s) for s in at.pills[0].value] == ["must not: plan"]
    assert at.text_input(key=f"include_{i}_fabricated_constraint").value == "Dublin"
    assert at.text_input(key=f"exclude_{i}_fabricated_constraint").value == ""
    at = button(at, "Submit and next").click().run()
    first, again = fresh(db).scalars(select(Verdict).order_by(Verdict.id)).all()
    assert (again.must_include, again.must_not_include, again.accepted_terms) == (
        ["Dublin"],
        ["plan"],
        {"must_include": [], "must_not_include": ["plan"]},
    )
    assert (first.must_include, first.must_not_include) == (again.must_include, again.must_not_include)
