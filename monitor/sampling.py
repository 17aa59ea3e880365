"""The draw every random choice of rewrite-monitor is made with: which records are checked (at ingest)
and, in the queue stage, which reach the review queue and which need a second reviewer.

A draw is sha256 of (seed, purpose, record key) mapped to [0, 1): a rerun makes the same choices, draws
of different purposes are independent, and with the same seed a lower rate takes a subset of what a
higher rate takes (a record is in when its draw is below the rate). A ground-floor module, so that
ingest, the first stage, needs nothing of the queue's.
"""

from __future__ import annotations

import hashlib

DEFAULT_SEED = "rewrite-monitor"
"""The ``sample_seed`` setting's default."""


def draw(seed: str, purpose: str, key: str) -> float:
    """A uniform number in [0, 1) fixed by ``(seed, purpose, key)``: the first 8 bytes of sha256 / 2**64."""
    digest = hashlib.sha256(f"{seed}\x1f{purpose}\x1f{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def sampled_for_check(seed: str, key: str, rate: float) -> bool:
    """Whether the record with ``key`` is checked at check rate ``rate`` (1.0 checks everything)."""
    return rate >= 1.0 or draw(seed, "check", key) < rate
