"""Poison lines between good ones, then a spike; a corrupt store file (``poison``)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select

from monitor.store.engine import make_engine, session_factory
from monitor.store.models import Alert, Quarantine
from tests.factories import ctx_input, line, rewrite
from tests.faults.common import Result, Size, backend, stored_events, worker_cycle
from tests.helpers import REPO, worker_env

LONG = "x" * 300


def _pair(
    req: str, ts: datetime, *, fabricated: bool = False, version: str = "ctx-v1"
) -> list[dict[str, Any]]:
    """A ctx_input and its rewrite at ``ts``; a fabricated rewrite adds a year nobody said (a
    constraining qualifier value, which the alert counts)."""
    stamp = ts.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    conv = req.rsplit("_", 1)[0]
    query = "What is the uptime SLA for the Dublin region" + (" in 2019?" if fabricated else "?")
    return [
        ctx_input(conv=conv, req=req, ts=stamp),
        rewrite(conv=conv, req=req, ts=stamp, query=query, prompt_version=version),
    ]


def _poison() -> list[tuple[str, str, bytes]]:
    """(name, expected quarantine reason, line): one bad line of each kind the store cannot hold or a
    parser chokes on, each for its own request."""
    base = json.dumps(rewrite(conv="bad", req="bad_{n}"))
    cases = [
        ("NaN number", "non_finite_number", base.replace('"latency_ms": 212', '"latency_ms": NaN')),
        ("Infinity", "non_finite_number", base.replace('"latency_ms": 212', '"latency_ms": Infinity')),
        ("1e400", "non_finite_number", base.replace('"latency_ms": 212', '"latency_ms": 1e400')),
        (
            "year 1 at +14:00",
            "wrong_type",
            base.replace("2024-03-04T08:01:31.420Z", "0001-01-01T00:00:00+14:00"),
        ),
        ("year 9999", "wrong_type", base.replace("2024-03-04T08:01:31.420Z", "9999-12-31T23:59:59Z")),
        ("300-character model", "wrong_type", base.replace('"model": "m1"', f'"model": "{LONG}"')),
        ("300-character prompt_version", "wrong_type", base.replace('"ctx-v1"', f'"{LONG}"')),
        ("300-character request_id", "wrong_type", base.replace('"bad_{n}"', f'"{LONG}"')),
        ("300-character conv_id", "wrong_type", base.replace('"conv_id": "bad"', f'"conv_id": "{LONG}"')),
        ("NUL character", "unsupported_text", base.replace("uptime SLA", "uptime\\u0000SLA")),
        ("not JSON", "invalid_json", '{"event": "rewrite", "conv_id": '),
    ]
    return [
        (name, reason, (text.replace("{n}", str(i)) + "\n").encode())
        for i, (name, reason, text) in enumerate(cases)
    ]


def poison(url: str, workdir: Path, size: Size) -> Result:
    """A file that starts with a UTF-8 BOM and holds ``size.poison_good`` good requests over three days
    and one dated 400 days ahead, with every poison line of :func:`_poison` among them; one worker cycle
    reads it. Then a spike
    (an hour of rewrites of which one in five adds a year nobody said) is appended and a second cycle
    must read it and alert. Then the store file is overwritten with garbage (SQLite) and every command
    must fail with one line and exit 4."""
    res = Result("poison", backend(url))
    workdir.mkdir(parents=True)
    src = workdir / "app.jsonl"
    bad = _poison()
    t0 = datetime(2024, 3, 1, tzinfo=UTC)
    good = [ev for i in range(size.poison_good) for ev in _pair(f"g{i}_1", t0 + timedelta(minutes=10 * i))]
    # A producer whose clock runs 400 days ahead: stored, and it must not drag the alert window there.
    good += _pair("future_1", datetime.now(UTC) + timedelta(days=400))
    body = [line(ev) for ev in good]
    step = max(1, len(body) // (len(bad) + 1))
    for k, (_name, _reason, raw) in reversed(list(enumerate(bad))):
        body.insert(min(len(body), (k + 1) * step), raw)  # between good lines, none first or last
    src.write_bytes(b"\xef\xbb\xbf" + b"".join(body))
    first = worker_cycle(url, [str(src)])
    stored = stored_events(url)
    want = {(e["request_id"], e["event"]) for e in good}
    engine = make_engine(url)
    with session_factory(engine)() as s:
        reasons = {
            (o, n): r
            for o, n, r in s.execute(select(Quarantine.origin, Quarantine.line_no, Quarantine.reason))
        }
    engine.dispose()
    by_line = {i + 1: ln for i, ln in enumerate(body)}
    wrong = []
    for name, reason, raw in bad:
        at = [n for n, ln in by_line.items() if ln == raw]
        got = reasons.get((str(src), at[0])) if at else None
        if got != reason:
            wrong.append(f"{name}: {got}")
    res.figures.update(
        {
            "good lines": len(good),
            "good stored": len(want & set(stored)),
            "BOM line stored": (good[0]["request_id"], good[0]["event"]) in stored,
            "poison lines": len(bad),
            "quarantined with the expected reason": len(bad) - len(wrong),
        }
    )
    res.expect(want <= set(stored), "good lines lost")
    res.expect(not wrong, "poison lines not quarantined as expected: " + ", ".join(wrong))
    res.expect(first["ingest"]["rejected_total"] == len(bad), "rejected count differs from the poison lines")
    # The next cycle reads on, and a spike after the poison still alerts.
    spike_at = t0 + timedelta(days=3, hours=1)
    spike = [
        ev
        for i in range(max(250, size.poison_good))
        for ev in _pair(f"s{i}_1", spike_at + timedelta(seconds=10 * i % 3600), fabricated=i % 5 == 0)
    ]
    with src.open("ab") as fh:
        fh.write(b"".join(line(e) for e in spike))
    worker_cycle(url, [str(src)], alert_window_minutes=60)
    stored = stored_events(url)
    engine = make_engine(url)
    with session_factory(engine)() as s:
        alerts = s.execute(select(Alert.group_key, Alert.status)).all()
    engine.dispose()
    res.figures["spike stored"] = sum((e["request_id"], e["event"]) in stored for e in spike) == len(spike)
    res.figures["alerts"] = sorted(f"{g}:{r}" for g, r in alerts)
    res.expect(res.figures["spike stored"], "the cycle after the poison did not read on")
    res.expect(any(g == "overall" for g, _ in alerts), "the spike after the poison raised no alert")
    if backend(url) == "sqlite":
        corrupt = workdir / "corrupt.db"
        corrupt.write_bytes(b"this is not a database" * 100)
        outs = []
        for cmd in (
            ["queue"],
            ["worker", "run", "cycle"],
            ["db", "current"],
            ["verdict", "x", "--label", "ok"],
        ):
            done = subprocess.run(
                [sys.executable, "-m", "monitor", "--database-url", f"sqlite:///{corrupt}", *cmd],
                env=worker_env(f"sqlite:///{corrupt}", []),
                capture_output=True,
                cwd=REPO,
                check=False,
            )
            outs.append((done.returncode, len(done.stderr.decode().strip().splitlines())))
        res.figures["corrupt store (exit, stderr lines)"] = outs
        res.expect(all(o == (4, 1) for o in outs), "a corrupt store is not a one-line error with exit 4")
    return res
