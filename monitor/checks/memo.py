"""Per-text memos for the pure functions the checks apply to every received message.

Every ``ctx_input`` carries the conversation's whole history, so a message is read again by each later
request of its conversation: a function of the message's text alone is computed once and looked up
after, as :class:`monitor.checks.nlp.Analyzer` does for analyses. Each memo is bounded by the characters
of the texts it holds, so a backfill of texts that do not repeat cycles through it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

_V = TypeVar("_V")


class TextMemo(Generic[_V]):
    """``fn(text)`` memoised by ``text``, least recently used first out once the texts held exceed
    ``max_chars`` characters (one text longer than that is kept alone).

    ``fn`` must be pure and its results must not be mutated by callers (they are shared). Memory: the
    texts (which are usually alive anyway, as the messages of the records in hand or the keys of the
    analysis cache) plus the results, which for the functions memoised here are a few small tuples.
    Thread-safety: none; the checks run in one thread per process.
    """

    def __init__(self, fn: Callable[[str], _V], max_chars: int) -> None:
        self._fn = fn
        self._max_chars = max_chars
        self._items: OrderedDict[str, _V] = OrderedDict()
        self.chars = 0
        """The characters of the texts held now."""

    def __call__(self, text: str) -> _V:
        items = self._items
        if text in items:
            items.move_to_end(text)
            return items[text]
        got = self._fn(text)
        items[text] = got
        self.chars += len(text)
        while self.chars > self._max_chars and len(items) > 1:
            old, _ = items.popitem(last=False)
            self.chars -= len(old)
        return got
