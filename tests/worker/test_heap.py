"""``monitor.worker.heap``: the C heap's free pages go back to the system, and nothing else changes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from monitor.worker import heap

# Run in a fresh interpreter: the test process's own heap (pytest, SQLAlchemy, the other tests' garbage)
# would make the figures depend on what ran before. 40,000 blocks of 1,000 bytes (above pymalloc's 512, so
# glibc's heap), every 16th kept: 2,500 freed runs of 15 blocks lie between kept blocks, each about 15,240
# bytes with glibc's 16-byte headers, so about (15,240 - 4,096) / 4,096 = 2.7 whole pages: some 27 MB that
# glibc keeps (they are not at the heap's top) and a trim hands back (28.7 MB measured here).
_PROBE = """
import sys
from monitor.worker.heap import trim_heap

def rss_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

blocks = [bytes(1000) for _ in range(40_000)]
kept = blocks[::16]
del blocks
before = rss_kb()
released = trim_heap()
after = rss_kb()
print(released, before - after, len(kept), sum(map(len, kept)))
"""


@pytest.mark.skipif(heap._malloc_trim() is None, reason="the C library has no malloc_trim (not glibc)")
def test_trim_gives_back_the_pages_freed_between_live_blocks() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    released, given_back_kb, kept, kept_bytes = out.stdout.split()
    assert released == "True"
    # the whole pages of the 36.6 MB freed: about 27 MB, never more than was freed
    assert 25 * 1024 <= int(given_back_kb) <= 37 * 1024
    # what was still allocated is untouched: the 2,500 kept blocks and their bytes
    assert (int(kept), int(kept_bytes)) == (2_500, 2_500_000)


def test_without_malloc_trim_nothing_is_released(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    assert heap.trim_heap() is False


def test_a_heap_with_nothing_free_releases_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def fake(pad: int) -> int:
        calls.append(pad)
        return 0  # malloc_trim(3): 0 when no memory could be released

    monkeypatch.setattr(heap, "_malloc_trim", lambda: fake)
    assert heap.trim_heap() is False
    assert calls == [0]  # pad 0: keep no slack at the heap's top
