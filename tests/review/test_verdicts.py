"""Verdicts become regression cases: the shared service functions, manual items, deduplication and
versions, withdrawal, the idempotent sync, and the terminal commands (verdict, review)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from monitor.cases.store import count_cases, list_cases, sync_cases
from monitor.cli.main import app
from monitor.queue.store import QueueError, claim, enqueue_days, list_queue
from monitor.review.evidence import Suggestion, choose_terms
from monitor.review.store import record_verdict
from monitor.settings import Settings
from monitor.stats.store import latest_verdicts, whole_traffic_estimates
from monitor.store.models import QueueDay, QueueItem, RegressionCase, Verdict
from tests.factories import ctx_input, ingest_checked, rewrite, verdict
from tests.helpers import count_verdicts, store_session

NOW = datetime(2024, 3, 5, 9, 30, tzinfo=UTC)
LEASE = timedelta(minutes=10)
MESSAGES = [
    {"role": "user", "content": "Which EU regions support CMK?"},
    {"role": "assistant", "content": "Frankfurt and Dublin."},
]
LATEST = "What's the uptime SLA on the second one?"
CLEAN = "What is the uptime SLA for the Dublin region?"
FABRICATED = "What is the uptime SLA for the Dublin region on the enterprise plan?"
runner = CliRunner()


def seed(session: Session, *queries: str, same_prefix: bool = False) -> list[str]:
    """One conversation per query (request ``c<i>_2``), ingested and checked; returns the request ids.

    With ``same_prefix`` every conversation received the same messages (the dedup case); otherwise
    each has its own first question.
    """
    events = []
    for i, q in enumerate(queries, 1):
        conv, req = f"c{i}", f"c{i}_2"
        msgs = [dict(m, ts="2024-03-04T08:00:00Z") for m in MESSAGES]
        if not same_prefix:
            msgs[0]["content"] = f"Which EU regions support CMK? (ticket {i})"
        resolved = [{"surface": "the second one", "antecedent": "Dublin", "turn": 2}]
        events += [ctx_input(conv, req, messages=msgs), rewrite(conv, req, query=q, resolved=resolved)]
    ingest_checked(session, *events)
    return [f"c{i}_2" for i in range(1, len(queries) + 1)]


def test_a_request_not_in_the_queue_is_added_as_a_manual_item_and_verdicted(session: Session) -> None:
    (req,) = seed(session, FABRICATED)
    vid = verdict(
        session,
        req,
        corrected_query=" What is the uptime SLA for Dublin? ",
        must_include=["Dublin", " Dublin ", ""],
        must_not_include=["enterprise"],
        note="from ticket 4711",
    )
    item = session.scalars(select(QueueItem)).one()
    assert (item.request_id, item.stratum, item.inclusion_prob, item.kinds, item.state) == (
        req,
        "manual",
        0.0,
        [],
        "done",
    )
    assert (item.day, item.claimed_by, item.finished_at) == (
        date(2024, 3, 4),
        "alice",
        datetime(2024, 3, 5, 9, 30),
    )
    v = session.get_one(Verdict, vid)
    assert (v.corrected_query, v.must_include, v.must_not_include, v.note) == (
        "What is the uptime SLA for Dublin?",
        ["Dublin"],
        ["enterprise"],
        "from ticket 4711",
    )
    (case,) = list_cases(session=session)
    assert case.version == 1 and not case.superseded and len(case.case_key) == 64
    assert case.messages == [
        {"role": "user", "content": "Which EU regions support CMK? (ticket 1)"},
        {"role": "assistant", "content": "Frankfurt and Dublin."},
    ]
    assert (case.source_request_id, case.latest, case.expected_query) == (
        req,
        LATEST,
        "What is the uptime SLA for Dublin?",
    )
    assert (case.must_include, case.must_not_include, case.label, case.artifact) == (
        ["Dublin"],
        ["enterprise"],
        "fabricated_constraint",
        "rewrite",
    )
    assert (case.reviewer, case.verdict_at, case.prompt_version, case.model, case.verdict_id) == (
        "alice",
        datetime(2024, 3, 5, 9, 30),
        "ctx-v1",
        "m1",
        vid,
    )


def test_manual_items_stay_out_of_the_daily_sample_and_the_traffic_estimate(session: Session) -> None:
    manual_req, other = seed(session, FABRICATED, CLEAN)
    verdict(session, manual_req)
    result = enqueue_days(
        session=session,
        days=[date(2024, 3, 4)],
        checks=_checks(),
        settings=Settings().queue,  # type: ignore[call-arg]
        now=NOW,
    )
    # only the clean record was eligible: it is the day's control sample, π = 1/1
    assert result.added == {"control": 1}
    days = {(d.stratum, d.eligible, d.taken) for d in session.scalars(select(QueueDay))}
    # the fabricated record has a high finding, yet the high stratum counts it neither eligible nor taken
    assert days == {("control", 1, 1), ("high", 0, 0), ("medium", 0, 0), ("low", 0, 0)}
    manual = session.scalars(select(QueueItem).where(QueueItem.request_id == manual_req)).one()
    assert (manual.stratum, manual.inclusion_prob) == ("manual", 0.0)
    # the manual verdict has no population behind it: the estimate covers no verdict yet
    est = whole_traffic_estimates(latest_verdicts(session=session), session)[0]
    assert (est.name, est.value, est.verdicts) == ("bad_rewrite", None, 0)
    assert [r.request_id for r in list_queue(session=session, now=NOW)] == [other]


def _checks() -> list[tuple[str, int]]:
    from monitor.checks import current_versions

    return current_versions()


def test_a_queued_item_claimed_by_someone_else_is_refused_and_nothing_is_written(session: Session) -> None:
    (req,) = seed(session, CLEAN)
    enqueue_days(
        session=session, days=[date(2024, 3, 4)], checks=_checks(), settings=Settings().queue, now=NOW
    )
    item = session.scalars(select(QueueItem)).one()
    claim(session=session, item_id=item.id, reviewer="bob", now=NOW, lease=LEASE)
    with pytest.raises(QueueError, match="claimed by bob"):
        verdict(session, req, reviewer="alice")
    assert session.scalar(select(func.count()).select_from(Verdict)) == 0
    # bob holds it: his verdict goes through the queued item, not a new manual one
    verdict(session, req, reviewer="bob", label="ok")
    assert session.scalar(select(func.count()).select_from(QueueItem)) == 1


def test_unknown_label_and_unknown_request_are_refused(session: Session) -> None:
    (req,) = seed(session, CLEAN)
    with pytest.raises(QueueError, match="unknown label 'wrong'"):
        verdict(session, req, label="wrong")
    with pytest.raises(QueueError, match="does not go with artifact 'rewrite'"):
        verdict(session, req, label="ok", artifact="rewrite")
    with pytest.raises(QueueError, match="no logged rewrite with request id 'nope'"):
        verdict(session, "nope")
    assert session.scalar(select(func.count()).select_from(QueueItem)) == 0


def test_ok_on_a_clean_rewrite_makes_no_case_but_a_false_alarm_on_a_flagged_one_does(
    session: Session,
) -> None:
    clean, flagged = seed(session, CLEAN, FABRICATED)
    verdict(session, clean, label="ok")
    assert count_cases(session=session) == 0
    verdict(session, flagged, label="false_alarm_synonym", must_include=["enterprise"])
    (case,) = list_cases(session=session)
    # a negative case: the logged query is the gold one
    assert (case.label, case.artifact, case.expected_query, case.must_include) == (
        "false_alarm_synonym",
        "none",
        FABRICATED,
        ["enterprise"],
    )


def test_same_prefix_latest_and_label_is_one_case(session: Session) -> None:
    a, b, c = seed(session, FABRICATED, FABRICATED, FABRICATED, same_prefix=True)
    verdict(session, a, must_include=["Dublin"])
    verdict(session, b, must_include=["Dublin"], reviewer="bob")  # same gold: nothing new
    assert [
        (r.version, r.source_request_id) for r in list_cases(session=session, include_superseded=True)
    ] == [(1, a)]
    verdict(session, c, must_include=["Dublin", "uptime SLA"], now=NOW + timedelta(hours=1))
    rows = list_cases(session=session, include_superseded=True, oldest_first=True)
    assert [(r.version, r.superseded, r.source_request_id, r.must_include) for r in rows] == [
        (1, True, a, ["Dublin"]),
        (2, False, c, ["Dublin", "uptime SLA"]),
    ]
    assert len({r.case_key for r in rows}) == 1


def test_a_re_review_supersedes_never_overwrites_and_a_change_of_mind_withdraws(session: Session) -> None:
    (req,) = seed(session, FABRICATED)
    verdict(session, req, corrected_query="uptime SLA Dublin")
    later = NOW + timedelta(days=1)
    verdict(session, req, corrected_query="Dublin uptime SLA", now=later)
    rows = list_cases(session=session, include_superseded=True, oldest_first=True)
    assert [(r.version, r.superseded, r.expected_query) for r in rows] == [
        (1, True, "uptime SLA Dublin"),
        (2, False, "Dublin uptime SLA"),
    ]
    old = session.scalars(select(RegressionCase).where(RegressionCase.version == 1)).one()
    assert old.superseded_at == datetime(2024, 3, 6, 9, 30)
    # the third review says the rewrite was over-carried, not fabricated: the fabricated case is
    # withdrawn, and a case under the new label starts at version 1 once the verdict says what a replay
    # must not carry over (without a term or a corrected query it would assert nothing: no case)
    verdict(session, req, label="over_carried", now=later + timedelta(hours=1))
    assert list_cases(session=session) == []
    verdict(session, req, label="over_carried", must_not_include=["CMK"], now=later + timedelta(hours=2))
    current = list_cases(session=session)
    assert [(r.label, r.version, r.must_not_include) for r in current] == [("over_carried", 1, ["CMK"])]
    assert count_cases(session=session, include_superseded=True) == 3


def test_sync_applies_only_verdicts_without_a_case_and_is_idempotent(session: Session) -> None:
    a, b = seed(session, FABRICATED, CLEAN)
    verdict(session, a, must_include=["Dublin"])
    verdict(session, b, label="ok")
    # as if the verdicts had been stored before cases existed
    session.execute(delete(RegressionCase))
    assert sync_cases(session=session, now=NOW) == 2  # both looked at; the clean ok makes no case
    assert [r.source_request_id for r in list_cases(session=session)] == [a]
    assert sync_cases(session=session, now=NOW) == 1  # only the ok verdict (it never has a case row)
    assert count_cases(session=session, include_superseded=True) == 1


def test_record_verdict_keeps_the_dashboard_keyword_signature(session: Session) -> None:
    (req,) = seed(session, FABRICATED)
    enqueue_days(
        session=session, days=[date(2024, 3, 4)], checks=_checks(), settings=Settings().queue, now=NOW
    )
    item = session.scalars(select(QueueItem)).one()
    vid = record_verdict(
        session=session,
        item_id=item.id,
        reviewer="carol",
        label="fabricated_constraint",
        artifact="rewrite",
        now=NOW,
        corrected_query="uptime SLA for Dublin",
        must_include=("Dublin",),
        must_not_include=("enterprise", "plan"),
        note=None,
        lease=LEASE,
    )
    (case,) = list_cases(session=session)
    assert (case.verdict_id, case.reviewer, case.must_not_include, item.request_id) == (
        vid,
        "carol",
        ["enterprise", "plan"],
        req,
    )


def test_the_verdict_and_its_case_record_which_terms_were_accepted_suggestions(session: Session) -> None:
    """Issue 35, part 4: accepted suggestions and typed terms are told apart in the verdict and the case;
    a term claimed as accepted that the verdict does not hold is refused, nothing written."""
    (req,) = seed(session, FABRICATED)
    enqueue_days(
        session=session, days=[date(2024, 3, 4)], checks=_checks(), settings=Settings().queue, now=NOW
    )
    item = session.scalars(select(QueueItem)).one()
    chosen = choose_terms([Suggestion("must_not_include", "enterprise")], ["Dublin"], ["plan"])
    common = {"session": session, "item_id": item.id, "reviewer": "carol", "now": NOW, "lease": LEASE}
    with pytest.raises(QueueError, match="accepted must_not_include terms not among the verdict's"):
        record_verdict(
            **common,
            label="fabricated_constraint",
            artifact="rewrite",
            must_include=["Dublin"],
            accepted=chosen,
        )
    session.rollback()
    assert session.scalar(select(func.count()).select_from(Verdict)) == 0
    vid = record_verdict(
        **common,
        label="fabricated_constraint",
        artifact="rewrite",
        must_include=chosen.must_include,
        must_not_include=chosen.must_not_include,
        accepted=chosen,
    )
    accepted = {"must_include": [], "must_not_include": ["enterprise"]}
    assert session.get_one(Verdict, vid).accepted_terms == accepted
    (case,) = list_cases(session=session)
    assert (case.must_include, case.must_not_include, case.accepted_terms) == (
        ["Dublin"],
        ["enterprise", "plan"],
        accepted,
    )
    # terms given without a form (the `verdict` command, the API without `accepted`) count as typed
    again = verdict(session, req, must_include=["Dublin", "uptime"], reviewer="carol")
    assert session.get_one(Verdict, again).accepted_terms == {"must_include": [], "must_not_include": []}


# -- the terminal commands ---------------------------------------------------------------------
@pytest.fixture
def cli_db(cli_db: str) -> str:
    """The shared migrated store (tests/conftest.py), seeded with a fabricated and a clean rewrite."""
    from monitor.store.engine import make_engine, session_factory

    url = cli_db

    engine = make_engine(url)
    with session_factory(engine)() as s:
        seed(s, FABRICATED, CLEAN)
        s.commit()
    engine.dispose()
    return url


def _cases(url: str) -> list[tuple[str, str, str | None, list[str], list[str], str]]:
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(url)
    with session_factory(engine)() as s:
        rows = list_cases(session=s, oldest_first=True)
    engine.dispose()
    return [
        (r.source_request_id, r.label, r.expected_query, r.must_include, r.must_not_include, r.reviewer)
        for r in rows
    ]


def _accepted(url: str) -> list[dict[str, list[str]] | None]:
    """The terms each current case (oldest first) says its reviewer accepted from the suggestions."""
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(url)
    with session_factory(engine)() as s:
        rows = list_cases(session=s, oldest_first=True)
    engine.dispose()
    return [r.accepted_terms for r in rows]


def test_verdict_command_records_through_the_service_function(cli_db: str) -> None:
    args = ["--database-url", cli_db, "verdict", "c1_2", "--label", "fabricated_constraint"]
    args += [
        "--query",
        "uptime SLA of Dublin",
        "--must-include",
        "Dublin",
        "--must-not-include",
        "enterprise",
    ]
    result = runner.invoke(app, [*args, "--reviewer", "dana"])
    assert result.exit_code == 0, result.output
    assert result.output == "verdict 1 recorded on c1_2: fabricated_constraint\n"
    assert _cases(cli_db) == [
        ("c1_2", "fabricated_constraint", "uptime SLA of Dublin", ["Dublin"], ["enterprise"], "dana")
    ]
    bad = runner.invoke(app, ["--database-url", cli_db, "verdict", "c1_2", "--label", "nonsense"])
    assert bad.exit_code == 2  # a usage error, like every wrong choice (tests/test_cli_choices.py)
    assert "Invalid value for '--label': Value error, 'nonsense' is not one of 'ok'," in bad.output


def test_review_walks_the_queue_with_one_key_labels(cli_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        enqueue_days(session=s, days=[date(2024, 3, 4)], checks=_checks(), settings=Settings().queue, now=NOW)  # type: ignore[call-arg]
        s.commit()
    engine.dispose()
    # Piped input, one answer per line. Item 1 (the flagged one, first in review order): "f", then the
    # corrected query; the suggestions are listed by number ("1. must not: enterprise  2. must not:
    # plan"): "1" accepts "enterprise" only; then the typed must-include ("Dublin") and must-not-include
    # (none); item 2 (control): "o".
    keys = "f\n" + "uptime SLA of Dublin\n" + "1\n" + "Dublin\n" + "\n" + "o\n"
    result = runner.invoke(app, ["--database-url", cli_db, "review", "--reviewer", "rita"], input=keys)
    assert result.exit_code == 0, result.output
    assert "the queue is empty" in result.output
    assert "What's the uptime SLA on the second one?" in result.output  # the artifacts were shown
    assert "suggested terms: 1. must not: enterprise  2. must not: plan" in result.output
    assert _cases(cli_db) == [
        ("c1_2", "fabricated_constraint", "uptime SLA of Dublin", ["Dublin"], ["enterprise"], "rita")
    ]
    assert _accepted(cli_db) == [{"must_include": [], "must_not_include": ["enterprise"]}]
    assert "2 verdicts, 0 skipped" in result.output


def _enqueue(url: str) -> None:
    """Admit the seeded day (2024-03-04) to the queue of the store at ``url``."""
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(url)
    with session_factory(engine)() as s:
        enqueue_days(session=s, days=[date(2024, 3, 4)], checks=_checks(), settings=Settings().queue, now=NOW)  # type: ignore[call-arg]
        s.commit()
    engine.dispose()


def test_review_counts_takes_a_note_and_goes_back_to_change_a_verdict(cli_db: str) -> None:
    from monitor.store.engine import make_engine, session_factory

    _enqueue(cli_db)
    engine = make_engine(cli_db)
    # c1_2 (flagged): "e" and a note, "v" (the full text), then "f" with an empty corrected query, no
    # suggestion accepted and no typed terms (four lines: piped input is never asked again); c2_2
    # (control): "b" goes back to c1_2, "o" replaces its verdict; c2_2 again: "o".
    keys = "e\nchecked against ticket 4711\nv\nf\n" + "\n" * 4 + "b\no\n" + "o\n"
    result = runner.invoke(app, ["--database-url", cli_db, "review", "--reviewer", "rita"], input=keys)
    assert result.exit_code == 0, result.output
    heads = [line for line in result.output.splitlines() if line.startswith("item ")]
    assert [h.split(" · ")[0] + " · " + h.split(" · ")[1] for h in heads] == [
        "item 1 of 2 · c1_2",
        "item 1 of 2 · c1_2",  # "v" draws it again, in full
        "item 2 of 2 · c2_2",
        "item 1 of 2 · c1_2",  # back
        "item 2 of 2 · c2_2",
    ]
    assert heads[3].endswith("(back: your verdict: fabricated_constraint; a new verdict replaces yours)")
    flat = " ".join(result.output.split())  # the console wraps long lines at 160 columns
    assert (
        "a fabricated_constraint verdict on the rewrite needs something a replay can fail: the invented "
        "words under must not include, or a corrected query: none of the suggested terms is accepted "
        "(stored without a case)"
    ) in flat
    assert "verdict 1: fabricated_constraint (no regression case: an error on the rewrite with no " in flat
    assert "verdict 2: ok (replaces your earlier verdict)" in result.output
    with session_factory(engine)() as s:
        rows = s.execute(select(Verdict.request_id, Verdict.label, Verdict.note).order_by(Verdict.id)).all()
        states = {i.request_id: i.state for i in s.scalars(select(QueueItem))}
    engine.dispose()
    # appended, never overwritten: c1_2's first verdict (with its note) stays, the newest is its verdict
    assert [tuple(r) for r in rows] == [
        ("c1_2", "fabricated_constraint", "checked against ticket 4711"),
        ("c1_2", "ok", None),
        ("c2_2", "ok", None),
    ]
    assert states == {"c1_2": "done", "c2_2": "done"}
    assert "2 verdicts, 0 skipped" not in result.output  # three verdicts were recorded
    assert "3 verdicts, 0 skipped" in result.output


def test_review_back_then_quit_keeps_the_earlier_verdict(cli_db: str) -> None:
    from monitor.store.engine import make_engine, session_factory

    _enqueue(cli_db)
    engine = make_engine(cli_db)
    result = runner.invoke(
        app, ["--database-url", cli_db, "review", "--reviewer", "rita"], input="b\no\nb\nq\n"
    )
    assert result.exit_code == 0, result.output
    assert "nothing to go back to yet in this session" in result.output
    with session_factory(engine)() as s:
        states = {i.request_id: (i.state, i.claimed_by) for i in s.scalars(select(QueueItem))}
        labels = s.scalars(select(Verdict.label)).all()
    engine.dispose()
    # c1_2 judged ok, reopened with "b", given back with "q": done with its one verdict; c2_2 released
    assert states == {"c1_2": ("done", None), "c2_2": ("pending", None)}
    assert labels == ["ok"]


def test_compact_view_collapses_older_answers_around_the_flagged_words() -> None:
    from monitor.cli.render import compact_passage

    passage = "A" * 150 + " the enterprise plan costs more " + "B" * 300
    got = compact_passage(passage, ["enterprise"], head=20, window=10)
    assert got == "A" * 20 + " … " + "AAAAA the enterprise plan cost … (+432 chars)"
    assert compact_passage("short", ["enterprise"]) == "short"


def test_review_quit_releases_the_item(cli_db: str) -> None:
    runner.invoke(app, ["--database-url", cli_db, "verdict", "c2_2", "--label", "ok", "--reviewer", "sam"])
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        enqueue_days(session=s, days=[date(2024, 3, 4)], checks=_checks(), settings=Settings().queue, now=NOW)  # type: ignore[call-arg]
        s.commit()
    result = runner.invoke(app, ["--database-url", cli_db, "review", "--reviewer", "rita"], input="q\n")
    assert result.exit_code == 0, result.output
    with session_factory(engine)() as s:
        states = sorted((i.request_id, i.state, i.claimed_by) for i in s.scalars(select(QueueItem)))
    engine.dispose()
    # "q" gives c1_2 back; c2_2 keeps its manual verdict by sam
    assert states == [("c1_2", "pending", None), ("c2_2", "done", "sam")]
    # a piped line that is no key ("z", a word of a query out of step) stops the review (exit 2) and
    # gives the item back too: it was ignored, and "fine" was taken for fabricated_constraint
    for line in ("z", "fine", ""):
        stopped = runner.invoke(
            app, ["--database-url", cli_db, "review", "--reviewer", "rita"], input=f"{line}\nq\n"
        )
        assert stopped.exit_code == 2, stopped.output
        assert (
            f"a key line holds one key (a, b, c, d, e, f, g, m, n, o, q, r, s, t, u, v, w, x), not {line!r}"
            in (" ".join(stopped.output.split()))
        )
        assert count_verdicts(cli_db) == 1  # sam's only
    with session_factory(engine)() as s:
        assert s.scalar(select(QueueItem.state).where(QueueItem.request_id == "c1_2")) == "pending"
    engine.dispose()
    # Regression: piped input that simply ends (no "q") quits and releases too, never a traceback.
    ended = runner.invoke(app, ["--database-url", cli_db, "review", "--reviewer", "rita"], input="")
    assert ended.exit_code == 0, ended.output
    with session_factory(engine)() as s:
        assert s.scalar(select(QueueItem.state).where(QueueItem.request_id == "c1_2")) == "pending"
    engine.dispose()


def test_review_with_piped_input_stays_in_step_when_a_verdict_makes_no_case(cli_db: str) -> None:
    """Found by a newcomer: the form asked the questions again after an answer with nothing a replay can
    fail, and piped input (one line per answer) then answered them with the next item's lines."""
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        enqueue_days(session=s, days=[date(2024, 3, 4)], checks=_checks(), settings=Settings().queue, now=NOW)  # type: ignore[call-arg]
        s.commit()
    engine.dispose()
    # two items, each "u" (unresolved_reference, nothing suggested) and four empty answers (the accept
    # line is read even when nothing is offered, so a script's lines never depend on the findings)
    keys = "u\n\n\n\n\n" * 2 + "q\n"
    result = runner.invoke(app, ["--database-url", cli_db, "review", "--reviewer", "rita"], input=keys)
    assert result.exit_code == 0, result.output
    said = "an unresolved_reference verdict on the rewrite needs something a replay can fail"
    assert result.output.count(said) == 2  # before the questions, once per item
    assert result.output.count("(no regression case: an error on the rewrite with no corrected query") == 2
    assert "2 verdicts, 0 skipped" in result.output
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        got = [(v.label, v.corrected_query) for v in s.scalars(select(Verdict).order_by(Verdict.id))]
    engine.dispose()
    assert got == [("unresolved_reference", None)] * 2
    assert _cases(cli_db) == []


def stopped_piped(url: str, keys: str, said: str) -> None:
    """Piped ``keys`` to `review` stop it with exit 2 saying ``said`` (wrapped lines joined), no verdict
    stored."""
    result = runner.invoke(app, ["--database-url", url, "review", "--reviewer", "rita"], input=keys)
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split())
    assert count_verdicts(url) == 0


def queue_states(url: str) -> dict[str, tuple[str, str | None]]:
    """Request id -> (state, claimed by) of every queue item."""
    with store_session(url) as s:
        return {i.request_id: (i.state, i.claimed_by) for i in s.scalars(select(QueueItem))}


def test_piped_review_stops_on_an_accept_line_that_names_no_suggestion(cli_db: str) -> None:
    """Found by a newcomer: piped answers slid onto other questions when the accept line was read only
    for items with suggestions ("a" became a must-include term) or asked again. Now the line is always
    read, and one that names no suggestion stops the review (exit 2), the item given back, nothing
    stored."""
    _enqueue(cli_db)
    for keys, said in (
        # c1_2 suggests two terms: "3" names none of them
        ("f\n\n3\n\n\n", "piped answer '3': not a suggestion's number (1 to 2, or a for all): 3"),
        # an unresolved reference has nothing suggested: its accept line must be empty
        ("u\n\na\n\n\n", "nothing is suggested here: the accept line must be empty, not 'a'"),
    ):
        stopped_piped(cli_db, keys, said)
    assert queue_states(cli_db) == {"c1_2": ("pending", None), "c2_2": ("pending", None)}


def test_the_logged_query_typed_back_is_no_correction_in_the_terminal(cli_db: str) -> None:
    """Found by a newcomer: the terminal took any typed query for a correction, so it said nothing of a
    verdict that made no case; the logged query typed back is no correction (as on the dashboard)."""
    _enqueue(cli_db)
    keys = f"f\n{FABRICATED}\n\n\n\nq\n"
    result = runner.invoke(app, ["--database-url", cli_db, "review", "--reviewer", "rita"], input=keys)
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "none of the suggested terms is accepted (stored without a case)" in flat
    assert "verdict 1: fabricated_constraint (no regression case: an error on the rewrite with no" in flat


def test_piped_input_that_ends_mid_verdict_stores_nothing(cli_db: str) -> None:
    """Found by a newcomer: "u" and then the end of the input stored an unresolved_reference verdict
    with every answer defaulted. The input must give the four answers; it stops with exit 2 instead,
    the item given back."""
    _enqueue(cli_db)
    for keys in ("u\n", "f\n\n1\n"):
        stopped_piped(cli_db, keys, "the input ended before the answer to ")
    assert queue_states(cli_db) == {"c1_2": ("pending", None), "c2_2": ("pending", None)}


def test_a_term_both_required_and_forbidden_is_refused(cli_db: str) -> None:
    """Found by a newcomer: "Airbus" as must-include and "airbus" as must-not-include made a case no
    rewrite could pass (the judge ignores case), and `verdict` kept "airbus" and "Airbus" as two terms.
    Repeats are dropped ignoring case; a term on both sides is refused: by `verdict`, and by piped
    `review` (exit 2, the item given back, nothing stored)."""
    args = ["--database-url", cli_db, "verdict", "c1_2", "--label", "fabricated_constraint"]
    refused = runner.invoke(app, [*args, "--must-include", "Airbus", "--must-not-include", "airbus"])
    assert refused.exit_code != 0
    assert "'Airbus' both must and must not be included: no rewrite could pass" in " ".join(
        refused.output.split()
    )
    assert count_verdicts(cli_db) == 0
    kept = runner.invoke(app, [*args, "--must-not-include", "airbus", "--must-not-include", "Airbus"])
    assert kept.exit_code == 0, kept.output
    assert _cases(cli_db) == [("c1_2", "fabricated_constraint", None, [], ["airbus"], _cases(cli_db)[0][5])]


def test_piped_review_refuses_a_term_typed_on_both_sides(cli_db: str) -> None:
    _enqueue(cli_db)
    # c1_2: "f", no correction, "enterprise" accepted as must-not, then typed as must-include
    stopped_piped(cli_db, "f\n\n1\nEnterprise\n\n", "'Enterprise' both must and must not be included")
    assert queue_states(cli_db) == {"c1_2": ("pending", None), "c2_2": ("pending", None)}
