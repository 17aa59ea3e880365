"""One request id logged in two conversations: the services refuse to guess and take ``conv_id``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.checks.store import list_findings
from monitor.errors import AmbiguousRequestError
from monitor.ingest.store.records import get_record_view
from monitor.review.store import verdict_for_request
from monitor.store.models import QueueItem, Verdict
from tests.factories import ctx_input, ingest_checked, rewrite

INVENTED = "What is the uptime SLA for the Dublin region on the enterprise plan?"


# Request ``same_2`` in convA (a clean rewrite) and in convB (adds "enterprise").
SAME_REQUEST = [
    ctx_input("convA", "same_2"),
    rewrite("convA", "same_2"),
    ctx_input("convB", "same_2"),
    rewrite("convB", "same_2", query=INVENTED),
]


def test_a_shared_request_id_is_refused_without_a_conversation(session: Session) -> None:
    assert ingest_checked(session, *SAME_REQUEST).stored == 4
    with pytest.raises(
        AmbiguousRequestError, match=r"'same_2' names rewrites of several conversations \(convA, convB\)"
    ):
        get_record_view(session=session, request_id="same_2")
    b = get_record_view(session=session, request_id="same_2", conv_id="convB")
    assert b is not None and b.conv_id == "convB" and b.record is not None and b.record.query == INVENTED
    assert get_record_view(session=session, request_id="same_2", conv_id="convC") is None
    words = {
        f.conv_id: f.words
        for f in list_findings(
            session=session, checks=_checks(), request_id="same_2", kind="added_content_word"
        )
    }
    assert set(words) == {"convB"}
    assert (
        list_findings(
            session=session, checks=_checks(), request_id="same_2", conv_id="convA", kind="added_content_word"
        )
        == []
    )


def test_a_verdict_names_its_conversation(session: Session) -> None:
    assert ingest_checked(session, *SAME_REQUEST).stored == 4
    now = datetime(2024, 3, 5, 9, tzinfo=UTC)
    with pytest.raises(AmbiguousRequestError, match="choose one with --conv"):
        verdict_for_request(
            session=session, request_id="same_2", reviewer="ann", label="ok", artifact="none", now=now
        )
    vid = verdict_for_request(
        session=session,
        request_id="same_2",
        conv_id="convB",
        reviewer="ann",
        label="fabricated_constraint",
        artifact="rewrite",
        now=now,
    )
    item = session.scalars(
        select(QueueItem).join(Verdict, Verdict.queue_item_id == QueueItem.id).where(Verdict.id == vid)
    ).one()
    assert (item.conv_id, item.request_id) == ("convB", "same_2")


def _checks() -> list[tuple[str, int]]:
    from monitor.checks import current_versions

    return current_versions()


def test_show_and_verdict_take_conv_on_the_command_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from monitor.cli.main import app
    from monitor.store.engine import make_engine, session_factory, upgrade

    url = f"sqlite:///{tmp_path / 'amb.db'}"
    upgrade(url)
    engine = make_engine(url)
    with session_factory(engine)() as s:
        assert ingest_checked(s, *SAME_REQUEST).stored == 4
        s.commit()
    engine.dispose()
    runner = CliRunner()
    both = runner.invoke(app, ["--database-url", url, "show", "same_2"])
    assert both.exit_code == 2
    assert both.stderr == (
        "error: request id 'same_2' names rewrites of several conversations (convA, convB): "
        "choose one with --conv\n"
    )
    shown = runner.invoke(app, ["--database-url", url, "show", "same_2", "--conv", "convB"])
    assert shown.exit_code == 0 and "enterprise" in shown.stdout and "conversation convB" in shown.stdout
    none = runner.invoke(app, ["--database-url", url, "show", "same_2", "--conv", "convC"])
    assert none.exit_code == 1 and "no request 'same_2' in conversation 'convC'" in none.stderr
    args = ["--database-url", url, "verdict", "same_2", "--label", "ok", "--reviewer", "ann"]
    assert runner.invoke(app, args).exit_code == 2
    done = runner.invoke(app, [*args, "--conv", "convA"])
    assert done.exit_code == 0 and "verdict 1 recorded on same_2: ok" in done.stderr + done.stdout
