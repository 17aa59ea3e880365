"""The learned table read from the store's verdicts (issue 15): what counts as dismissed and confirmed,
reviewers, resets and pins, and that the check job grades with it under a new rules hash."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.checks import current_versions
from monitor.checks.rules import load_rules
from monitor.checks.store import list_findings
from monitor.errors import QueueError
from monitor.review.store import learned_table, set_learned_override
from monitor.store.models import CheckRun
from monitor.worker.jobs import check_job, with_store_learning
from tests.factories import VERDICT_AT, ctx_input, ingest_checked, rewrite, verdict

MESSAGES = [
    {"role": "user", "content": "Which EU regions support CMK?", "ts": "2024-03-04T08:00:00Z"},
    {"role": "assistant", "content": "Frankfurt and Dublin.", "ts": "2024-03-04T08:00:20Z"},
]
LATEST = "What's the uptime SLA on the second one?"
# "enterprise" and "plan" are in no received turn: a plan-tier value (high) and a content word (medium),
# written by prompt version ctx-v1
ADDS = "What is the uptime SLA for the Dublin region on the enterprise plan?"
ACW = "added_content_word"


def seed(session: Session, names: range, query: str = ADDS) -> list[str]:
    """Conversation ``c<i>`` per name, rewritten to ``query`` by prompt version ``ctx-v1``; checked."""
    events = []
    for i in names:
        msgs = [dict(MESSAGES[0], content=f"Which EU regions support CMK? (ticket {i})"), MESSAGES[1]]
        events += [
            ctx_input(f"c{i}", f"c{i}_2", messages=msgs),
            rewrite(f"c{i}", f"c{i}_2", latest=LATEST, query=query),
        ]
    ingest_checked(session, *events)
    return [f"c{i}_2" for i in names]


def grades(session: Session, req: str) -> dict[str, tuple[str, int | None]]:
    return {
        w["text"]: (w["severity"], w.get("learned", {}).get("steps"))
        for f in list_findings(session=session, checks=current_versions(), request_id=req, kind=ACW)
        for w in f.evidence["words"]
    }


def test_a_fresh_store_learns_nothing_and_keeps_the_rules_hash(session: Session) -> None:
    rules = load_rules()
    (req,) = seed(session, range(1))
    assert learned_table(session=session, checks=current_versions()).entries == {}
    assert with_store_learning(session=session, rules=rules).hash == rules.hash
    assert grades(session, req) == {"enterprise": ("high", None), "plan": ("medium", None)}
    hashes = set(session.scalars(select(CheckRun.rules_hash)))
    assert hashes == {rules.hash}


def test_ok_verdicts_dismiss_the_flagged_words_and_the_fourth_demotes(session: Session) -> None:
    reqs = seed(session, range(4))
    for i, req in enumerate(reqs):
        verdict(
            session, req, "ok", reviewer="alice" if i % 2 else "bob", now=VERDICT_AT + timedelta(minutes=i)
        )
    table = learned_table(session=session, checks=current_versions())
    plan = table.entries[(ACW, "ctx-v1", "plan")]
    assert (plan.dismissed, plan.confirmed, plan.reviewers) == (4, 0, 2)
    assert plan.others == (0, 0)  # "enterprise" was dismissed on the same items: no other evidence
    assert plan.last_at == (VERDICT_AT + timedelta(minutes=3)).replace(tzinfo=None)
    assert plan.steps == -1
    # the next conversation is checked with what was learned, under a new rules hash
    rules = load_rules()
    (new,) = seed(session, range(4, 5))
    # the plan tier is a constraint: one step down, never below medium
    assert grades(session, new) == {"enterprise": ("medium", -1), "plan": ("low", -1)}
    runs = set(session.scalars(select(CheckRun.rules_hash)))
    assert runs == {rules.hash, with_store_learning(session=session, rules=rules).hash}
    assert len(runs) == 2
    # learning off: the rules files alone
    check_job(session=session, rules=rules, recheck=True, learn=False)
    assert grades(session, new) == {"enterprise": ("high", None), "plan": ("medium", None)}
    # a recheck reads the table before it clears the findings the table is counted from
    check_job(session=session, rules=rules, recheck=True)
    assert grades(session, new) == {"enterprise": ("medium", -1), "plan": ("low", -1)}


def test_a_fabrication_verdict_confirms_the_words_it_names(session: Session) -> None:
    a, b = seed(session, range(2))
    verdict(session, a, "fabricated_constraint", must_not_include=["enterprise"])
    verdict(session, b, "fabricated_constraint")  # names no word: the item's medium+ words
    table = learned_table(session=session, checks=current_versions())
    assert table.entries[(ACW, "ctx-v1", "enterprise")].confirmed == 2
    assert table.entries[(ACW, "ctx-v1", "plan")].confirmed == 1
    assert table.entries[(ACW, "ctx-v1", "plan")].steps == 1


def test_the_newest_verdict_of_an_item_counts(session: Session) -> None:
    (req,) = seed(session, range(1))
    verdict(session, req, "ok")
    verdict(session, req, "fabricated_constraint", now=VERDICT_AT + timedelta(hours=1))
    plan = learned_table(session=session, checks=current_versions()).entries[(ACW, "ctx-v1", "plan")]
    assert (plan.dismissed, plan.confirmed) == (0, 1)
    # a label that speaks to neither (a wrong antecedent) counts for nothing
    verdict(session, req, "wrong_antecedent", now=VERDICT_AT + timedelta(hours=2))
    assert learned_table(session=session, checks=current_versions()).entries == {}


def test_a_reset_forgets_the_verdicts_before_it_and_a_pin_fixes_the_step(session: Session) -> None:
    reqs = seed(session, range(4))
    for req in reqs:
        verdict(session, req, "ok")
    later = VERDICT_AT + timedelta(days=1)
    set_learned_override(
        session=session, kind=ACW, rewriter="ctx-v1", lemma="plan", operator="ops", now=later, reset=True
    )
    table = learned_table(session=session, checks=current_versions())
    assert (ACW, "ctx-v1", "plan") not in table.entries
    assert table.entries[(ACW, "ctx-v1", "enterprise")].dismissed == 4
    set_learned_override(
        session=session, kind=ACW, rewriter="ctx-v1", lemma="Plan ", operator="ops", now=later, pin=0
    )
    set_learned_override(
        session=session, kind=ACW, rewriter="ctx-v1", lemma="enterprise", operator="ops", now=later, pin=0
    )
    table = learned_table(session=session, checks=current_versions())
    assert table.entries[(ACW, "ctx-v1", "plan")].pinned == 0  # listed, with no verdicts counted
    assert table.entries[(ACW, "ctx-v1", "enterprise")].steps == 0
    assert table.hash == ""
    with pytest.raises(QueueError, match="pin or reset"):
        set_learned_override(
            session=session,
            kind=ACW,
            rewriter="v",
            lemma="x",
            operator="o",
            now=datetime.now(UTC),
            pin=-1,
            reset=True,
        )
    with pytest.raises(QueueError, match="a pin is one of"):
        set_learned_override(
            session=session, kind=ACW, rewriter="v", lemma="x", operator="o", now=datetime.now(UTC), pin=3
        )
