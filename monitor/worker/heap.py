"""Handing the C heap's free pages back to the system, for the check processes (``monitor.worker.pool``)
and the check job (``monitor.worker.jobs``).

CPython frees a large object (a decompressed table, a JSON document, a chunk's parsed contexts) into the
C library's heap, and glibc gives the system back only the free pages at the heap's very top. A check
process loads WordNet's tables and wordfreq's list on its first chunk, and every chunk parses records
that die with it, so the pages freed between live objects stay counted in its RSS. ``malloc_trim(0)``
returns them (``madvise``), whatever their place in the heap (glibc 2.8 and later; malloc_trim(3)).

Measured on this project's tables, one process: loading WordNet's (``monitor.lexicon``) took 45.8 MB of
RSS of which a trim gave back 12.7 MB (their files now join each lemma's items in one string: 28.1 MB,
21.7 MB after a trim), wordfreq's English list as wordfreq's own dict 43.7 MB of which 8.3 MB (now
:class:`monitor.lexicon.FrequencyList`: 17 MB, 5 MB after a trim). On
``rewrite-monitor run --workers 2`` of 100,000 events of the non-repeating benchmark corpus
(``benchmarks.corpus.replicate``), a trim after each graded chunk took 0.4 ms at the median and 0.05 s in
all per process, and as much in the main process after each of its 100 batches. A trim walks every free
chunk of every arena, not only the newly freed ones, so it is called once per chunk or batch (hundreds
of records), never per record.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` from the symbols this process already links, or ``None`` where the C
    library has none (musl, macOS, Windows)."""
    try:
        found = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):  # no such symbol; no C library to open (Windows)
        return None
    found.argtypes = [ctypes.c_size_t]  # int malloc_trim(size_t pad)
    found.restype = ctypes.c_int
    trim: Callable[[int], int] = found
    return trim


def trim_heap() -> bool:
    """Give the free pages of the C heap back to the system (glibc's ``malloc_trim(0)``, no slack kept at
    the heap's top); what is still allocated is untouched, so nothing can change but the RSS. Returns
    whether the C library could trim: ``False`` where it has no ``malloc_trim`` (:func:`_malloc_trim`).
    Not whether pages came back: glibc answers 1 whenever it finds whole free pages, even ones an earlier
    trim already handed back."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
