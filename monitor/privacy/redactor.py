"""The :class:`Redactor`, one placeholder map over the texts of a case or an event, and what applies it:
:func:`redact_case` to an exported regression case, :func:`redact_event` to a log event
(``redact_at_ingest``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from monitor.privacy.names import NameFinder
from monitor.privacy.patterns import KINDS, Span, pattern_spans


@dataclass
class Redactor:
    """Redacts the fields of one case with one placeholder map (see the module docstring).

    Call :meth:`learn_names` with every text of the case first, so a name introduced in a later
    message is also replaced where it appears earlier; then :meth:`redact` each field in a fixed order
    (the order fixes the numbering).
    """

    finder: NameFinder | None = None
    placeholders: dict[tuple[str, str], str] = field(default_factory=dict)
    _counts: Counter[str] = field(default_factory=Counter)
    _names: dict[str, str] = field(default_factory=dict)  # surface -> full name it belongs to
    _surfaces: dict[str, set[str]] = field(default_factory=dict)  # placeholder -> texts it replaced
    _seen: dict[str, tuple[str, str]] = field(default_factory=dict)  # replaced text -> (kind, key)

    def learn_names(self, texts: Iterable[str]) -> None:
        if self.finder is None:
            return
        found = [hit for text in texts for hit in self.finder.found(text)]
        # cued names first: "Dana" the lexicon read in "Can Dana see ...?" is the "Dana Reyes" a later
        # "my name is" introduced, so both take one placeholder
        for name, cued in sorted(found, key=lambda hit: not hit[1]):
            self._names.setdefault(name, name)
            for part in re.split(r"[\s-]+", name) if cued else ():
                if len(part) > 1 and part[0].isupper():
                    self._names.setdefault(part, name)

    def _name_spans(self, text: str) -> list[Span]:
        spans = []
        for surface, full in self._names.items():
            for m in re.finditer(rf"(?<!\w){re.escape(surface)}(?!\w)", text):
                spans.append(Span(m.start(), m.end(), "NAME", full))
        return spans

    key: bytes | None = None
    """With a key, a placeholder is keyed by the value (``<EMAIL_3f9a0c12>``: HMAC-SHA256 of kind and
    value, 8 hex) instead of numbered: the same value gets the same placeholder in every text redacted
    with the key, across cases and events (what ``redact_at_ingest`` needs: a rewrite and the transcript
    it was made from are separate events), and nothing learns the value without the key."""

    def _placeholder(self, span: Span) -> str:
        got = self.placeholders.get((span.kind, span.key))
        if got is None:
            if self.key is not None:
                mac = hmac.new(self.key, f"{span.kind}:{span.key}".encode(), hashlib.sha256).hexdigest()
                got = f"<{span.kind}_{mac[:8]}>"
            else:
                self._counts[span.kind] += 1
                got = f"<{span.kind}_{self._counts[span.kind]}>"
            self.placeholders[(span.kind, span.key)] = got
        return got

    def redact(self, text: str) -> str:
        """``text`` with every detected value replaced by its placeholder."""
        spans = pattern_spans(text) + self._name_spans(text) + self._seen_spans(text)
        spans.sort(key=lambda s: (s.start, -(s.end - s.start), KINDS.index(s.kind)))
        out, pos = [], 0
        for s in spans:
            if s.start < pos:
                continue  # overlaps a span already replaced
            out.append(text[pos : s.start])
            placeholder = self._placeholder(s)
            surface = text[s.start : s.end]
            self._surfaces.setdefault(placeholder, set()).add(surface.lower())
            if sum(c.isalnum() for c in surface) >= 6:
                # without a closing period a pattern took along ("742 Evergreen Terrace."), so the
                # value repeated bare (a resolved antecedent, a dropped term) is found again
                self._seen.setdefault(surface.lower().rstrip(".,;:"), (s.kind, s.key))
            out.append(placeholder)
            pos = s.end
        out.append(text[pos:])
        return "".join(out)

    def _seen_spans(self, text: str) -> list[Span]:
        """Every verbatim (case-insensitive) occurrence of a value this redactor replaced before, 6+
        letters or digits long: a credential found in a URL and repeated bare in the logged query
        ("deploy:Xy9-pass") is the same value without the context that revealed it."""
        if not self._seen:
            return []
        lower = text.lower()
        return [
            Span(m.start(), m.end(), kind, key)
            for surface, (kind, key) in self._seen.items()
            if surface in lower
            for m in re.finditer(rf"(?<!\w){re.escape(surface)}(?!\w)", lower)
        ]

    def redact_all(self, texts: Iterable[str]) -> list[str]:
        return [self.redact(t) for t in texts]

    def redact_term(self, term: str) -> str:
        """An assertion term (``must_include``/``must_not_include``) redacted consistently with the texts
        redacted before it: a term that is a fragment of a replaced value ("555-0134" of
        "(415) 555-0134", "dana.reyes" of an e-mail address) becomes that value's placeholder, so the
        case never keeps a piece of what its messages hide. A fragment needs 4 letters or digits."""
        red = self.redact(term)
        if red != term:
            # "Jane Doe" -> "<NAME_1> <NAME_1>": one value, one placeholder
            return re.sub(r"(<[A-Z][A-Z_]*_[0-9a-f]+>)(?:[\s-]+\1)+", r"\1", red)
        probe = term.strip().lower()
        if sum(c.isalnum() for c in probe) >= 4:
            for placeholder, surfaces in self._surfaces.items():
                if any(probe in surface for surface in surfaces):
                    return placeholder
        return term


def redact_case(case: dict[str, Any], finder: NameFinder | None) -> dict[str, Any]:
    """A copy of an exported case (``monitor.cases.export`` shape) with its personal details redacted.

    Redacted, in this order: message contents, ``latest``, ``expected_query``, ``must_include``,
    ``must_not_include`` (and the same terms in ``accepted_terms`` / ``typed_terms``), and the logged
    rewrite (``query``, ``resolved`` surfaces and antecedents, ``dropped``). Ids, labels, reviewer,
    model and times are kept as they are.
    """
    r = Redactor(finder)
    logged = case.get("logged")
    texts = [m["content"] for m in case["messages"]] + [case["latest"]]
    r.learn_names(texts)
    sub: Callable[[str | None], str | None] = lambda t: None if t is None else r.redact(t)  # noqa: E731
    out = dict(case)
    out["messages"] = [{**m, "content": r.redact(m["content"])} for m in case["messages"]]
    out["latest"] = r.redact(case["latest"])
    out["expected_query"] = sub(case.get("expected_query"))
    out["must_include"] = [r.redact_term(t) for t in case["must_include"]]
    out["must_not_include"] = [r.redact_term(t) for t in case["must_not_include"]]
    for origin in ("accepted_terms", "typed_terms"):
        if case.get(origin) is not None:
            out[origin] = {field: [r.redact_term(t) for t in terms] for field, terms in case[origin].items()}
    if logged is not None:
        out["logged"] = {
            **logged,
            "query": r.redact(logged["query"]),
            "resolved": [
                {**x, "surface": r.redact(x["surface"]), "antecedent": r.redact(x["antecedent"])}
                for x in logged["resolved"]
            ],
            "dropped": r.redact_all(logged["dropped"]),
        }
    out["redacted"] = True
    return out


EVENT_KEEP = frozenset(
    {
        "event",
        "ts",
        "conv_id",
        "request_id",
        "turn",
        "n_messages",
        "roles",
        "first_ts",
        "last_ts",
        "monotonic",
        "digest",
        "client_turn_count",
        "role",
        "model",
        "prompt_version",
        "rewritten",
        "latency_ms",
        "rank",
        "doc_id",
        "score",
        "api_created",
        "transcript_kind",
    }
)
"""Fields of a log event (``schemas/``) that hold ids, times, counts and names of the rewriter, never
free text: kept as logged by :func:`redact_event`. Every other string, at any depth, is redacted."""


def _map_free_text(value: Any, fn: Callable[[str], str], field_name: str | None = None) -> Any:
    """``value`` (decoded JSON) with ``fn`` applied to every string not under a key of
    :data:`EVENT_KEEP`, at any depth; other values as they are."""
    if field_name in EVENT_KEEP:
        return value
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_free_text(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_free_text(v, fn, k) for k, v in value.items()}
    return value


def redact_event(raw: dict[str, Any], key: bytes, finder: NameFinder | None = None) -> dict[str, Any]:
    """A copy of a decoded log event with every free-text string redacted, placeholders keyed by ``key``
    (see :attr:`Redactor.key`), for the ``redact_at_ingest`` setting.

    Names are learned from all the event's texts first (a name introduced in one message is replaced in
    every other). A ``ctx_input`` whose logged ``digest`` matches its messages gets the digest of the
    redacted messages, so the digest checks judge the stored transcript as they would have judged the
    logged one; a digest that did not match is kept, and still does not."""
    from monitor.record import Message, transcript_digest

    r = Redactor(finder, key=key)
    texts: list[str] = []

    def collect(text: str) -> str:
        texts.append(text)
        return text

    _map_free_text(raw, collect)
    r.learn_names(texts)
    out: dict[str, Any] = _map_free_text(raw, r.redact)
    messages = raw.get("messages")
    if raw.get("event") == "ctx_input" and isinstance(messages, list) and isinstance(raw.get("digest"), str):

        def msgs(ms: list[Any]) -> list[Message]:
            return [Message(role=str(m.get("role")), content=str(m.get("content")), ts=None) for m in ms]

        if transcript_digest(msgs(messages)) == raw["digest"]:
            out["digest"] = transcript_digest(msgs(out["messages"]))
    return out
