"""The dashboard's service reads (filters, pagination, counts), alias proposals, and the ``dashboard``
command's launch plan, on SQLite and PostgreSQL where a store is involved."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import update
from sqlalchemy.orm import Session

from monitor.cases.store import count_cases
from monitor.cli.commands.dashboard import app_path, auth_configured, streamlit_command
from monitor.errors import ConfigError, ProposalError
from monitor.queue.store import (
    QueueFilters,
    claim,
    claim_next,
    enqueue_days,
    filter_options,
    held_item,
    item_for_request,
    list_open,
    list_queue,
    skip,
)
from monitor.review.proposals import proposals_yaml
from monitor.review.store import Throughput, list_proposals, propose_alias, reviewer_throughput
from monitor.settings import Settings
from monitor.store.models import QueueItem, Verdict
from tests.factories import CHECKS, checked_record

DAY = date(2024, 3, 4)
NOW = datetime(2024, 3, 4, 12, 0, tzinfo=UTC)
LEASE = timedelta(minutes=10)

SETTINGS = Settings(
    sample_seed="s",
    queue_budget=40,
    queue_min_severity="medium",
    control_share=0.0,
    control_min=0,
    per_conversation_cap=3,
    check_rate=1.0,
    review_sla_hours=24,
).queue


@pytest.fixture
def queue(session: Session) -> Session:
    """Five queued rewrites of 2024-03-04: a1 and a2 high added_content_word (a2 prompt p2), b1 medium
    window_truncated, b2 medium added_content_word, c1 high dropped_qualifier (model m2)."""
    for conv, req, sev, kind in (
        ("ca1", "a1", "high", "added_content_word"),
        ("ca2", "a2", "high", "added_content_word"),
        ("cb1", "b1", "medium", "window_truncated"),
        ("cb2", "b2", "medium", "added_content_word"),
        ("cc1", "c1", "high", "dropped_qualifier"),
    ):
        checked_record(session, conv, req, severity=sev, kind=kind)
    enqueue_days(session=session, days=[DAY], checks=CHECKS, settings=SETTINGS, now=NOW)
    session.execute(update(QueueItem).where(QueueItem.request_id == "a2").values(prompt_version="p2"))
    session.execute(update(QueueItem).where(QueueItem.request_id != "a2").values(prompt_version="p1"))
    session.execute(update(QueueItem).where(QueueItem.request_id == "c1").values(model="m2"))
    session.commit()
    return session


ORDER = ["a2", "c1", "a1", "b2", "b1"]
"""Review order: high before medium, then the day, then admission order (the sampling draw's)."""


def _requests(page) -> list[str]:  # noqa: ANN001
    return [r.request_id for r in page.rows]


def test_list_open_counts_every_match_and_pages_in_review_order(queue: Session) -> None:
    first = list_open(session=queue, now=NOW, checks=CHECKS, limit=2, offset=0)
    second = list_open(session=queue, now=NOW, checks=CHECKS, limit=2, offset=2)
    third = list_open(session=queue, now=NOW, checks=CHECKS, limit=2, offset=4)
    assert _requests(first) + _requests(second) + _requests(third) == ORDER
    assert [r.request_id for r in list_queue(session=queue, now=NOW)] == ORDER  # the CLI's order
    assert (first.total, first.by_stratum, first.overdue) == (5, {"high": 3, "medium": 2}, 0)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (QueueFilters(kind="added_content_word"), ["a2", "a1", "b2"]),
        (QueueFilters(kind="window_truncated"), ["b1"]),
        (QueueFilters(stratum="medium"), ["b2", "b1"]),
        (QueueFilters(prompt_version="p2"), ["a2"]),
        (QueueFilters(model="m2"), ["c1"]),
        (QueueFilters(kind="added_content_word", stratum="high", prompt_version="p1"), ["a1"]),
        (QueueFilters(day_from=DAY, day_to=DAY), ORDER),
        (QueueFilters(day_from=DAY + timedelta(days=1)), []),
    ],
)
def test_list_open_filters(queue: Session, filters: QueueFilters, expected: list[str]) -> None:
    page = list_open(session=queue, now=NOW, checks=CHECKS, filters=filters)
    assert _requests(page) == expected
    assert page.total == len(expected)


def test_overdue_claimed_and_done_items(queue: Session) -> None:
    # due 24 h after the day ends: 2024-03-06 00:00
    late = datetime(2024, 3, 6, 1, tzinfo=UTC)
    a1 = item_for_request(session=queue, request_id="a1", now=late)
    assert a1 is not None and a1.overdue
    claim(session=queue, item_id=a1.id, reviewer="ann", now=late, lease=LEASE)
    b1 = item_for_request(session=queue, request_id="b1", now=late)
    assert b1 is not None
    claim(session=queue, item_id=b1.id, reviewer="ann", now=late, lease=LEASE)
    skip(session=queue, item_id=b1.id, reviewer="ann", now=late)
    page = list_open(session=queue, now=late, checks=CHECKS, filters=QueueFilters(overdue_only=True))
    assert _requests(page) == ["a2", "c1", "a1", "b2"]  # a claimed item stays listed, a skipped one leaves
    assert (page.rows[2].state, page.rows[2].claimed_by, page.overdue) == ("claimed", "ann", 4)
    assert (
        list_open(session=queue, now=NOW, checks=CHECKS, filters=QueueFilters(overdue_only=True)).total == 0
    )
    held = held_item(session=queue, reviewer="ann", now=late)
    assert held is not None and held.request_id == "a1"
    assert held_item(session=queue, reviewer="ann", now=late + LEASE + timedelta(seconds=1)) is None
    assert held_item(session=queue, reviewer="bea", now=late) is None


def test_throughput_counts_verdicts_per_day_and_reviewer_within_the_window(queue: Session) -> None:
    # verdict rows written directly: this reads them back, the verdict path is test_queue's
    item = item_for_request(session=queue, request_id="a1", now=NOW)
    assert item is not None
    for reviewer, when in (
        ("ann", datetime(2024, 3, 5, 9)),
        ("ann", datetime(2024, 3, 5, 17)),
        ("bea", datetime(2024, 3, 5, 10)),
        ("ann", datetime(2024, 3, 6, 8)),
        ("old", datetime(2024, 2, 1, 8)),  # outside the 14 days
    ):
        queue.add(
            Verdict(
                queue_item_id=item.id,
                record_id=queue.get_one(QueueItem, item.id).record_id,
                request_id="a1",
                reviewer=reviewer,
                artifact="none",
                label="ok",
                must_include=[],
                must_not_include=[],
                created_at=when,
            )
        )
    queue.commit()
    assert reviewer_throughput(session=queue, now=datetime(2024, 3, 7, tzinfo=UTC), days=14) == [
        Throughput(date(2024, 3, 5), "ann", 2),
        Throughput(date(2024, 3, 5), "bea", 1),
        Throughput(date(2024, 3, 6), "ann", 1),
    ]


def test_unknown_stratum_is_refused(queue: Session) -> None:
    with pytest.raises(ValueError, match="unknown stratum 'urgent'"):
        list_open(session=queue, now=NOW, checks=CHECKS, filters=QueueFilters(stratum="urgent"))


def test_filter_options_come_from_the_queue(queue: Session) -> None:
    opts = filter_options(session=queue)
    assert opts.kinds == ["added_content_word", "dropped_qualifier", "window_truncated"]
    assert (opts.prompt_versions, opts.first_day, opts.last_day) == (["p1", "p2"], DAY, DAY)
    assert opts.models == ["m2"]  # checked_record logs no model for the others


def test_no_cases_counts_zero(queue: Session) -> None:
    assert count_cases(session=queue, label="ok") == 0


# -- alias proposals --------------------------------------------------------------------------------
def test_a_proposal_is_stored_cleaned_and_rendered_as_yaml_with_its_origin(queue: Session) -> None:
    row = claim_next(session=queue, reviewer="ann", now=NOW, lease=LEASE)
    assert row is not None
    pid = propose_alias(
        session=queue,
        queue_item_id=row.id,
        proposer="ann",
        members=[" enterprise  plan ", "Business tier", "ENTERPRISE PLAN", ""],
        now=NOW,
        note="synonyms: 'business: yes'",
    )
    (p,) = list_proposals(session=queue)
    assert (p.id, p.request_id, p.members) == (pid, "a2", ["enterprise plan", "Business tier"])
    assert proposals_yaml([p]) == (
        "# Alias groups proposed by reviewers (rewrite-monitor rules proposals).\n"
        "# Review each one, then paste it under `groups:` in rules/aliases.yaml.\n"
        f"  # proposal {pid} by ann on 2024-03-04 12:00 UTC, from queue item {row.id} (request a2)\n"
        f"  - name: proposed-{pid}-enterprise-plan\n"
        "    members: [enterprise plan, Business tier]\n"
        "    note: 'synonyms: ''business: yes'''\n"
    )


def test_pasted_proposals_validate_as_an_alias_file(queue: Session, tmp_path: Path) -> None:
    import yaml

    from monitor.checks.rules import AliasesFile

    row = claim_next(session=queue, reviewer="ann", now=NOW, lease=LEASE)
    assert row is not None
    propose_alias(session=queue, queue_item_id=row.id, proposer="ann", members=["k8s", "Kubernetes"], now=NOW)
    text = "version: 1\ngroups:\n" + proposals_yaml(list_proposals(session=queue))
    parsed = AliasesFile.model_validate(yaml.safe_load(text))
    assert [g.members for g in parsed.groups] == [["k8s", "Kubernetes"]]


def test_a_proposal_needs_two_distinct_members_and_a_real_item(queue: Session) -> None:
    with pytest.raises(ProposalError, match=r"at least two distinct members, got \['plan'\]"):
        propose_alias(session=queue, queue_item_id=1, proposer="ann", members=["plan", "Plan"], now=NOW)
    with pytest.raises(ProposalError, match="no queue item 999999"):
        propose_alias(session=queue, queue_item_id=999999, proposer="ann", members=["a", "b"], now=NOW)
    assert list_proposals(session=queue) == []
    assert proposals_yaml([]) == "# no alias proposals\n"


# -- the dashboard command --------------------------------------------------------------------------
def test_the_database_url_goes_through_the_environment_not_argv(tmp_path: Path) -> None:
    url = "postgresql://rm:s3cret@db.internal/rm"
    argv, env = streamlit_command(
        address="127.0.0.1",
        port=8502,
        database_url=url,
        config=tmp_path / "rm.toml",
        auth=False,
        environ={"PATH": "/usr/bin"},
    )
    assert argv[1:] == [
        "-m",
        "streamlit",
        "run",
        str(app_path()),
        "--server.address",
        "127.0.0.1",
        "--server.port",
        "8502",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--client.toolbarMode",
        "viewer",
        "--server.fileWatcherType",
        "none",
        "--runner.postScriptGC",
        "false",
    ]
    assert not any("s3cret" in a for a in argv)
    assert env == {
        "PATH": "/usr/bin",
        "REWRITE_MONITOR_DATABASE_URL": url,
        "REWRITE_MONITOR_CONFIG": str((tmp_path / "rm.toml").resolve()),
    }
    assert app_path().is_file()


def test_without_login_only_a_loopback_address_is_allowed() -> None:
    for address in ("127.0.0.1", "localhost", "::1"):
        streamlit_command(
            address=address, port=1, database_url="sqlite://", config=None, auth=False, environ={}
        )
    with pytest.raises(
        ConfigError, match="dashboard_address '0.0.0.0' exposes the dashboard without a login"
    ):
        streamlit_command(
            address="0.0.0.0", port=1, database_url="sqlite://", config=None, auth=False, environ={}
        )
    argv, _env = streamlit_command(
        address="0.0.0.0", port=1, database_url="sqlite://", config=None, auth=True, environ={}
    )
    assert argv[argv.index("--server.address") + 1] == "0.0.0.0"


def test_auth_is_configured_by_an_auth_table_in_a_secrets_file(tmp_path: Path) -> None:
    missing, plain, auth, broken = (
        tmp_path / n for n in ("missing.toml", "plain.toml", "auth.toml", "bad.toml")
    )
    plain.write_text('api = "x"\n')
    auth.write_text(
        '[auth]\nredirect_uri = "http://localhost:8501/oauth2callback"\ncookie_secret = "s"\n'
        '[auth.company]\nclient_id = "id"\nclient_secret = "x"\n'
        'server_metadata_url = "https://id.example/.well-known/openid-configuration"\n'
    )
    broken.write_text("[auth\n")
    assert auth_configured([missing, plain]) is False
    assert auth_configured([plain, auth]) is True
    # Regression: an empty or partial [auth] table is no login and must not unlock a non-local address.
    empty = tmp_path / "empty.toml"
    empty.write_text("[auth]\n")
    partial = tmp_path / "partial.toml"
    partial.write_text('[auth]\nredirect_uri = "http://localhost:8501/oauth2callback"\n')
    assert auth_configured([empty, partial]) is False
    with pytest.raises(ConfigError, match="bad.toml: invalid TOML"):
        auth_configured([broken])


@given(st.text())
def test_md_leaves_no_markdown_and_reads_back_as_the_text(text: str) -> None:
    """Every ASCII punctuation mark comes out backslash-escaped, and what the reader sees is the text
    itself with its whitespace runs as single spaces."""
    import re

    from dashboard.artifacts import md
    from tests.helpers import shown

    out = md(text)
    assert re.search(r"[!-/:-@\[-`{-~]", re.sub(r"\\[!-/:-@\[-`{-~]", "", out)) is None
    assert shown(out) == " ".join(text.split())


def test_auth_missing_names_what_a_login_still_needs() -> None:
    from monitor.settings import auth_missing

    full = {
        "redirect_uri": "u",
        "cookie_secret": "c",
        "client_id": "i",
        "client_secret": "s",
        "server_metadata_url": "m",
    }
    assert auth_missing(full) == []
    assert auth_missing({k: v for k, v in full.items() if k != "client_secret"}) == ["client_secret"]
    # a provider table may carry the client keys
    nested = {
        "redirect_uri": "u",
        "cookie_secret": "c",
        "google": {"client_id": "i", "client_secret": "s", "server_metadata_url": "m"},
    }
    assert auth_missing(nested) == []
    assert auth_missing({}) == [
        "redirect_uri",
        "cookie_secret",
        "client_id",
        "client_secret",
        "server_metadata_url",
    ]


def test_findings_past_the_first_three_fold_under_n_more() -> None:
    """Issue 35, part 2: the three most severe findings open, the rest under "N more findings"."""
    import re
    from types import SimpleNamespace

    from dashboard.artifacts import FINDINGS_SHOWN, findings_html

    def finding(kind: str, severity: str) -> SimpleNamespace:
        return SimpleNamespace(kind=kind, step="s", severity=severity, reason=f"{kind} reason", evidence={})

    five = [finding(f"k{i}", sev) for i, sev in enumerate(["low", "high", "low", "medium", "high"])]
    out = findings_html(five)  # type: ignore[arg-type]
    assert FINDINGS_SHOWN == 3
    opened, folded = out.split('<details class="rm-more"><summary>2 more findings</summary>')
    # most severe first: the two highs and the medium open, the two lows folded
    assert re.findall(r"\((k\d)\)", opened) == ["k1", "k4", "k3"]
    assert re.findall(r"\((k\d)\)", folded) == ["k0", "k2"] and folded.endswith("</details>")
    assert "<details" not in findings_html(five[:3])  # type: ignore[arg-type]
    assert "1 more finding</summary>" in findings_html(five[:4])  # type: ignore[arg-type]
