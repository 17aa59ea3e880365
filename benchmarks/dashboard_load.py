"""Page load times of the review dashboard with a large store (default 100,000 checked rewrites).

Usage::

    python -m benchmarks.dashboard_load [--records 100000] [--days 100] [--repeat 5] [--url URL]

Seeds a fresh store (default: a temporary SQLite file; ``--url`` must point at an empty database) with
bulk inserts: per record a ``ctx_input`` and a ``rewrite`` event, the record, one run of every current
check, and for one record in seven an ``added_content_word`` finding with word spans; conversations of
five turns. The queue is then admitted day by day by the real ``enqueue_days`` (40 a day by default),
so the queue is what production would hold. Each page is rendered with Streamlit's AppTest, the way
the tests do, and the median of ``--repeat`` runs is printed:

- Queue, cold: the cached reads cleared before each run (the first visit after the ttl);
- Queue, warm: the cached reads reused (a rerun within the ttl);
- Item: the Item page of a claimed high item (never cached: claims and verdicts must be current);
- Overview, cold: rates over every check run, verdict statistics, alerts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from monitor.checks import current_versions
from monitor.checks.store import check_set_ids, check_set_key
from monitor.queue.store import enqueue_days
from monitor.record import Message, transcript_digest
from monitor.settings import load_settings
from monitor.store.engine import make_engine, session_factory, upgrade
from monitor.store.models import CheckRun, Event, Finding, Record

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
CHUNK = 5000
TURNS = 5
START = datetime(2024, 1, 1, 8)
TOPICS = ["CMK", "SLA", "backups", "SSO", "audit logs", "VPC peering", "rate limits", "billing"]
PLACES = ["Frankfurt", "Dublin", "Stockholm", "Paris", "London", "Ohio"]


def _chunks(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for i in range(0, len(rows), CHUNK):
        yield rows[i : i + CHUNK]


def seed(url: str, n_records: int, days: int) -> None:
    """Fill the empty store at ``url`` (migrated here) with ``n_records`` checked rewrites and their queue."""
    upgrade(url)
    engine = make_engine(url)
    rng = random.Random(7)
    checks = current_versions()
    per_day = max(1, n_records // days)
    now = datetime(2024, 1, 1) + timedelta(days=days + 2)
    with session_factory(engine)() as session:
        events: list[dict[str, Any]] = []
        records: list[dict[str, Any]] = []
        runs: list[dict[str, Any]] = []
        findings: list[dict[str, Any]] = []
        run_id = 0
        # every record checked once at the current versions: one run each (migration 0015)
        check_set = check_set_ids(session=session, sets=[checks], now=now)[check_set_key(checks)]
        for i in range(n_records):
            conv, turn = f"bench-{i // TURNS}", i % TURNS + 2
            req = f"{conv}_{turn}"
            ts = START + timedelta(days=i // per_day, seconds=i % per_day)
            topic, place = TOPICS[i % len(TOPICS)], PLACES[(i // 3) % len(PLACES)]
            msgs = [
                {"role": "user", "content": f"Which EU regions support {topic}?"},
                {"role": "assistant", "content": f"{place} and {PLACES[(i + 1) % len(PLACES)]}."},
            ] * (turn // 2)
            ctx = {
                "event": "ctx_input",
                "conv_id": conv,
                "request_id": req,
                "turn": turn,
                "ts": ts.isoformat() + "Z",
                "n_messages": len(msgs),
                "roles": {"user": len(msgs) // 2, "assistant": len(msgs) // 2},
                "client_turn_count": len(msgs) + (3 if i % 11 == 0 else 0),
                "digest": transcript_digest([Message(m["role"], m["content"]) for m in msgs]),
                "messages": msgs,
            }
            flagged = i % 7 == 0
            query = f"What is the {topic} SLA for {place}" + (" on the enterprise plan?" if flagged else "?")
            rw = {
                "event": "rewrite",
                "conv_id": conv,
                "request_id": req,
                "turn": turn,
                "ts": ts.isoformat() + "Z",
                "latest": "And the SLA on the second one?",
                "query": query,
                "rewritten": True,
                "model": "m1",
                "prompt_version": f"ctx-v{1 + i % 3}",
            }
            for eid, kind, raw in ((2 * i + 1, "ctx_input", ctx), (2 * i + 2, "rewrite", rw)):
                key = hashlib.sha256(f"{kind}|{conv}|{req}".encode()).hexdigest()
                events.append(
                    {
                        "id": eid,
                        "kind": kind,
                        "event_key": key,
                        "content_sha": hashlib.sha256(json.dumps(raw).encode()).hexdigest(),
                        "conv_id": conv,
                        "request_id": req,
                        "turn": turn,
                        "ts": ts,
                        "source": "bench",
                        "origin": "bench.jsonl",
                        "line_no": eid,
                        "raw": raw,
                        "ingested_at": now,
                    }
                )
            records.append(
                {
                    "id": i + 1,
                    "conv_id": conv,
                    "request_id": req,
                    "turn": turn,
                    "ts": ts,
                    "ctx_event_id": 2 * i + 1,
                    "rewrite_event_id": 2 * i + 2,
                    "join_method": "request_id",
                    "model": "m1",
                    "prompt_version": rw["prompt_version"],
                    "check_draw": rng.random(),
                }
            )
            run_id += 1
            runs.append(
                {
                    "id": run_id,
                    "record_id": i + 1,
                    "check_set_id": check_set,
                    "rules_hash": "bench",
                    "n_findings": int(flagged),
                    "checked_at": now,
                }
            )
            if flagged:
                cid, ver = "added_content_word", dict(checks)["added_content_word"]
                start = query.index("enterprise")
                findings.append(
                    {
                        "check_run_id": run_id,
                        "ordinal": 0,
                        "record_id": i + 1,
                        "request_id": req,
                        "kind": "added_content_word",
                        "severity": "high",
                        "severity_rank": 2,
                        "reason": "'enterprise' (plan_tier value): in no received turn and no alias group",
                        "words": ["enterprise"],
                        "evidence": {
                            "words": [
                                {
                                    "text": "enterprise",
                                    "start": start,
                                    "end": start + 10,
                                    "severity": "high",
                                    "why": "plan_tier value",
                                }
                            ]
                        },
                        "check_id": cid,
                        "check_version": ver,
                        "rules_hash": "bench",
                        "created_at": now,
                    }
                )
        for model, rows in ((Event, events), (Record, records), (CheckRun, runs), (Finding, findings)):
            for chunk in _chunks(rows):
                session.execute(insert(model), chunk)
            session.commit()
        settings = load_settings(database_url=url)
        first = START.date()
        enqueue_days(
            session=session,
            days=[first + timedelta(days=d) for d in range((n_records - 1) // per_day + 1)],
            checks=checks,
            settings=settings.queue,
            now=now,
        )
        session.commit()
    engine.dispose()


def _median_seconds(fn: Callable[[], None], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(url: str, repeat: int) -> dict[str, float]:
    """Median seconds per page render (see the module docstring for what each figure covers)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ["REWRITE_MONITOR_DATABASE_URL"] = url
    os.environ["REWRITE_MONITOR_REVIEWER_NAME"] = "bench"
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.run()  # imports and the engine: paid once per server, not per page view
    if at.exception:
        raise RuntimeError(at.exception[0].message)

    def queue_cold() -> None:
        st.cache_data.clear()
        at.run()

    out = {"Queue, cold": _median_seconds(queue_cold, repeat), "Queue, warm": _median_seconds(at.run, repeat)}
    next(b for b in at.button if b.label == "Review next").click().run()
    if not at.title or at.title[0].value == "Review queue":
        raise RuntimeError("no item was claimed")
    out["Item"] = _median_seconds(at.run, repeat)

    def overview_cold() -> None:
        st.cache_data.clear()
        at.switch_page("views/overview.py").run()

    out["Overview, cold"] = _median_seconds(overview_cold, repeat)
    return out


def seed_and_say(url: str, n_records: int, days: int) -> None:
    """:func:`seed`, then print how long it took (both dashboard benchmarks start with it)."""
    t0 = time.perf_counter()
    seed(url, n_records, days)
    print(f"seeded {n_records:,} checked rewrites over {days} days in {time.perf_counter() - t0:.1f} s")


def measured_on(url: str) -> str:
    """The closing line of a dashboard benchmark: the day, the CPUs and the store's backend."""
    return f"measured {date.today().isoformat()} on {os.cpu_count()} CPUs; backend {url.split(':', 1)[0]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--url", help="an EMPTY database to fill (default: a temporary SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        seed_and_say(url, args.records, args.days)
        for page, seconds in measure(url, args.repeat).items():
            print(f"{page:<16} {seconds * 1000:8.0f} ms  (median of {args.repeat})")
    print(measured_on(url))


if __name__ == "__main__":
    main()
