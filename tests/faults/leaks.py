"""Nothing leaked: a password in the database URL never reaches Sentry (``secrets``), and an export
redacts every personal detail inside the documented scope (``pii_export``)."""

from __future__ import annotations

import gzip
import http.server
import json
import re
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.faults.common import Result, Size, backend
from tests.helpers import PG_ADMIN_URL, REPO, wait_started, worker_env

PASSWORD = "Tr0ub4dor-PW-4242"
"""The password put in the database URL; no byte Sentry receives may hold it."""


class FakeIngest(http.server.ThreadingHTTPServer):
    """A Sentry ingest on 127.0.0.1 that accepts every envelope and keeps its bytes, decompressed as
    the SDK compressed them (gzip or deflate), with the request line and headers."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                enc = self.headers.get("Content-Encoding", "")
                plain = (
                    gzip.decompress(body)
                    if enc == "gzip"
                    else zlib.decompress(body)
                    if enc == "deflate"
                    else body
                )
                outer.received.append(self.requestline.encode() + bytes(self.headers) + body + plain)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def dsn(self) -> str:
        return f"http://public@127.0.0.1:{self.server_address[1]}/1"


def secrets(url: str, workdir: Path, size: Size) -> Result:
    """The worker runs with ``--database-url`` holding :data:`PASSWORD` on its command line (the
    server's trust authentication ignores it) and Sentry pointed at :class:`FakeIngest`; its database is
    then dropped, so every cycle fails and is reported to Sentry with its traceback and breadcrumbs.
    The password must be in no byte received (nor in the worker's log). PostgreSQL only: a SQLite URL
    holds no password."""
    res = Result("secrets", backend(url))
    workdir.mkdir(parents=True)
    secret_url = make_url(url).set(password=PASSWORD).render_as_string(hide_password=False)
    ingest = FakeIngest()
    env = worker_env(secret_url, [str(workdir / "app.jsonl")], worker_interval_minutes=0.01)
    env["REWRITE_MONITOR_SENTRY_DSN"] = ingest.dsn
    del env["REWRITE_MONITOR_DATABASE_URL"]  # on the command line instead, where the SDK's argv would be
    log = workdir / "worker.log"
    with log.open("ab") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "monitor", "--database-url", secret_url, "worker"],
            env=env,
            stdout=fh,
            stderr=fh,
            cwd=REPO,
        )
    try:
        wait_started(proc, log)
        deadline = time.monotonic() + 120
        admin = create_engine(
            make_url(PG_ADMIN_URL).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
        )
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
        admin.dispose()
        while not any(b'"exception"' in r for r in ingest.received):
            if time.monotonic() > deadline:
                raise RuntimeError("no exception event reached the fake ingest: " + log.read_text()[-1500:])
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        ingest.shutdown()
        ingest.server_close()
    raw = b"".join(ingest.received)
    res.figures.update(
        {
            "requests received": len(ingest.received),
            "exception events": sum(b'"exception"' in r for r in ingest.received),
            "bytes received": len(raw),
            "password in them": PASSWORD.encode() in raw,
            "password in the worker log": PASSWORD.encode() in log.read_bytes(),
        }
    )
    res.expect(not res.figures["password in them"], "the password reached Sentry")
    res.expect(not res.figures["password in the worker log"], "the password is in the worker's log")
    return res


FIXTURE = Path(__file__).with_name("pii_fixture.json")


def _conversations(details: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The details in groups of three, one conversation each; a detail ``with`` another joins its group
    (a later mention of a name belongs to the case that introduced it)."""
    groups: list[list[dict[str, Any]]] = []
    for d in details:
        if "with" in d:
            continue
        if not groups or len(groups[-1]) == 3:
            groups.append([])
        groups[-1].append(d)
    for d in details:
        if "with" in d:
            next(g for g in groups if any(x["text"] == d["with"] for x in g)).append(d)
    return groups


def _events(n: int, group: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ctx_input and rewrite for conversation ``n``: every detail but the last in a user message, the
    last in the latest message, and the first repeated in the logged query."""
    from tests.factories import ctx_input, rewrite

    conv, req = f"pii{n}", f"pii{n}_2"
    msgs: list[dict[str, str]] = []
    for d in group[:-1]:
        msgs += [{"role": "user", "content": d["sentence"]}, {"role": "assistant", "content": "Noted."}]
    latest = group[-1]["sentence"] + " What should I do next?"
    query = f"What should I do next about {group[0]['text']}?"
    turn = len(msgs) // 2 + 1
    return [
        ctx_input(
            conv=conv,
            req=req,
            turn=turn,
            messages=msgs,
            n_messages=len(msgs),
            client_turn_count=len(msgs),
            roles={"user": len(msgs) // 2, "assistant": len(msgs) // 2},
        ),
        rewrite(conv=conv, req=req, turn=turn, latest=latest, query=query, resolved=[]),
    ]


def _fragment(text: str) -> str:
    """The second half of ``text`` when it has 4+ letters or digits (a reviewer's assertion on a piece
    of a value, "555-0134"), else ``text``."""
    half = text[len(text) // 2 :].strip()
    return half if sum(c.isalnum() for c in half) >= 4 else text


def _cli(url: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "monitor", "--database-url", url, *args],
        env=worker_env(url, []),
        capture_output=True,
        cwd=REPO,
        check=True,
    )


def pii_export(url: str, workdir: Path, size: Size) -> Result:
    """The fixture's details (``pii_fixture.json``) in the messages, latest messages, logged queries and
    a verdict's assertions (must-not-include the second detail whole, must-include a piece of the last)
    of one conversation per three details; ``run``, a ``verdict`` on each, ``export``. No byte of the
    export may hold a detail in scope (nor the assertion pieces of one); out-of-scope details are counted
    as they survive."""
    res = Result("pii_export", backend(url))
    workdir.mkdir(parents=True)
    fixture = json.loads(FIXTURE.read_text())
    inside, outside = fixture["in_scope"], fixture["out_of_scope"]
    groups = _conversations(inside) + _conversations(outside)
    from tests.factories import log

    src = workdir / "pii.jsonl"
    src.write_bytes(b"".join(log(*_events(n, g)) for n, g in enumerate(groups)))
    _cli(url, "db", "upgrade")
    _cli(url, "run", str(src))
    pieces: list[str] = []
    for n, g in enumerate(groups):
        args = ["--must-not-include", g[1]["text"]] if len(g) > 1 else []
        piece = _fragment(g[-1]["text"])
        if g[-1] in inside:
            pieces.append(piece)
        _cli(url, "verdict", f"pii{n}_2", "--label", "fabricated_constraint", *args, "--must-include", piece)
    out = workdir / "evalset.jsonl"
    _cli(url, "export", "--out", str(out))
    exported = out.read_text()
    cases = [json.loads(x) for x in exported.splitlines() if x.strip()]

    # Every field but the ones the store generates (ids, the verdict's timestamp): a piece as short as
    # "2704" (of "IL 62704") is otherwise found in a timestamp's microseconds about once in a hundred runs.
    generated = ("id", "record_id", "verdict_id", "verdict_at")
    scanned = "\n".join(
        json.dumps({k: v for k, v in case.items() if k not in generated}, ensure_ascii=False)
        for case in cases
    ).lower()

    def leaked(text: str) -> bool:
        return text.lower() in scanned or json.dumps(text)[1:-1].lower() in scanned

    leaks = [d["text"] for d in inside if leaked(d["text"])] + [p for p in pieces if leaked(p)]
    survived = [d["text"] for d in outside if leaked(d["text"])]
    res.figures.update(
        {
            "cases exported": len(cases),
            "details in scope": len(inside),
            "assertion pieces": len(pieces),
            "leaked": len(leaks),
            "out of scope": len(outside),
            "out of scope that survive": len(survived),
        }
    )
    res.expect(len(cases) == len(groups), "not every conversation became an exported case")
    res.expect(not leaks, "details in scope leaked: " + ", ".join(leaks))
    return res


def pii_ids(url: str, workdir: Path, size: Size) -> Result:
    """Request and conversation ids built from e-mail addresses and phone numbers, through every place
    an id leaves the machine (issue 38): a spike of fabrications among them, alerted by one worker cycle to
    Sentry (a fake ingest), a webhook, Slack and PagerDuty (a local receiver), with the worker's log on
    stderr, and ``findings --otlp``. No byte of any of them may hold the e-mail or the phone number; the
    ids they carry are the store's ``pid_`` hashes, and ``show`` opens a request from one."""
    from datetime import UTC, datetime, timedelta

    from tests.factories import line
    from tests.faults.poison import _pair
    from tests.helpers import Receiver

    res = Result("pii_ids", backend(url))
    workdir.mkdir(parents=True)
    src = workdir / "app.jsonl"
    t0 = datetime(2024, 3, 1, tzinfo=UTC)
    good = [ev for i in range(size.poison_good) for ev in _pair(f"g{i}_1", t0 + timedelta(minutes=10 * i))]
    spike_at = t0 + timedelta(days=3, hours=1)
    spike = []
    for i in range(max(250, size.poison_good)):
        req = f"dana.reyes+{i}@example.com_1" if i % 2 else f"conv_+1415555{i:04d}_1"
        spike += _pair(req, spike_at + timedelta(seconds=10 * i % 3600), fabricated=i % 5 == 0)
    src.write_bytes(b"".join(line(e) for e in good + spike))
    ingest, receiver = FakeIngest(), Receiver()
    env = worker_env(
        url,
        [str(src)],
        alert_window_minutes=60,
        alert_webhook_url=receiver.url("/hook"),
        alert_webhook_secret="whsec-0123456789abcdef",
        alert_slack_webhook_url=receiver.url("/slack"),
        alert_pagerduty_key="pd-routing-key-1",
        alert_pagerduty_url=receiver.url("/pd"),
    )
    env["REWRITE_MONITOR_SENTRY_DSN"] = ingest.dsn
    try:
        done = subprocess.run(
            [sys.executable, "-m", "monitor", "worker", "run", "cycle", "--json"],
            env=env,
            capture_output=True,
            cwd=REPO,
            check=False,
        )
        otlp = _cli(url, "findings", "--otlp")
    finally:
        receiver.close()
        ingest.shutdown()
        ingest.server_close()
    sent = [body for _p, _h, body in receiver.requests] + list(ingest.received)
    everything = sent + [done.stdout, done.stderr, otlp.stdout, otlp.stderr]
    personal = (b"example.com", b"+1415555", b"1415555")
    hashed = sorted({m.decode() for b in sent for m in re.findall(rb"pid_[0-9a-f]{20}", b)})
    shown = subprocess.run(
        [sys.executable, "-m", "monitor", "--database-url", url, "show", hashed[0], "--json"]
        if hashed
        else [sys.executable, "-c", "raise SystemExit(1)"],
        env=worker_env(url, []),
        capture_output=True,
        cwd=REPO,
        check=False,
    )
    res.figures.update(
        {
            "cycle exit code": done.returncode,
            "webhook/Slack/PagerDuty requests": len(receiver.requests),
            "Sentry envelopes": len(ingest.received),
            "OTLP records": otlp.stdout.count(b'"eventName"'),
            "hashed ids sent": len(hashed),
            "bytes with a personal id": sum(any(p in b for p in personal) for b in everything),
            "show opens a hashed id": shown.returncode == 0,
        }
    )
    res.expect(done.returncode == 0, "the cycle failed: " + done.stderr.decode()[-400:])
    paths = {p for p, _h, _b in receiver.requests}
    res.expect(paths >= {"/hook", "/slack", "/pd"}, f"not every destination was reached: {sorted(paths)}")
    res.expect(bool(ingest.received), "Sentry received nothing")
    res.expect(res.figures["bytes with a personal id"] == 0, "a personal id left the machine")
    res.expect(bool(hashed), "no hashed id was sent")
    res.expect(res.figures["show opens a hashed id"], "show did not open a hashed id")
    return res
