"""Throughput, memory and scaling of ingest and checks, against spaCy's tokenizer as the floor.

Usage::

    python -m benchmarks.run                      # default sizes, SQLite and PostgreSQL
    python -m benchmarks.run --events 50000 --repeat 5 --no-pg
    python -m benchmarks.run --backfill 1000000   # also: peak RSS of a 1,000,000-event backfill (slow)

Prints a table and writes ``benchmarks/results/latest.json`` (not committed). Every figure is the
median of ``--repeat`` repetitions. Ingest runs on the real logs in ``../shared/data/logs`` repeated
with fresh conversation ids up to ``--events`` events (order kept within a conversation); checks, the
end-to-end run and the tokenizer floor run on the real logs as they are (a replicated corpus would
repeat texts across conversations and flatter the NLP cache); the scaling figures use a synthetic
long-conversation set whose messages are drawn from the real transcripts.

Figures (see the issue "Benchmark" for the targets, which are measured here, never in tests):

- ingest events/s on SQLite and PostgreSQL;
- check rewrites/s per check family and all together, in memory (records preloaded, cold NLP cache),
  and through the store (``check_job``);
- end-to-end ``run`` (ingest + check + queue) rewrites/s on SQLite;
- the tokenizer floor: spaCy's tokenizer alone over exactly the texts the checks analyse (each
  distinct message, latest message and query once, as the checks' cache does), and the ratio
  floor time / end-to-end time;
- per-rewrite check time with 2, 8, 32 and 128 prior messages when the conversation's earlier
  requests were already checked;
- peak RSS of this process, and with ``--backfill N`` of a separate process ingesting and checking N
  events streamed from disk.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHARED_LOGS = Path(os.environ.get("REWRITE_MONITOR_SHARED_DATA", REPO.parent / "shared" / "data")) / "logs"
RESULTS = REPO / "benchmarks" / "results" / "latest.json"
PRIOR_TURNS = (2, 8, 32, 128)


# -- corpus ---------------------------------------------------------------------------------------
def real_lines() -> list[str]:
    """Every line of the real logs, file by file in sorted order."""
    if not SHARED_LOGS.is_dir():
        sys.exit(f"benchmark corpus not found: {SHARED_LOGS} (set REWRITE_MONITOR_SHARED_DATA)")
    lines: list[str] = []
    for f in sorted(SHARED_LOGS.glob("*.jsonl")):
        lines.extend(x for x in f.read_text(encoding="utf-8").splitlines() if x.strip())
    return lines


def replicate(lines: list[str], events: int, seed: int = 7) -> Iterator[str]:
    """``events`` lines: the real conversations repeated with fresh ids, conversation order shuffled."""
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
                out = dict(ev)
                out["conv_id"] = f"{ev['conv_id']}~r{copy}"
                out["request_id"] = f"{ev['request_id']}~r{copy}"
                yield json.dumps(out, ensure_ascii=False)
                emitted += 1
        copy += 1


def write_corpus(path: Path, lines: Iterator[str]) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line + "\n")
            n += 1
    return n


def long_conversations(prior: int, conversations: int, texts: dict[str, list[str]], seed: int) -> list[str]:
    """Conversations whose last request has ``prior`` messages before it (user/assistant alternating),
    one request per user turn, each ctx_input carrying the full history (as a real client logs it)."""
    from monitor.record import Message, transcript_digest

    rng = random.Random(seed)
    out: list[str] = []
    start = datetime(2024, 3, 4, 8, tzinfo=UTC)
    for c in range(conversations):
        conv = f"long{prior}-{c}-{uuid.uuid4().hex[:6]}"
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
            digest = transcript_digest([Message(m["role"], m["content"]) for m in msgs])
            roles = {"user": sum(m["role"] == "user" for m in msgs), "assistant": 0}
            roles["assistant"] = len(msgs) - roles["user"]
            ctx = {
                "event": "ctx_input",
                "ts": ts,
                "conv_id": conv,
                "request_id": req,
                "turn": turn,
                "n_messages": len(msgs),
                "roles": roles,
                "digest": digest,
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


# -- measurement helpers --------------------------------------------------------------------------
def median_of(repeat: int, fn: Callable[[], float]) -> float:
    return statistics.median(fn() for _ in range(repeat))


@contextmanager
def database(backend: str, pg_admin: str) -> Iterator[str]:
    """A fresh, migrated database URL; dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from monitor.store.engine import upgrade

    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{tmp}/bench.db"
            upgrade(url)
            yield url
        return
    admin = create_engine(
        make_url(pg_admin).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
    )
    name = f"rm_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        url = make_url(pg_admin).set(database=name).render_as_string(hide_password=False)
        upgrade(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def fresh_analyzer() -> None:
    """Drop the NLP caches (cold start) and build the analyzer outside any timed region."""
    import monitor.checks.nlp as nlp

    nlp._DEFAULT.clear()
    nlp.get_analyzer()
    gc.collect()


def ingest_file(url: str, path: Path) -> tuple[int, float]:
    """Ingest ``path`` (a file or a folder) into ``url``; returns (events stored, seconds)."""
    from monitor.ingest.sources import discover
    from monitor.ingest.store.batches import ingest_sources
    from monitor.store.engine import make_engine, session_factory

    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            t0 = time.perf_counter()
            summary = ingest_sources(s, discover([path]))
            return summary.stored, time.perf_counter() - t0
    finally:
        engine.dispose()


def check_store(url: str, rules: Any) -> tuple[int, float]:
    from monitor.store.engine import make_engine, session_factory
    from monitor.worker.jobs import check_job

    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            t0 = time.perf_counter()
            summary = check_job(session=s, rules=rules)
            return summary.records, time.perf_counter() - t0
    finally:
        engine.dispose()


# -- the sections -----------------------------------------------------------------------------------
def bench_ingest(path: Path, events: int, repeat: int, backends: list[str], pg: str) -> dict[str, Any]:
    out = {}
    for backend in backends:

        def once(backend: str = backend) -> float:
            with database(backend, pg) as url:
                stored, secs = ingest_file(url, path)
                assert stored == events, (stored, events)
                return secs

        secs = median_of(repeat, once)
        out[backend] = {"events": events, "seconds": secs, "events_per_s": events / secs}
    return out


def bench_checks_in_memory(url: str, rules: Any, repeat: int) -> tuple[dict[str, Any], list[Any]]:
    """Per family and all checks over preloaded records, each timed from a cold NLP cache."""
    from sqlalchemy import select

    from monitor.checks import REGISTRY, run_checks
    from monitor.ingest.store.records import load_records
    from monitor.store.engine import make_engine, session_factory
    from monitor.store.models import Record

    engine = make_engine(url)
    with session_factory(engine)() as s:
        ids = list(
            s.scalars(select(Record.id).where(Record.rewrite_event_id.is_not(None)).order_by(Record.id))
        )
        records = [
            r
            for start in range(0, len(ids), 500)
            for _i, r in load_records(session=s, record_ids=ids[start : start + 500])
        ]
    engine.dispose()
    families: dict[str, list[str]] = {}
    for spec in REGISTRY.values():
        families.setdefault(spec.family, []).append(spec.id)
    out: dict[str, Any] = {}
    for name, only in [*families.items(), ("all", None)]:

        def once(only: list[str] | None = only) -> float:
            fresh_analyzer()
            t0 = time.perf_counter()
            for rec in records:
                run_checks(rec, rules, only=only)
            return time.perf_counter() - t0

        secs = median_of(repeat, once)
        out[name] = {"rewrites": len(records), "seconds": secs, "rewrites_per_s": len(records) / secs}
    return out, records


def tokenizer_floor(records: list[Any], repeat: int) -> dict[str, Any]:
    """spaCy's tokenizer alone over each distinct text the checks analyse (messages, latest, query)."""
    import spacy

    texts: dict[str, None] = {}
    for rec in records:
        texts.setdefault(rec.query, None)
        texts.setdefault(rec.latest, None)
        if rec.context is not None and rec.context.messages is not None:
            for m in rec.context.messages:
                texts.setdefault(m.content, None)
    tokenizer = spacy.blank("en").tokenizer
    docs = list(texts)

    def once() -> float:
        t0 = time.perf_counter()
        for t in docs:
            tokenizer(t)
        return time.perf_counter() - t0

    secs = median_of(repeat, once)
    return {"docs": len(docs), "seconds": secs, "docs_per_s": len(docs) / secs, "rewrites": len(records)}


def bench_end_to_end(path: Path, repeat: int, rules: Any) -> dict[str, Any]:
    from monitor.ingest.sources import discover
    from monitor.settings import Settings
    from monitor.store.engine import make_engine, session_factory
    from monitor.worker.jobs import run_job

    def once() -> tuple[int, float]:
        with database("sqlite", "") as url:
            fresh_analyzer()
            engine = make_engine(url)
            with session_factory(engine)() as s:
                t0 = time.perf_counter()
                summary = run_job(
                    session=s, settings=Settings(database_url=url), rules=rules, sources=discover([path])
                )
                secs = time.perf_counter() - t0
            engine.dispose()
            return summary.check.records, secs

    runs = [once() for _ in range(repeat)]
    secs = statistics.median(r[1] for r in runs)
    return {"rewrites": runs[0][0], "seconds": secs, "rewrites_per_s": runs[0][0] / secs}


def bench_prior_turns(rules: Any, texts: dict[str, list[str]], repeat: int) -> dict[str, Any]:
    """Check time of a conversation's newest request when its earlier requests were already checked."""
    from monitor.ingest.store.batches import ingest_bytes
    from monitor.store.engine import make_engine, session_factory
    from monitor.worker.jobs import check_job

    out: dict[str, Any] = {}
    conversations = 6
    for prior in PRIOR_TURNS:

        def once(prior: int = prior) -> float:
            lines = long_conversations(prior, conversations, texts, seed=prior)
            last_pairs = set()
            by_conv: dict[str, list[str]] = {}
            for line in lines:
                by_conv.setdefault(json.loads(line)["conv_id"], []).append(line)
            earlier, newest = [], []
            for conv_lines in by_conv.values():
                earlier += conv_lines[:-2]
                newest += conv_lines[-2:]
                last_pairs.add(conv_lines[-1])
            with database("sqlite", "") as url:
                fresh_analyzer()
                engine = make_engine(url)
                with session_factory(engine)() as s:
                    ingest_bytes(s, ("\n".join(earlier) + "\n").encode())
                    check_job(session=s, rules=rules)
                    ingest_bytes(s, ("\n".join(newest) + "\n").encode(), origin="newest")
                    t0 = time.perf_counter()
                    summary = check_job(session=s, rules=rules)
                    secs = time.perf_counter() - t0
                    assert summary.records == conversations, summary.records
                engine.dispose()
            return secs / conversations

        per = median_of(repeat, once)
        out[str(prior)] = {"ms_per_rewrite": per * 1000}
    base = out["8"]["ms_per_rewrite"]
    out["ratio_128_to_8"] = out["128"]["ms_per_rewrite"] / base if base else None
    return out


def backfill_child(events: int) -> None:
    """Run in a separate process: stream ``events`` events to disk, ingest and check them on SQLite,
    print JSON with the peak RSS (MB) and the time."""
    from monitor.checks.rules import load_rules

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "backfill.jsonl"
        write_corpus(path, replicate(real_lines(), events))
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        with database("sqlite", "") as url:
            t0 = time.perf_counter()
            stored, _ = ingest_file(url, path)
            checked, _ = check_store(url, load_rules())
            secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "events": stored,
                "rewrites": checked,
                "seconds": secs,
                "peak_rss_mb": peak,
                "rss_before_mb": rss_before,
            }
        )
    )


def sample_texts(lines: list[str]) -> dict[str, list[str]]:
    texts: dict[str, list[str]] = {"user": [], "assistant": []}
    for line in lines:
        ev = json.loads(line)
        for m in ev.get("messages") or []:
            if m["content"] and len(texts[m["role"]]) < 4000 and m["role"] in texts:
                texts[m["role"]].append(m["content"])
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="corpus size in events (default 20000)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--backfill", type=int, default=0, help="also measure a backfill of N events")
    parser.add_argument("--backfill-child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    from monitor.cli.main import tune_gc

    tune_gc()  # what every rewrite-monitor command runs under, so the figures are the users'
    if args.backfill_child:
        backfill_child(args.backfill_child)
        return

    from monitor.checks.rules import load_rules

    rules = load_rules()
    lines = real_lines()
    texts = sample_texts(lines)
    results: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "events": args.events,
        "repeat": args.repeat,
        "cpu_count": os.cpu_count(),
    }
    backends = ["sqlite"] + ([] if args.no_pg else ["postgresql"])
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        events = write_corpus(corpus, replicate(lines, args.events))
        print(f"corpus: {events} events from {SHARED_LOGS} (real logs, repeated with fresh ids)", flush=True)
        results["ingest"] = bench_ingest(corpus, events, args.repeat, backends, args.pg)
        print("ingest done", flush=True)
    # Checks, end to end and the floor run on the real logs as they are: a replicated corpus repeats
    # the same texts across copies, and the NLP cache would turn that into hits real traffic never has.
    real = SHARED_LOGS
    with database("sqlite", "") as url:
        ingest_file(url, real)
        fresh_analyzer()
        n, secs = check_store(url, rules)
        results["check_store"] = {"rewrites": n, "seconds": secs, "rewrites_per_s": n / secs}
        results["check_in_memory"], records = bench_checks_in_memory(url, rules, args.repeat)
    print("checks done", flush=True)
    results["tokenizer_floor"] = tokenizer_floor(records, args.repeat)
    results["end_to_end"] = bench_end_to_end(real, args.repeat, rules)
    floor_s = results["tokenizer_floor"]["seconds"]
    results["ratio_floor_to_end_to_end"] = floor_s / results["end_to_end"]["seconds"]
    print("end to end done", flush=True)
    results["prior_turns"] = bench_prior_turns(rules, texts, args.repeat)
    results["peak_rss_mb_this_process"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.backfill:
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.run", "--backfill-child", str(args.backfill)],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        results["backfill"] = json.loads(proc.stdout.strip().splitlines()[-1])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print_table(results)
    print(f"\nwritten {RESULTS.relative_to(REPO)}")


def print_table(r: dict[str, Any]) -> None:
    rows = []
    for backend, x in r["ingest"].items():
        rows.append(
            (
                f"ingest ({backend})",
                f"{x['events_per_s']:,.0f} events/s",
                f"{x['events']:,} events in {x['seconds']:.2f} s",
            )
        )
    for fam, x in r["check_in_memory"].items():
        rows.append(
            (
                f"check {fam} (in memory, cold cache)",
                f"{x['rewrites_per_s']:,.0f} rewrites/s",
                f"{x['seconds']:.2f} s",
            )
        )
    x = r["check_store"]
    rows.append(
        (
            "check all (check_job, SQLite)",
            f"{x['rewrites_per_s']:,.0f} rewrites/s",
            f"{x['rewrites']:,} in {x['seconds']:.2f} s",
        )
    )
    x = r["end_to_end"]
    rows.append(
        (
            "end to end run (SQLite)",
            f"{x['rewrites_per_s']:,.0f} rewrites/s",
            f"{x['rewrites']:,} in {x['seconds']:.2f} s",
        )
    )
    x = r["tokenizer_floor"]
    rows.append(
        (
            "spaCy tokenizer floor",
            f"{x['docs_per_s']:,.0f} docs/s",
            f"{x['docs']:,} distinct texts in {x['seconds']:.2f} s",
        )
    )
    rows.append(("ratio floor / end to end", f"{r['ratio_floor_to_end_to_end']:.3f}", "target >= 0.3"))
    for prior in PRIOR_TURNS:
        rows.append(
            (
                f"check, {prior} prior messages",
                f"{r['prior_turns'][str(prior)]['ms_per_rewrite']:.2f} ms/rewrite",
                "earlier requests checked",
            )
        )
    rows.append(("128 vs 8 prior messages", f"{r['prior_turns']['ratio_128_to_8']:.2f}x", "target <= 2x"))
    rows.append(("peak RSS (this process)", f"{r['peak_rss_mb_this_process']:.0f} MB", ""))
    if "backfill" in r:
        b = r["backfill"]
        rows.append(
            (
                f"backfill {b['events']:,} events",
                f"{b['peak_rss_mb']:.0f} MB peak RSS",
                f"{b['seconds']:.0f} s, target < 500 MB",
            )
        )
    width = max(len(a) for a, _, _ in rows)
    for a, b, c in rows:
        print(f"{a:<{width}}  {b:>22}  {c}")


if __name__ == "__main__":
    main()
