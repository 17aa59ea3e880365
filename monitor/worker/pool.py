"""The check phase on worker processes (issue 36): a batch's records graded on every core.

The check job decides and writes in one process; the CPU-bound part goes to :class:`CheckPool`'s worker
processes: reading and parsing the records (:func:`monitor.ingest.store.records.load_records`, each
ctx_input carries the conversation's whole history), ``added_lemmas`` for the rewriter profile and
``run_checks`` for the findings. A process reads the records it is handed by id, through its own
connection to the store (:class:`StoredBatch`); the main process reads only their ids, conversations and
prompt versions. Where the processes cannot see what the main process sees (an in-memory SQLite store, a
session inside a caller's transaction: :func:`store_url`), the records themselves are sent.
Each record goes to the process its conversation hashes to (:func:`shard_of`), so a conversation's
messages, analysed again for every later request, stay in one analysis cache; each process keeps its
share of the cache budgets (the analyzer's cache and vocabulary: ``monitor.checks.nlp.analyzer.
CACHE_BYTES`` and ``VOCAB_LEXEMES``, and ``monitor.ingest.store.records.CONTEXT_CACHE_BYTES``, each over
the number of processes).
The results come back in the batch's order, so what the parent writes (check runs, findings, and the queue
after them) is what one process writes.

The processes are started with ``spawn``: a fork would copy the parent's threads' locks (the progress bar,
a worker's scheduler) and its database connections. Each builds the analyzer once and registers the
checks by importing ``monitor.checks`` (the entry points included); the pool refuses to start when a
process registered other checks than the parent (a check registered in the parent alone, as tests do),
and the batch is then graded in the parent. A process that dies (killed, out of memory) fails the batch
before anything of it is written (``monitor.errors.PoolError``); the next run or cycle checks it.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import dataclasses
import gc
import hashlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import threading
import types
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from monitor.errors import PoolError
from monitor.worker.heap import trim_heap

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlalchemy.orm import Session

    from monitor.checks.base import CheckOutcome
    from monitor.checks.profile import RewriterProfile
    from monitor.checks.rules import Rules
    from monitor.ingest.store.records import LoadedShape
    from monitor.record import RewriteRecord
    from monitor.settings import Settings

T = TypeVar("T")
_log = logging.getLogger(__name__)

MIN_JOB = 5_000
"""A check job uses the processes only when at least this many rewrites wait at its start (:meth:`CheckPool.
wants`): starting one costs about 2 s of a core (importing spaCy, building the analyzer), and the main
process's analysis cache, warm from the records it read, is of no use to them. On the shared logs (3,385
rewrites whose conversations repeat their history) two processes took twice the time of one
(``run``, 28.5 s against 14.2 s, a newcomer's measurement); on 16,000 rewrites of texts that do not
repeat, half (``check_job`` 75.5 s against 36.8 s, processes ready from the start)."""
BYTES_PER_PROCESS = 512 * 2**20
"""Memory one worker process may take (the analyzer and its share of the cache, the records of a chunk):
the cap :func:`default_workers` puts on the number of processes (issue 36 asks at most 500 MB a process)."""


NICENESS = 5
"""How much lower the processes' scheduling priority is than the main process's (``os.nice``)."""
LEMMA_ENTRIES = 50_000
"""How many records' lemmas found ahead (:meth:`CheckPool.warm`) the main process holds for the learning
pass, all processes together: ``run`` hands no more (``monitor.worker.ahead``). About 530 bytes each (an
:class:`Ahead` and its place in a dict, measured with tracemalloc on 4,000 records of the non-repeating
corpus), so 27 MB at most. A 20,000-rewrite job is handed whole."""
KEEP_CHARS = 4_000_000
"""How many characters of messages the check job's learning pass keeps parsed for its check loop (in the
main process, or shared among the processes that read their own records): the records of every batch
while their contexts hold no more than this, else only the last batch's. The shared logs' 3,385 records
hold 3.7 M (24 MB parsed, tracemalloc), so a run of that size reads and parses each record once instead of
twice (0.2 s of its check phase); a backfill lets them go after its first batches, long before its
analysis cache fills, which is where its peak memory is."""


@dataclass
class KeptRecords:
    """Records the learning pass read, by id, for the check loop to grade without reading them again,
    within ``budget`` characters of messages (:meth:`keep`); ``job`` names the check job they belong to."""

    budget: int = KEEP_CHARS
    job: str = ""
    records: dict[int, RewriteRecord] = field(default_factory=dict)
    chars: int = 0
    """The characters of the messages of the contexts of ``records`` (each context once)."""
    every: bool = True
    """Whether ``records`` holds every batch so far (the budget has not been exceeded)."""

    def reset(self, job: str) -> None:
        """Let go of every kept record, for the check job ``job``."""
        self.job, self.records, self.chars, self.every = job, {}, 0, True

    def keep(self, batch: dict[int, RewriteRecord]) -> None:
        """Keep ``batch`` besides the batches kept so far while they hold at most ``budget`` characters
        of messages, else ``batch`` alone (the learning pass walks oldest first and the check loop newest
        first, so what is kept then is the check loop's first batch)."""
        contexts = {id(c): c for r in batch.values() for c in (r.context, *(p.context for p in r.peers))}
        chars = sum(len(m.content) for c in contexts.values() if c is not None for m in c.messages or ())
        if self.every and self.chars + chars <= self.budget:
            self.records.update(batch)
            self.chars += chars
        else:
            self.records, self.chars, self.every = batch, chars, False

    def take(self, ids: Sequence[int]) -> dict[int, RewriteRecord]:
        """The kept records of ``ids``, let go here (each is graded once)."""
        return {i: r for i in ids if (r := self.records.pop(i, None)) is not None}

    def read(self, session: Session, ids: Sequence[int]) -> list[tuple[int, RewriteRecord]]:
        """The records of ``ids`` that have a rewrite, by id, as ``load_records`` reads them: a kept
        record is not read again unless its conversation changed in the store since it was
        (``changed_since_loaded``: a half or a turn another worker stored before this one claimed it,
        which would otherwise be graded as it was, a skip for want of its ctx_input that nothing would
        run again)."""
        from monitor.ingest.store.records import changed_since_loaded, load_records

        found = self.take(ids)
        if found:
            for stale in changed_since_loaded(session=session, loaded=list(found.items())):
                del found[stale]
        found.update(load_records(session=session, record_ids=[i for i in ids if i not in found]))
        return [(i, found[i]) for i in ids if i in found]


@dataclass(frozen=True)
class StoredBatch:
    """Records a worker process reads itself: ``heads`` are ``(record id, conversation id)`` in id order;
    ``url`` the store's (with its password: it goes over the pool's pipe only, never into a repr);
    ``job`` the check job's token (a process lets go of another job's kept records); ``keep``: the
    learning pass's batch, whose records the process keeps for the check loop (:class:`KeptRecords`)."""

    url: str = field(repr=False)
    job: str
    heads: list[tuple[int, str]]
    keep: bool = False


class Lemmas(NamedTuple):
    """A record's rows of the rewriter profile: its prompt version, conversation and added lemmas (sorted)."""

    prompt_version: str | None
    conv_id: str
    lemmas: list[str]

    @classmethod
    def of(cls, record: RewriteRecord, rules: Rules) -> Lemmas:
        """``record``'s rows under ``rules`` (``monitor.checks.added_words.added_lemmas``)."""
        from monitor.checks.added_words import added_lemmas

        return cls(record.prompt_version, record.conv_id, sorted(added_lemmas(record, rules)))

    def rows(self) -> list[tuple[str | None, str, str]]:
        """The profile's rows (``monitor.checks.store.record_added_lemmas``): prompt version, lemma and
        conversation."""
        return [(self.prompt_version, lemma, self.conv_id) for lemma in self.lemmas]


class Ahead(NamedTuple):
    """A record's :class:`Lemmas` found during the ingest (:meth:`CheckPool.warm`), with the shape of the
    record they were found from: the learning pass uses them only while its conversation is unchanged
    (``monitor.ingest.store.records.changed_shapes``)."""

    shape: LoadedShape
    lemmas: Lemmas


class Graded(NamedTuple):
    """A record's ``run_checks`` outcome, with what the check job stores and counts it by."""

    request_id: str
    ts: datetime | None
    outcome: CheckOutcome


def store_url(session: Session) -> str | None:
    """The URL worker processes can read ``session``'s store through, with its password (a SQLite path
    made absolute); ``None`` when they cannot see what ``session`` sees: an in-memory SQLite database (one
    per connection), or a session bound to a connection (a caller's transaction, whose writes no other
    connection sees)."""
    from sqlalchemy.engine import Engine

    bind = session.get_bind()
    if not isinstance(bind, Engine):
        return None
    url = bind.url
    if url.get_backend_name() == "sqlite":
        if url.database in (None, "", ":memory:"):
            return None
        # a relative path names another file once this process changes directory (a process started
        # here earlier resolves it against the directory it started in)
        url = url.set(database=str(Path(url.database).resolve()))
    return url.render_as_string(hide_password=False)


def default_workers() -> int:
    """The processes the check phase uses when ``check_workers`` is not set: the cores this process may
    run on (:func:`usable_cores`), no more than the host's cores other work leaves idle (``os.cpu_count()``
    less :func:`busy_cores`: the load average is the whole host's, a container's quota is not), capped
    by :func:`memory_cap`; at least 1. Read when the pool is made (a ``run``, a ``check``, a worker's
    start). On a host already loaded, a process per core only queues behind the others: with a test run
    holding this machine's two cores (load 2 to 3.4), ``run --workers 2`` took 48.6 s where one process
    took 34.1 s (6,770 non-repeating rewrites, a newcomer's measure)."""
    idle = (os.cpu_count() or 1) - busy_cores()
    return max(1, min(usable_cores(), idle, memory_cap()))


def busy_cores() -> int:
    """Cores other work holds now: the one-minute load average (runnable processes, averaged), rounded
    to the nearest whole core; 0 where the system has no load average to read."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not a Unix, or the load is unknowable here
        return 0
    return int(load + 0.5)


def usable_cores() -> int:
    """The cores this process may run on: its affinity mask (a cpuset), lowered by a cgroup v2 CPU quota
    (``/sys/fs/cgroup/cpu.max``, a container's ``--cpus``) when one is set; ``os.cpu_count()`` elsewhere."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux: no affinity mask to read
        return os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):  # no cgroup v2 here, or a file of another shape: the mask stands
        pass
    return cores


def memory_cap() -> int:
    """How many processes of :data:`BYTES_PER_PROCESS` fit in the memory available now: the kernel's
    ``MemAvailable`` (free plus reclaimable cache), lowered by a cgroup v2 limit (``memory.max`` less
    ``memory.current``) when one is set; at least 1. Unknown memory caps nothing (a large number)."""
    available: list[int] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            available.append(int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text()))
    except (OSError, ValueError):
        pass
    return max(1, min(available) // BYTES_PER_PROCESS) if available else 1 << 16


def shard_of(conv_id: str, n: int) -> int:
    """The process (0 to ``n`` - 1) that grades conversation ``conv_id``: CRC-32, stable across runs
    and processes (``hash()`` of a string is salted per process)."""
    return zlib.crc32(conv_id.encode("utf-8")) % n


# -- in each worker process -----------------------------------------------------------------------------

_RULES: list[Rules] = []
"""The rules the parent sent last (one at most): sent again only when their content changes."""
_KEPT = KeptRecords()
"""The records this process's share of a learning pass read (its budget is set by :func:`_start`)."""
_STORES: dict[str, Engine] = {}
"""Sessions on the store of the current job, by URL: one engine (one connection) per process, for the
job's length (:func:`_records` disposes of them when another job starts)."""


def _start(
    model: str | None,
    share: int,
    disabled: frozenset[str],
    keep_chars: int,
    gc_thresholds: tuple[int, int, int],
    context_bytes: int,
) -> None:
    # Ctrl+C and systemd's SIGTERM reach the whole process group: the parent finishes the batch in hand
    # and stops these processes itself; dying first would fail that batch (and print a traceback each).
    # First, before the slow imports below (the parent also spawns them with both ignored).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

    from monitor.checks.nlp import use_model
    from monitor.checks.registry import DISABLED
    from monitor.ingest.store.records import context_cache_budget

    # A parent killed outright (SIGKILL, the OOM killer) closes nothing: without this watch the process
    # would wait on its task queue for ever, holding its memory.
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True).start()

    # Below the main process: while it ingests, these find lemmas ahead (:meth:`CheckPool.warm`), and
    # the ingest is what everything after it waits for; in the check phase the main process only
    # waits, reads ids and writes.
    os.nice(NICENESS)
    # The collector as the parent runs it (a command's: ``monitor.cli.main.GC_THRESHOLDS``). At
    # CPython's default, the collections walked these processes' analysis caches for nothing: grading
    # 6,000 non-repeating records took 9.6 s of CPU at the default, 8.3 s at the command's thresholds.
    gc.set_threshold(*gc_thresholds)
    use_model(model, share=share)
    # Last of the exit handlers (they run last registered first): what the interpreter would do after
    # them is free every object one by one, and a process whose analysis cache is full took seconds of
    # the parent's close for it. Nothing of this process outlives the results it already returned.
    atexit.register(_exit_now)
    DISABLED.clear()
    DISABLED.update(disabled)
    _KEPT.budget = keep_chars
    context_cache_budget(context_bytes)


def _exit_now() -> None:
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _exit_with(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def _registered() -> list[tuple[str, int]]:
    from monitor.checks.registry import REGISTRY

    return [(spec.id, spec.version) for spec in REGISTRY.values()]


def _rules(rules: bytes | None) -> Rules:
    if rules is not None:
        _RULES[:] = [pickle.loads(rules)]
    return _RULES[0]


def _bare(rules: Rules) -> bytes:
    """``rules`` pickled without their profile and memo (which each process rebuilds), to send: the
    bytes are also what says whether they changed (a learned table can change its evidence, the
    counts a finding shows, without changing ``rules.hash``)."""
    from monitor.checks.rules import RulesMemo

    return pickle.dumps(dataclasses.replace(rules, profile=None, _memo=RulesMemo()), pickle.HIGHEST_PROTOCOL)


def _records(items: list[RewriteRecord] | StoredBatch) -> list[RewriteRecord | None]:
    """The records of a chunk: sent, or read from the store by id (``None`` for an id without a rewrite
    in the store), those this process kept from the learning pass first (:meth:`KeptRecords.read`)."""
    if not isinstance(items, StoredBatch):
        return list(items)
    if _KEPT.job != items.job:
        _KEPT.reset(items.job)
        # A new job opens the store anew: a connection kept from the last one could read a file since
        # replaced at the same path (a test's store made again), or a store no longer used.
        for engine in _STORES.values():
            engine.dispose()
        _STORES.clear()
    ids = [i for i, _ in items.heads]
    with _session(items.url) as session:
        found = dict(_KEPT.read(session, ids))
    if items.keep:
        _KEPT.keep(found)
    return [found.get(i) for i in ids]


def _session(url: str) -> Session:
    from monitor.store.engine import make_engine, session_factory

    if url not in _STORES:
        _STORES[url] = make_engine(url)
    return session_factory(_STORES[url])()


def _warm(rules: bytes | None, items: StoredBatch) -> list[Ahead | None]:
    """The lemmas of ``items``' records, each with what says whether it is still as it was read
    (:class:`Ahead`); ``None`` for an id without a rewrite."""
    from monitor.ingest.store.records import loaded_shape

    got = _rules(rules)
    out: list[Ahead | None] = []
    for r in _records(items):
        if r is None:
            out.append(None)
            continue
        # One object per conversation and per prompt version in what goes back (a pickle sends an
        # object once), where each record read has its own: the main process holds these until the
        # learning pass, 668 bytes an entry before, 529 after (4,000 records of the non-repeating
        # corpus, tracemalloc).
        conv_id = sys.intern(r.conv_id)
        version = sys.intern(r.prompt_version) if r.prompt_version is not None else None
        shape = loaded_shape(r)._replace(conv_id=conv_id)
        out.append(Ahead(shape, Lemmas.of(r, got)._replace(prompt_version=version, conv_id=conv_id)))
    trim_heap()
    return out


def _lemmas(rules: bytes | None, items: list[RewriteRecord] | StoredBatch) -> list[Lemmas | None]:
    got = _rules(rules)
    out = [Lemmas.of(r, got) if r is not None else None for r in _records(items)]
    trim_heap()  # as after each chunk of _warm and _grade
    return out


def _grade(
    rules: bytes | None, profile: RewriterProfile | None, items: list[RewriteRecord] | StoredBatch
) -> list[Graded | None]:
    from monitor.checks import run_checks

    got = _rules(rules).with_profile(profile)
    records = _records(items)
    out = [Graded(r.request_id, r.ts, run_checks(r, got)) if r is not None else None for r in records]
    # The first chunk loads the lexicon's tables, and every chunk parses records that die after it: without
    # this, the pages freed so far (this chunk's records are still held) stay in the RSS (``heap``).
    trim_heap()
    return out


# -- in the parent --------------------------------------------------------------------------------------


class CheckPool:
    """``workers`` processes, one executor each (so a conversation always meets the same cache),
    started when a job :meth:`wants` them (or by :meth:`start`). Use as a context manager, or call
    :meth:`close`. ``model``: the ``spacy_model`` setting; ``min_job``: :data:`MIN_JOB` unless given.

    :meth:`submit_lemmas` and :meth:`submit_grade` hand a batch to the processes and return its
    :class:`Pending` results, or ``None`` when the batch is to be graded in the parent (one process, the
    processes not ready yet, or registered other checks than the parent). Raises ``PoolError`` when a
    process dies.
    """

    def __init__(self, workers: int, *, model: str | None, min_job: int = MIN_JOB) -> None:
        self.workers = max(1, workers)
        self.model = model
        self.min_job = min_job
        self._executors: list[ProcessPoolExecutor] = []
        self._sent: list[str | None] = []
        self._refused = self.workers == 1
        self._hello: list[Future[list[tuple[str, int]]]] = []
        self._checked = False
        self.handed = 0
        """Batches handed to the processes so far (0: every batch was graded in the main process)."""
        self._ahead: list[tuple[str, str, list[int], Future[list[Ahead | None]]]] = []
        """The warm-ups handed (:meth:`warm`): store URL, rules digest, record ids, their results."""

    @classmethod
    def for_settings(cls, settings: Settings) -> CheckPool:
        """The pool the settings ask for: ``check_workers`` processes, else :func:`default_workers`; a
        number asked for that the memory available cannot hold (:func:`memory_cap`) is lowered to it,
        with a warning (64 processes on a machine with 8 GB filled it before one batch was checked)."""
        asked = settings.check_workers
        if asked is None:
            return cls(default_workers(), model=settings.spacy_model)
        cap = memory_cap()
        if asked > cap:
            _log.warning(
                "check_workers %d: the memory available holds %d processes of %d MB; using %d",
                asked,
                cap,
                BYTES_PER_PROCESS // 2**20,
                cap,
            )
        return cls(min(asked, cap), model=settings.spacy_model)

    def __enter__(self) -> CheckPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the processes (waits for them to exit)."""
        for ex in self._executors:
            ex.shutdown(wait=True, cancel_futures=True)
        self._executors.clear()

    def submit_lemmas(
        self, rules: Rules, batch: Sequence[RewriteRecord] | StoredBatch
    ) -> Pending[Lemmas | None] | None:
        """Each record's rows of the rewriter profile (``monitor.checks.added_words.added_lemmas``),
        found by the processes while the caller reads or writes. ``batch``: the records, or their ids for
        the processes to read (:class:`StoredBatch`)."""
        return self._submit(batch, rules, _lemmas)

    def warm(self, rules: Rules, batch: StoredBatch) -> bool:
        """Hand ``batch`` to the processes to find its records' lemmas ahead of the learning pass, without
        waiting for them; :meth:`found_ahead` collects what they found. For the ingest's committed
        batches, so the processes work while this process parses and writes (``monitor.worker.jobs.
        run_job``). Whether it was handed (not before the processes are ready). Raises ``PoolError`` when
        a process died (the pool is closed)."""
        pending = self._submit(batch, rules, _warm)
        if pending is None:
            return False
        for idx, fut in pending.futures:
            self._ahead.append((batch.url, pending.rules_key, [batch.heads[i][0] for i in idx], fut))
        return True

    def found_ahead(self, url: str, rules: Rules) -> dict[int, Ahead]:
        """What the processes found for the batches :meth:`warm` handed since the last call, by record id,
        once they have all finished: only what they read from the store at ``url`` under these rules
        (others can find other lemmas). A warm-up that failed is left out and logged by the type of its
        error alone (a database error's text can quote what it was reading): the learning pass finds
        those lemmas itself. A process that died closes the pool (with a warning): the check phase starts
        the processes again."""
        handed, self._ahead = self._ahead, []
        want = hashlib.sha256(_bare(rules)).hexdigest()
        out: dict[int, Ahead] = {}
        for stored, key, ids, fut in handed:
            try:
                got = fut.result()
            except concurrent.futures.CancelledError:  # the pool was closed (a process died before)
                continue
            except BrokenProcessPool:
                if self._executors:
                    # closed here, so the check phase starts the processes again instead of failing
                    # its first batch on the dead one
                    _log.warning(
                        "check phase: a check process died while finding lemmas ahead; processes closed"
                    )
                    self.close()
                continue
            except Exception as exc:  # any error of theirs only costs the warm-up
                _log.warning(
                    "check phase: finding lemmas ahead of the learning pass failed (%s)", type(exc).__name__
                )
                continue
            if stored == url and key == want:
                out.update((i, x) for i, x in zip(ids, got, strict=True) if x is not None)
        return out

    def submit_grade(
        self, rules: Rules, batch: Sequence[RewriteRecord] | StoredBatch
    ) -> Pending[Graded | None] | None:
        """Each record's ``run_checks`` outcome under ``rules`` (their profile included), found by the
        processes while the caller reads or writes. ``batch`` as for :meth:`submit_lemmas`."""
        return self._submit(batch, rules, _grade, rules.profile)

    def _submit(
        self,
        batch: Sequence[RewriteRecord] | StoredBatch,
        rules: Rules,
        fn: Callable[..., list[T]],
        *extra: object,
    ) -> Pending[T] | None:
        """``fn(rules or None, *extra, chunk)`` on each process's chunk of ``batch``."""
        if not self._ready():
            return None
        self.handed += 1
        convs = [c for _, c in batch.heads] if isinstance(batch, StoredBatch) else [r.conv_id for r in batch]
        shards: list[list[int]] = [[] for _ in range(self.workers)]
        for i, conv_id in enumerate(convs):
            shards[shard_of(conv_id, self.workers)].append(i)
        blob = _bare(rules)
        key = hashlib.sha256(blob).hexdigest()
        pending = Pending[T](self, len(convs), key)
        with self._broken_fails():
            for k, idx in enumerate(shards):
                if idx:
                    # The rules go to a process once, and again only when they change; the profile,
                    # small, goes with every chunk.
                    send = None if self._sent[k] == key else blob
                    chunk: Any = (
                        dataclasses.replace(batch, heads=[batch.heads[i] for i in idx])
                        if isinstance(batch, StoredBatch)
                        else [batch[i] for i in idx]
                    )
                    pending.futures.append((idx, self._executors[k].submit(fn, send, *extra, chunk)))
                    self._sent[k] = key
        return pending

    @contextlib.contextmanager
    def _broken_fails(self) -> Iterator[None]:
        """A dead process as ``PoolError``: a submit finds the pool broken when it died between batches,
        a result when it died mid-batch."""
        try:
            yield
        except BrokenProcessPool as exc:
            self.close()
            raise PoolError(
                f"a check worker process died mid-batch ({exc}); nothing of the batch was written"
            ) from exc

    def wants(self, waiting: int) -> bool:
        """Whether a job with ``waiting`` rewrites to check is worth the processes (at least
        ``min_job``, more than one process, none refused); if so they are started, without waiting:
        the job's first batches are graded in the main process until they are ready."""
        if self._refused or waiting < self.min_job:
            return False
        self.start(wait=False)
        return not self._refused

    def start(self, *, wait: bool = True) -> bool:
        """Start the processes now; with ``wait``, until they are ready. Whether they are ready."""
        if self._refused:
            return False
        if not self._executors:
            self._spawn()
        if wait:
            concurrent.futures.wait(self._hello)
        return self._ready()

    def _spawn(self) -> None:
        from monitor.checks.registry import DISABLED
        from monitor.ingest.store.records import CONTEXT_CACHE_BYTES

        ctx = multiprocessing.get_context("spawn")
        self._executors = [
            ProcessPoolExecutor(
                max_workers=1,
                mp_context=ctx,
                initializer=_start,
                initargs=(
                    self.model,
                    # one conversation in N (shard_of): 1/N of the analyzer's cache and vocabulary
                    self.workers,
                    frozenset(DISABLED),
                    KEEP_CHARS // self.workers,
                    gc.get_threshold(),
                    # each process is handed one conversation in N (shard_of): its share of the contexts
                    CONTEXT_CACHE_BYTES // self.workers,
                ),
            )
            for _ in range(self.workers)
        ]
        self._sent = [None] * self.workers
        # The processes start at the first submit. Signals ignored here are ignored there from their
        # first instruction (an exec keeps SIG_IGN, and Python then leaves SIGINT alone): a Ctrl+C
        # while they import spaCy stops the main process only, which stops them.
        main = threading.current_thread() is threading.main_thread()
        signals = (signal.SIGINT, signal.SIGTERM) if main else ()
        saved = [(sig, signal.signal(sig, signal.SIG_IGN)) for sig in signals]
        # ``spawn`` runs the parent's __main__ again in each process ("safe importing of main module"):
        # a script without a __main__ guard, or the script of a host that runs ours (Streamlit, a test
        # runner's app) would run there. The processes need nothing of it: they see a bare one.
        host_main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            self._hello = [ex.submit(_registered) for ex in self._executors]
        finally:
            if host_main is not None:
                sys.modules["__main__"] = host_main
            for sig, handler in saved:
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        self._checked = False

    def ready(self) -> bool:
        """Whether the processes can take a batch now (:meth:`_ready`), without waiting for them."""
        return self._ready()

    def _ready(self) -> bool:
        """Whether the processes can take work: started, and registered the checks this one did. Until
        they are (about 2 s), batches are graded here: they start beside the work, not before it."""
        if self._refused or not self._executors or not all(f.done() for f in self._hello):
            return False
        if self._checked:
            return True
        mine = _registered()
        try:
            same = all(f.result() == mine for f in self._hello)
            why = "they registered other checks than this process (one registered here alone)"
        except BrokenProcessPool as exc:
            same, why = False, f"they could not start ({exc})"
        if not same:
            _log.warning(
                "check phase: grading in this process, not on %d worker processes: %s", self.workers, why
            )
            self._refused = True
            self.close()
        self._checked = same
        return same


class Pending(Generic[T]):
    """A batch handed to the processes: :meth:`results` waits for them and returns one result per
    record, in the order the records were given. Raises ``PoolError`` when a process died."""

    def __init__(self, pool: CheckPool, n: int, rules_key: str = "") -> None:
        self.pool = pool
        self.n = n
        self.rules_key = rules_key
        """The digest of the rules the batch was handed with (as sent, without profile and memo)."""
        self.futures: list[tuple[list[int], Future[list[T]]]] = []

    def results(self) -> list[T]:
        out: list[T | None] = [None] * self.n
        with self.pool._broken_fails():
            for idx, fut in self.futures:
                for i, got in zip(idx, fut.result(), strict=True):
                    out[i] = got
        return out  # type: ignore[return-value]  # every index was filled: each record is in one shard
