"""Where the check phase of ``rewrite-monitor run`` spends its time: the check job on a fresh store,
timed by stage in one cold process.

Each stage is a function of the product wrapped, for the length of one check job, by a stopwatch that
charges a call's time to its own stage less the time of the wrapped calls inside it (exclusive time),
so the stages add up to the job's time, less what no stage covers (``other``). The wrappers cost a
few percent at most (within the run-to-run spread on the shared logs): the budget's total is printed
beside the uninstrumented check phase, and the budget is read as shares, not as the product's speed.

Stages (the keys the table and ``latest.json`` use, :data:`STAGES`):

- ``spacy``: importing spaCy and building the analyzer's blank English pipeline, with its lemma table
  (the floor pays the import and the build, not the table: about 0.04 s);
- ``tokenizer``: spaCy's tokenizer on each text the analyzer has not seen (the floor's own work; timed
  here in a process whose heap holds the product's caches, it reads a little slower than the floor);
- ``analysis``: the analyzer's Python around the tokenizer (normalising, lemmas, vocabularies, stems);
- ``tokens``: building the tokens and units of the texts whose tokens a check reads;
- ``word_tables``: WordNet's tables, its word classes, and wordfreq's Zipf lookups (the first call pays
  wordfreq's import and list load);
- ``checks``: the checks themselves, the learning pass's added lemmas included;
- ``load``: reading and parsing the records (``load_records``);
- ``store``: writing runs, findings and added lemmas;
- ``other``: the job's own loop, its scans for unchecked records, the profile and learned-table reads,
  the planner statistics, the commits, and any module the job imports on first use.

``gc_s`` is the collector's time during the job, up to its coverage query (which ``run`` does not
count in the check phase either), measured apart (``gc.callbacks``): a collection lands inside whichever
stage allocated when it ran, so it is a share of the others, not one more stage.
"""

from __future__ import annotations

import functools
import gc
import sys
import time
import types
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

STAGES = ("spacy", "tokenizer", "analysis", "tokens", "word_tables", "checks", "load", "store", "other")
"""Every stage, in the order of the module docstring; each is in every budget, 0.0 when not called."""
FLOOR_STAGES = ("spacy", "tokenizer")
"""The stages the tokenizer floor pays the like of: the rest of the check phase is the product's own work."""


class Stopwatch:
    """Exclusive seconds per stage of wrapped calls, nested calls charged to their own stage.

    Plain functions only: a wrapped function that returns a generator or an awaitable is charged for
    creating it, and its work lands in the stage that consumes it."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._inner: list[float] = []

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` timed as ``stage`` (its time less that of the wrapped calls it makes); the original is
        the wrapper's ``__wrapped__``."""

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            self._inner.append(0.0)
            try:
                return fn(*args, **kwargs)
            finally:
                took = time.perf_counter() - t0
                inner = self._inner.pop()
                self.seconds[stage] = self.seconds.get(stage, 0.0) + took - inner
                if self._inner:
                    self._inner[-1] += took

        return timed


def _monitor_modules() -> list[types.ModuleType]:
    return [m for key, m in list(sys.modules.items()) if key == "monitor" or key.startswith("monitor.")]


@contextmanager
def patched(targets: list[tuple[Any, str, str]], watch: Stopwatch) -> Iterator[None]:
    """Time each ``(owner, attribute, stage)`` as ``stage`` (:meth:`Stopwatch.wrap`) until exit, even
    when the body raises.

    ``owner`` is a ``monitor`` module, whose function is replaced wherever a loaded ``monitor`` module
    holds it (``from monitor.lexicon import zipf`` binds it in the importer too; a module imported
    while patched that binds the wrapper is put right on exit), or a class, whose own plain function
    (``def`` in its body: no static or class method, nothing inherited) is replaced. Raises
    ``TypeError`` for any other target, before anything is replaced."""
    for owner, name, _ in targets:
        if isinstance(owner, type):
            if not isinstance(owner.__dict__.get(name), types.FunctionType):
                raise TypeError(f"{owner.__qualname__}.{name} is no plain function defined in that class")
        elif not (isinstance(owner, types.ModuleType) and owner in _monitor_modules()):
            raise TypeError(f"{owner!r} is neither a class nor a loaded monitor module")
        elif not callable(getattr(owner, name)):
            raise TypeError(f"{owner.__name__}.{name} is not callable")
    originals: dict[int, tuple[Callable[..., Any], Any]] = {}  # id(wrapper) -> (wrapper, original)
    saved: list[tuple[Any, str, Any]] = []
    try:
        for owner, name, stage in targets:
            original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            timed = watch.wrap(stage, original)
            originals[id(timed)] = (timed, original)
            holders: list[Any] = [owner] if isinstance(owner, type) else _monitor_modules()
            for holder in holders:
                for attr, value in list(vars(holder).items()):
                    if value is original:
                        saved.append((holder, attr, original))
                        setattr(holder, attr, timed)
        yield
    finally:
        for holder, attr, original in reversed(saved):
            setattr(holder, attr, original)
        for module in _monitor_modules():
            for attr, value in list(vars(module).items()):
                got = originals.get(id(value))
                if got is not None and got[0] is value:
                    setattr(module, attr, got[1])


def check_phase_budget(url: str) -> dict[str, Any]:
    """Run the check job, as ``rewrite-monitor run`` runs it after ingest, on the store ``url`` (migrated,
    ingested, never checked), timed by stage (see the module docstring).

    Returns ``seconds`` by stage (every key of :data:`STAGES`), ``gc_s``, ``job_s`` (the job's own
    clock, as ``run`` prints it, under the wrappers) and ``rewrites``. Raises ``SystemExit`` with a
    message when the process is not fresh (spaCy imported or an analyzer built: the budget would miss
    their cost), when ``url`` names a SQLite file that does not exist or a store without the schema, and
    when the store holds no unchecked rewrite."""
    from sqlalchemy import inspect
    from sqlalchemy.engine import make_url

    import monitor.checks  # every family module, so each holds its imports before they are patched
    from monitor import lexicon
    from monitor.checks import nlp
    from monitor.checks.added_words import support
    from monitor.checks.rules import load_rules
    from monitor.cli.main import tune_gc
    from monitor.store.engine import make_engine, session_factory
    from monitor.worker import jobs

    if "spacy" in sys.modules or nlp._DEFAULT:
        raise SystemExit("the check phase budget needs a fresh process: spaCy is imported already")
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and not (parsed.database and Path(parsed.database).exists()):
        raise SystemExit(f"{url}: no such SQLite file (give a migrated store with ingested logs)")
    tune_gc()
    rules = load_rules()
    watch = Stopwatch()
    gc_s = [0.0]
    began: list[float] = []
    counting = [True]

    def on_gc(phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            began.append(time.perf_counter())
        elif began:
            took = time.perf_counter() - began.pop()
            if counting[0]:
                gc_s[0] += took

    init, renew, coverage = nlp.Analyzer.__init__, nlp.Analyzer._renew_tokenizer, jobs.coverage

    def init_watched(self: nlp.Analyzer, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self._tokenizer = watch.wrap("tokenizer", self._tokenizer)

    def renew_watched(self: nlp.Analyzer) -> None:
        # a pipeline built anew past VOCAB_LEXEMES is spaCy's cost again, and its tokenizer the floor's
        renew(self)
        self._tokenizer = watch.wrap("tokenizer", self._tokenizer)

    def coverage_unwatched(**kwargs: Any) -> Any:
        counting[0] = False  # the job's clock stopped before its coverage query
        return coverage(**kwargs)

    targets: list[tuple[Any, str, str]] = [
        (nlp.Analyzer, "__init__", "spacy"),
        (nlp.Analyzer, "_renew_tokenizer", "spacy"),
        (nlp.Analyzer, "_analyze", "analysis"),
        (nlp.Analysis, "_build", "tokens"),
        (lexicon, "_wordnet", "word_tables"),
        (lexicon, "word_classes", "word_tables"),
        (lexicon, "zipf", "word_tables"),
        (monitor.checks, "run_checks", "checks"),
        (support, "added_lemmas", "checks"),  # the learning pass's (monitor.worker.pool.Lemmas.of)
        (jobs, "load_records", "load"),
        (jobs, "store_outcomes", "store"),
        (jobs, "record_added_lemmas", "store"),
    ]
    engine = make_engine(url)
    try:
        if not inspect(engine).has_table("records"):
            raise SystemExit(
                f"{url}: no rewrite-monitor schema (run `rewrite-monitor db upgrade`, then ingest)"
            )
        with ExitStack() as stack:
            # the watched constructor and renewal go in first: `patched` times what it finds there
            stack.enter_context(mock.patch.object(nlp.Analyzer, "__init__", init_watched))
            stack.enter_context(mock.patch.object(nlp.Analyzer, "_renew_tokenizer", renew_watched))
            stack.enter_context(mock.patch.object(jobs, "coverage", coverage_unwatched))
            stack.enter_context(patched(targets, watch))
            session = stack.enter_context(session_factory(engine)())
            gc.callbacks.append(on_gc)
            stack.callback(gc.callbacks.remove, on_gc)
            summary = jobs.check_job(session=session, rules=rules, claim=True)
    finally:
        for analyzer in nlp._DEFAULT.values():
            analyzer._tokenizer = getattr(analyzer._tokenizer, "__wrapped__", analyzer._tokenizer)
        engine.dispose()
    if summary.records == 0:
        raise SystemExit(f"{url}: no unchecked rewrites (give a store with ingested logs, never checked)")
    seconds = dict.fromkeys(STAGES, 0.0) | watch.seconds
    seconds["other"] = summary.seconds - sum(v for k, v in seconds.items() if k != "other")
    return {"seconds": seconds, "gc_s": gc_s[0], "job_s": summary.seconds, "rewrites": summary.records}
