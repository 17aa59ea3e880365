"""The benchmark's speed-up of ``run --workers 2`` over ``--workers 1`` (issue 36): rounds in turn."""

from __future__ import annotations

import pytest

from benchmarks import run as bench

LINES = [
    '{"v": 1, "conv_id": "c1", "turn": 1, "request_id": "r1", "ts": "2026-01-01T00:00:00Z", "kind": "x"}',
]


def test_workers_runs_the_counts_in_turn_and_takes_the_median_of_the_rounds_ratios(monkeypatch):
    # wall clocks by call: round 1 (1: 50 s, 2: 30 s), round 2 (60, 40), round 3 (70, 35)
    seconds = iter([50.0, 30.0, 60.0, 40.0, 70.0, 35.0])
    calls: list[str] = []

    def fake_run(url: str, path: object, *args: str) -> dict[str, float]:
        calls.append(args[-1])
        return {"seconds": next(seconds), "check_s": 10.0, "rewrites": 1000, "peak_rss_mb": 100.0}

    monkeypatch.setattr(bench, "cli_run", fake_run)
    hosts = iter([1.9, 1.6, 2.0])
    monkeypatch.setattr(bench, "host_speedup", lambda n: next(hosts))
    out = bench.bench_workers(LINES, 1, repeat=3)
    assert calls == ["1", "2", "1", "2", "1", "2"]
    # the rounds' own ratios 50/30, 60/40, 70/35; their median, not median(1) / median(2) = 60/35
    assert out["speedups"] == pytest.approx([5 / 3, 1.5, 2.0])
    assert out["speedup"] == pytest.approx(5 / 3)
    assert out["1"]["seconds"] == 60.0 and out["2"]["seconds"] == 35.0
    assert out["2"]["rewrites_per_s"] == pytest.approx(1000 / 35) and out["rounds"] == 3
    assert out["2"]["rewrites_per_s_per_process"] == pytest.approx(1000 / 35 / 2)
    # the host's own speed-up, measured before each round: its median
    assert out["host_speedups"] == [1.9, 1.6, 2.0] and out["host_speedup"] == 1.9


def test_workers_keeps_counts_whole_with_an_even_number_of_rounds(monkeypatch):
    seconds = iter([50.0, 30.0, 60.0, 40.0])
    rewrites = iter([1000, 1000, 1002, 1002])
    monkeypatch.setattr(
        bench,
        "cli_run",
        lambda url, path, *args: {
            "seconds": next(seconds),
            "check_s": 1.0,
            "rewrites": next(rewrites),
            "processes": int(args[-1]),
        },
    )
    monkeypatch.setattr(bench, "host_speedup", lambda n: 2.0)
    out = bench.bench_workers(LINES, 1, repeat=2)
    # seconds: the median of 50 and 60; rewrites: the lower middle run, not 1001.0
    assert out["1"]["seconds"] == 55.0 and out["1"]["rewrites"] == 1000 and out["2"]["processes"] == 2
    assert out["speedups"] == pytest.approx([50 / 30, 60 / 40])


def test_host_speedup_is_n_times_one_loop_over_n_loops_at_once(monkeypatch):
    # one loop alone: 0 -> 1 s; two at once: 1 -> 2.6 s; 2 * 1 / 1.6 = 1.25
    clock = FakeClock([0.0, 1.0, 1.0, 2.6])
    monkeypatch.setattr(bench.time, "perf_counter", clock)
    started: list[FakeLoop] = []
    monkeypatch.setattr(
        bench.subprocess, "Popen", lambda argv, **kw: started.append(FakeLoop(argv, 0)) or started[-1]
    )
    assert bench.host_speedup(2) == pytest.approx(1.25)
    assert len(started) == 3 and all(p.argv[1] == "-c" for p in started)


def test_host_speedup_reports_a_failed_loop_and_leaves_none_running(monkeypatch):
    monkeypatch.setattr(bench.time, "perf_counter", FakeClock([0.0]))
    started: list[FakeLoop] = []
    loops = iter([0, 3, None])  # the lone loop exits 0; of the two at once, one exits 3, one still runs

    def popen(argv, **kw):
        started.append(FakeLoop(argv, next(loops)))
        return started[-1]

    monkeypatch.setattr(bench.subprocess, "Popen", popen)
    with pytest.raises(RuntimeError, match="exited 3:\nboom"):
        bench.host_speedup(2)
    assert started[2].killed and started[2].returncode == -9


class FakeClock:
    """``time.perf_counter`` giving ``ticks`` in turn, then the last one for ever."""

    def __init__(self, ticks: list[float]) -> None:
        self.ticks = list(ticks)

    def __call__(self) -> float:
        return self.ticks.pop(0) if len(self.ticks) > 1 else self.ticks[0]


class FakeLoop:
    """A ``subprocess.Popen`` of a loop that exits ``code`` when waited on (``None``: runs until killed)."""

    def __init__(self, argv: list[str], code: int | None) -> None:
        self.argv, self.code, self.killed = argv, code, False
        self.returncode: int | None = None

    def communicate(self) -> tuple[bytes, bytes]:
        self.returncode = self.code
        return b"", b"boom" if self.code else b""

    def poll(self) -> int | None:
        return self.returncode

    def kill(self) -> None:
        self.killed = True

    def wait(self) -> int:
        self.returncode = -9
        return -9
