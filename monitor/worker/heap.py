"""Handing the C heap's free pages back to the system, for the check processes (``monitor.worker.pool``).

CPython frees a large object (a decompressed table, a JSON document, a chunk's parsed contexts) into the
C library's heap, and glibc gives the system back only the free pages at the heap's very top. A check
process loads WordNet's tables and wordfreq's list on its first chunk, and every chunk parses records
that die with it, so the pages freed between live objects stay counted in its RSS. ``malloc_trim(0)``
returns them (``madvise``), whatever their place in the heap (glibc 2.8 and later; malloc_trim(3)).

Measured on this project's tables, one process: loading WordNet's (``monitor.lexicon``) took 45.8 MB of
RSS of which a trim gave back 12.7 MB, wordfreq's English list 43.7 MB of which 8.3 MB. On
``rewrite-monitor run --workers 2`` of 100,000 events of the non-repeating benchmark corpus
(``benchmarks.corpus.replicate``), a trim after each graded chunk took 0.4 ms at the median and 0.05 s in
all per process.
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
        found: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, TypeError):
        return None
    return found


def trim_heap() -> bool:
    """Give the free pages of the C heap back to the system (glibc's ``malloc_trim(0)``); what is still
    allocated is untouched, so nothing can change but the RSS. Returns whether any memory was released:
    ``False`` also where the C library cannot (:func:`_malloc_trim` is ``None``)."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
