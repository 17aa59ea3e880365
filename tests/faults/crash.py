"""Crashes and rotation: the worker SIGKILLed at random points while its log grows and is rotated every
common way (``kill_rotate``), and copytruncate's unavoidable window measured (``copytruncate``)."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import signal
import threading
import time
from collections import Counter
from pathlib import Path

from monitor.store.engine import upgrade
from tests.factories import stream_lines, traces_of
from tests.faults.common import (
    Result,
    Size,
    backend,
    compare_with,
    one_shot,
    quarantined,
    stored_events,
    worker_cycle,
)
from tests.helpers import start_worker, wait_started, worker_env

ROTATIONS = ("numbered", "dated", "double")
"""The rotation kinds ``kill_rotate`` cycles through: rename to ``app.jsonl.1`` after shifting the older
numbered generations up (logrotate, RotatingFileHandler), rename to a dated name (``app.jsonl-20240304-
000001``, logrotate's ``dateext``, TimedRotatingFileHandler), and both within a burst, so that two
rotations fall between the worker's cycles."""


class RotatingWriter(threading.Thread):
    """Appends ``lines`` to ``live`` in bursts over about ``seconds`` (often cutting a line across two
    writes, a producer caught mid-line), rotating it ``rotations`` times at line boundaries.

    ``mode`` ``rename``: the kinds of :data:`ROTATIONS` (or ``kinds``; ``collector`` renames as the
    OpenTelemetry Collector's file exporter does, ``traces-2024-03-04T08-00-00.001.jsonl``) in turn. After
    a single rename the producer writes one more burst to the renamed file before it reopens the path, as
    a logger does until it is told of the rotation (a late write to a renamed file); a ``double`` reopens
    at once, writes one burst without pausing and is renamed again, so both renames fall between two
    worker cycles.
    ``mode`` ``copytruncate``: the file is copied to ``app.jsonl.N`` and truncated in place while the
    producer's descriptor (``O_APPEND``) writes on."""

    def __init__(
        self,
        live: Path,
        lines: list[bytes],
        seconds: float,
        rotations: int,
        mode: str,
        seed: int,
        kinds: tuple[str, ...] = ROTATIONS,
    ):
        super().__init__(daemon=True)
        self.kinds = kinds
        self.live, self.lines, self.seconds = live, lines, seconds
        self.rotations, self.mode = rotations, mode
        self.rng = random.Random(seed)
        self.renames = 0
        self.rotated = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # reported by the scenario, never lost in a thread
            self.error = exc

    def _run(self) -> None:
        n = len(self.lines)
        every = max(1, n // (self.rotations + 1))
        pause = self.seconds / max(1, n // 20)
        fh = self.live.open("ab", buffering=0)
        i, next_rotation = 0, every
        reopen, second = False, False
        while i < n:
            end = min(n, i + self.rng.randint(1, 40))
            if next_rotation > i:
                end = min(end, next_rotation)
            data = b"".join(self.lines[i:end])
            cut = self.rng.randint(1, max(1, len(data) - 1))
            fh.write(data[:cut])
            time.sleep(pause / 4)  # a reader may see the half-written line now
            fh.write(data[cut:])
            i = end
            if reopen:  # the late burst went to the renamed file: now the logger reopens the path
                fh.close()
                fh = self.live.open("ab", buffering=0)
                reopen = False
            if not second:
                time.sleep(pause)
            if i >= next_rotation and i < n:
                if second:  # the second rename of a double rotation, right after one burst
                    self._rename("dated")
                    fh.close()
                    fh = self.live.open("ab", buffering=0)
                    second, next_rotation = False, i + every
                elif self.rotated < self.rotations:
                    kind = (
                        "copytruncate"
                        if self.mode == "copytruncate"
                        else self.kinds[self.rotated % len(self.kinds)]
                    )
                    self.rotated += 1
                    if kind == "copytruncate":
                        shutil.copyfile(self.live, self.live.with_name(f"{self.live.name}.{self.rotated}"))
                        with self.live.open("r+b") as t:
                            t.truncate(0)
                        next_rotation = i + every
                    elif kind == "double":
                        self._rename("numbered")
                        fh.close()
                        fh = self.live.open("ab", buffering=0)
                        second, next_rotation = True, i + 1
                    else:
                        self._rename(kind)
                        reopen, next_rotation = True, i + every
                else:
                    next_rotation = n
        fh.close()

    def _rename(self, kind: str) -> None:
        d, name = self.live.parent, self.live.name
        self.renames += 1
        if kind == "numbered":
            gens = sorted(
                (int(p.name[len(name) + 1 :]), p)
                for p in d.iterdir()
                if p.name.startswith(name + ".") and p.name[len(name) + 1 :].isdigit()
            )
            for k, p in reversed(gens):
                p.rename(d / f"{name}.{k + 1}")
            self.live.rename(d / f"{name}.1")
        elif kind == "collector":  # the Collector file exporter's backup: stem-time.ext
            self.live.rename(d / f"{self.live.stem}-2024-03-04T08-00-00.{self.renames:03d}{self.live.suffix}")
        else:
            self.live.rename(d / f"{name}-20240304-{self.renames:06d}")
        self.live.touch()


def _kill_loop(env: dict[str, str], writer: RotatingWriter, kills: int, log: Path, seed: int) -> int:
    """Start the worker, SIGKILL it at a random point once it runs, ``kills`` times and at least while
    ``writer`` writes; the number of kills."""
    rng = random.Random(seed)
    done = 0
    while writer.is_alive() or done < kills:
        before = log.read_bytes().count(b'"worker started"') if log.exists() else 0
        proc = start_worker(env, log)
        wait_started(proc, log, before)  # so the kill lands inside cycles, not in the imports
        time.sleep(rng.uniform(0.0, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done += 1
    return done


def _live_log(url: str, workdir: Path) -> tuple[Path, dict[str, str]]:
    """An empty ``logs/app.jsonl`` under ``workdir`` and the environment of a worker that follows it
    with a short interval and small batches (so kills land between commits)."""
    logs = workdir / "logs"
    logs.mkdir(parents=True)
    live = logs / "app.jsonl"
    live.touch()
    return live, worker_env(url, [str(live)], worker_interval_minutes=0.005, batch_size=7)


def kill_rotate(url: str, workdir: Path, size: Size, ref_url: str) -> Result:
    """SIGKILLs while the log grows and is rotated (:data:`ROTATIONS`); then one clean cycle. Every line
    must be stored exactly once, none read twice (no ``duplicate_event`` quarantine), and findings and
    queue must equal a one-shot run of the same lines (``ref_url``, a fresh database)."""
    lines = stream_lines(size.conversations, turns=4, seed=31)
    expected = Counter((json.loads(raw)["request_id"], json.loads(raw)["event"]) for raw in lines)
    return _kill_rotate(Result("kill_rotate", backend(url)), url, workdir, size, ref_url, lines, expected)


def kill_rotate_traces(url: str, workdir: Path, size: Size, ref_url: str) -> Result:
    """``kill_rotate`` with OpenTelemetry traces for a log (``tests.factories.traces_of``: each request a
    trace over two lines, its rewrite span on one and its root on the next, so a rotation or a kill can
    fall between them), rotated as the Collector's file exporter rotates and as logrotate does. Every
    span must be stored once, every trace mapped once to its ``ctx_input`` and
    ``rewrite``, and findings and queue must equal a one-shot run of the same traces."""
    events = stream_lines(size.conversations, turns=4, seed=31)
    lines = traces_of(events)
    expected: Counter[tuple[str, str]] = Counter()
    for raw in events:
        ev = json.loads(raw)
        expected[(ev["request_id"], ev["event"])] += 1
        if ev["event"] == "rewrite":
            expected[(hashlib.sha256(ev["request_id"].encode()).hexdigest()[:32], "span")] += 2
    res = Result("kill_rotate_traces", backend(url))
    # the Collector file exporter's own rotation, then the common ones
    return _kill_rotate(
        res, url, workdir, size, ref_url, lines, expected, ("collector", "numbered", "double")
    )


def _kill_rotate(
    res: Result,
    url: str,
    workdir: Path,
    size: Size,
    ref_url: str,
    lines: list[bytes],
    expected: Counter[tuple[str, str]],
    kinds: tuple[str, ...] = ROTATIONS,
) -> Result:
    """The kill-and-rotate loop over ``lines``, rotating by ``kinds``; ``expected``: how many times each
    (request id, event kind) must be stored."""
    live, env = _live_log(url, workdir)
    # The worker must know the log before its first rotation: a generation rotated away before any
    # pass saw the live file is history no cursor covers (not read, by design). Under load the first
    # start-up took longer than the writer's first rotation, and that file was counted as lost.
    worker_cycle(url, [str(live)], batch_size=7)
    # Long enough for every kill: each start-up takes 1.5-3 s, each run up to 2.5 s more.
    writer = RotatingWriter(
        live, lines, seconds=size.kills * 3.0, rotations=size.rotations, mode="rename", seed=5, kinds=kinds
    )
    writer.start()
    kills = _kill_loop(env, writer, size.kills, workdir / "worker.log", seed=20240304)
    writer.join()
    if writer.error is not None:
        raise writer.error
    summary = worker_cycle(url, [str(live)], batch_size=7)
    stored = stored_events(url)
    res.figures.update(
        {
            "kills": kills,
            "rotations": writer.rotated,
            "renames": writer.renames,
            "lines": len(lines),
            "stored": sum(stored.values()),
            "lost": sum((expected - stored).values()),
            "stored twice": sum((stored - expected).values()),
            "read twice (duplicate_event)": quarantined(url).get("duplicate_event", 0),
        }
    )
    res.expect(stored == expected, "events lost or stored twice")
    res.expect(res.figures["read twice (duplicate_event)"] == 0, "a line was read twice")
    res.expect(summary["ingest"]["rejected_total"] == 0, "the last cycle rejected lines")
    upgrade(ref_url)
    one_shot(ref_url, lines, workdir / "ref", batch_size=7)
    compare_with(res, url, ref_url)
    return res


def copytruncate(url: str, workdir: Path, size: Size) -> Result:
    """The log rotated by copytruncate while the worker runs (no kills): the lines written between the
    copy and the truncation are lost by design of copytruncate (nothing on disk holds them); the figures
    count them against what the producer wrote, and every rotation must be reported by the worker
    (``source truncated`` in its log)."""
    res = Result("copytruncate", backend(url))
    lines = stream_lines(size.conversations, turns=4, seed=32)
    live, env = _live_log(url, workdir)
    log = workdir / "worker.log"
    writer = RotatingWriter(
        live, lines, seconds=size.kills * 1.5 + 6, rotations=size.rotations, mode="copytruncate", seed=6
    )
    proc = start_worker(env, log)
    wait_started(proc, log)
    writer.start()
    writer.join()
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    worker_cycle(url, [str(live)], batch_size=7)
    stored = stored_events(url)
    reported = log.read_bytes().count(b'"source truncated"')
    lost = len(lines) - len(stored)
    res.figures.update(
        {
            "rotations": writer.rotated,
            "lines": len(lines),
            "lost in the copytruncate window": lost,
            "rotations reported": reported,
            "stored twice": sum(1 for v in stored.values() if v > 1),
        }
    )
    res.expect(reported >= 1, "no copytruncate rotation was reported")
    res.expect(all(v == 1 for v in stored.values()), "events stored twice")
    return res
