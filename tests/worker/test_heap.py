"""``monitor.worker.heap``: the C heap's free pages go back to the system, and nothing else changes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from monitor.worker import heap

# Run in a fresh interpreter: the test process's own heap (pytest, SQLAlchemy, the other tests' garbage)
# would make the figures depend on what ran before. 40,000 byte strings of 1,000 bytes: 1,033 bytes with
# CPython's header, above pymalloc's 512, so each is a glibc chunk of 1,056 bytes. Every 16th is kept, so
# 2,500 runs of 15 freed chunks (15,840 bytes) lie between kept ones, each holding (15,840 - 4,096) / 4,096
# = 2.9 whole pages on average: about 28 MB that glibc keeps (they are not at the heap's top) and a trim
# hands back (28.7 MB measured here) of the 39.6 MB freed.
_PROBE = """
import hashlib
from monitor.worker.heap import trim_heap

def rss_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

blocks = [i.to_bytes(4, "big") * 250 for i in range(40_000)]
kept = blocks[::16]
del blocks
digest = hashlib.sha256(b"".join(kept)).hexdigest()
before = rss_kb()
could = trim_heap()
after = rss_kb()
print(could, before - after, digest == hashlib.sha256(b"".join(kept)).hexdigest(), len(kept))
"""

# What changes how glibc places or returns memory (or replaces it): the probe runs without them.
_ALLOCATOR_ENV = ("GLIBC_TUNABLES", "LD_PRELOAD", "PYTHONMALLOC")


@pytest.mark.skipif(heap._malloc_trim() is None, reason="the C library has no malloc_trim (not glibc)")
def test_trim_gives_back_the_pages_freed_between_live_blocks() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k not in _ALLOCATOR_ENV}
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, env=env)
    could, given_back_kb, same, kept = out.stdout.split()
    assert could == "True"
    # the whole pages of the 39.6 MB freed: about 28 MB, never more than was freed
    assert 25 * 1024 <= int(given_back_kb) <= 39 * 1024
    # what was still allocated is untouched: the 2,500 kept blocks, each of its own bytes (a page
    # wrongly dropped would read back as zeros)
    assert (same, kept) == ("True", "2500")


def test_without_malloc_trim_nothing_is_trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    assert heap.trim_heap() is False


def test_a_trim_keeps_no_slack_and_says_it_could(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def fake(pad: int) -> int:
        calls.append(pad)
        return 0  # malloc_trim(3): 0 when it found no whole free page; the call still ran

    monkeypatch.setattr(heap, "_malloc_trim", lambda: fake)
    assert heap.trim_heap() is True
    assert calls == [0]  # pad 0: no slack kept at the heap's top
