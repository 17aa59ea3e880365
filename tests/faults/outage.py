"""The database going away under a running worker (``db_outage``), and source paths a ``**`` glob must
survive (``source_shapes``): issue 38, part 6.

``db_outage`` puts the worker's connection to PostgreSQL through a TCP proxy that the scenario takes
down (every open connection cut, new ones refused, as a stopped server does) while the log grows, then
brings back on the same port. On SQLite, whose store cannot go away, the same place in the run holds the
database's write lock from another process for as long, which is what a backup or a long writer does to
a SQLite deployment: past ``SQLITE_BUSY_TIMEOUT_MS`` the worker's cycles fail as they would on a lost
server. Either way the worker must survive, report each failed cycle to the cron monitor (a fake Sentry
ingest receives the check-ins), and on recovery store every event exactly once, with findings and queue
equal to a one-shot run.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from sqlalchemy.engine import make_url

from monitor.store.engine import SQLITE_BUSY_TIMEOUT_MS, upgrade
from tests.factories import stream_lines
from tests.faults.common import Result, Size, backend, compare_with, one_shot, stored_events, worker_cycle
from tests.faults.leaks import FakeIngest
from tests.helpers import REPO, start_worker, wait_started, worker_env


class Proxy:
    """A TCP proxy from ``127.0.0.1:port`` to ``target`` that can go down (:meth:`down`: the listening
    socket closed and every relayed connection cut, so a client sees resets and refused connections) and
    come back on the same port (:meth:`up`)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.up()

    def up(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            conns, self._open = self._open, []
        if listener is not None:
            listener.close()
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by down()
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    client.close()
                    server.close()
                    return
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class Writer(threading.Thread):
    """Appends ``lines`` to ``path`` evenly over ``seconds``, flushing each."""

    def __init__(self, path: Path, lines: list[bytes], seconds: float) -> None:
        super().__init__(daemon=True)
        self.path, self.lines, self.seconds = path, lines, seconds

    def run(self) -> None:
        pause = self.seconds / max(1, len(self.lines))
        with self.path.open("ab") as fh:
            for raw in self.lines:
                fh.write(raw)
                fh.flush()
                time.sleep(pause)


def _checkins(ingest: FakeIngest) -> Counter[str]:
    """The statuses of the cron check-ins the fake ingest received (``in_progress``, ``ok``, ``error``)."""
    out: Counter[str] = Counter()
    for body in ingest.received:
        for line in body.split(b"\n"):
            if b'"check_in_id"' not in line:
                continue
            try:
                doc = json.loads(line[line.index(b"{") :])
            except ValueError:
                continue
            out[str(doc.get("status"))] += 1
    return out


def _hold_sqlite_lock(path: str, seconds: float, held: threading.Event) -> None:
    """Take the SQLite store's write lock from another connection for ``seconds``."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=60)
    try:
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(seconds)
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def db_outage(url: str, workdir: Path, size: Size, ref_url: str) -> Result:
    """The database gone for ``size.outage_seconds`` while a worker follows a growing log (module doc).
    Figures: events written / stored / lost / stored twice, cycles failed and done after recovery, the
    cron check-ins by status."""
    res = Result("db_outage", backend(url))
    lines = stream_lines(size.conversations, turns=4, seed=38)
    expected = Counter((json.loads(raw)["request_id"], json.loads(raw)["event"]) for raw in lines)
    logs = workdir / "logs"
    logs.mkdir(parents=True)
    live = logs / "app.jsonl"
    live.touch()
    pg = backend(url) == "postgresql"
    proxy = None
    worker_url = url
    if pg:
        parsed = make_url(url)
        proxy = Proxy((parsed.host or "127.0.0.1", parsed.port or 5432))
        worker_url = parsed.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    ingest = FakeIngest()
    env = worker_env(worker_url, [str(live)], worker_interval_minutes=0.005, batch_size=7)
    env["REWRITE_MONITOR_SENTRY_DSN"] = ingest.dsn
    log = workdir / "worker.log"
    proc = start_worker(env, log)
    try:
        wait_started(proc, log)
        writer = Writer(live, lines, seconds=size.outage_seconds * 2)
        writer.start()
        time.sleep(size.outage_seconds / 2)
        failed_before = log.read_bytes().count(b'"cycle failed"')
        if proxy is not None:
            proxy.down()
            time.sleep(size.outage_seconds)
            proxy.up()
        else:
            held = threading.Event()
            holder = threading.Thread(
                target=_hold_sqlite_lock,
                args=(make_url(url).database or "", size.outage_seconds, held),
                daemon=True,
            )
            holder.start()
            held.wait(30)
            holder.join()
        writer.join()
        deadline = time.monotonic() + 180
        while stored_events(url) != expected and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
        # two more cycles after the last event is stored: checked and admitted
        done = log.read_bytes().count(b'"cycle done"')
        while log.read_bytes().count(b'"cycle done"') < done + 2 and time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
        survived = proc.poll() is None
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        if proxy is not None:
            proxy.down()
        ingest.shutdown()
        ingest.server_close()
    text = log.read_bytes()
    stored = stored_events(url)
    checkins = _checkins(ingest)
    failed = text.count(b'"cycle failed"') - failed_before
    res.figures.update(
        {
            "outage seconds": size.outage_seconds,
            "lines written": len(lines),
            "stored": sum(stored.values()),
            "lost": sum((expected - stored).values()),
            "stored twice": sum((stored - expected).values()),
            "cycles failed": failed,
            "cycles done": text.count(b'"cycle done"'),
            "check-ins error": checkins["error"],
            "check-ins ok": checkins["ok"],
            "worker survived": survived,
            "exit code": code,
        }
    )
    res.expect(survived, "the worker died during the outage")
    res.expect(code == 0, f"the worker exited {code} on SIGTERM")
    res.expect(stored == expected, "events lost or stored twice")
    # a stopped server fails every cycle it lasts; a SQLite lock fails one only past the busy timeout
    fails = pg or size.outage_seconds * 1000 > SQLITE_BUSY_TIMEOUT_MS
    if fails:
        res.expect(failed >= 1, "no cycle failed while the database was gone")
        res.expect(checkins["error"] >= failed, "a failed cycle was not reported to the cron monitor")
    res.expect(checkins["ok"] >= 1, "no cycle was reported ok to the cron monitor")
    upgrade(ref_url)
    one_shot(ref_url, lines, workdir / "ref", batch_size=7)
    compare_with(res, url, ref_url)
    return res


def source_shapes(url: str, workdir: Path, size: Size) -> Result:
    """A ``DIR/**/*.jsonl`` source over a folder holding a symlink to itself, one to its parent, a FIFO,
    a Unix socket and a file named ``.jsonl`` that is a symlink into the loop, beside good files (and a
    file nobody may read, when the suite does not run as root, which reads every file). One ``worker run
    cycle`` must finish within a bound, store every good event once and name what it skipped."""
    res = Result("source_shapes", backend(url))
    root = workdir / "logs"
    (root / "sub").mkdir(parents=True)
    lines = stream_lines(max(4, size.conversations // 4), turns=2, seed=39)
    half = len(lines) // 2
    (root / "a.jsonl").write_bytes(b"".join(lines[:half]))
    (root / "sub" / "b.jsonl").write_bytes(b"".join(lines[half:]))
    (root / "self").symlink_to(".")
    (root / "sub" / "up").symlink_to("..")
    (root / "loop.jsonl").symlink_to("self/a.jsonl")  # the same file again, by another path
    os.mkfifo(root / "sub" / "pipe.jsonl")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(root / "sub" / "sock.jsonl"))
    locked = root / "sub" / "locked.jsonl"
    locked.write_bytes(lines[0])
    locked.chmod(0)
    unreadable = os.geteuid() != 0  # root reads a file of mode 000
    expected = Counter((json.loads(raw)["request_id"], json.loads(raw)["event"]) for raw in lines)
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "monitor", "worker", "run", "cycle", "--json"],
            env=worker_env(url, [f"{root}/**/*.jsonl"]),
            capture_output=True,
            cwd=REPO,
            timeout=120,
            check=False,
        )
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out, done = True, None
    finally:
        sock.close()
        locked.chmod(stat.S_IRUSR | stat.S_IWUSR)
    seconds = round(time.monotonic() - started, 1)
    stored = stored_events(url)
    err = done.stderr if done is not None else b""
    res.figures.update(
        {
            "cycle seconds": seconds,
            "timed out": timed_out,
            "exit code": None if done is None else done.returncode,
            "good events": len(lines),
            "stored": sum(stored.values()),
            "stored twice": sum((stored - expected).values()),
            "FIFO skipped with a warning": b"pipe.jsonl" in err,
            "socket skipped with a warning": b"sock.jsonl" in err,
            "unreadable file tested": unreadable,
        }
    )
    res.expect(not timed_out, "the cycle did not finish in 120 s")
    res.expect(done is not None and done.returncode == 0, "the cycle failed")
    # the locked file holds a copy of the first line: as root it is read, and that copy is a duplicate
    res.expect(all(stored[k] == 1 for k in expected), "a good event was lost or stored twice")
    res.expect(res.figures["FIFO skipped with a warning"], "the FIFO was not named as skipped")
    res.expect(res.figures["socket skipped with a warning"], "the socket was not named as skipped")
    if done is not None and done.returncode == 0:
        ingest = json.loads(done.stdout)["ingest"]
        res.figures["quarantined"] = ingest.get("rejected_total")
    if unreadable:
        res.expect(b"locked.jsonl" in err, "the unreadable file was not named")
    worker_cycle(url, [f"{root}/**/*.jsonl"])  # a second cycle reads nothing again
    res.expect(stored_events(url) == stored, "a second cycle stored more")
    return res
