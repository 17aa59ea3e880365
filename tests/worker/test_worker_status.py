"""worker status tells a dead worker from a live one: lease expiry, and the holder's pid on this host."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from datetime import datetime, timedelta

from typer.testing import CliRunner

from monitor.cli.main import app
from monitor.store.engine import make_engine, session_factory
from monitor.worker.context import utcnow
from monitor.worker.store import LeaseRow, heartbeat

T = datetime(2026, 12, 1, 12, 0)


def test_lease_state() -> None:
    lease = LeaseRow("worker:h:42", "h:42", T, T + timedelta(minutes=5))
    alive = {42: True}.get
    assert lease.state(T, host="h", alive=lambda pid: alive(pid, False)) == "ok"
    assert lease.state(T + timedelta(minutes=6), host="h", alive=lambda pid: True) == "expired"
    assert lease.state(T, host="h", alive=lambda pid: False) == "dead"
    # another machine's holder: its pid means nothing here, only the lease says
    assert lease.state(T, host="other", alive=lambda pid: False) == "ok"


def test_worker_status_names_a_killed_worker_dead_and_exits_1(cli_db: str) -> None:
    host = socket.gethostname()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid names no process any more
    now = utcnow()
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        for holder in (f"{host}:{os.getppid()}", f"{host}:{gone.pid}"):
            heartbeat(session=s, name=f"worker:{holder}", holder=holder, now=now, ttl=timedelta(minutes=5))
        s.commit()
    runner = CliRunner()
    result = runner.invoke(app, ["--database-url", cli_db, "worker", "status", "--json"])
    assert result.exit_code == 1
    states = {x["holder"]: x["state"] for x in json.loads(result.stdout)["leases"]}
    assert states == {f"{host}:{os.getppid()}": "ok", f"{host}:{gone.pid}": "dead"}
    engine.dispose()
    # the next worker to start on this machine removes the dead one's lease (a systemd restart)
    from pydantic import SecretStr

    from monitor.settings import Settings
    from monitor.worker.runtime import open_worker

    open_worker(Settings(database_url=SecretStr(cli_db))).close()
    live = runner.invoke(app, ["--database-url", cli_db, "worker", "status", "--json"])
    assert live.exit_code == 0
    assert [x["holder"] for x in json.loads(live.stdout)["leases"]] == [f"{host}:{os.getppid()}"]


def test_worker_run_cycle_exits_3_naming_a_source_it_could_not_read(cli_db: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from sqlalchemy import func, select

    from monitor.store.models import Event
    from tests.factories import ctx_input, log, rewrite

    good = tmp_path / "a.jsonl"
    good.write_bytes(log(ctx_input(), rewrite()))
    bad = tmp_path / "b.jsonl.gz"
    bad.write_bytes(b"this is not gzip data\n")
    env = {"REWRITE_MONITOR_SOURCES": json.dumps([str(good), str(bad)])}
    result = CliRunner().invoke(app, ["--database-url", cli_db, "worker", "run", "cycle", "--json"], env=env)
    assert result.exit_code == 3, result.output
    assert f"error: {bad}: read failed" in result.stderr
    engine = make_engine(cli_db)
    with session_factory(engine)() as s:
        assert s.scalar(select(func.count()).select_from(Event)) == 2  # the readable source was read
    engine.dispose()
