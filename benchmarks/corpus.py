"""The benchmark's corpora: the real logs, copies of them whose texts differ, long synthetic conversations.

Nothing here imports spaCy or the checks, so a child process can read a corpus without warming them.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHARED_LOGS = Path(os.environ.get("REWRITE_MONITOR_SHARED_DATA", REPO.parent / "shared" / "data")) / "logs"
REPLICATE_SEED = 7


def log_files() -> list[Path]:
    """The real logs, sorted by name; exits naming the folder when it is missing."""
    if not SHARED_LOGS.is_dir():
        sys.exit(f"benchmark corpus not found: {SHARED_LOGS} (set REWRITE_MONITOR_SHARED_DATA)")
    return sorted(SHARED_LOGS.glob("*.jsonl"))


def describe_logs() -> list[dict[str, Any]]:
    """Each log file's ``name``, ``bytes`` and ``sha256`` (hex), so a result says what it ran on."""
    return [
        {"name": f.name, "bytes": f.stat().st_size, "sha256": hashlib.sha256(f.read_bytes()).hexdigest()}
        for f in log_files()
    ]


def real_lines() -> list[str]:
    """Every non-blank line of the real logs, file by file in sorted order (about 10 MB of text)."""
    lines: list[str] = []
    for f in log_files():
        lines.extend(x for x in f.read_text(encoding="utf-8").splitlines() if x.strip())
    return lines


def marker(copy: int) -> str:
    """The suffix that makes copy ``copy`` (> 0) of a text differ from every other copy: a space and the
    copy number in binary written with ``~`` (1) and ``^`` (0), e.g. `` ~^~`` for copy 5.

    Punctuation is no content word, so the checks grade a marked text as the logged one: a word would be
    an intent word (and shift intent_dropped's severity), a number an added constraint. Checked on every
    fourth conversation of the shared logs: copy 1 gives each request the same finding kinds and
    severities as copy 0 (840 of 840), while the analyzer sees twice the distinct texts."""
    return " " + "".join("~" if bit == "1" else "^" for bit in f"{copy:b}")


def mark(text: str, copy: int) -> str:
    """``text`` followed by :func:`marker`; copy 0 (and an empty text) is the text as logged."""
    return text + marker(copy) if copy and text else text


def mark_event(ev: dict[str, Any], copy: int) -> dict[str, Any]:
    """Event ``ev`` as copy ``copy``: fresh conversation and request ids, marked texts, and the
    ctx_input's digest recomputed over the marked messages (else ingest reports ``digest_mismatch``)."""
    from monitor.record import Message, transcript_digest

    out = dict(ev)
    out["conv_id"] = f"{ev['conv_id']}~r{copy}"
    out["request_id"] = f"{ev['request_id']}~r{copy}"
    if copy == 0:
        return out
    for field in ("latest", "query"):
        if isinstance(ev.get(field), str):
            out[field] = mark(ev[field], copy)
    if isinstance(ev.get("messages"), list):
        msgs = [
            {**m, "content": mark(m["content"], copy)} if isinstance(m.get("content"), str) else m
            for m in ev["messages"]
        ]
        out["messages"] = msgs
        if "digest" in ev:
            out["digest"] = transcript_digest([Message(m["role"], m["content"]) for m in msgs])
    return out


def replicate(lines: list[str], events: int, seed: int = REPLICATE_SEED) -> Iterator[str]:
    """``events`` lines, streamed: the real conversations again and again in a shuffled order, copy k
    with fresh ids and its texts marked by :func:`mark` (copy 0 keeps the logged texts), so no two
    copies share a text and the NLP caches see as many distinct texts as the events carry."""
    convs: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        ev = json.loads(line)
        convs.setdefault(ev["conv_id"], []).append(ev)
    order = list(convs)
    rng = random.Random(seed)
    emitted, copy = 0, 0
    while emitted < events:
        rng.shuffle(order)
        for conv in order:
            for ev in convs[conv]:
                if emitted >= events:
                    return
                yield json.dumps(mark_event(ev, copy), ensure_ascii=False)
                emitted += 1
        copy += 1


def write_corpus(path: Path, lines: Iterator[str]) -> int:
    """Write ``lines`` to ``path`` one by one; returns how many."""
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line + "\n")
            n += 1
    return n


def sample_texts(lines: list[str]) -> dict[str, list[str]]:
    """Up to 4,000 message contents per role (``user``, ``assistant``) from the real transcripts."""
    texts: dict[str, list[str]] = {"user": [], "assistant": []}
    for line in lines:
        ev = json.loads(line)
        for m in ev.get("messages") or []:
            if m["content"] and m["role"] in texts and len(texts[m["role"]]) < 4000:
                texts[m["role"]].append(m["content"])
    return texts


def long_conversations(prior: int, conversations: int, texts: dict[str, list[str]], seed: int) -> list[str]:
    """Conversations whose last request has ``prior`` messages before it (user/assistant alternating),
    one request per user turn, each ctx_input carrying the full history (as a real client logs it)."""
    from monitor.record import Message, transcript_digest

    rng = random.Random(seed)
    out: list[str] = []
    start = datetime(2024, 3, 4, 8, tzinfo=UTC)
    for c in range(conversations):
        conv = f"long{prior}-{c}-{seed}"
        history: list[dict[str, str]] = []
        turn = 1
        while len(history) < prior:
            history.append({"role": "user", "content": rng.choice(texts["user"])})
            history.append({"role": "assistant", "content": rng.choice(texts["assistant"])})
            turn += 1
            msgs = history[:prior] if len(history) > prior else list(history)
            ts = (start + timedelta(minutes=turn)).isoformat()
            req = f"{conv}_{turn}"
            latest = rng.choice(texts["user"])
            n_user = sum(m["role"] == "user" for m in msgs)
            ctx = {
                "event": "ctx_input",
                "ts": ts,
                "conv_id": conv,
                "request_id": req,
                "turn": turn,
                "n_messages": len(msgs),
                "roles": {"user": n_user, "assistant": len(msgs) - n_user},
                "digest": transcript_digest([Message(m["role"], m["content"]) for m in msgs]),
                "client_turn_count": len(msgs),
                "monotonic": True,
                "messages": msgs,
            }
            rw = {
                "event": "rewrite",
                "ts": ts,
                "conv_id": conv,
                "request_id": req,
                "turn": turn,
                "latest": latest,
                "query": latest,
                "rewritten": False,
                "model": "bench",
                "prompt_version": f"long-{prior}",
            }
            out += [json.dumps(ctx), json.dumps(rw)]
    return out
