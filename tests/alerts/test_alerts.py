"""Fabrication-rate alerts on synthetic streams: a 1% -> 6% jump for one prompt version alerts once,
for it (and overall) only; 1% -> 1.67% on 300 rewrites does not; cooldown and recovery; the exact
Sentry payload the real sentry-sdk builds (captured at its transport); the scrubber.

Wilson 95% bounds below are (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), z = 1.959964,
rounded to 6 decimals as in the payload: 20/2000 -> [0.006483, 0.015396], 36/600 -> [0.043651,
0.081947], 6/600 -> [0.004591, 0.021644], 5/300 -> [0.007139, 0.038415], 60/6000 -> [0.007777,
0.012850], 48/1800 -> [0.020172, 0.035177].
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import re
import sys
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import SecretStr
from sentry_sdk.transport import Transport
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from monitor.alerts import policy as rules
from monitor.alerts.store import list_alerts
from monitor.checks import REGISTRY, current_versions
from monitor.checks.store import check_set_ids, check_set_key
from monitor.errors import ConfigError
from monitor.observability.sentry import close_sentry, cron_checkin, init_sentry, scrub_event
from monitor.settings import Settings
from monitor.store.models import Alert, CheckRun, Event, Finding, Record
from monitor.worker.alerting import evaluate_alerts
from tests.helpers import Receiver

CHECKS = current_versions()
FAB = [(s.id, s.version) for s in REGISTRY.values() if set(s.kinds) & set(rules.FABRICATION_KINDS)]
KIND_CHECK = {k: (s.id, s.version) for s in REGISTRY.values() for k in s.kinds}
_ids = itertools.count(10_000_000)

T0 = datetime(2024, 3, 11, 9, 0)  # start of the spike window (event time)
VERSIONS = ("ctx-v5", "ctx-v6", "ctx-v7")


def add_rewrites(
    session: Session,
    *,
    version: str,
    start: datetime,
    span: timedelta,
    n: int,
    flagged: int,
    severity: str = "high",
    kind: str = "added_content_word",
    model: str = "m1",
    signal: str | None = None,
) -> None:
    """``n`` checked rewrites of ``version`` spread evenly over ``(start, start + span]``, the first
    ``flagged`` of them (in id order, spread over the span) with one ``kind`` finding of ``severity``.

    Rows get explicit ids from a private range, so bulk inserts need no RETURNING.
    """
    events, records, runs, findings = [], [], [], []
    every = n // flagged if flagged else 0
    fab_set = check_set_ids(session=session, sets=[FAB], now=start)[check_set_key(FAB)]
    for i in range(n):
        rid = next(_ids)
        ts = start + span * (i + 1) / n
        req = f"{version}-{rid}"
        events.append(
            {
                "id": rid,
                "kind": "rewrite",
                "event_key": f"k{rid}",
                "content_sha": "s",
                "conv_id": f"c{rid}",
                "request_id": req,
                "turn": 2,
                "ts": ts,
                "source": "t",
                "origin": "t",
                "line_no": 1,
                "raw": {},
                "ingested_at": ts,
            }
        )
        records.append(
            {
                "id": rid,
                "conv_id": f"c{rid}",
                "request_id": req,
                "turn": 2,
                "ts": ts,
                "rewrite_event_id": rid,
                "model": model,
                "prompt_version": version,
            }
        )
        run_id = next(_ids)
        runs.append(
            {
                "id": run_id,
                "record_id": rid,
                "check_set_id": fab_set,
                "rules_hash": "h",
                "n_findings": 0,
                "checked_at": ts,
            }
        )
        if flagged and i % every == 0 and i // every < flagged:
            cid, ver = KIND_CHECK[kind]
            findings.append(
                {
                    "id": next(_ids),
                    "check_run_id": run_id,
                    "ordinal": 0,
                    "record_id": rid,
                    "request_id": req,
                    "kind": kind,
                    "severity": severity,
                    "severity_rank": {"low": 0, "medium": 1, "high": 2}[severity],
                    "reason": "r",
                    "words": ["w"],
                    "evidence": {} if signal is None else {"severity_signal": signal},
                    "check_id": cid,
                    "check_version": ver,
                    "rules_hash": "h",
                    "created_at": ts,
                }
            )
    session.execute(insert(Event), events)
    session.execute(insert(Record), records)
    session.execute(insert(CheckRun), runs)
    if findings:
        session.execute(insert(Finding), findings)
    session.flush()


def baseline(session: Session, versions: tuple[str, ...] = VERSIONS) -> None:
    """7 days before the window: 2,000 rewrites a version at 1% (20 flagged)."""
    for v in versions:
        add_rewrites(
            session, version=v, start=T0 - timedelta(days=7), span=timedelta(days=7), n=2000, flagged=20
        )


def ctx(now: datetime, **over: Any) -> SimpleNamespace:
    settings = Settings(**over)
    return SimpleNamespace(settings=settings, sentry=False, clock=lambda: now)


def decisions(session: Session, c: SimpleNamespace) -> dict[str, tuple[str | None, str | None]]:
    return {d.group.group_key: (d.action, d.reason) for d in evaluate_alerts(c, session)}


def stored(session: Session) -> list[tuple[str, str]]:
    return [(a.group_key, a.status) for a in session.scalars(select(Alert).order_by(Alert.id))]


# -- the decision rule, pure ---------------------------------------------------------------------------
def group(w: tuple[int, int], b: tuple[int, int]) -> rules.GroupWindow:
    return rules.GroupWindow(
        "prompt_version:v",
        "v",
        rules.Counts(*w),
        rules.Counts(*b),
        T0,
        T0 + timedelta(hours=1),
        T0 - timedelta(days=7),
        {"m1": w[0]},
    )


def test_spike_rule_compares_window_lower_bound_with_baseline_upper_bound() -> None:
    policy = rules.Policy()
    # 36/600: lower bound 0.043651 > 0.015396, the upper bound of 20/2000.
    assert rules.spike_reason(group((600, 36), (2000, 20)), policy) == "spike"
    # 6/600: lower bound 0.004591 < 0.015396.
    assert rules.spike_reason(group((600, 6), (2000, 20)), policy) is None
    # A factor of 3 asks for > 0.046188: 0.043651 is not enough.
    assert rules.spike_reason(group((600, 36), (2000, 20)), rules.Policy(factor=3.0)) is None


def test_minimums_gate_every_alert() -> None:
    assert rules.spike_reason(group((199, 40), (2000, 20)), rules.Policy()) is None  # < 200 rewrites
    assert rules.spike_reason(group((600, 4), (2000, 0)), rules.Policy()) is None  # < 5 flagged


def test_ceiling_alerts_without_a_baseline() -> None:
    assert rules.spike_reason(group((300, 30), (0, 0)), rules.Policy()) is None
    assert rules.spike_reason(group((300, 30), (0, 0)), rules.Policy(ceiling=0.10)) == "ceiling"
    assert rules.spike_reason(group((300, 29), (0, 0)), rules.Policy(ceiling=0.10)) is None


# -- synthetic streams on a real store -------------------------------------------------------------------
def test_jump_from_1_to_6_percent_alerts_once_for_that_version_only(session: Session) -> None:
    baseline(session)
    hour = timedelta(hours=1)
    add_rewrites(session, version="ctx-v5", start=T0, span=hour, n=600, flagged=6)
    add_rewrites(session, version="ctx-v6", start=T0, span=hour, n=600, flagged=6)
    add_rewrites(session, version="ctx-v7", start=T0, span=hour, n=600, flagged=36)
    now = T0 + hour
    assert decisions(session, ctx(now)) == {
        # overall: 48/1800, lower bound 0.020172 > 0.012850 (60/6000): the jump shows in the total too
        "overall": ("alert", "spike"),
        "prompt_version:ctx-v5": (None, None),
        "prompt_version:ctx-v6": (None, None),
        "prompt_version:ctx-v7": ("alert", "spike"),
    }
    # Five minutes later the same window is still a spike: inside the cooldown, nothing is sent.
    later = decisions(session, ctx(now + timedelta(minutes=5)))
    assert later["prompt_version:ctx-v7"] == ("suppressed", "spike")
    assert stored(session) == [("overall", "alert"), ("prompt_version:ctx-v7", "alert")]
    row = session.scalars(select(Alert).where(Alert.group_key == "prompt_version:ctx-v7")).one()
    assert (row.window_rewrites, row.window_flagged, row.window_rate) == (600, 36, 0.06)
    assert (row.baseline_rewrites, row.baseline_flagged, row.baseline_rate) == (2000, 20, 0.01)
    assert row.delivered_to == "log" and row.sentry_event_id is None
    assert row.context["window_ci95"] == [0.043651, 0.081947]
    assert row.context["baseline_ci95"] == [0.006483, 0.015396]
    (listed,) = [a for a in list_alerts(session=session) if a.group_key == "prompt_version:ctx-v7"]
    assert (listed.reason, listed.baseline_flagged, listed.baseline_rewrites) == ("spike", 20, 2000)
    assert listed.flagged_request_ids == row.context["flagged_request_ids"]
    assert len(listed.flagged_request_ids) == 20  # 36 flagged, the payload names at most 20


def test_one_rewrite_dated_in_the_future_does_not_move_the_alert_window(session: Session) -> None:
    """A producer whose clock runs a day ahead logs one rewrite: without the bound the window would sit
    around it (1 rewrite, below every minimum) and the real spike of the last hour would go unseen."""
    baseline(session)
    hour = timedelta(hours=1)
    add_rewrites(session, version="ctx-v7", start=T0, span=hour, n=600, flagged=36)
    add_rewrites(session, version="ctx-v7", start=T0 + timedelta(days=1), span=hour, n=1, flagged=0)
    got = decisions(session, ctx(T0 + hour))
    assert got["prompt_version:ctx-v7"] == ("alert", "spike")


def test_jump_from_1_to_1_5_percent_on_300_rewrites_does_not_alert(session: Session) -> None:
    baseline(session, ("ctx-v5",))
    add_rewrites(session, version="ctx-v5", start=T0, span=timedelta(hours=1), n=300, flagged=5)
    # 5/300 = 1.67%: lower bound 0.007139 < 0.015396.
    assert decisions(session, ctx(T0 + timedelta(hours=1))) == {
        "overall": (None, None),
        "prompt_version:ctx-v5": (None, None),
    }
    assert stored(session) == []


def test_medium_findings_do_not_count_at_the_default_high_threshold(session: Session) -> None:
    baseline(session, ("ctx-v5",))
    add_rewrites(
        session, version="ctx-v5", start=T0, span=timedelta(hours=1), n=600, flagged=36, severity="medium"
    )
    assert decisions(session, ctx(T0 + timedelta(hours=1)))["prompt_version:ctx-v5"] == (None, None)
    assert decisions(session, ctx(T0 + timedelta(hours=1), alert_min_severity="medium"))[
        "prompt_version:ctx-v5"
    ] == ("alert", "spike")


def test_rare_words_alone_do_not_count_towards_the_alert(session: Session) -> None:
    """A keyword-expansion rewriter adds rare topical words everywhere: high only for rarity, they are not
    the invention the alert is about (``ALERT_SIGNALS``); names, numbers and qualifier values are."""
    baseline(session, ("ctx-v5", "ctx-v6"))
    hour = timedelta(hours=1)
    add_rewrites(session, version="ctx-v5", start=T0, span=hour, n=600, flagged=36, signal="rare_term")
    add_rewrites(session, version="ctx-v6", start=T0, span=hour, n=600, flagged=36, signal="proper_name")
    got = decisions(session, ctx(T0 + hour))
    assert (got["prompt_version:ctx-v5"], got["prompt_version:ctx-v6"]) == ((None, None), ("alert", "spike"))


def test_cooldown_then_realert_then_recovery(session: Session) -> None:
    baseline(session, ("ctx-v7",))
    hour = timedelta(hours=1)
    add_rewrites(session, version="ctx-v7", start=T0, span=hour, n=600, flagged=36)
    wall = datetime(2024, 3, 11, 10, 0)
    assert decisions(session, ctx(wall))["prompt_version:ctx-v7"] == ("alert", "spike")
    # Still spiking 5 h 59 min later: suppressed; at 6 h: alerts again (one page per cooldown).
    assert decisions(session, ctx(wall + timedelta(hours=5, minutes=59)))["prompt_version:ctx-v7"] == (
        "suppressed",
        "spike",
    )
    assert decisions(session, ctx(wall + timedelta(hours=6)))["prompt_version:ctx-v7"] == ("alert", "spike")
    # The next hour of events is back at 1% (6/600 <= 0.015396): one recovery, then silence.
    add_rewrites(session, version="ctx-v7", start=T0 + hour, span=hour, n=600, flagged=6)
    assert decisions(session, ctx(wall + timedelta(hours=7)))["prompt_version:ctx-v7"] == (
        "recovered",
        "recovered",
    )
    assert decisions(session, ctx(wall + timedelta(hours=8)))["prompt_version:ctx-v7"] == (None, None)
    assert stored(session) == [
        ("overall", "alert"),
        ("prompt_version:ctx-v7", "alert"),
        ("overall", "alert"),
        ("prompt_version:ctx-v7", "alert"),
        ("overall", "recovered"),
        ("prompt_version:ctx-v7", "recovered"),
    ]
    assert [a.status for a in list_alerts(session=session, limit=2)] == ["recovered", "recovered"]


def test_a_new_spike_inside_the_cooldown_after_a_recovery_stays_quiet(session: Session) -> None:
    hist = rules.History(last_alert_at=T0, recovered=True)
    d = rules.decide(group((600, 36), (2000, 20)), rules.Policy(), hist, T0 + timedelta(hours=2))
    assert (d.action, d.reason) == ("suppressed", "spike")


def test_no_dsn_alerts_go_to_the_log(session: Session, caplog: pytest.LogCaptureFixture) -> None:
    baseline(session, ("ctx-v7",))
    add_rewrites(session, version="ctx-v7", start=T0, span=timedelta(hours=1), n=600, flagged=36)
    with caplog.at_level(logging.INFO, logger="monitor.alerts"):
        decisions(session, ctx(T0 + timedelta(hours=1)))
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert messages == [
        ("ERROR", "fabrication rate spike: all prompt versions"),
        ("ERROR", "fabrication rate spike: prompt_version ctx-v7"),
    ]
    fields = caplog.records[1].fields  # type: ignore[attr-defined]
    assert (fields["window_flagged"], fields["window_rewrites"], fields["sentry_event_id"]) == (36, 600, None)


# -- Sentry: what the real SDK would send -----------------------------------------------------------------
class CapturingTransport(Transport):
    """Keeps every envelope the SDK hands to its transport; nothing goes on the network."""

    def __init__(self, options: dict[str, Any] | None = None):
        super().__init__(options)
        self.envelopes: list[Any] = []

    def capture_envelope(self, envelope: Any) -> None:
        self.envelopes.append(envelope)

    def events(self) -> list[dict[str, Any]]:
        return [e.get_event() for e in self.envelopes if e.get_event() is not None]

    def checkins(self) -> list[dict[str, Any]]:
        return [i.payload.json for e in self.envelopes for i in e.items if i.type == "check_in"]


@pytest.fixture
def sentry() -> Any:
    transport = CapturingTransport()
    settings = Settings(
        sentry_dsn=SecretStr("https://public@o1.ingest.example.invalid/1"), sentry_environment="test"
    )
    assert init_sentry(settings, transport=transport)
    yield SimpleNamespace(transport=transport, settings=settings)
    close_sentry()


def test_sentry_client_sends_no_default_pii(sentry: Any) -> None:
    import sentry_sdk

    client = sentry_sdk.get_client()
    assert client.is_active()
    assert client.should_send_default_pii() is False
    assert client.options["include_local_variables"] is False
    assert client.options["before_send"] is scrub_event


def test_sentry_alert_payload(session: Session, sentry: Any) -> None:
    baseline(session, ("ctx-v7",))
    add_rewrites(session, version="ctx-v7", start=T0, span=timedelta(hours=1), n=600, flagged=36, model="m-7")
    c = ctx(T0 + timedelta(hours=1))
    c.sentry = True
    evaluate_alerts(c, session)
    events = sentry.transport.events()
    assert [e["message"] for e in events] == [
        "fabrication rate spike: all prompt versions",
        "fabrication rate spike: prompt_version ctx-v7",
    ]
    ev = events[1]
    assert ev["level"] == "error"
    assert ev["fingerprint"] == ["fabrication_rate", "ctx-v7"]
    assert ev["environment"] == "test"
    assert ev["tags"] == {
        "alert_kind": "fabrication_rate",
        "check_kind": "added_content_word,qualifier_conflict,replaced_term",
        "prompt_version": "ctx-v7",
        "model": "m-7",
        "reason": "spike",
        "group": "prompt_version:ctx-v7",
    }
    block = ev["contexts"]["fabrication_rate"]
    ids = block.pop("flagged_request_ids")
    assert block == {
        "group": "prompt_version:ctx-v7",
        "prompt_version": "ctx-v7",
        "reason": "spike",
        "finding_kinds": ["added_content_word", "qualifier_conflict", "replaced_term"],
        "min_severity": "high",
        "window_start": "2024-03-11T09:00:00.000001",
        "window_end": "2024-03-11T10:00:00.000001",
        "window_rewrites": 600,
        "window_flagged": 36,
        "window_rate": 0.06,
        "window_ci95": [0.043651, 0.081947],
        "baseline_start": "2024-03-04T09:00:00.000001",
        "baseline_rewrites": 2000,
        "baseline_flagged": 20,
        "baseline_rate": 0.01,
        "baseline_ci95": [0.006483, 0.015396],
        "factor": 1.0,
        "ceiling": None,
        "models": {"m-7": 600},
    }
    # The newest 20 flagged requests; ids only.
    assert len(ids) == 20 and all(i.startswith("ctx-v7-") for i in ids)
    row = session.scalars(select(Alert).where(Alert.group_key == "prompt_version:ctx-v7")).one()
    assert row.delivered_to == "sentry" and row.sentry_event_id == ev["event_id"]


def test_windows_end_one_microsecond_after_the_newest_rewrite() -> None:
    # The newest rewrite is in the window; the window's first microsecond is not in the baseline.
    assert rules.windows(datetime(2024, 3, 11, 10, 0), 60, 7) == (
        datetime(2024, 3, 4, 9, 0, 0, 1),
        datetime(2024, 3, 11, 9, 0, 0, 1),
        datetime(2024, 3, 11, 10, 0, 0, 1),
    )


def test_cron_checkins(sentry: Any) -> None:
    settings = Settings(
        sentry_dsn=SecretStr("https://public@o1.ingest.example.invalid/1"),
        cron_monitor_slug="rm-cycle",
        worker_interval_minutes=5,
    )
    with cron_checkin(settings.worker, True):
        pass
    with pytest.raises(RuntimeError), cron_checkin(settings.worker, True):
        raise RuntimeError("boom")
    checkins = sentry.transport.checkins()
    assert [(c["monitor_slug"], c["status"]) for c in checkins] == [
        ("rm-cycle", "in_progress"),
        ("rm-cycle", "ok"),
        ("rm-cycle", "in_progress"),
        ("rm-cycle", "error"),
    ]
    assert checkins[0]["monitor_config"] == {
        "schedule": {"type": "interval", "value": 5, "unit": "minute"},
        "checkin_margin": 5,
        "max_runtime": 30,
        "timezone": "UTC",
    }
    assert checkins[1]["check_in_id"] == checkins[0]["check_in_id"]
    assert checkins[3]["check_in_id"] == checkins[2]["check_in_id"] != checkins[0]["check_in_id"]


def test_scrubber_drops_transcript_fields_and_redacts_email_and_name() -> None:
    event = {
        "message": "reply sent to jane.doe@example.com",
        "level": "error",
        "extra": {
            "request_id": "r-42",
            "latest": "Can Jane Doe (jane.doe@example.com) get the enterprise SLA?",
            "query": "enterprise SLA for Jane Doe",
            "messages": [{"role": "user", "content": "I am Jane Doe"}],
            "n_messages": 3,
        },
        "contexts": {"fabrication_rate": {"window_flagged": 36, "flagged_request_ids": ["r-42"]}},
        "user": {"id": "worker-1", "email": "jane.doe@example.com", "username": "Jane Doe"},
        "request": {"data": "Jane Doe"},
        "breadcrumbs": {"values": [{"message": "mail jane.doe@example.com", "data": {"text": "Jane Doe"}}]},
        "exception": {
            "values": [
                {
                    "type": "ValueError",
                    "value": "bad input 'Jane Doe'",
                    "stacktrace": {"frames": [{"vars": {"q": "Jane"}}]},
                },
                {"type": "StorageError", "value": "cannot reach the database"},
            ]
        },
    }
    assert scrub_event(event, {}) == {
        "message": "reply sent to [email]",
        "level": "error",
        "extra": {"request_id": "r-42", "n_messages": 3},
        "contexts": {"fabrication_rate": {"window_flagged": 36, "flagged_request_ids": ["r-42"]}},
        "user": {"id": "worker-1"},
        "breadcrumbs": {"values": [{"message": "mail [email]", "data": {}}]},
        "exception": {
            "values": [
                {"type": "ValueError", "value": "[scrubbed]", "stacktrace": {"frames": [{}]}},
                {"type": "StorageError", "value": "cannot reach the database"},
            ]
        },
    }


def test_scrubber_runs_inside_the_real_sdk(sentry: Any) -> None:
    import sentry_sdk

    with sentry_sdk.new_scope() as scope:
        scope.set_extra("latest", "Ask Jane Doe at jane.doe@example.com")
        scope.set_extra("request_id", "r-7")
        sentry_sdk.capture_message("question from jane.doe@example.com")
    (ev,) = sentry.transport.events()
    assert ev["message"] == "question from [email]"
    # no sys.argv: the Argv integration is off (the command line holds --database-url)
    assert ev["extra"] == {"request_id": "r-7"}
    assert "Jane" not in repr(ev) and "example.com" not in repr(ev)


def test_a_database_password_reaches_sentry_in_no_byte(sentry: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's argv and an exception quoting the URL: the envelope bytes hold no password."""
    import sentry_sdk

    url = "postgresql://monitor:Tr0ub4dor-3@db.internal:5432/rm"
    monkeypatch.setattr("sys.argv", ["rewrite-monitor", "--database-url", url, "worker"])
    try:
        raise ConfigError(f"cannot open the store at {url}")
    except ConfigError:
        sentry_sdk.capture_exception()
    with sentry_sdk.new_scope() as scope:
        scope.set_extra("sys.argv", list(sys.argv))  # as if an integration had added it anyway
        scope.set_context("db", {"url": url, "dsn": "https://abc123key@o1.ingest.example.invalid/1"})
        sentry_sdk.capture_message("cycle failed")
    raw = b"".join(e.serialize() for e in sentry.transport.envelopes)
    assert b"Tr0ub4dor" not in raw and b"abc123key" not in raw and len(sentry.transport.events()) == 2
    (first, second) = sentry.transport.events()
    assert first["exception"]["values"][0]["value"] == (
        "cannot open the store at postgresql://[credentials]@db.internal:5432/rm"
    )
    assert "sys.argv" not in second.get("extra", {})
    assert second["contexts"]["db"]["url"] == "postgresql://[credentials]@db.internal:5432/rm"


def test_alerts_list_shows_reason_baseline_counts_and_the_flagged_requests(cli_db: str) -> None:
    from typer.testing import CliRunner

    from monitor.alerts.store import store_alert
    from monitor.cli.main import app
    from monitor.store.engine import make_engine, session_factory

    g = dataclasses.replace(group((600, 36), (2000, 20)), request_ids=tuple(f"r{i}" for i in range(7)))
    d = rules.Decision(g, "alert", "spike")
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        store_alert(
            session=s,
            decision=d,
            context=rules.context(d, rules.Policy()),
            delivered_to="log",
            sentry_event_id=None,
            now=T0 + timedelta(hours=1),
        )
        s.commit()
    engine.dispose()
    runner = CliRunner()
    as_json = runner.invoke(app, ["--database-url", cli_db, "alerts", "list", "--json"])
    (row,) = [json.loads(x) for x in as_json.stdout.splitlines()]
    assert (row["reason"], row["baseline_flagged"], row["baseline_rewrites"]) == ("spike", 20, 2000)
    assert row["flagged_request_ids"] == [f"r{i}" for i in range(7)]
    table = runner.invoke(app, ["--database-url", cli_db, "alerts", "list"], env={"COLUMNS": "300"})
    assert "spike" in table.stdout and "1.00% (20/2000)" in table.stdout
    cells = " ".join(t for t in re.split(r"[\s│┃]+", table.stdout) if t)  # the table's words, unwrapped
    assert "r0, r1, r2, r3, r4 (+2 more: --json)" in cells


class DroppingTransport(CapturingTransport):
    """Drops every envelope while ``down`` (as the SDK's HTTP transport does on a network error or a
    5xx answer: its ``on_dropped_event`` hook counts it); keeps them once Sentry is back."""

    def __init__(self, options: dict[str, Any] | None = None):
        super().__init__(options)
        self.down = True
        self.dropped = 0

    def capture_envelope(self, envelope: Any) -> None:
        if self.down:
            self.dropped += 1
        else:
            super().capture_envelope(envelope)


def test_an_alert_sentry_did_not_take_is_pending_and_sent_by_a_later_cycle(session: Session) -> None:
    transport = DroppingTransport()
    settings = Settings(sentry_dsn=SecretStr("https://public@o1.ingest.example.invalid/1"))
    assert init_sentry(settings, transport=transport)
    try:
        baseline(session, ("ctx-v7",))
        add_rewrites(session, version="ctx-v7", start=T0, span=timedelta(hours=1), n=600, flagged=36)
        c = ctx(T0 + timedelta(hours=1))
        c.sentry = True
        evaluate_alerts(c, session)
        rows = session.execute(select(Alert.group_key, Alert.delivered_to).order_by(Alert.id)).all()
        assert [tuple(r) for r in rows] == [("overall", "pending"), ("prompt_version:ctx-v7", "pending")]
        assert transport.events() == []
        transport.down = False
        evaluate_alerts(c, session)  # the same window again: inside the cooldown, only the resend
        session.expire_all()
        rows = session.execute(
            select(Alert.group_key, Alert.delivered_to, Alert.sentry_event_id).order_by(Alert.id)
        ).all()
        assert [(g, d) for g, d, _ in rows] == [("overall", "sentry"), ("prompt_version:ctx-v7", "sentry")]
        assert all(e for _, _, e in rows)
        events = transport.events()
        assert [e["message"] for e in events] == [
            "fabrication rate spike: all prompt versions",
            "fabrication rate spike: prompt_version ctx-v7",
        ]
        assert events[1]["fingerprint"] == ["fabrication_rate", "ctx-v7"]
        assert events[1]["tags"]["reason"] == "spike" and events[1]["tags"]["model"] == "m1"
        # sent once: the cooldown holds, so the second cycle raised nothing new
        assert session.scalar(select(func.count()).select_from(Alert)) == 2
    finally:
        close_sentry()


# -- destinations besides Sentry: webhook, Slack, PagerDuty -------------------------------------------
@pytest.fixture
def receiver() -> Any:
    r = Receiver()
    yield r
    r.close()


SECRET = "whsec-0123456789abcdef"


def destinations(r: Receiver) -> dict[str, Any]:
    return {
        "alert_webhook_url": r.url("/hook"),
        "alert_webhook_secret": SECRET,
        "alert_slack_webhook_url": r.url("/slack"),
        "alert_pagerduty_key": "pd-routing-key-1",
        "alert_pagerduty_url": r.url("/pd"),
    }


def test_an_alert_reaches_the_webhook_slack_and_pagerduty_signed_and_without_text(
    session: Session, receiver: Receiver
) -> None:
    from monitor.alerts.deliver import signature

    baseline(session, ("ctx-v7",))
    add_rewrites(session, version="ctx-v7", start=T0, span=timedelta(hours=1), n=600, flagged=36)
    got = decisions(session, ctx(T0 + timedelta(hours=1), **destinations(receiver)))
    assert got["prompt_version:ctx-v7"] == ("alert", "spike")
    by_path = {p: (h, json.loads(b), b) for p, h, b in receiver.requests if "ctx-v7" in b.decode()}
    assert sorted(by_path) == ["/hook", "/pd", "/slack"]
    headers, hook, raw = by_path["/hook"]
    # the signature is HMAC-SHA256 of the exact body with the shared secret, as a receiver checks it
    assert headers["X-Rewrite-Monitor-Signature"] == signature(SECRET, raw)
    assert headers["X-Rewrite-Monitor-Signature"].startswith("sha256=") and len(raw) > 100
    assert (hook["event"], hook["payload"]["window_flagged"], hook["payload"]["window_rewrites"]) == (
        "alert",
        36,
        600,
    )
    assert hook["message"] == "fabrication rate spike: prompt_version ctx-v7"
    _, slack, _ = by_path["/slack"]
    assert slack["text"].startswith("fabrication rate spike: prompt_version ctx-v7\nSpike: 6.00% (36/600)")
    assert "baseline 1.00% (20/2000)" in slack["text"]
    assert "`rewrite-monitor show ctx-v7-" in slack["text"]
    _, pd, _ = by_path["/pd"]
    assert (pd["event_action"], pd["routing_key"], pd["dedup_key"]) == (
        "trigger",
        "pd-routing-key-1",
        "rewrite-monitor:fabrication_rate:prompt_version:ctx-v7",
    )
    assert pd["payload"]["severity"] == "error" and pd["payload"]["custom_details"]["window_flagged"] == 36
    # counts, rates, times, the version and request ids: nothing else a log line carried
    for _, _, body in receiver.requests:
        assert b'"query"' not in body and b'"messages"' not in body and b'"latest"' not in body
    rows = {
        d.destination: d
        for a in list_alerts(session=session)
        for d in a.deliveries
        if a.prompt_version == "ctx-v7"
    }
    assert {k: (v.status, v.attempts) for k, v in rows.items()} == {
        "webhook": ("sent", 1),
        "slack": ("sent", 1),
        "pagerduty": ("sent", 1),
    }


def test_a_dead_destination_leaves_the_alert_pending_and_retried_after_its_backoff(
    session: Session, receiver: Receiver
) -> None:
    from monitor.alerts.deliver import backoff

    assert [backoff(n) for n in (1, 2, 3, 7, 8)] == [
        timedelta(minutes=1),
        timedelta(minutes=2),
        timedelta(minutes=4),
        timedelta(hours=1),
        timedelta(hours=1),
    ]
    receiver.code = 503
    baseline(session, ("ctx-v7",))
    add_rewrites(session, version="ctx-v7", start=T0, span=timedelta(hours=1), n=600, flagged=36)
    slack_only = {"alert_slack_webhook_url": receiver.url("/slack")}
    now = T0 + timedelta(hours=1)
    decisions(session, ctx(now, **slack_only))

    def state() -> list[tuple[str, str, int, str | None]]:
        return [
            (d.destination, d.status, d.attempts, d.last_error)
            for a in list_alerts(session=session)
            for d in a.deliveries
        ]

    assert state() == [("slack", "pending", 1, "HTTP 503"), ("slack", "pending", 1, "HTTP 503")]
    tried = len(receiver.requests)
    decisions(session, ctx(now + timedelta(seconds=30), **slack_only))  # inside the first backoff: no try
    assert len(receiver.requests) == tried and state()[0][2] == 1
    receiver.code = 200
    decisions(session, ctx(now + timedelta(minutes=2), **slack_only))
    assert state() == [("slack", "sent", 2, None), ("slack", "sent", 2, None)]
    # a refused connection is named by its class, never by the (secret) URL
    from monitor.http import post

    closed = Receiver()
    url = closed.url("/x")
    closed.close()
    import urllib.request

    assert post(urllib.request.Request(url, data=b"{}", method="POST"), timeout=2) == "ConnectionRefusedError"


def test_slack_text_escapes_a_prompt_version_and_pagerduty_resolves_what_it_triggered() -> None:
    from monitor.alerts.deliver import pagerduty_body, slack_body, webhook_body

    payload = {
        "group": "prompt_version:<!channel>",
        "prompt_version": "<!channel> <https://evil.example|click>",
        "reason": "spike",
        "window_start": "2024-03-11T09:00:00",
        "window_end": "2024-03-11T10:00:00",
        "window_rewrites": 600,
        "window_flagged": 36,
        "window_rate": 0.06,
        "baseline_rewrites": 2000,
        "baseline_flagged": 20,
        "baseline_rate": 0.01,
        "flagged_request_ids": ["r<1>", "r2"],
    }
    text = json.loads(slack_body("alert", 9, payload))["text"]
    assert "<!channel>" not in text and "&lt;!channel&gt; &lt;https://evil.example|click&gt;" in text
    assert "`rewrite-monitor show r&lt;1&gt;`" in text
    trigger = json.loads(pagerduty_body("alert", 9, payload, "k"))
    resolve = json.loads(pagerduty_body("recovered", 10, payload, "k"))
    assert (
        trigger["dedup_key"]
        == resolve["dedup_key"]
        == "rewrite-monitor:fabrication_rate:prompt_version:<!channel>"
    )
    assert (trigger["event_action"], resolve["event_action"], "payload" in resolve) == (
        "trigger",
        "resolve",
        False,
    )
    assert json.loads(webhook_body("recovered", 10, payload))["event"] == "recovered"


def test_a_webhook_needs_a_signing_secret() -> None:
    with pytest.raises(ConfigError, match="alert_webhook_url needs alert_webhook_secret of 16 characters"):
        from monitor.settings import load_settings

        load_settings(alert_webhook_url="https://hooks.example/x", alert_webhook_secret="short")


def test_a_recovery_waits_for_its_alert_at_each_destination(session: Session, receiver: Receiver) -> None:
    """PagerDuty down while the spike alerts: the trigger backs off. The recovery that follows must not
    overtake it (a resolve first, then the late trigger, would leave an incident nothing closes): each
    destination gets a group's alert, then its recovery."""
    receiver.code = 503
    baseline(session, ("ctx-v7",))
    hour = timedelta(hours=1)
    add_rewrites(session, version="ctx-v7", start=T0, span=hour, n=600, flagged=36)
    pd = {"alert_pagerduty_key": "k", "alert_pagerduty_url": receiver.url("/pd")}
    wall = datetime(2024, 3, 11, 10, 0)
    decisions(session, ctx(wall, **pd))
    add_rewrites(session, version="ctx-v7", start=T0 + hour, span=hour, n=600, flagged=6)
    receiver.code = 200
    # the recovery is raised while the triggers wait out their backoff: it must wait behind them
    decisions(session, ctx(wall + timedelta(seconds=30), **pd))
    decisions(session, ctx(wall + timedelta(hours=1), **pd))  # past the backoff: triggers, then resolves
    decisions(session, ctx(wall + timedelta(hours=2), **pd))
    sent = [json.loads(b)["event_action"] for p, _, b in receiver.requests if b"ctx-v7" in b]
    assert sent[0] == "trigger" and sent[-2:] == ["trigger", "resolve"], sent
    statuses = [
        (a.status, [(d.status, d.attempts) for d in a.deliveries])
        for a in list_alerts(session=session)
        if a.prompt_version == "ctx-v7"
    ]
    assert statuses == [("recovered", [("sent", 1)]), ("alert", [("sent", 2)])]


def test_a_delivery_to_a_destination_removed_since_is_dropped(session: Session, receiver: Receiver) -> None:
    receiver.code = 503
    baseline(session, ("ctx-v7",))
    add_rewrites(session, version="ctx-v7", start=T0, span=timedelta(hours=1), n=600, flagged=36)
    now = T0 + timedelta(hours=1)
    decisions(session, ctx(now, alert_slack_webhook_url=receiver.url("/slack")))
    decisions(session, ctx(now + timedelta(minutes=5)))  # Slack no longer configured
    rows = [(d.status, d.last_error) for a in list_alerts(session=session) for d in a.deliveries]
    assert rows == [("dropped", "not configured"), ("dropped", "not configured")]


def test_request_ids_holding_an_email_or_a_phone_leave_as_keyed_hashes_everywhere(
    session: Session, receiver: Receiver, sentry: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 38, part 2: an id built from a user's e-mail address or phone number reaches no destination
    (webhook, Slack, PagerDuty, Sentry, the worker's log) and no stored payload; the same id gives the same
    ``pid_`` hash everywhere, and ``show`` finds the request again from it."""
    from monitor.privacy import hashed_id
    from monitor.store.keys import resolve_hashed_id, store_key

    baseline(session, ("ctx-v7",))
    add_rewrites(session, version="ctx-v7", start=T0, span=timedelta(hours=1), n=600, flagged=36)
    flagged = session.scalars(
        select(Record).where(Record.prompt_version == "ctx-v7", Record.ts > T0).order_by(Record.id)
    ).all()
    for i, rec in enumerate(flagged):  # every id of the version: half e-mails, half phone numbers
        rec.request_id = f"dana.reyes+{i}@example.com" if i % 2 else f"conv_+1415555{i % 10000:04d}_2"
    session.commit()
    c = ctx(T0 + timedelta(hours=1), **destinations(receiver))
    c.sentry = True
    with caplog.at_level(logging.INFO, logger="monitor"):
        got = decisions(session, c)
    session.commit()
    assert got["prompt_version:ctx-v7"] == ("alert", "spike")
    raw = [b for _p, _h, b in receiver.requests]
    raw += [e.serialize() for e in sentry.transport.envelopes]
    raw += [r.getMessage().encode() + json.dumps(getattr(r, "fields", {})).encode() for r in caplog.records]
    raw += [json.dumps(a.context).encode() for a in session.scalars(select(Alert))]
    assert len(receiver.requests) >= 3 and sentry.transport.events()
    assert not any(b"example.com" in b or b"+1415555" in b for b in raw)
    key = store_key(session=session)
    assert key == store_key(session=session) and len(key) == 64  # made once, then read
    row = session.scalars(select(Alert).where(Alert.group_key == "prompt_version:ctx-v7")).one()
    ids = row.context["flagged_request_ids"]
    assert len(ids) == 20 and all(re.fullmatch(r"pid_[0-9a-f]{20}", i) for i in ids)
    by_hash = {hashed_id(r.request_id, key): r for r in flagged}
    assert set(ids) <= set(by_hash)  # each a renamed request's hash under the store's key
    newest = by_hash[ids[0]]
    _, _, slack = next(r for r in receiver.requests if r[0] == "/slack" and b"ctx-v7" in r[2])
    assert f"`rewrite-monitor show {ids[0]}`" in json.loads(slack)["text"]
    assert resolve_hashed_id(session=session, hashed=ids[0]) == [(newest.conv_id, newest.request_id)]


def test_show_finds_a_request_by_the_hash_an_alert_carried(cli_db: str) -> None:
    from typer.testing import CliRunner

    from monitor.cli.main import app
    from monitor.privacy import hashed_id
    from monitor.store.engine import make_engine, session_factory
    from monitor.store.keys import has_key, store_key
    from tests.factories import ctx_input, log, rewrite

    runner = CliRunner()
    req = "dana.reyes@example.com/2"
    data = log(ctx_input(conv="c-mail", req=req), rewrite(conv="c-mail", req=req))
    ingested = runner.invoke(app, ["--database-url", cli_db, "ingest", "-"], input=data)
    assert ingested.exit_code == 0, ingested.output
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        assert has_key(session=s)  # migration 0013 made it with the table
        key = store_key(session=s)
        hashed = hashed_id(req, key)
    engine.dispose()
    shown = runner.invoke(app, ["--database-url", cli_db, "show", hashed, "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["request_id"] == req
    other = runner.invoke(app, ["--database-url", cli_db, "show", "pid_" + "0" * 20])
    assert other.exit_code == 1 and "no request or conversation of this store hashes to" in other.output
    # as pasted from a message: upper case and spaces around it
    pasted = runner.invoke(app, ["--database-url", cli_db, "show", f" {hashed.upper()} ", "--json"])
    assert pasted.exit_code == 0 and json.loads(pasted.stdout)["request_id"] == req
    short = runner.invoke(app, ["--database-url", cli_db, "show", hashed[:-1]])
    assert short.exit_code == 2 and "pid_ and 20 hex characters" in short.output
    # --conv takes the hashed form of a conversation id too
    conv_hash = hashed_id("c-mail", key)
    by_conv = runner.invoke(app, ["--database-url", cli_db, "show", req, "--conv", conv_hash, "--json"])
    assert by_conv.exit_code == 0 and json.loads(by_conv.stdout)["conv_id"] == "c-mail"
