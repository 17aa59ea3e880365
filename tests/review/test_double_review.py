"""Several reviewers per item (issue 16, part 6): the blind second review, which verdict makes the
regression case, adjudication, and the agreement figures of ``stats --agreement``."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from monitor.cases.store import list_cases
from monitor.cli.main import app
from monitor.queue.sampling import reviews_needed
from monitor.queue.store import QueueError, claim, claim_next, enqueue_days
from monitor.review.store import record_verdict
from monitor.settings import Settings
from monitor.stats.store import double_reviews
from monitor.store.models import QueueItem
from monitor.verdicts import Rating, newest_per_reviewer, standing_verdict
from tests.factories import ctx_input, ingest_checked, rewrite, verdict

NOW = datetime(2024, 3, 5, 9, 30, tzinfo=UTC)
LEASE = timedelta(minutes=10)
MESSAGES = [
    {"role": "user", "content": "Which EU regions support CMK?", "ts": "2024-03-04T08:00:00Z"},
    {"role": "assistant", "content": "Frankfurt and Dublin.", "ts": "2024-03-04T08:00:00Z"},
]
FABRICATED = "What is the uptime SLA for the Dublin region on the enterprise plan?"
runner = CliRunner()


def _checks() -> list[tuple[str, int]]:
    from monitor.checks import current_versions

    return current_versions()


def seed_doubled(session: Session, n: int = 1, share: float = 1.0) -> list[QueueItem]:
    """``n`` conversations with a fabricated rewrite each, admitted with ``double_review_share``
    ``share``; the queue items, in request order."""
    events = []
    for i in range(1, n + 1):
        msgs = [dict(m) for m in MESSAGES]
        msgs[0]["content"] = f"Which EU regions support CMK? (ticket {i})"
        events += [
            ctx_input(f"c{i}", f"c{i}_2", messages=msgs),
            rewrite(f"c{i}", f"c{i}_2", query=FABRICATED),
        ]
    ingest_checked(session, *events)
    settings = Settings(double_review_share=share, queue_budget=50).queue  # type: ignore[call-arg]
    enqueue_days(session=session, days=[date(2024, 3, 4)], checks=_checks(), settings=settings, now=NOW)
    session.commit()
    return list(session.scalars(select(QueueItem).order_by(QueueItem.request_id)))


def give(session: Session, item_id: int, reviewer: str, label: str, at: int = 0) -> int:
    return record_verdict(
        session=session,
        item_id=item_id,
        reviewer=reviewer,
        label=label,
        artifact="none" if label in ("ok", "false_alarm_synonym") else "rewrite",
        now=NOW + timedelta(minutes=at),
        lease=LEASE,
        # an error on the rewrite makes a case only with something a replay can fail
        must_not_include=[] if label in ("ok", "false_alarm_synonym") else ["enterprise"],
    )


def test_the_double_review_draw_is_per_record_and_independent_of_the_stratum() -> None:
    keys = [f"c{i}/c{i}_2" for i in range(400)]
    doubled = [k for k in keys if reviews_needed("seed", k, per_item=1, double_share=0.2) == 2]
    # a uniform draw below 0.2: about 80 of 400 (binomial sd 8), and a lower share doubles a subset
    assert 56 <= len(doubled) <= 104
    fewer = {k for k in keys if reviews_needed("seed", k, per_item=1, double_share=0.1) == 2}
    assert fewer < set(doubled)
    assert {reviews_needed("seed", k, per_item=1, double_share=0.0) for k in keys} == {1}
    assert {reviews_needed("seed", k, per_item=3, double_share=1.0) for k in keys} == {3}
    assert {reviews_needed("seed", k, per_item=2, double_share=0.0) for k in keys} == {2}


def test_a_doubled_item_goes_back_to_the_queue_for_someone_else(session: Session) -> None:
    (item,) = seed_doubled(session)
    assert item.reviews_needed == 2
    got = claim_next(session=session, reviewer="alice", now=NOW, lease=LEASE)
    assert got is not None and got.id == item.id and got.reviews_needed == 2
    give(session, item.id, "alice", "fabricated_constraint")
    session.refresh(item)
    assert (item.state, item.claimed_by, item.finished_at) == ("pending", None, None)
    assert list_cases(session=session) == []  # no case from one of two blind verdicts
    # the queue never hands it back to alice, and she cannot claim it by id either
    assert claim_next(session=session, reviewer="alice", now=NOW, lease=LEASE) is None
    with pytest.raises(QueueError, match="awaits a second reviewer: alice gave its first verdict"):
        claim(session=session, item_id=item.id, reviewer="alice", now=NOW, lease=LEASE)
    # bob gets it, agrees: done, and the case is made from the standing (newest) verdict, bob's
    got = claim_next(session=session, reviewer="bob", now=NOW, lease=LEASE)
    assert got is not None and got.id == item.id
    bob = give(session, item.id, "bob", "fabricated_constraint", at=1)
    session.refresh(item)
    assert item.state == "done"
    (case,) = list_cases(session=session)
    assert (case.reviewer, case.label, case.verdict_id) == ("bob", "fabricated_constraint", bob)


def test_a_disagreement_makes_no_case_until_an_adjudicator_decides(session: Session) -> None:
    (item,) = seed_doubled(session)
    give(session, item.id, "alice", "fabricated_constraint")
    give(session, item.id, "bob", "ok", at=1)
    session.refresh(item)
    assert item.state == "done" and list_cases(session=session) == []
    (d,) = double_reviews(session=session)
    assert d.disagree and d.adjudication is None
    assert [(r.reviewer, r.label, r.artifact) for r in d.ratings] == [
        ("alice", "fabricated_constraint", "rewrite"),
        ("bob", "ok", "none"),
    ]
    carol = verdict(
        session,
        "c1_2",
        reviewer="carol",
        adjudication=True,
        now=NOW + timedelta(minutes=5),
        must_not_include=["enterprise"],
    )
    (case,) = list_cases(session=session)
    assert (case.reviewer, case.label, case.verdict_id) == ("carol", "fabricated_constraint", carol)
    (d,) = double_reviews(session=session)
    assert d.adjudication is not None and d.adjudication.reviewer == "carol"
    # the adjudication is no third rating: the agreement still rests on alice and bob
    assert [r.reviewer for r in d.ratings] == ["alice", "bob"]


def test_adjudication_needs_two_reviewers_and_a_reviewer_may_revise_her_own_first_verdict(
    session: Session,
) -> None:
    (item,) = seed_doubled(session)
    give(session, item.id, "alice", "ok")
    with pytest.raises(QueueError, match="fewer than two reviewers"):
        verdict(session, "c1_2", reviewer="carol", adjudication=True)
    session.refresh(item)
    assert (item.state, item.claimed_by) == ("pending", None)  # the refusal claimed nothing
    # naming the request is deliberate: alice revises her verdict; the item still awaits a second one
    verdict(session, "c1_2", reviewer="alice", label="dropped_constraint", now=NOW + timedelta(minutes=2))
    session.refresh(item)
    assert item.state == "pending"
    (item_row,) = [i for i in session.scalars(select(QueueItem))]
    assert item_row.reviews_needed == 2
    give(session, item.id, "bob", "dropped_constraint", at=3)
    (case,) = list_cases(session=session)
    assert (case.reviewer, case.label) == ("bob", "dropped_constraint")


def test_undoubled_items_are_unchanged(session: Session) -> None:
    (item,) = seed_doubled(session, share=0.0)
    assert item.reviews_needed == 1
    give(session, item.id, "alice", "fabricated_constraint")
    session.refresh(item)
    assert item.state == "done" and len(list_cases(session=session)) == 1


def test_standing_verdict_and_newest_per_reviewer() -> None:
    a1, b2, a3 = Rating(1, "a", "ok", "none"), Rating(2, "b", "ok", "none"), Rating(3, "a", "ok", "none")
    assert [r.id for r in newest_per_reviewer([a1, b2, a3])] == [3, 2]  # a's revision, in a's place
    assert standing_verdict([a1], 2) is None  # awaiting a second reviewer
    assert standing_verdict([a1, b2, a3], 2) == 3  # agreement: the newest
    b4 = Rating(4, "b", "fabricated_constraint", "rewrite")
    assert standing_verdict([a1, b2, a3, b4], 2) is None  # bob changed his mind: they disagree
    adj = Rating(5, "c", "ok", "none", adjudication=True)
    assert standing_verdict([a1, b2, a3, b4, adj], 2) == 5
    assert standing_verdict([a1, b4], 1) == 4  # one reviewer needed: the newest, as before


def test_stats_agreement_json_computed_by_hand(cli_db: str) -> None:
    """Four doubly reviewed items: (fab, fab), (fab, ok), (ok, ok), (ok, ok).
    Label: p_o = 3/4; alice fab 2, ok 2; bob fab 1, ok 3; p_e = (2*1 + 2*3)/16 = 1/2; kappa = 1/2.
    SE = sqrt(0.75*0.25 / (4 * 0.25)) = 0.4330; interval 0.5 -/+ 1.96*0.4330 = (-0.349, 1 clipped).
    The artifact follows the label here (rewrite/none), so its figures are the same."""
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        items = seed_doubled(s, n=4)
        for i, (first, second) in enumerate(
            [("fabricated_constraint",) * 2, ("fabricated_constraint", "ok"), ("ok", "ok"), ("ok", "ok")]
        ):
            give(s, items[i].id, "alice", first, at=2 * i)
            give(s, items[i].id, "bob", second, at=2 * i + 1)
    engine.dispose()
    result = runner.invoke(app, ["--database-url", cli_db, "stats", "--agreement", "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert got["items"] == 4
    label = got["label"]
    assert (label["statistic"], label["value"], label["observed_agreement"], label["items"]) == (
        "cohen_kappa",
        0.5,
        0.75,
        4,
    )
    assert label["ci95"][0] == pytest.approx(-0.3487, abs=1e-4) and label["ci95"][1] == 1.0
    assert got["artifact"]["value"] == 0.5
    # each label against the rest: for ok and fabricated_constraint the same two-way table
    assert sorted(got["per_label"]) == ["fabricated_constraint", "ok"]
    assert got["per_label"]["ok"]["value"] == 0.5
    assert got["disagreements"] == [
        {
            "queue_item": items[1].id,
            "request_id": "c2_2",
            "conv_id": "c2",
            "day": "2024-03-04",
            "ratings": [
                {"reviewer": "alice", "label": "fabricated_constraint", "artifact": "rewrite"},
                {"reviewer": "bob", "label": "ok", "artifact": "none"},
            ],
            "adjudicated": None,
        }
    ]
    text = runner.invoke(app, ["--database-url", cli_db, "stats", "--agreement"])
    assert text.exit_code == 0, text.output
    assert "Cohen's kappa" in text.output and "1 disagreements, 1 awaiting adjudication" in text.output
    assert "c2_2 [c2]: alice: fabricated_constraint (rewrite); bob: ok (none)" in text.output


def test_stats_agreement_says_how_to_start(cli_db: str) -> None:
    result = runner.invoke(app, ["--database-url", cli_db, "stats", "--agreement"])
    assert result.exit_code == 0, result.output
    assert "set double_review_share (e.g. 0.2)" in result.output


def test_verdict_adjudicate_on_the_command_line(cli_db: str) -> None:
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        (item,) = seed_doubled(s)
        give(s, item.id, "alice", "fabricated_constraint")
    engine.dispose()
    args = [
        "--database-url",
        cli_db,
        "verdict",
        "c1_2",
        "--label",
        "ok",
        "--adjudicate",
        "--reviewer",
        "carol",
    ]
    early = runner.invoke(app, args)
    assert early.exit_code == 6, early.output  # a refused queue operation (README, exit codes)
    assert (
        "nothing to adjudicate on queue item 1: it has verdicts from fewer than two reviewers" in early.output
    )
    second = ["--database-url", cli_db, "verdict", "c1_2", "--label", "ok", "--reviewer", "bob"]
    assert runner.invoke(app, second).exit_code == 0
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output == "adjudication 3 recorded on c1_2: ok\n"
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        (case,) = list_cases(session=s)
        assert (case.reviewer, case.label) == ("carol", "ok")
    engine.dispose()


def test_an_open_page_renews_its_claim_and_learns_when_it_is_lost(session: Session) -> None:
    """Issue 16, part 5: the Item page renews while open (``renew``), so after the nominal lease a second
    reviewer cannot take the item; a claim that did expire and was taken reports itself lost."""
    from monitor.queue.store import renew

    (item,) = seed_doubled(session, share=0.0)
    claim(session=session, item_id=item.id, reviewer="alice", now=NOW, lease=LEASE)
    # the page renews at a third of the lease: at 8 minutes the claim runs to 18
    assert renew(
        session=session, item_id=item.id, reviewer="alice", now=NOW + timedelta(minutes=8), lease=LEASE
    )
    # at 12 minutes (past the nominal lease of 10) bob is refused
    with pytest.raises(QueueError, match="claimed by alice"):
        claim(session=session, item_id=item.id, reviewer="bob", now=NOW + timedelta(minutes=12), lease=LEASE)
    assert claim_next(session=session, reviewer="bob", now=NOW + timedelta(minutes=12), lease=LEASE) is None
    # a closed tab stops renewing: at 19 minutes the claim has expired and bob takes it
    claim(session=session, item_id=item.id, reviewer="bob", now=NOW + timedelta(minutes=19), lease=LEASE)
    assert not renew(
        session=session, item_id=item.id, reviewer="alice", now=NOW + timedelta(minutes=20), lease=LEASE
    )
    session.refresh(item)
    assert (item.claimed_by, item.lease_expires_at) == ("bob", datetime(2024, 3, 5, 9, 59))


def test_a_two_reviewer_run_at_a_fifth_doubles_a_fifth_and_measures_their_agreement(cli_db: str) -> None:
    """double_review_share = 0.2 over 30 queued items: the draw doubles those whose draw is below 0.2,
    alice and bob clear the queue by turns, and ``stats --agreement`` rests on exactly the doubled ones."""
    from monitor.sampling import draw
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        items = seed_doubled(s, n=30, share=0.2)
        doubled = {i.request_id for i in items if i.reviews_needed == 2}
        # the draw decides, per record: conversation/request key, purpose "double_review", the default seed
        assert doubled == {
            i.request_id
            for i in items
            if draw("rewrite-monitor", "double_review", f"{i.conv_id}/{i.request_id}") < 0.2
        }
        assert 0 < len(doubled) < 30
        given = 0
        for turn in range(200):
            reviewer = ("alice", "bob")[turn % 2]
            row = claim_next(session=s, reviewer=reviewer, now=NOW, lease=LEASE)
            if (
                row is None
                and claim_next(session=s, reviewer=("bob", "alice")[turn % 2], now=NOW, lease=LEASE) is None
            ):
                break
            if row is None:
                continue
            # bob calls every doubled rewrite ok, alice a fabrication: they never agree on a doubled item
            give(s, row.id, reviewer, "ok" if reviewer == "bob" else "fabricated_constraint", at=turn)
            given += 1
        states = {i.request_id: i.state for i in s.scalars(select(QueueItem))}
    engine.dispose()
    assert set(states.values()) == {"done"} and given == 30 + len(doubled)
    got = json.loads(runner.invoke(app, ["--database-url", cli_db, "stats", "--agreement", "--json"]).output)
    assert got["items"] == len(doubled)
    assert got["label"]["observed_agreement"] == 0.0
    assert {d["request_id"] for d in got["disagreements"]} == doubled


def test_an_unsettled_item_counts_nowhere_and_agreement_rests_on_the_blind_verdicts(session: Session) -> None:
    """From a newcomer's read: the export's sync, ``stats`` and the agreement used the newest verdicts,
    so an item awaiting its second reviewer made a case, and a reviewer who revised after seeing the
    other's verdict raised kappa. An adjudicator settling their own disagreement is refused."""
    from monitor.cases.store import sync_cases
    from monitor.stats.store import latest_verdicts

    (item,) = seed_doubled(session)
    give(session, item.id, "alice", "ok")
    assert sync_cases(session=session, now=NOW) == 0 and list_cases(session=session) == []
    assert latest_verdicts(session=session) == []
    give(session, item.id, "bob", "fabricated_constraint", at=1)
    assert sync_cases(session=session, now=NOW) == 0 and latest_verdicts(session=session) == []
    # alice revises after seeing bob's verdict: the item agrees now, but agreement rests on her first
    verdict(session, "c1_2", reviewer="alice", now=NOW + timedelta(minutes=2))
    (d,) = double_reviews(session=session)
    assert [(r.reviewer, r.label) for r in d.ratings] == [("alice", "ok"), ("bob", "fabricated_constraint")]
    assert [v.label for _, v in latest_verdicts(session=session)] == ["fabricated_constraint"]
    with pytest.raises(
        QueueError, match=f"alice reviewed queue item {item.id}: an adjudicator is someone other"
    ):
        verdict(session, "c1_2", reviewer="alice", label="ok", adjudication=True)
