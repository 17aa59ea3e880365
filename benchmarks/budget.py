"""Where the check phase of ``rewrite-monitor run`` spends its time: the check job on a fresh store,
timed by stage in one cold process.

Each stage is a function of the product wrapped, for the length of one check job, by a stopwatch that
charges a call's time to its own stage less the time of the wrapped calls inside it (exclusive time),
so the stages add up to the job's time, less what no stage covers (``other``). The wrappers cost a
few percent: the budget's total is printed beside the uninstrumented check phase, and the budget is
read as shares, not as the product's speed.

Stages (the names the table and ``latest.json`` use):

- ``spacy``: importing spaCy and building the analyzer's blank English pipeline (the floor pays both);
- ``tokenizer``: spaCy's tokenizer on each text the analyzer has not seen (the floor's own work);
- ``analysis``: the analyzer's Python around the tokenizer (normalising, lemmas, vocabularies);
- ``tokens``: building the tokens and units of the texts whose tokens a check reads;
- ``word_tables``: WordNet's tables, its word classes, and wordfreq's Zipf lookups (import and list
  load included: the first call pays them);
- ``checks``: the checks themselves, the learning pass's added lemmas included;
- ``load``: reading and parsing the records (``load_records``);
- ``store``: writing runs, findings and added lemmas;
- ``other``: the job's own loop, its scans for unchecked records, the profile reads and commits.

``gc`` is the collector's time, measured apart (``gc.callbacks``): it lands inside whichever stage
allocated when a collection ran, so it is a share of the others, not one more stage.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

FLOOR_STAGES = ("spacy", "tokenizer")
"""What the tokenizer floor itself pays: the rest of the check phase is the product's own work."""


class Stopwatch:
    """Exclusive seconds per stage of wrapped calls, nested calls charged to their own stage."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._inner: list[float] = []

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` timed as ``stage`` (its time less that of the wrapped calls it makes)."""

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


@contextmanager
def patched(targets: list[tuple[Any, str, str]], watch: Stopwatch) -> Iterator[None]:
    """Time each ``(owner, attribute, stage)`` as ``stage`` (:meth:`Stopwatch.wrap`) until exit. A class's
    attribute is replaced on the class; a module's function wherever a loaded ``monitor`` module holds
    it (``from monitor.checks.nlp import zipf`` binds it in the importer too)."""
    saved: list[tuple[Any, str, Any]] = []
    try:
        for owner, name, stage in targets:
            original = getattr(owner, name)
            timed = watch.wrap(stage, original)
            holders: list[tuple[Any, str]] = [(owner, name)]
            if not isinstance(owner, type):
                holders = [
                    (module, attr)
                    for key, module in list(sys.modules.items())
                    if key == "monitor" or key.startswith("monitor.")
                    for attr, value in list(vars(module).items())
                    if value is original
                ]
            for holder, attr in holders:
                saved.append((holder, attr, original))
                setattr(holder, attr, timed)
        yield
    finally:
        for holder, attr, original in reversed(saved):
            setattr(holder, attr, original)


def check_phase_budget(url: str) -> dict[str, Any]:
    """Run the check job, as ``rewrite-monitor run`` runs it after ingest, on the store ``url`` (ingested,
    never checked) in this fresh process, timed by stage (see the module docstring).

    Returns ``seconds`` by stage (``other`` included), ``gc_s``, ``job_s`` (the job's own clock, as
    ``run`` prints it, under the wrappers) and ``rewrites``."""
    import monitor.checks  # every family module, so each holds its imports before they are patched
    from monitor.checks import nlp
    from monitor.checks.rules import load_rules
    from monitor.cli.main import tune_gc
    from monitor.store.engine import make_engine, session_factory
    from monitor.worker import jobs

    tune_gc()
    rules = load_rules()
    watch = Stopwatch()
    gc_s = [0.0]
    began: list[float] = []

    def on_gc(phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            began.append(time.perf_counter())
        elif began:
            gc_s[0] += time.perf_counter() - began.pop()

    build = nlp.Analyzer.__init__

    def build_and_watch(self: nlp.Analyzer, *args: Any, **kwargs: Any) -> None:
        build(self, *args, **kwargs)
        self._tokenizer = watch.wrap("tokenizer", self._tokenizer)

    targets: list[tuple[Any, str, str]] = [
        (nlp.Analyzer, "__init__", "spacy"),
        (nlp.Analyzer, "_analyze", "analysis"),
        (nlp.Analysis, "_build", "tokens"),
        (nlp, "_wordnet", "word_tables"),
        (nlp, "word_classes", "word_tables"),
        (nlp, "zipf", "word_tables"),
        (monitor.checks, "run_checks", "checks"),
        (jobs, "_profile_rows", "checks"),
        (jobs, "load_records", "load"),
        (jobs, "store_outcomes", "store"),
        (jobs, "record_added_lemmas", "store"),
    ]
    engine = make_engine(url)
    nlp.Analyzer.__init__ = build_and_watch  # type: ignore[method-assign]
    gc.callbacks.append(on_gc)
    try:
        with patched(targets, watch), session_factory(engine)() as session:
            summary = jobs.check_job(session=session, rules=rules, claim=True)
    finally:
        gc.callbacks.remove(on_gc)
        nlp.Analyzer.__init__ = build  # type: ignore[method-assign]
        engine.dispose()
    seconds = dict(watch.seconds)
    seconds["other"] = summary.seconds - sum(seconds.values())
    return {"seconds": seconds, "gc_s": gc_s[0], "job_s": summary.seconds, "rewrites": summary.records}
