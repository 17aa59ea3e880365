"""The benchmark's timed phases that must start cold: each runs in a fresh process
(``python -m benchmarks.run --child PHASE ARGS_JSON``) and prints one JSON line.

A fresh process is the only honest cold start: the NLP analyses, the ``functools`` caches of
``monitor.lexicon`` (``zipf``, ``synsets``, ``noun_classes``, ``attributes``) and the word tables
all live for the process. This module imports only the standard library and ``benchmarks.corpus`` at
the top, so what a phase loads is loaded inside it.
"""

from __future__ import annotations

import gc
import json
import tempfile
import time
from pathlib import Path
from typing import Any


def _tune_gc() -> None:
    from monitor.cli.main import tune_gc

    tune_gc()  # every rewrite-monitor command runs under these thresholds


def floor(texts: str, gc_thresholds: list[int]) -> dict[str, Any]:
    """spaCy's tokenizer alone, cold, over the texts in the JSON list at ``texts``, each once.

    Returns ``docs`` and seconds: ``import_s`` (``import spacy``), ``build_s`` (``spacy.blank("en")``),
    ``tokenize_s``. The thresholds come from the parent (``GC_THRESHOLDS``) because importing
    ``monitor.cli.main`` here would load the product into the floor's process."""
    gc.set_threshold(*gc_thresholds)
    docs: list[str] = json.loads(Path(texts).read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    import spacy

    t1 = time.perf_counter()
    tokenizer = spacy.blank("en").tokenizer
    t2 = time.perf_counter()
    gc.collect()
    t3 = time.perf_counter()
    for t in docs:
        tokenizer(t)
    t4 = time.perf_counter()
    return {"docs": len(docs), "import_s": t1 - t0, "build_s": t2 - t1, "tokenize_s": t4 - t3}


def checks(db: str, only: list[str] | None, dump_texts: str | None) -> dict[str, Any]:
    """Every check (or the ids in ``only``) over the records of the SQLite store ``db``, preloaded,
    from a cold start. ``import spacy`` is done before the clock starts (as the floor times it apart);
    building the analyzer is inside ``build_s`` (as the floor's ``spacy.blank("en")`` is in its
    ``build_s``), the checks with their lazily loaded word tables inside ``check_s``.

    Returns ``rewrites``, ``analyses`` (distinct texts the analyzer tokenised), ``build_s``, ``check_s``.
    With ``dump_texts``, writes those texts there as a JSON list: what the floor tokenises."""
    _tune_gc()
    import spacy  # noqa: F401  (imported untimed: see the docstring)
    from sqlalchemy import select

    from monitor.checks import run_checks
    from monitor.checks.nlp import get_analyzer
    from monitor.checks.rules import load_rules
    from monitor.ingest.store.records import load_records
    from monitor.store.engine import make_engine, session_factory
    from monitor.store.models import Record

    rules = load_rules()
    engine = make_engine(db)
    with session_factory(engine)() as s:
        ids = list(
            s.scalars(select(Record.id).where(Record.rewrite_event_id.is_not(None)).order_by(Record.id))
        )
        records = [
            r
            for at in range(0, len(ids), 500)
            for _, r in load_records(session=s, record_ids=ids[at : at + 500])
        ]
    engine.dispose()
    gc.collect()
    t0 = time.perf_counter()
    analyzer = get_analyzer()
    t1 = time.perf_counter()
    for rec in records:
        run_checks(rec, rules, only=only)
    t2 = time.perf_counter()
    if dump_texts:
        texts = analyzer.cached_texts()
        if len(texts) != analyzer.misses:
            raise SystemExit(f"the analyzer's cache evicted texts ({len(texts)} of {analyzer.misses} kept)")
        Path(dump_texts).write_text(json.dumps(texts), encoding="utf-8")
    return {"rewrites": len(records), "analyses": analyzer.misses, "build_s": t1 - t0, "check_s": t2 - t1}


def startup() -> dict[str, Any]:
    """What every ``rewrite-monitor run`` pays before its first rewrite: the CLI's imports (``import_s``),
    the rules (``rules_s``), the analyzer (``build_s``, spaCy imported inside) and the word tables
    (``tables_s``: WordNet, WordNet's word classes, wordfreq's list)."""
    t0 = time.perf_counter()
    import monitor.cli.main as cli

    t1 = time.perf_counter()
    cli.tune_gc()
    from monitor import lexicon
    from monitor.checks import nlp
    from monitor.checks.rules import load_rules

    load_rules()
    t2 = time.perf_counter()
    nlp.get_analyzer()
    t3 = time.perf_counter()
    lexicon._wordnet()
    lexicon.word_classes()
    lexicon.zipf("house")
    t4 = time.perf_counter()
    return {"import_s": t1 - t0, "rules_s": t2 - t1, "build_s": t3 - t2, "tables_s": t4 - t3}


def prior(prior: int, conversations: int, seed: int, texts: str) -> dict[str, Any]:
    """Check time of the newest request of ``conversations`` synthetic conversations with ``prior``
    messages before it, the earlier requests already checked in this process (so their analyses are
    cached, as in a worker that follows a conversation) and the analyzer and word tables loaded. A
    collection runs right before the timed call.

    Returns ``ms_per_rewrite`` (``check_job``'s own time, what ``run`` prints as the check time) and
    ``ms_per_call`` (around the call: also the coverage query over the whole store, which grows with the
    store, not with the conversation)."""
    _tune_gc()
    from benchmarks.corpus import long_conversations
    from monitor import lexicon
    from monitor.checks import nlp
    from monitor.checks.rules import load_rules
    from monitor.ingest.store.batches import ingest_bytes
    from monitor.store.engine import make_engine, session_factory, upgrade
    from monitor.worker.jobs import check_job

    rules = load_rules()
    # Loaded up front as in a worker already running: with 2 prior messages there is no earlier request
    # whose check would load them, and the timed call would be charged the start-up.
    nlp.get_analyzer()
    lexicon._wordnet()
    lexicon.word_classes()
    lexicon.zipf("house")
    sample = json.loads(Path(texts).read_text(encoding="utf-8"))
    by_conv: dict[str, list[str]] = {}
    for line in long_conversations(prior, conversations, sample, seed=seed):
        by_conv.setdefault(json.loads(line)["conv_id"], []).append(line)
    earlier = [x for lines in by_conv.values() for x in lines[:-2]]
    newest = [x for lines in by_conv.values() for x in lines[-2:]]
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/prior.db"
        upgrade(url)
        engine = make_engine(url)
        with session_factory(engine)() as s:
            ingest_bytes(s, ("\n".join(earlier) + "\n").encode())
            check_job(session=s, rules=rules)
            ingest_bytes(s, ("\n".join(newest) + "\n").encode(), origin="newest")
            gc.collect()
            t0 = time.perf_counter()
            summary = check_job(session=s, rules=rules)
            call = time.perf_counter() - t0
        engine.dispose()
    if summary.records != conversations:
        raise SystemExit(f"checked {summary.records} newest requests, expected {conversations}")
    return {
        "ms_per_rewrite": summary.seconds / conversations * 1000,
        "ms_per_call": call / conversations * 1000,
    }


def budget(url: str) -> dict[str, Any]:
    """The check job on the ingested, never checked store ``url``, timed by stage
    (``benchmarks.budget``): seconds by stage, then ``gc_s``, ``job_s`` and ``rewrites``, one flat
    mapping."""
    from benchmarks.budget import check_phase_budget

    got = check_phase_budget(url)
    return {**got["seconds"], "gc_s": got["gc_s"], "job_s": got["job_s"], "rewrites": got["rewrites"]}


def run_child(phase: str, args: dict[str, Any]) -> None:
    """Run ``phase`` with keyword ``args`` and print its result as one JSON line."""
    phases = {"floor": floor, "checks": checks, "startup": startup, "prior": prior, "budget": budget}
    if phase not in phases:
        raise SystemExit(f"unknown phase {phase!r}: one of {', '.join(phases)}")
    fn = phases[phase]
    print(json.dumps(fn(**args)))
